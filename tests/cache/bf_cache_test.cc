#include "lethe/bf_cache.h"

#include <gtest/gtest.h>

#include "lethe/alloc.h"

namespace lethe {
namespace {

using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;

// A document whose memory is one block of Lethe's allocator.
class TestDocument : public CachedDocument {
 public:
  explicit TestDocument(size_t bytes, int* destroyed = nullptr)
      : block_(lethe_malloc(bytes)), destroyed_(destroyed) {}
  ~TestDocument() override {
    lethe_free(block_);
    if (destroyed_ != nullptr) ++*destroyed_;
  }
  size_t MemoryBytes() const override { return lethe_usable_size(block_); }

 private:
  void* block_;
  int* destroyed_;
};

std::unique_ptr<CachedDocument> Doc(size_t bytes = 1000, int* destroyed = nullptr) {
  return std::make_unique<TestDocument>(bytes, destroyed);
}

HistoryEntryId Id(int32_t index, uint64_t session = 1) { return HistoryEntryId{session, index}; }

TEST(BfCache, TakeGivesTheStoredDocumentBackOnce) {
  ManualClock clock;
  BfCache cache(clock);
  auto document = Doc();
  CachedDocument* raw = document.get();
  ASSERT_EQ(cache.Store(Id(0), std::move(document)), BfCacheStoreOutcome::kStored);
  EXPECT_TRUE(cache.Contains(Id(0)));
  EXPECT_EQ(cache.Take(Id(0)).get(), raw);
  EXPECT_EQ(cache.Take(Id(0)), nullptr);
  EXPECT_EQ(cache.used_bytes(), 0u);
  EXPECT_EQ(cache.stats().restored_count, 1u);
  EXPECT_EQ(cache.Store(Id(1), nullptr), BfCacheStoreOutcome::kInvalid);
}

// Left at t: alive at t + T, gone by t + 1.1 T, wherever t falls in the period grid.
void ExpectWindow(Clock::Duration offset) {
  ManualClock clock;
  BfCache cache(clock);  // T = 30 min
  clock.Advance(offset);
  cache.Tick();
  Clock::TimePoint left = clock.Now();
  ASSERT_EQ(cache.Store(Id(0), Doc()), BfCacheStoreOutcome::kStored);
  clock.Set(left + minutes(30));
  cache.Tick();
  EXPECT_TRUE(cache.Contains(Id(0))) << "offset " << offset.count();
  clock.Set(left + minutes(33));
  cache.Tick();
  EXPECT_FALSE(cache.Contains(Id(0))) << "offset " << offset.count();
  EXPECT_EQ(cache.stats().expired_count, 1u);
}

TEST(BfCache, DocumentExpiresWithinTToOnePointOneT) {
  ExpectWindow(nanoseconds(0));                 // on a turnover: gone exactly at 1.1 T
  ExpectWindow(minutes(3) - nanoseconds(1));    // just before one: gone just after T
  ExpectWindow(seconds(77));
}

TEST(BfCache, WindowEdgesToTheNanosecond) {
  ManualClock clock;
  BfCache cache(clock);
  Clock::TimePoint origin = clock.Now();
  ASSERT_EQ(cache.Store(Id(0), Doc()), BfCacheStoreOutcome::kStored);  // on the grid
  clock.Set(origin + minutes(33) - nanoseconds(1));
  cache.Tick();
  EXPECT_TRUE(cache.Contains(Id(0)));
  clock.Set(origin + minutes(33));
  cache.Tick();
  EXPECT_FALSE(cache.Contains(Id(0)));
  // Stored 1 ns before a turnover: expires 1 ns after T.
  clock.Set(origin + minutes(36) - nanoseconds(1));
  cache.Tick();
  ASSERT_EQ(cache.Store(Id(1), Doc()), BfCacheStoreOutcome::kStored);
  clock.Set(origin + minutes(66) - nanoseconds(1));
  cache.Tick();
  EXPECT_TRUE(cache.Contains(Id(1)));
  clock.Set(origin + minutes(66));
  cache.Tick();
  EXPECT_FALSE(cache.Contains(Id(1)));
}

TEST(BfCache, ConfiguredTimeToLive) {
  ManualClock clock;
  BfCache cache(clock, BfCacheOptions{.time_to_live = minutes(10), .max_document_count = 8});
  Clock::TimePoint origin = clock.Now();
  ASSERT_EQ(cache.Store(Id(0), Doc()), BfCacheStoreOutcome::kStored);
  clock.Set(origin + minutes(11) - nanoseconds(1));
  cache.Tick();
  EXPECT_TRUE(cache.Contains(Id(0)));
  clock.Set(origin + minutes(11));
  cache.Tick();
  EXPECT_FALSE(cache.Contains(Id(0)));
}

TEST(BfCache, KeepsAtMostEightEvictingTheFarthestFromTheCurrentIndex) {
  ManualClock clock;
  BfCache cache(clock);
  for (int32_t i = 0; i < 8; ++i) {
    ASSERT_EQ(cache.Store(Id(i), Doc()), BfCacheStoreOutcome::kStored);
    cache.SetCurrentIndex(1, i + 1);
  }
  EXPECT_EQ(cache.document_count(), 8u);  // exactly the cap: nothing evicted
  EXPECT_EQ(cache.stats().evicted_for_count_count, 0u);
  // The user went back to index 4, then navigated: entries 0..3 and 5..8 around it.
  cache.SetCurrentIndex(1, 4);
  ASSERT_EQ(cache.Store(Id(8), Doc()), BfCacheStoreOutcome::kStored);
  EXPECT_FALSE(cache.Contains(Id(0)));  // distance 4; 8 is also 4 away but newer
  EXPECT_TRUE(cache.Contains(Id(8)));
  EXPECT_EQ(cache.document_count(), 8u);
}

TEST(BfCache, StoreCanEvictTheDocumentItJustStored) {
  ManualClock clock;
  BfCache cache(clock, BfCacheOptions{.time_to_live = minutes(30), .max_document_count = 2});
  cache.SetCurrentIndex(1, 5);
  ASSERT_EQ(cache.Store(Id(4), Doc()), BfCacheStoreOutcome::kStored);
  ASSERT_EQ(cache.Store(Id(6), Doc()), BfCacheStoreOutcome::kStored);
  EXPECT_EQ(cache.Store(Id(20), Doc()), BfCacheStoreOutcome::kEvicted);
  EXPECT_TRUE(cache.Contains(Id(4)));
  EXPECT_TRUE(cache.Contains(Id(6)));
}

TEST(BfCache, SessionWithoutACurrentIndexIsEvictedFirst) {
  ManualClock clock;
  BfCache cache(clock, BfCacheOptions{.time_to_live = minutes(30), .max_document_count = 2});
  cache.SetCurrentIndex(1, 0);
  ASSERT_EQ(cache.Store(Id(100, 1), Doc()), BfCacheStoreOutcome::kStored);
  ASSERT_EQ(cache.Store(Id(0, 2), Doc()), BfCacheStoreOutcome::kStored);  // session 2: unknown
  ASSERT_EQ(cache.Store(Id(1, 1), Doc()), BfCacheStoreOutcome::kStored);
  EXPECT_FALSE(cache.Contains(Id(0, 2)));
}

TEST(BfCache, StoringTheSameEntryReplacesIt) {
  ManualClock clock;
  BfCache cache(clock);
  int destroyed = 0;
  ASSERT_EQ(cache.Store(Id(0), Doc(100, &destroyed)), BfCacheStoreOutcome::kStored);
  ASSERT_EQ(cache.Store(Id(0), Doc(5000)), BfCacheStoreOutcome::kStored);
  EXPECT_EQ(destroyed, 1);
  EXPECT_EQ(cache.document_count(), 1u);
}

TEST(BfCache, RemoveSessionDropsOnlyItsDocuments) {
  ManualClock clock;
  BfCache cache(clock);
  ASSERT_EQ(cache.Store(Id(0, 1), Doc()), BfCacheStoreOutcome::kStored);
  ASSERT_EQ(cache.Store(Id(1, 1), Doc()), BfCacheStoreOutcome::kStored);
  ASSERT_EQ(cache.Store(Id(0, 2), Doc()), BfCacheStoreOutcome::kStored);
  EXPECT_GT(cache.RemoveSession(1), 0u);
  EXPECT_EQ(cache.document_count(), 1u);
  EXPECT_TRUE(cache.Contains(Id(0, 2)));
}

TEST(BfCache, ModeratePressureAgesOneGenerationCriticalDropsAll) {
  ManualClock clock;
  BfCache cache(clock);
  MemoryPressure pressure(clock);
  auto subscription = cache.SubscribeTo(pressure);
  ASSERT_EQ(cache.Store(Id(0), Doc()), BfCacheStoreOutcome::kStored);
  // 11 generations: ten moderate events move it to the oldest, the eleventh expires it.
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(cache.OnMemoryPressure({MemoryPressureLevel::kModerate, false}), 0u);
    EXPECT_EQ(cache.OnMemoryPressure({MemoryPressureLevel::kModerate, true}), 0u);
  }
  EXPECT_GT(cache.OnMemoryPressure({MemoryPressureLevel::kModerate, false}), 0u);
  EXPECT_EQ(cache.document_count(), 0u);
  ASSERT_EQ(cache.Store(Id(1), Doc()), BfCacheStoreOutcome::kStored);
  ASSERT_EQ(cache.Store(Id(2), Doc()), BfCacheStoreOutcome::kStored);
  uint64_t held = cache.used_bytes();
  MemoryPressureDispatchResult result = pressure.Dispatch(MemoryPressureLevel::kCritical);
  EXPECT_EQ(result.listeners.at(0).name, "bfcache");
  EXPECT_EQ(result.listeners.at(0).freed_bytes, held);
  EXPECT_EQ(cache.document_count(), 0u);
  EXPECT_EQ(cache.stats().discarded_by_pressure_count, 3u);
}

TEST(BfCache, ReportedBytesEqualTheUsableSizesItHolds) {
  lethe_stats_t before;
  lethe_stats(&before);
  ManualClock clock;
  MemoryReporter reporter;
  {
    BfCache cache(clock);
    auto registration = cache.RegisterReporter(reporter);
    for (int32_t i = 0; i < 5; ++i) {
      ASSERT_EQ(cache.Store(Id(i), Doc(static_cast<size_t>(1000 * i + 17))),
                BfCacheStoreOutcome::kStored);
    }
    lethe_stats_t during;
    lethe_stats(&during);
    MemoryReport report = reporter.Collect();
    EXPECT_EQ(report.Amount("explicit/bfcache"),
              static_cast<int64_t>(during.allocated_bytes - before.allocated_bytes));
    EXPECT_EQ(report.Amount("lethe-counters/bfcache/stored"), 5);
  }
  lethe_stats_t after;
  lethe_stats(&after);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
}

}  // namespace
}  // namespace lethe
