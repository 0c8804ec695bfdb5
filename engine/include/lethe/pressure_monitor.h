// lethe/pressure_monitor.h — every memory-pressure source of an engine, started together.
//
// The monitor builds the sources its options enable, starts them (each that cannot open is
// reported once through the log and skipped), and routes every event to one PressureCallback on
// the loop thread:
//   "psi"       PSI triggers on /proc/pressure/memory, or this process's cgroup v2 memory.pressure;
//   "systemd"   $MEMORY_PRESSURE_WATCH when set — it then replaces "psi" (the service manager
//               chose the file and trigger; /dev/null turns both off);
//   "cgroup"    cgroup v2 memory.events (high -> moderate, max/oom -> critical);
//   "allocator" the allocator's low-memory callback (flush hook, then critical);
//   "api"       Simulate(level), from any thread (tests, the control channel, an embedder).
//
// Threads: construct, Start and destroy on the loop thread; Simulate from any thread.
// Ownership: the monitor owns its sources; the loop must outlive it.
#ifndef LETHE_PRESSURE_MONITOR_H_
#define LETHE_PRESSURE_MONITOR_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lethe/pressure_allocator.h"
#include "lethe/pressure_cgroup.h"
#include "lethe/pressure_psi.h"
#include "lethe/pressure_source.h"
#include "lethe/pressure_systemd.h"

namespace lethe {

struct PressureMonitorOptions {
  bool psi = true;
  PsiOptions psi_options;
  // Watch this process's cgroup v2 memory.pressure instead of psi_options.path (falls back to
  // psi_options.path, with a note, when memory is not on cgroup v2).
  bool psi_in_cgroup = false;
  bool cgroup_events = true;
  MemoryEventsOptions memory_events;
  bool systemd = true;
  // Reads $MEMORY_PRESSURE_WATCH / $MEMORY_PRESSURE_WRITE; getenv when empty.
  std::function<const char*(const char*)> get_env;
  bool allocator = true;
  AllocatorPressureSource::FlushHook allocator_flush;
};

class PressureMonitor {
 public:
  PressureMonitor(EventLoop& loop, PressureCallback on_pressure, LogFunction log,
                  PressureMonitorOptions options = {});
  ~PressureMonitor();
  PressureMonitor(const PressureMonitor&) = delete;
  PressureMonitor& operator=(const PressureMonitor&) = delete;

  // Builds and starts the enabled sources. Returns how many are active. Call once.
  size_t Start();

  // The API source: delivers `level` as source "api" on the loop thread. Any thread, while the
  // monitor exists; a delivery still queued when the monitor is destroyed is dropped, and so is
  // one made before Start.
  void Simulate(MemoryPressureLevel level);

  // nullptr when no source of that name was built.
  PressureSource* Find(std::string_view name) const;
  const std::vector<std::unique_ptr<PressureSource>>& sources() const { return sources_; }
  // "psi: active, 2 events; cgroup: off; ..." for logs and the control channel.
  std::string Describe() const;

 private:
  PressureContext Context() const;
  void AddPsi();

  EventLoop& loop_;
  PressureCallback on_pressure_;
  LogFunction log_;
  PressureMonitorOptions options_;
  std::vector<std::unique_ptr<PressureSource>> sources_;
  // Simulate's posted tasks hold a weak reference, so a task that runs after the monitor is gone
  // finds it expired instead of dangling.
  std::shared_ptr<PressureSource*> api_;
};

}  // namespace lethe

#endif  // LETHE_PRESSURE_MONITOR_H_
