#include "lethe/expiration_tracker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

namespace lethe {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

struct Item {
  int id = 0;
  ExpirationState state;
  ExpirationState& GetExpirationState() { return state; }
};

// A tracker over `items` whose expired entries are recorded in `expired`.
struct Fixture {
  explicit Fixture(uint32_t generation_count = 2, Clock::Duration period = seconds(10),
                   size_t item_count = 8)
      : items(item_count),
        tracker(generation_count, period, clock.Now(), [this](Item* item) {
          expired.push_back(item->id);
        }) {
    for (size_t i = 0; i < items.size(); ++i) items[i].id = static_cast<int>(i);
  }
  ManualClock clock;
  std::vector<Item> items;
  std::vector<int> expired;
  ExpirationTracker<Item> tracker;
};

TEST(ExpirationTracker, EntryAddedAtTheOriginExpiresExactlyAtKPeriods) {
  Fixture f;  // K = 2, P = 10 s
  f.tracker.Add(&f.items[0]);
  f.clock.Advance(seconds(20) - nanoseconds(1));
  EXPECT_EQ(f.tracker.AgeIfDue(f.clock.Now()), 0u);  // one turnover at 10 s: not yet oldest
  EXPECT_TRUE(f.expired.empty());
  f.clock.Advance(nanoseconds(1));
  EXPECT_EQ(f.tracker.AgeIfDue(f.clock.Now()), 1u);
  EXPECT_EQ(f.expired, std::vector<int>{0});
  EXPECT_TRUE(f.tracker.empty());
}

TEST(ExpirationTracker, EntryAddedJustBeforeATurnoverLivesJustOverKMinusOnePeriods) {
  Fixture f(3, seconds(10));
  Clock::TimePoint origin = f.clock.Now();
  f.clock.Set(origin + seconds(10) - nanoseconds(1));
  f.tracker.AgeIfDue(f.clock.Now());
  f.tracker.Add(&f.items[1]);  // t = origin + 10 s - 1 ns
  // Expires at origin + 30 s = t + 2P + 1 ns: after (K-1)P, before KP.
  f.clock.Set(origin + seconds(30) - nanoseconds(1));
  f.tracker.AgeIfDue(f.clock.Now());
  EXPECT_TRUE(f.expired.empty());
  f.clock.Set(origin + seconds(30));
  f.tracker.AgeIfDue(f.clock.Now());
  EXPECT_EQ(f.expired, std::vector<int>{1});
}

TEST(ExpirationTracker, TouchRestartsTheWindow) {
  Fixture f;
  Clock::TimePoint origin = f.clock.Now();
  f.tracker.Add(&f.items[0]);
  f.tracker.Add(&f.items[1]);
  f.clock.Set(origin + seconds(15));
  f.tracker.AgeIfDue(f.clock.Now());
  f.tracker.Touch(&f.items[0]);  // now in the newest generation: expires at 30 s
  f.clock.Set(origin + seconds(20));
  f.tracker.AgeIfDue(f.clock.Now());
  EXPECT_EQ(f.expired, std::vector<int>{1});
  f.clock.Set(origin + seconds(30) - nanoseconds(1));
  f.tracker.AgeIfDue(f.clock.Now());
  EXPECT_EQ(f.expired.size(), 1u);
  f.clock.Set(origin + seconds(30));
  f.tracker.AgeIfDue(f.clock.Now());
  EXPECT_EQ(f.expired, (std::vector<int>{1, 0}));
}

TEST(ExpirationTracker, RemoveIsImmediateAndKeepsOtherSlotsValid) {
  Fixture f;
  for (int i = 0; i < 5; ++i) f.tracker.Add(&f.items[i]);
  f.tracker.Remove(&f.items[0]);  // the last entry takes its slot
  f.tracker.Remove(&f.items[3]);
  f.tracker.Remove(&f.items[3]);  // twice: a no-op
  EXPECT_FALSE(f.items[0].state.IsTracked());
  EXPECT_EQ(f.tracker.size(), 3u);
  EXPECT_TRUE(f.tracker.Validate());
  f.tracker.AgeAll();
  std::sort(f.expired.begin(), f.expired.end());
  EXPECT_EQ(f.expired, (std::vector<int>{1, 2, 4}));
}

TEST(ExpirationTracker, AgeExpiresOnlyTheOldestGeneration) {
  Fixture f(3, seconds(1));
  f.tracker.Add(&f.items[0]);
  f.tracker.Age();
  f.tracker.Add(&f.items[1]);
  f.tracker.Age();
  f.tracker.Add(&f.items[2]);
  EXPECT_EQ(f.tracker.Age(), 1u);
  EXPECT_EQ(f.expired, std::vector<int>{0});
  EXPECT_EQ(f.tracker.PeekOldest(), &f.items[1]);
  EXPECT_EQ(f.tracker.AgeAll(), 2u);
  EXPECT_EQ(f.tracker.PeekOldest(), nullptr);
}

TEST(ExpirationTracker, CallbackMayRemoveOtherEntriesOfTheExpiringGeneration) {
  ManualClock clock;
  std::vector<Item> items(4);
  std::vector<int> expired;
  ExpirationTracker<Item>* self = nullptr;
  ExpirationTracker<Item> tracker(2, seconds(1), clock.Now(), [&](Item* item) {
    expired.push_back(item->id);
    for (Item& other : items) self->Remove(&other);  // e.g. the owner drops a whole image
  });
  self = &tracker;
  for (int i = 0; i < 4; ++i) {
    items[i].id = i;
    tracker.Add(&items[i]);
  }
  tracker.AgeAll();
  EXPECT_EQ(expired.size(), 1u);
  EXPECT_TRUE(tracker.empty());
  EXPECT_TRUE(tracker.Validate());
}

TEST(ExpirationTracker, CallbackMayAddTheEntryBackToTheNewestGeneration) {
  ManualClock clock;
  Item item;
  int expired_count = 0;
  ExpirationTracker<Item>* self = nullptr;
  ExpirationTracker<Item> tracker(2, seconds(1), clock.Now(), [&](Item* entry) {
    ++expired_count;
    self->Add(entry);  // e.g. a locked surface that must stay
  });
  self = &tracker;
  tracker.Add(&item);
  tracker.Age();  // item's generation is not the oldest yet
  EXPECT_EQ(tracker.Age(), 1u);
  EXPECT_EQ(expired_count, 1);
  EXPECT_TRUE(item.state.IsTracked());
  EXPECT_TRUE(tracker.Validate());
}

TEST(ExpirationTracker, LongIdleGapExpiresEverythingAndKeepsThePeriodGrid) {
  Fixture f(2, seconds(10));
  Clock::TimePoint origin = f.clock.Now();
  f.tracker.Add(&f.items[0]);
  f.clock.Set(origin + std::chrono::hours(5) + seconds(3));
  EXPECT_EQ(f.tracker.AgeIfDue(f.clock.Now()), 1u);
  EXPECT_EQ(f.tracker.NextAgeTime(), origin + std::chrono::hours(5) + seconds(10));
  // The next entry again gets (K-1)P..KP from the grid.
  f.tracker.Add(&f.items[1]);
  f.clock.Set(origin + std::chrono::hours(5) + seconds(20) - nanoseconds(1));
  f.tracker.AgeIfDue(f.clock.Now());
  EXPECT_EQ(f.expired.size(), 1u);
  f.clock.Set(origin + std::chrono::hours(5) + seconds(20));
  f.tracker.AgeIfDue(f.clock.Now());
  EXPECT_EQ(f.expired.size(), 2u);
}

TEST(ExpirationTracker, TenPercentWindowWithElevenGenerations) {
  // The BfCache's configuration: T = 30 min, K = 11, P = T/10: a document lives T..1.1T.
  Fixture f(11, milliseconds(180'000));
  Clock::TimePoint origin = f.clock.Now();
  f.clock.Set(origin + seconds(100));
  f.tracker.AgeIfDue(f.clock.Now());
  f.tracker.Add(&f.items[0]);
  Clock::TimePoint left = f.clock.Now();
  f.clock.Set(left + std::chrono::minutes(30));
  f.tracker.AgeIfDue(f.clock.Now());
  EXPECT_TRUE(f.expired.empty());
  f.clock.Set(left + std::chrono::minutes(33));
  f.tracker.AgeIfDue(f.clock.Now());
  EXPECT_EQ(f.expired.size(), 1u);
}

TEST(ExpirationTrackerDeathTest, RejectsOneGeneration) {
  ManualClock clock;
  EXPECT_DEATH(ExpirationTracker<Item>(1, seconds(1), clock.Now(), [](Item*) {}),
               "2..64 generations");
}

TEST(ExpirationTrackerDeathTest, RejectsZeroPeriod) {
  ManualClock clock;
  EXPECT_DEATH(ExpirationTracker<Item>(2, seconds(0), clock.Now(), [](Item*) {}),
               "positive period");
}

TEST(ExpirationTrackerDeathTest, RejectsAddingATrackedEntryTwice) {
  Fixture f;
  f.tracker.Add(&f.items[0]);
  EXPECT_DEATH(f.tracker.Add(&f.items[0]), "already tracked");
}

}  // namespace
}  // namespace lethe
