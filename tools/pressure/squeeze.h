// tools/pressure/squeeze.h — real memory pressure for lethe-pressure --squeeze: a child process
// that allocates and touches memory (and keeps touching it), inside a cgroup v2 of its own with a
// memory limit when the machine allows one, so that the kernel reclaims and stalls and the engine's
// pressure sources (PSI, memory.events) have something real to see.
//
// Never in CI: CiRefusal() says why when $CI is set to anything but "", "0" or "false"; the tool
// refuses (exit 2) rather than squeeze a shared runner.
// Containment: with a writable cgroup v2 whose subtree_control enables "memory", the hog runs in
// <that cgroup>/lethe-squeeze-<pid> with memory.high = half the hog and memory.max = three
// quarters (reclaim and throttling, then the OOM killer inside that cgroup only). Without one, the
// hog runs unconfined and allocates exactly the bytes asked for (--squeeze-mb), no more.
// Threads: the calling thread. Ownership: the Squeeze owns the child and the cgroup directory and
// removes both when stopped or destroyed.
#ifndef LETHE_TOOLS_PRESSURE_SQUEEZE_H_
#define LETHE_TOOLS_PRESSURE_SQUEEZE_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace lethe::pressure {

// "" when squeezing is allowed here, else the message to print.
std::string CiRefusal(const char* ci_value);

// The cgroup v2 directory this process is in, when the memory controller can be delegated to a
// child of it and the directory is writable; "" with *why otherwise. `proc_self_cgroup` and
// `mountinfo` are the texts of /proc/self/cgroup and /proc/self/mountinfo (tests pass their own).
std::string FindWritableCgroup(const std::string& proc_self_cgroup, const std::string& mountinfo,
                               std::string* why);

class Squeeze {
 public:
  Squeeze() = default;
  ~Squeeze();
  Squeeze(const Squeeze&) = delete;
  Squeeze& operator=(const Squeeze&) = delete;

  // Starts the hog: `bytes` to allocate and touch. Returns false with *error.
  bool Start(uint64_t bytes, std::string* error);
  // Kills the hog and removes its cgroup.
  void Stop();
  // One line: "512 MiB hog, pid 123, in cgroup /sys/fs/cgroup/x (memory.high 256 MiB, ...)".
  const std::string& description() const { return description_; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::string cgroup_dir_;
  std::string description_;
};

}  // namespace lethe::pressure

#endif  // LETHE_TOOLS_PRESSURE_SQUEEZE_H_
