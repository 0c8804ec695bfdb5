// tools/pressure/control_client.h — the client side of an engine's control socket (see
// lethe/control_server.h): connect to a Unix socket path, send one command line, read one reply
// line, with a timeout. Also tells which process is on the other end (SO_PEERCRED), so that a tool
// can read that process's memory from /proc.
// One thread; the client owns its socket.
#ifndef LETHE_TOOLS_PRESSURE_CONTROL_CLIENT_H_
#define LETHE_TOOLS_PRESSURE_CONTROL_CLIENT_H_

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>

namespace lethe::pressure {

class ControlClient {
 public:
  // nullptr with a readable *error ("no engine is listening on PATH (connection refused)").
  static std::unique_ptr<ControlClient> Connect(const std::string& socket_path, std::string* error);
  ~ControlClient();
  ControlClient(const ControlClient&) = delete;
  ControlClient& operator=(const ControlClient&) = delete;

  // Sends `line` (a newline is added) and returns the reply line without its newline. Returns
  // false with *error on a write error, a closed connection or `timeout`.
  bool Request(const std::string& line, std::chrono::milliseconds timeout, std::string* reply,
               std::string* error);

  // The engine's pid from the socket's peer credentials (0 when unknown).
  pid_t peer_pid() const { return peer_pid_; }

 private:
  explicit ControlClient(int fd, pid_t peer_pid) : fd_(fd), peer_pid_(peer_pid) {}
  int fd_;
  pid_t peer_pid_;
  std::string pending_;  // bytes read past the last reply line
};

}  // namespace lethe::pressure

#endif  // LETHE_TOOLS_PRESSURE_CONTROL_CLIENT_H_
