#include "lethe/font_cache.h"

#include <gtest/gtest.h>

#include <string>

#include "lethe/alloc.h"

namespace lethe {
namespace {

using std::chrono::nanoseconds;
using std::chrono::seconds;

// A font whose data is one block of Lethe's allocator.
struct TestFont {
  explicit TestFont(size_t bytes) : data(lethe_malloc(bytes)) {}
  ~TestFont() { lethe_free(data); }
  TestFont(const TestFont&) = delete;
  TestFont& operator=(const TestFont&) = delete;
  uint64_t Cost() const { return lethe_usable_size(data); }
  void* data;
};

using Fonts = FontCache<std::string, TestFont>;

Fonts::Handle InsertFont(Fonts& cache, const std::string& name, size_t bytes = 1000) {
  auto font = std::make_unique<TestFont>(bytes);
  uint64_t cost = font->Cost();
  return cache.Insert(name, std::move(font), cost);
}

TEST(FontCache, ReferencedFontStaysAndUnreferencedGoesAfterTwentyToThirtySeconds) {
  ManualClock clock;
  Fonts cache(clock);  // 3 x 10 s
  Clock::TimePoint origin = clock.Now();
  Fonts::Handle handle = InsertFont(cache, "DejaVu Sans");
  EXPECT_EQ(cache.referenced_font_count(), 1u);
  clock.Set(origin + std::chrono::hours(1));
  cache.Tick();
  EXPECT_EQ(cache.font_count(), 1u);
  handle.reset();  // released at 1 h: the next turnover is at 1 h + 10 s
  clock.Set(origin + std::chrono::hours(1) + seconds(30) - nanoseconds(1));
  cache.Tick();
  EXPECT_EQ(cache.font_count(), 1u);
  clock.Set(origin + std::chrono::hours(1) + seconds(30));
  cache.Tick();
  EXPECT_EQ(cache.font_count(), 0u);
  EXPECT_EQ(cache.stats().expired_count, 1u);
}

TEST(FontCache, ReleasedJustBeforeATurnoverLivesJustOverTwentySeconds) {
  ManualClock clock;
  Fonts cache(clock);
  Clock::TimePoint origin = clock.Now();
  clock.Set(origin + seconds(10) - nanoseconds(1));
  cache.Tick();
  InsertFont(cache, "a");  // the handle dies at once: released at 10 s - 1 ns
  clock.Set(origin + seconds(30) - nanoseconds(1));  // released + 20 s: still there
  cache.Tick();
  EXPECT_EQ(cache.font_count(), 1u);
  clock.Set(origin + seconds(30));
  cache.Tick();
  EXPECT_EQ(cache.font_count(), 0u);
}

TEST(FontCache, LookupHitReferencesAndMissIsEmpty) {
  ManualClock clock;
  Fonts cache(clock);
  InsertFont(cache, "a");
  Fonts::Handle hit = cache.Lookup("a");
  ASSERT_TRUE(hit);
  EXPECT_NE(hit->data, nullptr);
  EXPECT_FALSE(cache.Lookup("b"));
  EXPECT_EQ(cache.stats().hit_count, 1u);
  EXPECT_EQ(cache.stats().miss_count, 1u);
  Fonts::Handle moved = std::move(hit);
  EXPECT_FALSE(hit);
  EXPECT_EQ(cache.referenced_font_count(), 1u);
  EXPECT_EQ(cache.DropUnreferenced(), 0u);
  moved = Fonts::Handle();
  EXPECT_EQ(cache.referenced_font_count(), 0u);
}

TEST(FontCache, InsertOfACachedKeyKeepsTheCachedFont) {
  ManualClock clock;
  Fonts cache(clock);
  Fonts::Handle first = InsertFont(cache, "a", 100);
  Fonts::Handle second = InsertFont(cache, "a", 5000);
  EXPECT_EQ(first.get(), second.get());
  EXPECT_EQ(cache.font_count(), 1u);
}

TEST(FontCache, PressureModerateAgesCriticalDropsUnreferenced) {
  ManualClock clock;
  Fonts cache(clock);
  MemoryPressure pressure(clock);
  auto subscription = cache.SubscribeTo(pressure);
  Fonts::Handle used = InsertFont(cache, "used");
  InsertFont(cache, "unused");
  EXPECT_EQ(cache.OnMemoryPressure({MemoryPressureLevel::kModerate, false}), 0u);
  EXPECT_EQ(cache.OnMemoryPressure({MemoryPressureLevel::kModerate, true}), 0u);
  EXPECT_EQ(cache.OnMemoryPressure({MemoryPressureLevel::kModerate, false}), 0u);
  EXPECT_GT(cache.OnMemoryPressure({MemoryPressureLevel::kModerate, false}), 0u);  // third step
  InsertFont(cache, "unused2");
  MemoryPressureDispatchResult result = pressure.Dispatch(MemoryPressureLevel::kCritical);
  EXPECT_EQ(result.listeners.at(0).name, "fonts");
  EXPECT_GT(result.listeners.at(0).freed_bytes, 0u);
  EXPECT_EQ(cache.font_count(), 1u);
  EXPECT_TRUE(cache.Lookup("used"));
}

// discardable_bytes is the cache's own answer to "what would critical free": exactly the fonts no
// Handle holds, following a cost that changed while held.
TEST(FontCache, DiscardableBytesAreTheUnreferencedFontsAndCriticalFreesExactlyThem) {
  ManualClock clock;
  Fonts cache(clock);
  Fonts::Handle held = InsertFont(cache, "held", 1000);
  EXPECT_EQ(cache.discardable_bytes(), 0u);
  const uint64_t held_bytes = cache.used_bytes();
  InsertFont(cache, "released", 3000);
  const uint64_t unreferenced = cache.used_bytes() - held_bytes;
  ASSERT_GE(unreferenced, 3000u);
  EXPECT_EQ(cache.discardable_bytes(), unreferenced);
  cache.SetCost(held, 50000);  // grew while held: still not discardable
  EXPECT_EQ(cache.discardable_bytes(), unreferenced);
  Fonts::Handle again = cache.Lookup("released");  // referenced again
  EXPECT_EQ(cache.discardable_bytes(), 0u);
  again = Fonts::Handle();
  EXPECT_EQ(cache.discardable_bytes(), unreferenced);
  const uint64_t expected = cache.discardable_bytes();
  EXPECT_EQ(cache.OnMemoryPressure({MemoryPressureLevel::kCritical, false}), expected);
  EXPECT_EQ(cache.discardable_bytes(), 0u);
  EXPECT_EQ(cache.used_bytes(), 50000u);
  held = Fonts::Handle();
  EXPECT_EQ(cache.discardable_bytes(), 50000u);
}

TEST(FontCacheDeathTest, HandleMustNotOutliveTheCache) {
  EXPECT_DEATH(
      {
        ManualClock clock;
        auto cache = std::make_unique<Fonts>(clock);
        Fonts::Handle handle = InsertFont(*cache, "a");
        cache.reset();
      },
      "outlived its FontCache");
}

TEST(FontCache, SetCostFollowsAFontThatGrewAndItsDiscardReturnsTheNewCost) {
  ManualClock clock;
  Fonts cache(clock);
  Fonts::Handle other = InsertFont(cache, "other", 100);
  const uint64_t other_bytes = cache.used_bytes();
  {
    Fonts::Handle handle = InsertFont(cache, "growing", 100);
    cache.SetCost(handle, 5000);  // e.g. its glyph table filled while drawing
    EXPECT_EQ(cache.used_bytes(), other_bytes + 5000);
    cache.SetCost(handle, 300);
    EXPECT_EQ(cache.used_bytes(), other_bytes + 300);
  }
  EXPECT_EQ(cache.DropUnreferenced(), 300u);
  EXPECT_EQ(cache.used_bytes(), other_bytes);
}

TEST(FontCacheDeathTest, SetCostNeedsAHandleOfThisCache) {
  EXPECT_DEATH(
      {
        ManualClock clock;
        Fonts cache(clock);
        Fonts other(clock);
        Fonts::Handle handle = InsertFont(other, "a");
        cache.SetCost(handle, 1);
      },
      "SetCost with a handle of another cache");
  EXPECT_DEATH(
      {
        ManualClock clock;
        Fonts cache(clock);
        cache.SetCost(Fonts::Handle(), 1);
      },
      "SetCost with a handle of another cache or an empty one");
}

TEST(FontCache, ReportedBytesEqualTheUsableSizesItHolds) {
  lethe_stats_t before;
  lethe_stats(&before);
  ManualClock clock;
  MemoryReporter reporter;
  {
    Fonts cache(clock);
    auto registration = cache.RegisterReporter(reporter);
    Fonts::Handle kept = InsertFont(cache, "a", 70000);
    InsertFont(cache, "b", 333);
    lethe_stats_t during;
    lethe_stats(&during);
    MemoryReport report = reporter.Collect();
    EXPECT_EQ(report.Amount("explicit/fonts"),
              static_cast<int64_t>(during.allocated_bytes - before.allocated_bytes));
    EXPECT_EQ(report.Amount("lethe-counters/fonts/hits"), 0);
  }
  lethe_stats_t after;
  lethe_stats(&after);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
}

}  // namespace
}  // namespace lethe
