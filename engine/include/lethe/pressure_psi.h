// lethe/pressure_psi.h — memory pressure from Linux PSI triggers (Documentation/accounting/psi.rst).
//
// The source opens a pressure file (/proc/pressure/memory for the whole system, or a cgroup v2
// memory.pressure) once per trigger, writes the trigger ("some 140000 2000000": at least 140 ms of
// stall within any 2 s window), and watches the fd for POLLPRI, which the kernel raises at most
// once per window. POLLERR (or POLLHUP/POLLNVAL) means the source is gone (its cgroup was removed):
// the trigger is reported once and dropped. Defaults: `some 140000 2000000` -> moderate and
// `full 1400000 2000000` -> critical (Android lmkd's 70 ms/1 s and 700 ms/1 s on a 2 s window).
//
// Since Linux 6.5 a process without CAP_SYS_RESOURCE may only create triggers whose window is a
// multiple of 2 s; other windows get EINVAL. The source then rounds the window up to the next
// multiple of 2 s, scales the stall threshold by the same factor (so the trigger keeps its
// percentage of stall), retries, and says so once.
//
// Every OS call goes through PsiFileOps, the seam that lets tests substitute the file: a fake
// whose Open returns a socketpair end (MSG_OOB raises POLLPRI) or a pipe end (POLLERR), and whose
// WriteTrigger applies the kernel's rules without a kernel.
//
// Threads: loop thread only. Ownership: the source owns its trigger fds (closed through the ops).
#ifndef LETHE_PRESSURE_PSI_H_
#define LETHE_PRESSURE_PSI_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lethe/pressure_source.h"

namespace lethe {

struct PsiTrigger {
  MemoryPressureLevel level = MemoryPressureLevel::kModerate;
  bool full = false;  // "full" (every task stalled) instead of "some"
  uint64_t stall_us = 0;
  uint64_t window_us = 0;

  // "some 140000 2000000" (no NUL; WriteTrigger adds it).
  std::string Text() const;
  friend bool operator==(const PsiTrigger&, const PsiTrigger&) = default;
};

// The kernel's limits on a trigger window, and the granularity unprivileged processes must use.
inline constexpr uint64_t kPsiMinWindowUs = 500000;
inline constexpr uint64_t kPsiMaxWindowUs = 10000000;
inline constexpr uint64_t kPsiUnprivilegedWindowUs = 2000000;

// The two default triggers, moderate then critical.
std::vector<PsiTrigger> DefaultPsiTriggers();

// Parses "some|full STALL_US WINDOW_US" for `level`. On a bad text returns nullopt and sets
// *error to a sentence naming the bad field.
std::optional<PsiTrigger> ParsePsiTrigger(std::string_view text, MemoryPressureLevel level,
                                          std::string* error);
// Empty when the trigger is within the kernel's limits, else why not.
std::string ValidatePsiTrigger(const PsiTrigger& trigger);
// The window rounded up to a multiple of 2 s and the stall scaled by the same factor (at least
// 1 us, at most the window). Returns the trigger unchanged when the window already is a multiple.
PsiTrigger RoundPsiTriggerToUnprivilegedWindow(const PsiTrigger& trigger);

// The OS seam. The real one opens O_RDWR|O_NONBLOCK|O_CLOEXEC and writes with write(2).
class PsiFileOps {
 public:
  virtual ~PsiFileOps() = default;
  // Returns an fd, or -errno.
  virtual int Open(const std::string& path);
  // Writes `text` followed by its NUL (the kernel replaces the last byte written with a NUL, so a
  // trigger written without one loses its last digit). Returns 0 or the errno.
  virtual int WriteTrigger(int fd, std::string_view text);
  // After POLLPRI. The kernel's poll() already consumed the event, so the real one does nothing.
  virtual void Acknowledge(int fd);
  virtual void Close(int fd);

  static PsiFileOps& Real();
};

struct PsiOptions {
  std::string path = "/proc/pressure/memory";
  std::vector<PsiTrigger> triggers = DefaultPsiTriggers();
  PsiFileOps* ops = nullptr;  // nullptr: PsiFileOps::Real(); not owned
};

class PsiPressureSource final : public PressureSource {
 public:
  PsiPressureSource(PressureContext context, PsiOptions options);
  ~PsiPressureSource() override;

  // True when at least one trigger is armed.
  bool Start() override;

  // The triggers as written to the kernel (after any rounding), in the order armed.
  std::vector<PsiTrigger> armed_triggers() const;
  const std::string& path() const { return options_.path; }

 private:
  struct Armed {
    PsiTrigger trigger;
    int fd = -1;
    EventLoop::WatchId watch = 0;
  };
  // Opens the file and writes the trigger, rounding once on EINVAL. Returns the fd or -1.
  int Arm(PsiTrigger* trigger);
  void OnEvent(size_t index, short revents);
  void Disarm(Armed& armed);

  PsiOptions options_;
  PsiFileOps& ops_;
  std::vector<Armed> armed_;
};

}  // namespace lethe

#endif  // LETHE_PRESSURE_PSI_H_
