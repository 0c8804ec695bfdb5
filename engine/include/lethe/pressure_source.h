// lethe/pressure_source.h — what every memory-pressure source of the engine shares.
//
// A source watches one OS signal (a PSI trigger, cgroup v2 memory.events, systemd's
// $MEMORY_PRESSURE_WATCH, the allocator's low-memory callback) and turns it into a
// MemoryPressureLevel, delivered on the loop (main) thread to a PressureCallback together with the
// source's name. The engine hands that callback to the caches' MemoryPressure dispatch.
//
// A source that cannot be opened (no PSI, no permission, cgroup v1, a bad configuration) says so
// once, in one line, through the LogFunction, and the engine goes on without it. Informational lines
// (what hierarchy is in use, a rounded PSI window) go through the same hook.
//
// Threads: construct, Start and destroy a source on the loop thread. Callbacks run on the loop
// thread. Ownership: a source owns the fds it opened and closes them when destroyed.
#ifndef LETHE_PRESSURE_SOURCE_H_
#define LETHE_PRESSURE_SOURCE_H_

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>

#include "lethe/event_loop.h"
#include "lethe/memory_pressure_level.h"

namespace lethe {

// Called on the loop thread. `source` names where the event came from: "psi", "cgroup",
// "systemd", "allocator", "api".
using PressureCallback = std::function<void(MemoryPressureLevel level, std::string_view source)>;
// One line, no trailing newline. Called on the thread that found the problem (the loop thread).
using LogFunction = std::function<void(std::string_view line)>;

// Writes "lethe: <line>\n" to stderr with one write(2).
LogFunction StderrLog();

// What each source needs from its owner.
struct PressureContext {
  EventLoop* loop = nullptr;
  PressureCallback on_pressure;
  LogFunction log;
};

class PressureSource {
 public:
  virtual ~PressureSource() = default;
  PressureSource(const PressureSource&) = delete;
  PressureSource& operator=(const PressureSource&) = delete;

  // Opens the OS resources and starts watching. Returns false when the source is unavailable;
  // the reason has then been logged (once). Call at most once.
  virtual bool Start() = 0;

  const std::string& name() const { return name_; }
  // True while the source is armed: started successfully and not gone since.
  bool active() const { return active_; }
  uint64_t event_count() const { return event_count_; }
  MemoryPressureLevel last_level() const { return last_level_; }

 protected:
  PressureSource(PressureContext context, std::string name);

  // Delivers `level` to the callback. Loop thread only.
  void Dispatch(MemoryPressureLevel level);
  // Logs `line` the first time `key` is seen by this source; later calls with the same key are
  // silent, so a flapping resource cannot flood the log.
  void ReportOnce(std::string_view key, std::string_view line);
  void set_active(bool active) { active_ = active; }
  EventLoop& loop() const { return *context_.loop; }

 private:
  PressureContext context_;
  std::string name_;
  std::set<std::string, std::less<>> reported_;
  bool active_ = false;
  uint64_t event_count_ = 0;
  MemoryPressureLevel last_level_ = MemoryPressureLevel::kNone;
};

}  // namespace lethe

#endif  // LETHE_PRESSURE_SOURCE_H_
