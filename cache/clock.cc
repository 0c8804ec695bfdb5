#include "lethe/clock.h"

namespace lethe {

Clock& Clock::Steady() {
  static SteadyClock clock;
  return clock;
}

Clock::TimePoint SteadyClock::Now() const {
  return std::chrono::time_point_cast<Duration>(std::chrono::steady_clock::now());
}

ManualClock::ManualClock() : now_ns_(std::chrono::nanoseconds(std::chrono::seconds(1000)).count()) {}

Clock::TimePoint ManualClock::Now() const {
  return TimePoint(Duration(now_ns_.load(std::memory_order_acquire)));
}

void ManualClock::Advance(Duration delta) {
  if (delta.count() > 0) now_ns_.fetch_add(delta.count(), std::memory_order_acq_rel);
}

void ManualClock::Set(TimePoint when) {
  Duration::rep target = when.time_since_epoch().count();
  Duration::rep current = now_ns_.load(std::memory_order_acquire);
  while (target > current && !now_ns_.compare_exchange_weak(current, target)) {
  }
}

}  // namespace lethe
