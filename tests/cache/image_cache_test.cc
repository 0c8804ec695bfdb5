#include "lethe/image_cache.h"

#include <gtest/gtest.h>

#include <vector>

#include "about_memory_rules.h"
#include "lethe/alloc.h"

namespace lethe {
namespace {

using std::chrono::nanoseconds;
using std::chrono::seconds;

std::vector<uint8_t> Bytes(size_t size, uint8_t fill = 0x42) { return std::vector<uint8_t>(size, fill); }

const ImageHeaderInfo kPng{ImageFormat::kPng, 64, 32, 1};

ImageCacheOptions Options(uint64_t max_bytes = 1 << 20) {
  ImageCacheOptions options;
  options.max_bytes = max_bytes;
  return options;
}

// The cost of `size` bytes in one of Lethe's blocks (what the cache counts).
uint64_t Cost(size_t size) {
  void* block = lethe_malloc(size);
  uint64_t usable = lethe_usable_size(block);
  lethe_free(block);
  return usable;
}

TEST(ImageCache, GetReturnsTheBytesAndHeader) {
  ManualClock clock;
  ImageCache cache(clock, Options());
  std::vector<uint8_t> bytes = Bytes(1000, 7);
  ASSERT_EQ(cache.Put("http://a/x.png", bytes, kPng), ImageCacheOutcome::kStored);
  auto image = cache.Get("http://a/x.png");
  ASSERT_NE(image, nullptr);
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), image->bytes().begin(), image->bytes().end()));
  EXPECT_EQ(image->header().width, 64u);
  EXPECT_EQ(image->header().format, ImageFormat::kPng);
  EXPECT_EQ(cache.Get("http://a/y.png"), nullptr);
  EXPECT_EQ(cache.stats().hit_count, 1u);
  EXPECT_EQ(cache.stats().miss_count, 1u);
  EXPECT_EQ(cache.used_bytes(), image->MemoryBytes());
}

TEST(ImageCache, RejectsEmptyInput) {
  ManualClock clock;
  ImageCache cache(clock, Options());
  EXPECT_EQ(cache.Put("u", {}, kPng), ImageCacheOutcome::kInvalid);
  EXPECT_EQ(cache.Put("", Bytes(10), kPng), ImageCacheOutcome::kInvalid);
  EXPECT_STREQ(ImageCacheOutcomeName(ImageCacheOutcome::kOutOfMemory), "out of memory");
}

TEST(ImageCache, OutOfMemoryIsReportedAndCounted) {
  ManualClock clock;
  ImageCache cache(clock, Options());
  lethe_fail_after(1);
  EXPECT_EQ(cache.Put("u", Bytes(100), kPng), ImageCacheOutcome::kOutOfMemory);
  lethe_fail_after(0);
  EXPECT_EQ(cache.entry_count(), 0u);
  EXPECT_EQ(cache.stats().out_of_memory_count, 1u);
  EXPECT_EQ(cache.Put("u", Bytes(100), kPng), ImageCacheOutcome::kStored);
}

TEST(ImageCache, BytesStoredAgainWithinFiveSecondsOfTheirDropAreARegret) {
  ManualClock clock;
  ImageCache cache(clock, Options());
  ASSERT_EQ(cache.Put("http://a/x.png", Bytes(1000), kPng), ImageCacheOutcome::kStored);
  ASSERT_EQ(cache.Put("http://a/y.png", Bytes(2000), kPng), ImageCacheOutcome::kStored);
  ASSERT_EQ(cache.Put("http://a/z.png", Bytes(3000), kPng), ImageCacheOutcome::kStored);
  cache.Remove("http://a/z.png");  // removed, not dropped: never a regret
  cache.OnMemoryPressure({MemoryPressureLevel::kCritical, false});
  clock.Advance(seconds(5));
  ASSERT_EQ(cache.Put("http://a/x.png", Bytes(1000), kPng), ImageCacheOutcome::kStored);
  ASSERT_EQ(cache.Put("http://a/z.png", Bytes(3000), kPng), ImageCacheOutcome::kStored);
  clock.Advance(seconds(1));
  ASSERT_EQ(cache.Put("http://a/y.png", Bytes(2000), kPng), ImageCacheOutcome::kStored);
  EXPECT_EQ(cache.stats().regret_count, 1u);
  EXPECT_EQ(cache.stats().regret_bytes, Cost(1000));
  // Stored again later: the drop was remembered once, so it counts once.
  cache.OnMemoryPressure({MemoryPressureLevel::kCritical, false});
  ASSERT_EQ(cache.Put("http://a/x.png", Bytes(1000), kPng), ImageCacheOutcome::kStored);
  ASSERT_EQ(cache.Put("http://a/x.png", Bytes(1000), kPng), ImageCacheOutcome::kStored);
  EXPECT_EQ(cache.stats().regret_count, 2u);
  MemoryReporter reporter;
  auto registration = cache.RegisterReporter(reporter);
  EXPECT_EQ(reporter.Collect().Amount("lethe-counters/images/image-cache/regrets"), 2);
}

TEST(ImageCache, UnreferencedEntryExpiresAtTheEndOfItsWindow) {
  ManualClock clock;
  ImageCache cache(clock, Options());  // 2 x 60 s
  Clock::TimePoint origin = clock.Now();
  ASSERT_EQ(cache.Put("u", Bytes(100), kPng), ImageCacheOutcome::kStored);
  clock.Set(origin + seconds(120) - nanoseconds(1));
  cache.Tick();
  EXPECT_EQ(cache.entry_count(), 1u);
  clock.Set(origin + seconds(120));
  EXPECT_EQ(cache.Tick(), Cost(100));
  EXPECT_EQ(cache.entry_count(), 0u);
  EXPECT_EQ(cache.stats().expired_count, 1u);
}

TEST(ImageCache, ReferencedEntryNeverExpiresAndAgesFromItsLastRelease) {
  ManualClock clock;
  ImageCache cache(clock, Options());
  Clock::TimePoint origin = clock.Now();
  ASSERT_EQ(cache.Put("u", Bytes(100), kPng), ImageCacheOutcome::kStored);
  ASSERT_TRUE(cache.AddReference("u"));
  ASSERT_TRUE(cache.AddReference("u"));  // two documents
  EXPECT_FALSE(cache.AddReference("missing"));
  clock.Set(origin + std::chrono::hours(2));
  cache.Tick();
  cache.RemoveReference("u");
  clock.Set(origin + std::chrono::hours(4));
  cache.Tick();
  EXPECT_EQ(cache.entry_count(), 1u);
  cache.RemoveReference("u");  // released at 4 h: expires at 4 h + 120 s
  clock.Set(origin + std::chrono::hours(4) + seconds(120) - nanoseconds(1));
  cache.Tick();
  EXPECT_EQ(cache.entry_count(), 1u);
  clock.Set(origin + std::chrono::hours(4) + seconds(120));
  cache.Tick();
  EXPECT_EQ(cache.entry_count(), 0u);
}

TEST(ImageCacheDeathTest, RemoveReferenceWithoutAddIsACallerBug) {
  ManualClock clock;
  ImageCache cache(clock, Options());
  ASSERT_EQ(cache.Put("u", Bytes(100), kPng), ImageCacheOutcome::kStored);
  EXPECT_DEATH(cache.RemoveReference("u"), "without a matching AddReference");
}

TEST(ImageCache, CapCountsEveryEntryAndEvictsUnreferencedOldestFirst) {
  ManualClock clock;
  const uint64_t cost = Cost(1000);
  ImageCache cache(clock, Options(3 * cost));
  ASSERT_EQ(cache.Put("old", Bytes(1000), kPng), ImageCacheOutcome::kStored);
  cache.OnMemoryPressure({MemoryPressureLevel::kModerate, false});  // one generation older
  ASSERT_EQ(cache.Put("referenced", Bytes(1000), kPng), ImageCacheOutcome::kStored);
  ASSERT_TRUE(cache.AddReference("referenced"));
  ASSERT_EQ(cache.Put("new", Bytes(1000), kPng), ImageCacheOutcome::kStored);
  EXPECT_EQ(cache.used_bytes(), 3 * cost);  // exactly full: nothing evicted
  EXPECT_EQ(cache.stats().evicted_for_cap_count, 0u);
  ASSERT_EQ(cache.Put("newer", Bytes(1000), kPng), ImageCacheOutcome::kStored);
  EXPECT_EQ(cache.Get("old"), nullptr);
  EXPECT_NE(cache.Get("new"), nullptr);
  EXPECT_NE(cache.Get("referenced"), nullptr);
  EXPECT_EQ(cache.stats().evicted_for_cap_count, 1u);
}

TEST(ImageCache, OverBudgetWhenOnlyReferencedEntriesCouldMakeRoom) {
  ManualClock clock;
  const uint64_t cost = Cost(1000);
  ImageCache cache(clock, Options(2 * cost));
  ASSERT_EQ(cache.Put("a", Bytes(1000), kPng), ImageCacheOutcome::kStored);
  ASSERT_TRUE(cache.AddReference("a"));
  ASSERT_EQ(cache.Put("b", Bytes(1000), kPng), ImageCacheOutcome::kStored);
  EXPECT_EQ(cache.Put("big", Bytes(static_cast<size_t>(cost) + 64), kPng),
            ImageCacheOutcome::kOverBudget);
  EXPECT_NE(cache.Get("b"), nullptr);  // nothing evicted for a refused put
  EXPECT_EQ(cache.stats().over_budget_count, 1u);
  EXPECT_EQ(cache.Put("fits", Bytes(1000), kPng), ImageCacheOutcome::kStored);
  EXPECT_EQ(cache.Get("b"), nullptr);
}

TEST(ImageCache, ReplacingKeepsTheReferences) {
  ManualClock clock;
  ImageCache cache(clock, Options());
  ASSERT_EQ(cache.Put("u", Bytes(100), kPng), ImageCacheOutcome::kStored);
  ASSERT_TRUE(cache.AddReference("u"));
  ASSERT_EQ(cache.Put("u", Bytes(5000), kPng), ImageCacheOutcome::kStored);
  EXPECT_EQ(cache.entry_count(), 1u);
  EXPECT_EQ(cache.referenced_bytes(), Cost(5000));
  EXPECT_EQ(cache.used_bytes(), Cost(5000));
  EXPECT_EQ(cache.DropUnreferenced(), 0u);
}

TEST(ImageCache, PlaceholderIsCountedInItsBytes) {
  ManualClock clock;
  ImageCache cache(clock, Options());
  ASSERT_EQ(cache.Put("u", Bytes(1000), kPng), ImageCacheOutcome::kStored);
  ASSERT_EQ(cache.SetPlaceholder("u", Bytes(48, 1)), ImageCacheOutcome::kStored);
  auto image = cache.Get("u");
  EXPECT_EQ(image->placeholder().size(), 48u);
  EXPECT_EQ(image->bytes().size(), 1000u);
  EXPECT_EQ(cache.used_bytes(), Cost(1000) + Cost(48));
  EXPECT_EQ(cache.SetPlaceholder("u", Bytes(EncodedImage::kMaxPlaceholderBytes + 1)),
            ImageCacheOutcome::kInvalid);
  EXPECT_EQ(cache.SetPlaceholder("missing", Bytes(8)), ImageCacheOutcome::kInvalid);
}

TEST(ImageCache, PressureModerateAgesCriticalDropsEveryUnreferenced) {
  ManualClock clock;
  ImageCache cache(clock, Options());
  MemoryPressure pressure(clock);
  auto subscription = cache.SubscribeTo(pressure);
  ASSERT_EQ(cache.Put("kept", Bytes(100), kPng), ImageCacheOutcome::kStored);
  ASSERT_TRUE(cache.AddReference("kept"));
  ASSERT_EQ(cache.Put("a", Bytes(100), kPng), ImageCacheOutcome::kStored);
  EXPECT_EQ(cache.OnMemoryPressure({MemoryPressureLevel::kModerate, false}), 0u);
  EXPECT_EQ(cache.OnMemoryPressure({MemoryPressureLevel::kModerate, true}), 0u);
  ASSERT_EQ(cache.Put("b", Bytes(100), kPng), ImageCacheOutcome::kStored);
  EXPECT_EQ(cache.OnMemoryPressure({MemoryPressureLevel::kModerate, false}), Cost(100));  // "a"
  MemoryPressureDispatchResult result = pressure.Dispatch(MemoryPressureLevel::kCritical);
  EXPECT_EQ(result.listeners.at(0).name, "image-cache");
  EXPECT_EQ(result.listeners.at(0).freed_bytes, Cost(100));  // "b"
  EXPECT_EQ(cache.entry_count(), 1u);
  EXPECT_NE(cache.Get("kept"), nullptr);
}

TEST(ImageCache, ReaderKeepsItsBytesAfterTheEntryGoes) {
  ManualClock clock;
  ImageCache cache(clock, Options());
  ASSERT_EQ(cache.Put("u", Bytes(100, 9), kPng), ImageCacheOutcome::kStored);
  auto image = cache.Get("u");
  EXPECT_EQ(cache.Remove("u"), Cost(100));
  EXPECT_EQ(image->bytes()[99], 9);
  EXPECT_EQ(cache.Remove("u"), 0u);
}

TEST(ImageCache, ReportedBytesEqualTheUsableSizesItHolds) {
  lethe_stats_t before;
  lethe_stats(&before);
  ManualClock clock;
  MemoryReporter reporter;
  {
    ImageCache cache(clock, Options(16 << 20));
    auto registration = cache.RegisterReporter(reporter);
    uint64_t compressed = 0;
    for (int i = 0; i < 30; ++i) {
      std::string url = "http://site/" + std::to_string(i) + ".png";
      ASSERT_EQ(cache.Put(url, Bytes(static_cast<size_t>(100 + i * 3001)), kPng),
                ImageCacheOutcome::kStored);
      compressed += Cost(static_cast<size_t>(100 + i * 3001));
      if (i % 3 == 0) {
        ASSERT_EQ(cache.SetPlaceholder(url, Bytes(40)), ImageCacheOutcome::kStored);
      }
    }
    MemoryReport report = reporter.Collect();
    EXPECT_EQ(report.Amount("explicit/images/encoded/compressed"), static_cast<int64_t>(compressed));
    EXPECT_EQ(report.Amount("explicit/images/encoded/placeholders"),
              static_cast<int64_t>(10 * Cost(40)));
    lethe_stats_t during;
    lethe_stats(&during);
    EXPECT_EQ(during.allocated_bytes - before.allocated_bytes, cache.used_bytes());
    auto json = nlohmann::ordered_json::parse(MemoryReportToJson(report));
    EXPECT_EQ(testing::AboutMemoryViolations(json), std::vector<std::string>{});
  }
  lethe_stats_t after;
  lethe_stats(&after);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
}

}  // namespace
}  // namespace lethe
