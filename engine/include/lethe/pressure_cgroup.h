// lethe/pressure_cgroup.h — memory pressure from cgroup v2 memory.events.
//
// memory.events holds counters ("low N", "high N", "max N", "oom N", "oom_kill N", ...) and the
// kernel signals a file-modified event whenever one changes. The source watches the file with
// inotify (which sees kernfs notifications on a real cgroup and ordinary writes on the test's
// files), re-reads it on each event and compares with the counters it saw last:
//   high rose                 -> moderate (the cgroup went over memory.high and is throttled)
//   max, oom or oom_kill rose -> critical (it hit memory.max; the OOM killer may be next)
// One dispatch per change, at the highest level that rose. The file deleted, moved or unreadable
// means the source is gone: reported once, then off.
//
// Which file: MemoryEventsOptions::path when set; otherwise this process's cgroup, found with
// DetectCgroupFromFiles (cgroup v1 has no memory.events: reported once, source off). The source
// logs which hierarchy and file it uses.
//
// Threads: loop thread only. Ownership: the source owns its inotify fd.
#ifndef LETHE_PRESSURE_CGROUP_H_
#define LETHE_PRESSURE_CGROUP_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "lethe/cgroup_detect.h"
#include "lethe/pressure_source.h"

namespace lethe {

// The counters of a memory.events text; nullopt when it has neither "high" nor "max".
std::optional<std::map<std::string, uint64_t, std::less<>>> ParseMemoryEvents(std::string_view text);

struct MemoryEventsOptions {
  std::string path;  // explicit memory.events; empty: detect this process's cgroup
  CgroupPaths cgroup_paths;
};

class MemoryEventsPressureSource final : public PressureSource {
 public:
  MemoryEventsPressureSource(PressureContext context, MemoryEventsOptions options);
  ~MemoryEventsPressureSource() override;

  bool Start() override;

  // The file watched ("" before Start or when unavailable).
  const std::string& path() const { return path_; }
  // The counter value last read, 0 when absent.
  uint64_t counter(std::string_view name) const;

 private:
  void OnInotify();
  void Stop(std::string_view why);
  // Re-reads the file; dispatches when a counter rose. False when the file is unreadable.
  bool Reread();

  MemoryEventsOptions options_;
  std::string path_;
  int inotify_fd_ = -1;
  EventLoop::WatchId watch_ = 0;
  std::map<std::string, uint64_t, std::less<>> counters_;
};

}  // namespace lethe

#endif  // LETHE_PRESSURE_CGROUP_H_
