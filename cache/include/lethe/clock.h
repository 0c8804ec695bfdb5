// lethe/clock.h — the time source of every cache and timer.
//
// Clock is steady (monotonic) time. ManualClock is advanced by hand: tests and simulated-time runs
// (lethe-demo, lethe-stress) use it so that no test ever sleeps to wait for an expiry.
// Now() may be called from any thread; ManualClock::Advance/Set from one controlling thread.
#ifndef LETHE_CLOCK_H_
#define LETHE_CLOCK_H_

#include <atomic>
#include <chrono>

namespace lethe {

class Clock {
 public:
  using Duration = std::chrono::nanoseconds;
  using TimePoint = std::chrono::time_point<std::chrono::steady_clock, Duration>;

  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;

  // The process-wide steady clock.
  static Clock& Steady();
};

class SteadyClock final : public Clock {
 public:
  TimePoint Now() const override;
};

// Starts at an arbitrary fixed origin (1000 s past the epoch of steady_clock) and moves only when
// told. Time never goes backwards: Set() to an earlier point is ignored.
class ManualClock final : public Clock {
 public:
  ManualClock();
  TimePoint Now() const override;
  void Advance(Duration delta);
  void Set(TimePoint when);

 private:
  std::atomic<Duration::rep> now_ns_;
};

}  // namespace lethe

#endif  // LETHE_CLOCK_H_
