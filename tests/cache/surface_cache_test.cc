#include "lethe/surface_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <thread>

#include "about_memory_rules.h"
#include "lethe/alloc.h"
#include "low_memory_test_util.h"

namespace lethe {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

// A surface with an injected cost (no pixels): for the cap and order rules.
class FakeSurface : public CachedSurface {
 public:
  explicit FakeSurface(size_t bytes, bool animated = false) : bytes_(bytes), animated_(animated) {}
  size_t MemoryBytes() const override { return bytes_; }
  bool IsAnimated() const override { return animated_; }

 private:
  size_t bytes_;
  bool animated_;
};

using testing::HeapSurface;

std::shared_ptr<CachedSurface> Fake(size_t bytes) { return std::make_shared<FakeSurface>(bytes); }

SurfaceKey Key(uint64_t image, uint32_t size = 100) { return SurfaceKey{image, size, size, 0}; }

SurfaceCacheOptions Options(uint64_t max_bytes = 1 << 20) {
  SurfaceCacheOptions options;
  options.max_bytes = max_bytes;
  return options;
}

TEST(SurfaceCache, LookupFindsWhatWasInsertedAndCountsHitsAndMisses) {
  ManualClock clock;
  SurfaceCache cache(clock, Options());
  auto surface = Fake(1000);
  EXPECT_EQ(cache.Lookup(Key(1)), nullptr);
  EXPECT_EQ(cache.Insert(Key(1), surface, milliseconds(1)), SurfaceInsertOutcome::kInserted);
  EXPECT_EQ(cache.Lookup(Key(1)), surface);
  EXPECT_EQ(cache.Lookup(SurfaceKey{1, 100, 100, 1}), nullptr);  // other flags: other surface
  EXPECT_EQ(cache.used_bytes(), 1000u);
  SurfaceCacheStats stats = cache.stats();
  EXPECT_EQ(stats.hit_count, 1u);
  EXPECT_EQ(stats.miss_count, 2u);
}

TEST(SurfaceCache, RefusesNullZeroCostAndDuplicateSurfaces) {
  ManualClock clock;
  SurfaceCache cache(clock, Options());
  EXPECT_EQ(cache.Insert(Key(1), nullptr, milliseconds(1)), SurfaceInsertOutcome::kInvalid);
  EXPECT_EQ(cache.Insert(Key(1), Fake(0), milliseconds(1)), SurfaceInsertOutcome::kInvalid);
  EXPECT_EQ(cache.Insert(Key(1), Fake(10), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  EXPECT_EQ(cache.Insert(Key(1), Fake(10), milliseconds(1)), SurfaceInsertOutcome::kAlreadyPresent);
  EXPECT_EQ(cache.used_bytes(), 10u);
  EXPECT_STREQ(SurfaceInsertOutcomeName(SurfaceInsertOutcome::kOverBudget), "over budget");
}

TEST(SurfaceCache, UnlockedSurfaceExpiresAtTheEndOfItsSecondGeneration) {
  ManualClock clock;
  SurfaceCache cache(clock, Options());  // 2 x 10 s
  Clock::TimePoint origin = clock.Now();
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  clock.Set(origin + seconds(20) - nanoseconds(1));
  EXPECT_EQ(cache.Tick(), 0u);
  EXPECT_EQ(cache.surface_count(), 1u);
  clock.Set(origin + seconds(20));
  EXPECT_EQ(cache.Tick(), 100u);
  EXPECT_EQ(cache.surface_count(), 0u);
  EXPECT_EQ(cache.stats().expired_count, 1u);
}

TEST(SurfaceCache, SurfaceInsertedJustBeforeATurnoverLivesJustOverOnePeriod) {
  ManualClock clock;
  SurfaceCache cache(clock, Options());
  Clock::TimePoint origin = clock.Now();
  clock.Set(origin + seconds(10) - nanoseconds(1));
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  clock.Set(origin + seconds(20) - nanoseconds(1));  // t + 10 s: (K-1)P, still alive
  cache.Tick();
  EXPECT_EQ(cache.surface_count(), 1u);
  clock.Set(origin + seconds(20));  // t + 10 s + 1 ns
  cache.Tick();
  EXPECT_EQ(cache.surface_count(), 0u);
}

TEST(SurfaceCache, LookupRestartsTheExpiryWindow) {
  ManualClock clock;
  SurfaceCache cache(clock, Options());
  Clock::TimePoint origin = clock.Now();
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  clock.Set(origin + seconds(15));
  cache.Tick();
  ASSERT_NE(cache.Lookup(Key(1)), nullptr);
  clock.Set(origin + seconds(30) - nanoseconds(1));
  cache.Tick();
  EXPECT_EQ(cache.surface_count(), 1u);
  clock.Set(origin + seconds(30));
  cache.Tick();
  EXPECT_EQ(cache.surface_count(), 0u);
}

TEST(SurfaceCache, ConfiguredGenerationsSetTheWindow) {
  ManualClock clock;
  SurfaceCacheOptions options = Options();
  options.generation_count = 3;
  options.generation_period = seconds(5);
  SurfaceCache cache(clock, options);
  Clock::TimePoint origin = clock.Now();
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  clock.Set(origin + seconds(15) - nanoseconds(1));
  cache.Tick();
  EXPECT_EQ(cache.surface_count(), 1u);
  clock.Set(origin + seconds(15));
  cache.Tick();
  EXPECT_EQ(cache.surface_count(), 0u);
}

TEST(SurfaceCache, LockedSurfacesNeverExpireAndStartExpiringAtUnlock) {
  ManualClock clock;
  SurfaceCache cache(clock, Options());
  Clock::TimePoint origin = clock.Now();
  cache.LockImage(1);
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  EXPECT_EQ(cache.locked_bytes(), 100u);
  clock.Set(origin + std::chrono::hours(3));
  cache.Tick();
  EXPECT_EQ(cache.surface_count(), 1u);
  cache.UnlockImage(1);  // at 3 h: the next turnovers are at 3 h + 10 s and 3 h + 20 s
  EXPECT_EQ(cache.locked_bytes(), 0u);
  clock.Set(origin + std::chrono::hours(3) + seconds(20) - nanoseconds(1));
  cache.Tick();
  EXPECT_EQ(cache.surface_count(), 1u);
  clock.Set(origin + std::chrono::hours(3) + seconds(20));
  cache.Tick();
  EXPECT_EQ(cache.surface_count(), 0u);
}

TEST(SurfaceCache, LocksAreCounted) {
  ManualClock clock;
  SurfaceCache cache(clock, Options());
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  cache.LockImage(1);  // locks a surface already cached
  cache.LockImage(1);
  cache.UnlockImage(1);
  EXPECT_TRUE(cache.IsImageLocked(1));
  EXPECT_EQ(cache.DiscardUnlocked(), 0u);
  cache.UnlockImage(1);
  EXPECT_FALSE(cache.IsImageLocked(1));
  EXPECT_EQ(cache.DiscardUnlocked(), 100u);
}

TEST(SurfaceCacheDeathTest, UnlockWithoutLockIsACallerBug) {
  ManualClock clock;
  SurfaceCache cache(clock, Options());
  EXPECT_DEATH(cache.UnlockImage(7), "without a matching LockImage");
}

TEST(SurfaceCache, RemoveImageDropsItsLockedSurfacesToo) {
  ManualClock clock;
  SurfaceCache cache(clock, Options());
  cache.LockImage(1);
  ASSERT_EQ(cache.Insert(Key(1, 10), Fake(100), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  ASSERT_EQ(cache.Insert(Key(1, 20), Fake(200), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  ASSERT_EQ(cache.Insert(Key(2), Fake(50), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  EXPECT_EQ(cache.RemoveImage(1), 300u);
  EXPECT_FALSE(cache.IsImageLocked(1));
  EXPECT_EQ(cache.used_bytes(), 50u);
  EXPECT_EQ(cache.locked_bytes(), 0u);
  EXPECT_EQ(cache.RemoveImage(99), 0u);
}

TEST(SurfaceCache, CapIsExactNoEvictionWhenTheInsertFillsItToTheByte) {
  ManualClock clock;
  SurfaceCache cache(clock, Options(1000));
  ASSERT_EQ(cache.Insert(Key(1), Fake(600), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  ASSERT_EQ(cache.Insert(Key(2), Fake(400), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  EXPECT_EQ(cache.used_bytes(), 1000u);
  EXPECT_EQ(cache.stats().evicted_for_cap_count, 0u);
  ASSERT_EQ(cache.Insert(Key(3), Fake(1), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  EXPECT_EQ(cache.stats().evicted_for_cap_count, 1u);
  EXPECT_LE(cache.used_bytes(), 1000u);
}

TEST(SurfaceCache, EvictsTheCheapestToRecreatePerByteFirst) {
  ManualClock clock;
  SurfaceCache cache(clock, Options(3000));
  // 1000 bytes each: slow (2000 ns/B, a progressive JPEG), fast (10 ns/B), medium (100 ns/B).
  ASSERT_EQ(cache.Insert(Key(1), Fake(1000), milliseconds(2)), SurfaceInsertOutcome::kInserted);
  ASSERT_EQ(cache.Insert(Key(2), Fake(1000), microseconds(10)), SurfaceInsertOutcome::kInserted);
  ASSERT_EQ(cache.Insert(Key(3), Fake(1000), microseconds(100)), SurfaceInsertOutcome::kInserted);
  ASSERT_EQ(cache.Insert(Key(4), Fake(500), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  EXPECT_EQ(cache.Lookup(Key(2)), nullptr);  // the fast one went, though it is not the oldest
  EXPECT_NE(cache.Lookup(Key(1)), nullptr);
  EXPECT_NE(cache.Lookup(Key(3)), nullptr);
  ASSERT_EQ(cache.Insert(Key(5), Fake(1000), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  EXPECT_EQ(cache.Lookup(Key(3)), nullptr);  // then the medium one
  EXPECT_NE(cache.Lookup(Key(1)), nullptr);
}

TEST(SurfaceCache, BigFastSurfaceGoesBeforeSmallSlowOne) {
  ManualClock clock;
  SurfaceCache cache(clock, Options(10000));
  // Small and slow: 1000 B in 1 ms (1000 ns/B). Big and fast: 8000 B in 1 ms (125 ns/B).
  ASSERT_EQ(cache.Insert(Key(1), Fake(1000), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  ASSERT_EQ(cache.Insert(Key(2), Fake(8000), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  ASSERT_EQ(cache.Insert(Key(3), Fake(2000), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  EXPECT_EQ(cache.Lookup(Key(2)), nullptr);
  EXPECT_NE(cache.Lookup(Key(1)), nullptr);
}

TEST(SurfaceCache, EqualCostPerByteEvictsTheLargerFirst) {
  ManualClock clock;
  SurfaceCache cache(clock, Options(3000));
  ASSERT_EQ(cache.Insert(Key(1), Fake(1000), microseconds(100)), SurfaceInsertOutcome::kInserted);
  ASSERT_EQ(cache.Insert(Key(2), Fake(2000), microseconds(200)), SurfaceInsertOutcome::kInserted);
  ASSERT_EQ(cache.Insert(Key(3), Fake(100), microseconds(1)), SurfaceInsertOutcome::kInserted);
  EXPECT_EQ(cache.Lookup(Key(2)), nullptr);
  EXPECT_NE(cache.Lookup(Key(1)), nullptr);
}

TEST(SurfaceCache, OverBudgetWhenOnlyLockedSurfacesCouldMakeRoom) {
  ManualClock clock;
  SurfaceCache cache(clock, Options(1000));
  cache.LockImage(1);
  ASSERT_EQ(cache.Insert(Key(1), Fake(700), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  ASSERT_EQ(cache.Insert(Key(2), Fake(200), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  // 301 > 1000 - 700: refused, and the unlocked surface is not discarded for nothing.
  EXPECT_EQ(cache.Insert(Key(3), Fake(301), milliseconds(1)), SurfaceInsertOutcome::kOverBudget);
  EXPECT_NE(cache.Lookup(Key(2)), nullptr);
  EXPECT_EQ(cache.stats().over_budget_count, 1u);
  // Exactly 300 fits once the unlocked one goes.
  EXPECT_EQ(cache.Insert(Key(3), Fake(300), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  EXPECT_EQ(cache.Lookup(Key(2)), nullptr);
  EXPECT_EQ(cache.used_bytes(), 1000u);
}

TEST(SurfaceCache, SurfaceLargerThanTheCapIsOverBudget) {
  ManualClock clock;
  SurfaceCache cache(clock, Options(1000));
  EXPECT_EQ(cache.Insert(Key(1), Fake(1001), milliseconds(1)), SurfaceInsertOutcome::kOverBudget);
  EXPECT_EQ(cache.Insert(Key(1), Fake(1000), milliseconds(1)), SurfaceInsertOutcome::kInserted);
}

TEST(SurfaceCache, InsertIntoALockedImageCountsAgainstTheBudgetAsLocked) {
  ManualClock clock;
  SurfaceCache cache(clock, Options(1000));
  cache.LockImage(1);
  ASSERT_EQ(cache.Insert(Key(1, 10), Fake(600), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  EXPECT_EQ(cache.Insert(Key(1, 20), Fake(401), milliseconds(1)), SurfaceInsertOutcome::kOverBudget);
  EXPECT_EQ(cache.Insert(Key(1, 20), Fake(400), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  EXPECT_EQ(cache.locked_bytes(), 1000u);
}

TEST(SurfaceCache, DefaultCapIsAQuarterOfRamAtMostOneGiB) {
  uint64_t ram = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                 static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
  EXPECT_EQ(DefaultSurfaceCacheMaxBytes(), std::min<uint64_t>(ram / 4, uint64_t{1} << 30));
  ManualClock clock;
  EXPECT_EQ(SurfaceCache(clock).max_bytes(), DefaultSurfaceCacheMaxBytes());
}

TEST(SurfaceCache, ModeratePressureAgesOneGenerationAndOngoingDoesNothing) {
  ManualClock clock;
  SurfaceCache cache(clock, Options());
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  // The surface sits in the newest generation: one aging step moves it to the oldest.
  EXPECT_EQ(cache.OnMemoryPressure({MemoryPressureLevel::kModerate, false}), 0u);
  EXPECT_EQ(cache.OnMemoryPressure({MemoryPressureLevel::kModerate, true}), 0u);
  EXPECT_EQ(cache.surface_count(), 1u);
  EXPECT_EQ(cache.OnMemoryPressure({MemoryPressureLevel::kModerate, false}), 100u);
  EXPECT_EQ(cache.stats().discarded_by_pressure_count, 1u);
  EXPECT_EQ(cache.stats().expired_count, 0u);
}

TEST(SurfaceCache, CriticalPressureThroughDispatchDropsEveryUnlockedSurface) {
  ManualClock clock;
  SurfaceCache cache(clock, Options());
  MemoryPressure pressure(clock);
  auto subscription = cache.SubscribeTo(pressure);
  cache.LockImage(1);
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  ASSERT_EQ(cache.Insert(Key(2), Fake(200), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  ASSERT_EQ(cache.Insert(Key(3), Fake(300), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  MemoryPressureDispatchResult result = pressure.Dispatch(MemoryPressureLevel::kCritical);
  ASSERT_EQ(result.listeners.size(), 1u);
  EXPECT_EQ(result.listeners[0].name, "surface-cache");
  EXPECT_EQ(result.listeners[0].freed_bytes, 500u);
  EXPECT_EQ(cache.surface_count(), 1u);
  EXPECT_NE(cache.Lookup(Key(1)), nullptr);
  EXPECT_EQ(cache.stats().freed_by_pressure_bytes, 500u);
}

TEST(SurfaceCache, DrawerKeepsItsSurfaceAliveAfterADiscard) {
  ManualClock clock;
  SurfaceCache cache(clock, Options());
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  std::shared_ptr<CachedSurface> drawing = cache.Lookup(Key(1));
  cache.DiscardUnlocked();
  EXPECT_EQ(drawing->MemoryBytes(), 100u);
  EXPECT_EQ(drawing.use_count(), 1);
}

TEST(SurfaceCache, RedecodeOfADiscardedKeyIsCounted) {
  ManualClock clock;
  SurfaceCache cache(clock, Options());
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  cache.DiscardUnlocked();
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  ASSERT_EQ(cache.Insert(Key(2), Fake(100), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  EXPECT_EQ(cache.stats().redecode_count, 1u);
}

// Its destructor asks the cache something from another thread: if the cache destroyed surfaces
// under its mutex, that call would block and the future would time out.
class ReentrantSurface : public CachedSurface {
 public:
  ReentrantSurface(SurfaceCache* cache, std::atomic<int>* ok_count)
      : cache_(cache), ok_count_(ok_count) {}
  ~ReentrantSurface() override {
    auto answer = std::async(std::launch::async, [this] { return cache_->surface_count(); });
    if (answer.wait_for(seconds(10)) == std::future_status::ready) ++*ok_count_;
  }
  size_t MemoryBytes() const override { return 100; }

 private:
  SurfaceCache* cache_;
  std::atomic<int>* ok_count_;
};

TEST(SurfaceCache, SurfacesAreDestroyedOutsideTheCacheLock) {
  ManualClock clock;
  SurfaceCache cache(clock, Options(250));
  std::atomic<int> ok_count{0};
  auto make = [&] { return std::make_shared<ReentrantSurface>(&cache, &ok_count); };
  ASSERT_EQ(cache.Insert(Key(1), make(), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  ASSERT_EQ(cache.Insert(Key(2), make(), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  ASSERT_EQ(cache.Insert(Key(3), make(), milliseconds(1)), SurfaceInsertOutcome::kInserted);  // cap
  clock.Advance(seconds(20));
  cache.Tick();  // expiry
  ASSERT_EQ(cache.Insert(Key(4), make(), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  cache.OnMemoryPressure({MemoryPressureLevel::kCritical, false});  // pressure
  ASSERT_EQ(cache.Insert(Key(5), make(), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  cache.RemoveImage(5);  // removal
  EXPECT_EQ(ok_count.load(), 5);
}

TEST(SurfaceCache, DecodeThreadsInsertWhileTheMainThreadLooksUpAndLocks) {
  ManualClock clock;
  constexpr uint64_t kMaxBytes = 64 * 1000;
  SurfaceCache cache(clock, Options(kMaxBytes));
  constexpr int kThreads = 4;
  constexpr int kPerThread = 2000;
  std::atomic<int> inserted{0};
  std::vector<std::thread> decoders;
  for (int t = 0; t < kThreads; ++t) {
    decoders.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        uint64_t image = static_cast<uint64_t>(t * kPerThread + i);
        if (cache.Insert(Key(image), Fake(1000), microseconds(i % 7 + 1)) ==
            SurfaceInsertOutcome::kInserted) {
          ++inserted;
        }
      }
    });
  }
  for (int i = 0; i < 4000; ++i) {
    uint64_t image = static_cast<uint64_t>(i % (kThreads * kPerThread));
    cache.Lookup(Key(image));
    if (i % 10 == 0) {
      cache.LockImage(image);
      cache.UnlockImage(image);
    }
    if (i % 500 == 0) {
      clock.Advance(seconds(5));
      cache.Tick();
    }
  }
  for (std::thread& decoder : decoders) decoder.join();
  EXPECT_EQ(inserted.load(), kThreads * kPerThread);  // nothing locked for long: all fit
  EXPECT_LE(cache.used_bytes(), kMaxBytes);
  EXPECT_EQ(cache.used_bytes(), cache.surface_count() * 1000);
  EXPECT_EQ(cache.locked_bytes(), 0u);
  EXPECT_EQ(cache.Validate(), "");
}

// ---- regret: discards undone within the regret window ------------------------------------------

TEST(SurfaceCache, ARedecodeWithinFiveSecondsOfTheDiscardIsARegretWithItsBytesAndTime) {
  ManualClock clock;
  SurfaceCache cache(clock, Options());
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(3)), SurfaceInsertOutcome::kInserted);
  ASSERT_EQ(cache.Insert(Key(2), Fake(200), milliseconds(4)), SurfaceInsertOutcome::kInserted);
  cache.DiscardUnlocked();  // both, by pressure
  clock.Advance(seconds(5));  // exactly the window: still a regret
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(7)), SurfaceInsertOutcome::kInserted);
  clock.Advance(milliseconds(1));  // past it for key 2: a re-decode, not a regret
  ASSERT_EQ(cache.Insert(Key(2), Fake(200), milliseconds(9)), SurfaceInsertOutcome::kInserted);
  SurfaceCacheStats stats = cache.stats();
  EXPECT_EQ(stats.redecode_count, 2u);
  EXPECT_EQ(stats.redecode_time_ns, uint64_t{16'000'000});
  EXPECT_EQ(stats.regret_count, 1u);
  EXPECT_EQ(stats.regret_bytes, 100u);
  EXPECT_EQ(stats.regret_time_ns, uint64_t{7'000'000});
  EXPECT_EQ(stats.regret_after_pressure_count, 1u);
  EXPECT_EQ(stats.regret_after_expiry_count, 0u);
}

TEST(SurfaceCache, RegretsAreCountedByWhyTheSurfaceWent) {
  ManualClock clock;
  SurfaceCache cache(clock, Options(250));
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  ASSERT_EQ(cache.Insert(Key(2), Fake(100), milliseconds(2)), SurfaceInsertOutcome::kInserted);
  ASSERT_EQ(cache.Insert(Key(3), Fake(100), milliseconds(2)), SurfaceInsertOutcome::kInserted);
  // Key 1 (cheapest per byte) went for the cap; a redecode of it evicts key 2 (next cheapest).
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  clock.Advance(seconds(20));
  cache.Tick();  // the rest expire
  ASSERT_EQ(cache.surface_count(), 0u);
  clock.Advance(seconds(2));
  ASSERT_EQ(cache.Insert(Key(3), Fake(100), milliseconds(2)), SurfaceInsertOutcome::kInserted);
  SurfaceCacheStats stats = cache.stats();
  EXPECT_EQ(stats.regret_after_cap_count, 1u);
  EXPECT_EQ(stats.regret_after_expiry_count, 1u);
  EXPECT_EQ(stats.regret_after_pressure_count, 0u);
  EXPECT_EQ(stats.regret_count, 2u);
}

TEST(SurfaceCache, RemovingAnImageForgetsItsDiscardsSoNothingIsARegret) {
  ManualClock clock;
  SurfaceCache cache(clock, Options());
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  cache.DiscardUnlocked();
  cache.RemoveImage(1);
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  EXPECT_EQ(cache.stats().redecode_count, 0u);
  EXPECT_EQ(cache.stats().regret_count, 0u);
}

TEST(SurfaceCache, TheReportCarriesEveryCounterOfTheList) {
  ManualClock clock;
  SurfaceCache cache(clock, Options());
  MemoryReporter reporter;
  auto registration = cache.RegisterReporter(reporter);
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(2)), SurfaceInsertOutcome::kInserted);
  cache.DiscardUnlocked();
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(2)), SurfaceInsertOutcome::kInserted);
  MemoryReport report = reporter.Collect();
  size_t counters = 0;
  cache.stats().ForEachCounter([&](const char* name, const char*, uint64_t value) {
    ++counters;
    EXPECT_EQ(report.Amount(std::string("lethe-counters/images/surface-cache/") + name),
              static_cast<int64_t>(value))
        << name;
  });
  EXPECT_EQ(counters, 18u);
  EXPECT_EQ(report.Amount("lethe-counters/images/surface-cache/regrets"), 1);
  EXPECT_EQ(report.Amount("lethe-counters/images/surface-cache/regret-bytes"), 100);
}

// ---- Validate ------------------------------------------------------------------------------

TEST(SurfaceCache, ValidateHoldsThroughEveryKindOfChange) {
  ManualClock clock;
  SurfaceCache cache(clock, Options(20000));
  EXPECT_EQ(cache.Validate(), "");
  for (uint32_t i = 0; i < 300; ++i) {
    const uint64_t image = i % 17;
    switch (i % 7) {
      case 0: cache.LockImage(image); break;
      case 1: if (cache.IsImageLocked(image)) cache.UnlockImage(image); break;
      case 2: (void)cache.Lookup(Key(image, i % 3 + 1)); break;
      case 3: clock.Advance(seconds(3)); cache.Tick(); break;
      case 4: cache.RemoveImage(image); break;
      case 5: cache.OnMemoryPressure({MemoryPressureLevel::kModerate, false}); break;
      default: break;
    }
    (void)cache.Insert(Key(image, i % 3 + 1), Fake(500 + (i * 37) % 900), microseconds(i % 11 + 1));
    ASSERT_EQ(cache.Validate(), "") << "after step " << i;
  }
  cache.DiscardUnlocked();
  EXPECT_EQ(cache.Validate(), "");
}

TEST(SurfaceCache, ValidateNamesADriftedTotal) {
  ManualClock clock;
  SurfaceCache cache(clock, Options());
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  cache.SkewUsedBytesForTesting(8);
  EXPECT_EQ(cache.Validate(), "used bytes drifted from the sum of the entries' costs");
  cache.SkewUsedBytesForTesting(-8);
  EXPECT_EQ(cache.Validate(), "");
}

#if LETHE_DEBUG_LEVEL >= 2
TEST(SurfaceCacheDeathTest, DebugBuildsWalkTheInvariantsAfterEveryChange) {
  ManualClock clock;
  SurfaceCache cache(clock, Options());
  ASSERT_EQ(cache.Insert(Key(1), Fake(100), milliseconds(1)), SurfaceInsertOutcome::kInserted);
  cache.SkewUsedBytesForTesting(8);
  EXPECT_DEATH(cache.LockImage(1), "used bytes drifted");
  cache.SkewUsedBytesForTesting(-8);
}
#endif

TEST(SurfaceCache, ReportedBytesEqualTheUsableSizesItHolds) {
  lethe_stats_t before;
  lethe_stats(&before);
  ManualClock clock;
  MemoryReporter reporter;
  {
    SurfaceCache cache(clock, Options(64 << 20));
    auto registration = cache.RegisterReporter(reporter);
    uint64_t expected_locked = 0;
    uint64_t expected_unlocked = 0;
    cache.LockImage(1);
    for (uint32_t i = 0; i < 20; ++i) {
      auto surface = std::make_shared<HeapSurface>(1000 + i * 4099);
      (i % 2 == 0 ? expected_locked : expected_unlocked) += surface->MemoryBytes();
      ASSERT_EQ(cache.Insert(SurfaceKey{i % 2 == 0 ? 1u : 2u, i, i, 0}, surface, microseconds(i)),
                SurfaceInsertOutcome::kInserted);
    }
    lethe_stats_t during;
    lethe_stats(&during);
    MemoryReport report = reporter.Collect();
    EXPECT_EQ(report.Amount("explicit/images/raster/still/locked"),
              static_cast<int64_t>(expected_locked));
    EXPECT_EQ(report.Amount("explicit/images/raster/still/unlocked"),
              static_cast<int64_t>(expected_unlocked));
    // The allocator holds exactly what the cache says it holds.
    EXPECT_EQ(during.allocated_bytes - before.allocated_bytes, expected_locked + expected_unlocked);
    auto json = nlohmann::ordered_json::parse(MemoryReportToJson(report));
    EXPECT_EQ(testing::AboutMemoryViolations(json), std::vector<std::string>{});
    EXPECT_EQ(testing::HeapUnclassified(json),
              static_cast<int64_t>(before.allocated_bytes));  // only what was there before
    cache.UnlockImage(1);
  }
  lethe_stats_t after;
  lethe_stats(&after);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);  // no leak
}

}  // namespace
}  // namespace lethe
