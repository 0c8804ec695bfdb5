#include "lethe/memory_pressure.h"

#include <gtest/gtest.h>

#include <vector>

namespace lethe {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

struct Recorder {
  std::vector<MemoryPressureEvent> events;
  uint64_t freed_per_event = 100;
  MemoryPressure::Listener Listener() {
    return [this](const MemoryPressureEvent& event) {
      events.push_back(event);
      return freed_per_event;
    };
  }
};

TEST(MemoryPressure, DispatchCallsEveryListenerAndSumsWhatTheyFreed) {
  ManualClock clock;
  MemoryPressure pressure(clock);
  Recorder a, b;
  b.freed_per_event = 23;
  auto sa = pressure.Subscribe("a", a.Listener());
  auto sb = pressure.Subscribe("b", b.Listener());
  MemoryPressureDispatchResult result = pressure.Dispatch(MemoryPressureLevel::kModerate);
  ASSERT_EQ(result.listeners.size(), 2u);
  EXPECT_EQ(result.listeners[0].name, "a");
  EXPECT_EQ(result.listeners[0].freed_bytes, 100u);
  EXPECT_EQ(result.listeners[1].name, "b");
  EXPECT_EQ(result.listeners[1].freed_bytes, 23u);
  EXPECT_EQ(result.total_freed_bytes, 123u);
  EXPECT_FALSE(result.event.ongoing);
  EXPECT_FALSE(result.purged);  // moderate never purges
  EXPECT_EQ(pressure.total_freed_bytes(), 123u);
}

TEST(MemoryPressure, MeasuresEachListenerWithTheStopwatch) {
  ManualClock clock;
  ManualClock stopwatch;
  MemoryPressure pressure(clock, {}, stopwatch);
  auto slow = pressure.Subscribe("slow", [&](const MemoryPressureEvent&) {
    stopwatch.Advance(milliseconds(7));
    return uint64_t{1};
  });
  auto fast = pressure.Subscribe("fast", [](const MemoryPressureEvent&) { return uint64_t{2}; });
  MemoryPressureDispatchResult result = pressure.SimulateForTesting(MemoryPressureLevel::kModerate);
  EXPECT_EQ(result.listeners[0].elapsed, milliseconds(7));
  EXPECT_EQ(result.listeners[1].elapsed, nanoseconds(0));
  EXPECT_EQ(result.total_elapsed, milliseconds(7));
}

TEST(MemoryPressure, RepeatWithinTenSecondsIsOngoingAndJustAfterIsFresh) {
  ManualClock clock;
  MemoryPressure pressure(clock);
  Recorder r;
  auto s = pressure.Subscribe("r", r.Listener());
  EXPECT_FALSE(pressure.Dispatch(MemoryPressureLevel::kModerate).event.ongoing);
  clock.Advance(seconds(10) - nanoseconds(1));
  EXPECT_TRUE(pressure.Dispatch(MemoryPressureLevel::kModerate).event.ongoing);
  clock.Advance(seconds(10));  // exactly the window since the last event: fresh
  EXPECT_FALSE(pressure.Dispatch(MemoryPressureLevel::kModerate).event.ongoing);
}

TEST(MemoryPressure, EscalationIsNeverOngoingButALowerRepeatIs) {
  ManualClock clock;
  MemoryPressure pressure(clock);
  Recorder r;
  auto s = pressure.Subscribe("r", r.Listener());
  pressure.Dispatch(MemoryPressureLevel::kModerate);
  clock.Advance(seconds(1));
  MemoryPressureDispatchResult critical = pressure.Dispatch(MemoryPressureLevel::kCritical);
  EXPECT_FALSE(critical.event.ongoing);
  EXPECT_TRUE(critical.purged);
  clock.Advance(seconds(1));
  EXPECT_TRUE(pressure.Dispatch(MemoryPressureLevel::kModerate).event.ongoing);
  clock.Advance(seconds(1));
  MemoryPressureDispatchResult repeat = pressure.Dispatch(MemoryPressureLevel::kCritical);
  EXPECT_TRUE(repeat.event.ongoing);
  EXPECT_FALSE(repeat.purged);  // ongoing: cheap flushing only
}

TEST(MemoryPressure, NoneEndsTheEpisodeAndCallsNobody) {
  ManualClock clock;
  MemoryPressure pressure(clock);
  Recorder r;
  auto s = pressure.Subscribe("r", r.Listener());
  pressure.Dispatch(MemoryPressureLevel::kCritical);
  MemoryPressureDispatchResult none = pressure.Dispatch(MemoryPressureLevel::kNone);
  EXPECT_TRUE(none.listeners.empty());
  EXPECT_EQ(r.events.size(), 1u);
  EXPECT_FALSE(pressure.Dispatch(MemoryPressureLevel::kCritical).event.ongoing);
}

TEST(MemoryPressure, DestroyedSubscriptionIsNotCalled) {
  ManualClock clock;
  MemoryPressure pressure(clock);
  Recorder r;
  {
    auto s = pressure.Subscribe("r", r.Listener());
    EXPECT_EQ(pressure.listener_count(), 1u);
  }
  EXPECT_EQ(pressure.listener_count(), 0u);
  pressure.Dispatch(MemoryPressureLevel::kCritical);
  EXPECT_TRUE(r.events.empty());
}

TEST(MemoryPressure, MovedSubscriptionKeepsListeningOnce) {
  ManualClock clock;
  MemoryPressure pressure(clock);
  Recorder r;
  MemoryPressure::Subscription outer;
  {
    auto s = pressure.Subscribe("r", r.Listener());
    outer = std::move(s);
  }
  pressure.Dispatch(MemoryPressureLevel::kModerate);
  EXPECT_EQ(r.events.size(), 1u);
  outer.reset();
  EXPECT_EQ(pressure.listener_count(), 0u);
}

TEST(MemoryPressure, ListenerMayUnsubscribeAnotherDuringDispatch) {
  ManualClock clock;
  MemoryPressure pressure(clock);
  Recorder second;
  MemoryPressure::Subscription victim;
  auto first = pressure.Subscribe("first", [&](const MemoryPressureEvent&) {
    victim.reset();
    return uint64_t{0};
  });
  victim = pressure.Subscribe("second", second.Listener());
  MemoryPressureDispatchResult result = pressure.Dispatch(MemoryPressureLevel::kModerate);
  EXPECT_EQ(result.listeners.size(), 1u);
  EXPECT_TRUE(second.events.empty());
  EXPECT_EQ(pressure.listener_count(), 1u);
}

TEST(MemoryPressure, PurgeCanBeTurnedOff) {
  ManualClock clock;
  MemoryPressure pressure(clock, {.ongoing_window = seconds(10), .purge_allocator_on_critical = false});
  EXPECT_FALSE(pressure.Dispatch(MemoryPressureLevel::kCritical).purged);
}

TEST(MemoryPressureDeathTest, DispatchFromAListenerIsRefused) {
  ManualClock clock;
  MemoryPressure pressure(clock);
  auto s = pressure.Subscribe("reentrant", [&](const MemoryPressureEvent&) {
    pressure.Dispatch(MemoryPressureLevel::kCritical);
    return uint64_t{0};
  });
  EXPECT_DEATH(pressure.Dispatch(MemoryPressureLevel::kModerate), "called from a listener");
}

}  // namespace
}  // namespace lethe
