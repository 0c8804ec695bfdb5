// lethe/pressure_systemd.h — systemd's memory-pressure convention ($MEMORY_PRESSURE_WATCH).
//
// A service started with MemoryPressureWatch= gets $MEMORY_PRESSURE_WATCH, a path to watch, and
// maybe $MEMORY_PRESSURE_WRITE, base64 bytes to write to it first (normally a PSI trigger for the
// service's own memory.pressure, NUL included). What the path is decides how it is watched:
//   regular file (a PSI file)  open O_RDWR, write the bytes, watch POLLPRI; POLLERR = gone;
//   FIFO                       open O_RDWR|O_NONBLOCK (holding a writer ourselves keeps poll from
//                              reporting POLLHUP forever once the manager's writer closes), watch
//                              POLLIN and drain what arrives; nothing is written (we would only
//                              read our own bytes back);
//   AF_UNIX stream socket      connect, write the bytes, watch POLLIN and drain; end of stream or
//                              an error = gone;
//   /dev/null                  the manager turned pressure handling off: no source (and the
//                              engine then starts no PSI source of its own either).
// Every event is delivered as moderate (systemd's events carry no level; its own handler trims
// memory, which is what moderate asks).
//
// Threads: loop thread only. Ownership: the source owns its fd.
#ifndef LETHE_PRESSURE_SYSTEMD_H_
#define LETHE_PRESSURE_SYSTEMD_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "lethe/pressure_source.h"

namespace lethe {

// Standard base64 (RFC 4648, '+' '/', '=' padding optional, whitespace ignored). nullopt on any
// other character or a bad length.
std::optional<std::string> DecodeBase64(std::string_view text);

struct SystemdPressureOptions {
  std::string watch;         // $MEMORY_PRESSURE_WATCH
  std::string write_base64;  // $MEMORY_PRESSURE_WRITE, may be empty

  // From the environment, through `get_env` (getenv by default); nullopt when the watch variable
  // is unset or empty.
  static std::optional<SystemdPressureOptions> FromEnvironment(
      const std::function<const char*(const char*)>& get_env = nullptr);
  bool off() const { return watch == "/dev/null"; }
};

class SystemdPressureSource final : public PressureSource {
 public:
  enum class Mode { kNone, kPsiFile, kFifo, kSocket };

  SystemdPressureSource(PressureContext context, SystemdPressureOptions options);
  ~SystemdPressureSource() override;

  bool Start() override;

  Mode mode() const { return mode_; }
  short watched_events() const { return watched_events_; }

 private:
  bool Open(const std::string& write_bytes);
  void OnEvent(short revents);
  void Stop(std::string_view why);

  SystemdPressureOptions options_;
  Mode mode_ = Mode::kNone;
  short watched_events_ = 0;
  int fd_ = -1;
  EventLoop::WatchId watch_ = 0;
};

}  // namespace lethe

#endif  // LETHE_PRESSURE_SYSTEMD_H_
