// lethe/control_server.h — the engine's control channel: a Unix socket with a line protocol.
//
// A tool (lethe-pressure, a shell with socat) connects to the socket path and sends lines:
//   pressure moderate|critical   act as if the OS had reported that level
//   report PATH                  write a memory report (about:memory JSON) to PATH
//   stats                        what the engine holds now
// Each line gets exactly one line back, a JSON object:
//   {"ok":true,"command":"pressure","level":"critical","freed_bytes":1234,"elapsed_us":56,...}
//   {"ok":false,"command":"frobnicate","error":"unknown command 'frobnicate'; expected ..."}
// "freed_bytes" and any other fields come from the handler; "elapsed_us" is measured around the
// handler on the loop's clock. Commands from one client are answered in order; any number of
// clients may be connected at once. A line longer than kMaxLineBytes is answered with an error
// and the connection is closed.
//
// The handlers are injected by the embedder (the Engine wires them to its caches); a command whose
// handler is missing gets an error line.
//
// Threads: construct, Start, destroy on the loop thread; handlers run on the loop thread, one at a
// time. Ownership: the server owns the listening socket, its clients' fds, and the socket path it
// created (unlinked on destruction). The socket is made mode 0600: whoever can connect can make
// the engine write files.
#ifndef LETHE_CONTROL_SERVER_H_
#define LETHE_CONTROL_SERVER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lethe/event_loop.h"
#include "lethe/memory_pressure_level.h"
#include "lethe/pressure_source.h"

namespace lethe {

// What a handler answers. Fields keep their insertion order in the reply.
class ControlReply {
 public:
  static ControlReply Error(std::string message);

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  uint64_t freed_bytes() const { return freed_bytes_; }

  ControlReply& SetFreedBytes(uint64_t bytes);
  ControlReply& AddNumber(std::string_view key, int64_t value);
  ControlReply& AddString(std::string_view key, std::string_view value);
  // The fields as `"key":value` pairs joined with commas (no braces).
  const std::string& fields_json() const { return fields_json_; }

 private:
  void AppendKey(std::string_view key);

  std::string error_;
  uint64_t freed_bytes_ = 0;
  bool has_freed_bytes_ = false;
  std::string fields_json_;
  friend class ControlServer;
};

struct ControlHandlers {
  std::function<ControlReply(MemoryPressureLevel level)> pressure;
  std::function<ControlReply(const std::string& path)> report;
  std::function<ControlReply()> stats;
};

class ControlServer {
 public:
  static constexpr size_t kMaxLineBytes = 4096;

  struct Stats {
    uint64_t clients_accepted_count = 0;
    uint64_t command_count = 0;
    uint64_t error_count = 0;
    // Times a client's input was left unread because its unread answers passed 64 KiB.
    uint64_t input_paused_count = 0;
  };

  ControlServer(EventLoop& loop, std::string socket_path, ControlHandlers handlers,
                LogFunction log = nullptr);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Binds and listens. A stale socket file (nobody listening) is replaced; a live one, or a path
  // that is not a socket, is refused. Returns false after logging one line saying why.
  bool Start();

  // The reply line (without its newline) for one command line; what each client gets. Public so
  // an embedder can offer the same commands elsewhere (a debug console).
  std::string Execute(std::string_view line);

  const std::string& socket_path() const { return socket_path_; }
  size_t client_count() const { return clients_.size(); }
  const Stats& stats() const { return stats_; }

 private:
  struct Client {
    int fd = -1;
    EventLoop::WatchId watch = 0;
    short events = 0;  // what `watch` asks for
    std::string input;
    std::string output;
    bool closing = false;  // read side done: close once output is flushed
  };

  void OnAccept();
  void OnClient(uint64_t id, short revents);
  void ReadFrom(Client& client);
  void ProcessLines(Client& client, bool at_end);
  // Returns false when the client is gone (write error).
  bool Flush(Client& client);
  void Rewatch(uint64_t id, Client& client);
  void Close(uint64_t id);

  EventLoop& loop_;
  std::string socket_path_;
  ControlHandlers handlers_;
  LogFunction log_;
  int listen_fd_ = -1;
  EventLoop::WatchId listen_watch_ = 0;
  bool created_path_ = false;
  std::map<uint64_t, Client> clients_;
  uint64_t next_client_id_ = 1;
  Stats stats_;
};

}  // namespace lethe

#endif  // LETHE_CONTROL_SERVER_H_
