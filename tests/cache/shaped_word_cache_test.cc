#include "lethe/shaped_word_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lethe/alloc.h"

namespace lethe {
namespace {

using std::chrono::nanoseconds;
using std::chrono::seconds;

// Glyph indices in a block of Lethe's allocator (move-only).
class Glyphs {
 public:
  Glyphs() = default;
  explicit Glyphs(size_t count) : data_(static_cast<uint16_t*>(lethe_malloc(count * 2))) {}
  Glyphs(Glyphs&& other) noexcept : data_(std::exchange(other.data_, nullptr)) {}
  Glyphs& operator=(Glyphs&& other) noexcept {
    std::swap(data_, other.data_);
    return *this;
  }
  ~Glyphs() { lethe_free(data_); }
  uint64_t Cost() const { return lethe_usable_size(data_); }

 private:
  uint16_t* data_ = nullptr;
};

using Words = ShapedWordCache<Glyphs>;

ShapedWordInsertOutcome Put(Words& cache, std::u16string_view word, uint64_t font = 1) {
  Glyphs glyphs(word.size());
  uint64_t cost = glyphs.Cost();
  return cache.Insert(font, word, std::move(glyphs), cost);
}

TEST(ShapedWordCache, LookupByFontAndWord) {
  ManualClock clock;
  Words cache(clock);
  ASSERT_EQ(Put(cache, u"hello"), ShapedWordInsertOutcome::kInserted);
  EXPECT_NE(cache.Lookup(1, u"hello"), nullptr);
  EXPECT_EQ(cache.Lookup(2, u"hello"), nullptr);
  EXPECT_EQ(cache.Lookup(1, u"hell"), nullptr);
  EXPECT_EQ(Put(cache, u"hello"), ShapedWordInsertOutcome::kAlreadyPresent);
  EXPECT_EQ(Put(cache, u""), ShapedWordInsertOutcome::kEmpty);
  EXPECT_EQ(cache.stats().hit_count, 1u);
  EXPECT_EQ(cache.stats().miss_count, 2u);
}

TEST(ShapedWordCache, WordsOfThirtyTwoCharactersAreCachedLongerOnesNot) {
  ManualClock clock;
  Words cache(clock);
  std::u16string word32(32, u'a');
  std::u16string word33(33, u'a');
  EXPECT_EQ(Put(cache, word32), ShapedWordInsertOutcome::kInserted);
  EXPECT_EQ(Put(cache, word33), ShapedWordInsertOutcome::kTooLong);
  EXPECT_EQ(cache.word_count(), 1u);
  EXPECT_EQ(cache.stats().too_long_count, 1u);
}

TEST(ShapedWordCache, AtMostTenThousandWordsEvictingTheOldestGeneration) {
  ManualClock clock;
  Words cache(clock);
  ASSERT_EQ(Put(cache, u"old"), ShapedWordInsertOutcome::kInserted);
  cache.OnMemoryPressure({MemoryPressureLevel::kNone, false});  // no-op
  clock.Advance(seconds(20));
  cache.Tick();  // "old" now one generation older than what follows
  for (int i = 1; i < 10000; ++i) {
    ASSERT_EQ(Put(cache, u"w" + std::u16string(1, static_cast<char16_t>(0x4e00 + i))),
              ShapedWordInsertOutcome::kInserted);
  }
  EXPECT_EQ(cache.word_count(), 10000u);
  EXPECT_EQ(cache.stats().evicted_for_count_count, 0u);
  ASSERT_EQ(Put(cache, u"new"), ShapedWordInsertOutcome::kInserted);
  EXPECT_EQ(cache.word_count(), 10000u);
  EXPECT_EQ(cache.stats().evicted_for_count_count, 1u);
  EXPECT_EQ(cache.Lookup(1, u"old"), nullptr);  // alone in the oldest generation
  EXPECT_NE(cache.Lookup(1, u"new"), nullptr);
  EXPECT_NE(cache.Lookup(1, u"w" + std::u16string(1, static_cast<char16_t>(0x4e01))), nullptr);
}

TEST(ShapedWordCache, UnusedWordExpiresAfterFortyToSixtySeconds) {
  ManualClock clock;
  Words cache(clock);  // 3 x 20 s
  Clock::TimePoint origin = clock.Now();
  ASSERT_EQ(Put(cache, u"a"), ShapedWordInsertOutcome::kInserted);
  clock.Set(origin + seconds(20) - nanoseconds(1));
  ASSERT_EQ(Put(cache, u"b"), ShapedWordInsertOutcome::kInserted);
  clock.Set(origin + seconds(60) - nanoseconds(1));  // b: 40 s after, a: 60 s - 1 ns
  cache.Tick();
  EXPECT_EQ(cache.word_count(), 2u);
  clock.Set(origin + seconds(60));  // a: exactly 60 s; b: 40 s + 1 ns
  cache.Tick();
  EXPECT_EQ(cache.word_count(), 0u);
  EXPECT_EQ(cache.stats().expired_count, 2u);
}

TEST(ShapedWordCache, LookupRestartsTheWindow) {
  ManualClock clock;
  Words cache(clock);
  Clock::TimePoint origin = clock.Now();
  ASSERT_EQ(Put(cache, u"a"), ShapedWordInsertOutcome::kInserted);
  clock.Set(origin + seconds(50));
  cache.Tick();
  ASSERT_NE(cache.Lookup(1, u"a"), nullptr);
  clock.Set(origin + seconds(100) - nanoseconds(1));
  cache.Tick();
  EXPECT_EQ(cache.word_count(), 1u);
  clock.Set(origin + seconds(100));
  cache.Tick();
  EXPECT_EQ(cache.word_count(), 0u);
}

TEST(ShapedWordCache, EveryPressureLevelEmptiesIt) {
  ManualClock clock;
  Words cache(clock);
  MemoryPressure pressure(clock);
  auto subscription = cache.SubscribeTo(pressure);
  ASSERT_EQ(Put(cache, u"a"), ShapedWordInsertOutcome::kInserted);
  uint64_t held = cache.used_bytes();
  MemoryPressureDispatchResult result = pressure.Dispatch(MemoryPressureLevel::kModerate);
  EXPECT_EQ(result.listeners.at(0).name, "shaped-words");
  EXPECT_EQ(result.listeners.at(0).freed_bytes, held);
  EXPECT_EQ(cache.word_count(), 0u);
  ASSERT_EQ(Put(cache, u"b"), ShapedWordInsertOutcome::kInserted);
  EXPECT_TRUE(pressure.Dispatch(MemoryPressureLevel::kModerate).event.ongoing);
  EXPECT_EQ(cache.word_count(), 0u);  // ongoing too: it is cheap flushing
  ASSERT_EQ(Put(cache, u"c"), ShapedWordInsertOutcome::kInserted);
  pressure.Dispatch(MemoryPressureLevel::kCritical);
  EXPECT_EQ(cache.word_count(), 0u);
}

TEST(ShapedWordCache, ReportedBytesEqualTheUsableSizesItHolds) {
  lethe_stats_t before;
  lethe_stats(&before);
  ManualClock clock;
  MemoryReporter reporter;
  {
    Words cache(clock);
    auto registration = cache.RegisterReporter(reporter);
    for (char16_t c = u'a'; c <= u'z'; ++c) {
      ASSERT_EQ(Put(cache, std::u16string(static_cast<size_t>(c - u'a' + 1), c)),
                ShapedWordInsertOutcome::kInserted);
    }
    lethe_stats_t during;
    lethe_stats(&during);
    MemoryReport report = reporter.Collect();
    EXPECT_EQ(report.Amount("explicit/shaped-words"),
              static_cast<int64_t>(during.allocated_bytes - before.allocated_bytes));
  }
  lethe_stats_t after;
  lethe_stats(&after);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
}

}  // namespace
}  // namespace lethe
