#include "lethe/clock.h"

#include <gtest/gtest.h>

namespace lethe {
namespace {

using std::chrono::seconds;

TEST(ManualClock, MovesOnlyWhenAdvanced) {
  ManualClock clock;
  Clock::TimePoint start = clock.Now();
  EXPECT_EQ(clock.Now(), start);
  clock.Advance(seconds(10));
  EXPECT_EQ(clock.Now() - start, seconds(10));
}

TEST(ManualClock, NeverGoesBackwards) {
  ManualClock clock;
  Clock::TimePoint start = clock.Now();
  clock.Advance(std::chrono::nanoseconds(-5));
  EXPECT_EQ(clock.Now(), start);
  clock.Set(start - seconds(1));
  EXPECT_EQ(clock.Now(), start);
  clock.Set(start + seconds(3));
  EXPECT_EQ(clock.Now(), start + seconds(3));
}

TEST(SteadyClock, IsMonotonic) {
  Clock& clock = Clock::Steady();
  Clock::TimePoint first = clock.Now();
  EXPECT_LE(first, clock.Now());
}

}  // namespace
}  // namespace lethe
