// The engine's low-memory hook when memory runs out inside a cache's locked section (issue 17):
// the allocator calls it on the allocating thread, which holds the cache's lock. The hook must free
// what it reaches without waiting and leave the rest to the loop's critical dispatch. Each call
// here runs on a thread with a time limit: a deadlock aborts the test instead of hanging CI.
// Linked with Lethe's malloc replacement (the caches' bookkeeping must be Lethe's to be failed).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <vector>

#include "engine_test_pages.h"
#include "lethe/alloc.h"
#include "lethe/engine.h"
#include "low_memory_test_util.h"

namespace lethe::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class EngineLowMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!NewIsLethes()) GTEST_SKIP() << "operator new is not Lethe's in this build";
    EngineOptions options = TestOptions(&log_);
    options.pressure_sources = true;  // the allocator's source only
    options.pressure_source_options.psi = false;
    options.pressure_source_options.cgroup_events = false;
    options.pressure_source_options.systemd = false;
    engine_ = MakeEngine(options);
    ASSERT_NE(engine_, nullptr);
    ASSERT_TRUE(engine_->Navigate(engine_->OpenWindow(), site_.Page(1)).ok());
    engine_->DrawFrame();
    engine_->RunFor(seconds(1));
    // Scrolled away: the images decoded so far are unlocked, discardable.
    engine_->ScrollBy(engine_->foreground_window(), 2500);
    engine_->DrawFrame();
    engine_->RunFor(seconds(1));
  }

  TestSite site_;
  std::vector<std::string> log_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(EngineLowMemoryTest, AnInsertThatRunsOutOfMemoryReturnsAndTheLoopFlushesTheRest) {
  SurfaceCache& surfaces = engine_->surface_cache();
  ASSERT_GT(surfaces.used_bytes(), surfaces.locked_bytes()) << "nothing discardable to flush";
  auto surface = std::make_shared<HeapSurface>(1000);
  SurfaceInsertOutcome outcome = SurfaceInsertOutcome::kInserted;
  RunWithFailure(1, [&] {
    outcome = surfaces.Insert(SurfaceKey{999999, 7, 7, 0}, surface, milliseconds(1));
  }, "SurfaceCache::Insert");
  EXPECT_EQ(outcome, SurfaceInsertOutcome::kOutOfMemory);
  EXPECT_EQ(surfaces.stats().low_memory_busy_count, 1u);  // the hook found it locked, moved on
  // The hook posted a critical event: the loop thread flushes what the hook could not reach.
  engine_->RunFor(milliseconds(10));
  EXPECT_EQ(engine_->last_pressure().source, "allocator");
  EXPECT_EQ(engine_->last_pressure().level, MemoryPressureLevel::kCritical);
  EXPECT_EQ(surfaces.used_bytes(), surfaces.locked_bytes());
  EXPECT_EQ(surfaces.Validate(), "");
}

TEST_F(EngineLowMemoryTest, EveryAllocationOfAnImagePutCanFailWithoutADeadlock) {
  const std::vector<uint8_t> bytes(5000, 9);
  const ImageHeaderInfo header{ImageFormat::kPng, 10, 10, 1};
  // Fails allocation 1, 2, ... of a Put (the copy, then the entry, its URL and its map node under
  // the cache's lock) until one passes the Put untouched.
  long failed = 0;
  for (long n = 1; n <= 40; ++n) {
    lethe_stats_t before;
    lethe_stats(&before);
    ImageCacheOutcome outcome = ImageCacheOutcome::kStored;
    RunWithFailure(n, [&] {
      outcome = engine_->image_cache().Put("https://example.org/a/long/url/" + std::to_string(n) +
                                               ".png", bytes, header);
    }, "ImageCache::Put");
    lethe_stats_t after;
    lethe_stats(&after);
    EXPECT_TRUE(outcome == ImageCacheOutcome::kStored || outcome == ImageCacheOutcome::kOutOfMemory)
        << ImageCacheOutcomeName(outcome);
    if (after.low_memory_callbacks == before.low_memory_callbacks) break;
    failed = n;
  }
  EXPECT_GE(failed, 4) << "the Put should allocate under its lock too";
  EXPECT_LT(failed, 40);
  engine_->RunFor(milliseconds(10));
  EXPECT_EQ(engine_->last_pressure().source, "allocator");
}

}  // namespace
}  // namespace lethe::testing
