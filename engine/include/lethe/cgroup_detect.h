// lethe/cgroup_detect.h — where this process's memory controller lives: cgroup v1 or v2.
//
// The pressure sources need it: memory.events and a cgroup's memory.pressure exist only when the
// memory controller is on the unified (v2) hierarchy. A process may sit on a pure v2 system, a
// "hybrid" one (v1 controllers, with a v2 tree mounted beside them at /sys/fs/cgroup/unified that
// carries no memory controller), or pure v1. The decision reads two texts:
//   /proc/self/cgroup  lines "ID:CONTROLLERS:PATH"; "0::PATH" is the v2 tree, and a line whose
//                      CONTROLLERS contains "memory" puts the memory controller on v1;
//   /proc/mounts       where the cgroup2 tree and the v1 "memory" hierarchy are mounted.
// Parsing is pure (tests pass texts); DetectCgroupFromFiles reads the files at injectable paths.
// Any thread.
#ifndef LETHE_CGROUP_DETECT_H_
#define LETHE_CGROUP_DETECT_H_

#include <string>
#include <string_view>

namespace lethe {

enum class CgroupMemoryHierarchy { kNone, kV1, kV2 };

struct CgroupInfo {
  CgroupMemoryHierarchy memory = CgroupMemoryHierarchy::kNone;
  // The directory of this process's cgroup in the v2 tree ("" when none is mounted).
  std::string v2_dir;
  // The directory of this process's cgroup in the v1 memory hierarchy ("" unless memory is on v1).
  std::string v1_memory_dir;

  // One line saying what is used, e.g. "memory controller on cgroup v2 at /sys/fs/cgroup/a.slice".
  std::string Describe() const;
  // v2_dir + "/memory.events" (or "/memory.pressure") when memory is on v2, else "".
  std::string V2File(std::string_view name) const;
};

CgroupInfo DetectCgroup(std::string_view proc_self_cgroup, std::string_view proc_mounts);

struct CgroupPaths {
  std::string proc_self_cgroup = "/proc/self/cgroup";
  std::string proc_mounts = "/proc/mounts";
};

// Reads both files. On a read failure returns kNone and sets *error to a one-line reason.
CgroupInfo DetectCgroupFromFiles(const CgroupPaths& paths, std::string* error);

}  // namespace lethe

#endif  // LETHE_CGROUP_DETECT_H_
