// Out of memory inside a cache's locked section: the allocator's low-memory callback runs on the
// allocating thread while that thread holds the cache's lock. A callback that waited for the lock
// would wait for itself. These tests fail each allocation of each locked section in turn
// (lethe_fail_after, which runs the callback as a refusal by the OS does), with a callback that
// frees what it can the way the engine's does, and check that every call returns, within a time
// limit (a deadlock aborts the test instead of hanging CI), and leaves the cache consistent.
//
// The caches' bookkeeping allocates with operator new: this executable links Lethe's malloc
// replacement where the build has one, so that those allocations are Lethe's and can be failed.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lethe/alloc.h"
#include "lethe/image_cache.h"
#include "low_memory_test_util.h"
#include "lethe/surface_cache.h"

namespace lethe {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

using testing::HeapSurface;
using testing::NewIsLethes;
using testing::RunWithFailure;

// Both caches, filled, with the engine's kind of low-memory callback installed: it frees what it
// can reach without waiting and records when a cache was locked (by this thread, in the call).
struct Caches {
  Caches() : surfaces(clock, Options()), images(clock) {
    for (uint64_t image = 1; image <= 4; ++image) {
      (void)surfaces.Insert(SurfaceKey{image, 10, 10, 0}, std::make_shared<HeapSurface>(4000),
                            milliseconds(1));
    }
    surfaces.LockImage(1);
    std::vector<uint8_t> bytes(3000, 1);
    for (int i = 0; i < 4; ++i) {
      (void)images.Put(Url(i), bytes, ImageHeaderInfo{ImageFormat::kPng, 10, 10, 1});
    }
    images.AddReference(Url(0));
    for (auto& surface : spare) surface = std::make_shared<HeapSurface>(4000);
    lethe_set_low_memory_callback(&Caches::OnLowMemory, this);
  }
  ~Caches() { lethe_set_low_memory_callback(nullptr, nullptr); }

  static SurfaceCacheOptions Options() {
    SurfaceCacheOptions options;
    options.max_bytes = 5 * 4096;  // room for five surfaces: the sixth evicts
    return options;
  }
  static std::string Url(int i) {
    return "https://images.example.org/a/long/path/to/image-" + std::to_string(i) + ".png";
  }

  static void OnLowMemory(size_t, void* self) {
    auto* caches = static_cast<Caches*>(self);
    caches->callbacks.fetch_add(1);
    if (!caches->surfaces.TryDiscardUnlocked().has_value()) caches->surfaces_busy.fetch_add(1);
    if (!caches->images.TryDropUnreferenced().has_value()) caches->images_busy.fetch_add(1);
  }

  ManualClock clock;
  SurfaceCache surfaces;
  ImageCache images;
  std::shared_ptr<CachedSurface> spare[2];  // made before the failures start
  std::atomic<int> callbacks{0};
  std::atomic<int> surfaces_busy{0};
  std::atomic<int> images_busy{0};
};

struct Scenario {
  std::string name;
  std::function<void(Caches&)> call;
  bool surfaces_locked_section;  // which cache's lock the call holds while it allocates
};

// Fails allocations 1, 2, ... of the call until one passes it untouched; returns how many of those
// failures hit the cache's own locked section (the callback found the cache locked).
int SweepFailures(const Scenario& scenario) {
  int inside_lock = 0;
  for (long n = 1; n <= 400; ++n) {
    Caches caches;
    RunWithFailure(n, [&] { scenario.call(caches); }, scenario.name);
    EXPECT_EQ(caches.surfaces.Validate(), "") << scenario.name << ", allocation " << n;
    inside_lock += scenario.surfaces_locked_section ? caches.surfaces_busy.load()
                                                    : caches.images_busy.load();
    if (caches.callbacks.load() == 0) return inside_lock;  // the call made fewer allocations
  }
  ADD_FAILURE() << scenario.name << " still allocates after 400 failures";
  return inside_lock;
}

class CacheLowMemory : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (!NewIsLethes()) {
      GTEST_SKIP() << "operator new is not Lethe's in this build (a sanitizer preset): the "
                      "caches' bookkeeping cannot be made to fail here";
    }
  }
};

std::vector<Scenario> Scenarios() {
  const std::vector<uint8_t> bytes(2000, 3);
  const ImageHeaderInfo png{ImageFormat::kPng, 10, 10, 1};
  return {
      {"SurfaceCache::Insert (evicting for the cap)",
       [](Caches& c) {
         SurfaceInsertOutcome a = c.surfaces.Insert(SurfaceKey{9, 10, 10, 0}, c.spare[0],
                                                    milliseconds(1));
         SurfaceInsertOutcome b = c.surfaces.Insert(SurfaceKey{9, 20, 20, 0}, c.spare[1],
                                                    milliseconds(1));
         EXPECT_TRUE(a == SurfaceInsertOutcome::kInserted || a == SurfaceInsertOutcome::kOutOfMemory);
         EXPECT_TRUE(b == SurfaceInsertOutcome::kInserted || b == SurfaceInsertOutcome::kOutOfMemory);
       },
       true},
      {"SurfaceCache::LockImage and UnlockImage",
       [](Caches& c) {
         c.surfaces.LockImage(7);
         c.surfaces.LockImage(2);
         c.surfaces.UnlockImage(2);
         c.surfaces.UnlockImage(7);
       },
       true},
      {"SurfaceCache::Lookup and Tick",
       [](Caches& c) {
         (void)c.surfaces.Lookup(SurfaceKey{2, 10, 10, 0});
         c.clock.Advance(seconds(25));
         c.surfaces.Tick();
       },
       true},
      {"SurfaceCache memory report",
       [](Caches& c) {
         MemoryReporter reporter;
         auto registration = c.surfaces.RegisterReporter(reporter);
         (void)reporter.Collect();
       },
       true},
      {"ImageCache::Put (new and replacing) and SetPlaceholder",
       [bytes, png](Caches& c) {
         (void)c.images.Put(Caches::Url(8), bytes, png);
         (void)c.images.Put(Caches::Url(1), bytes, png);
         const std::vector<uint8_t> placeholder(16, 1);
         (void)c.images.SetPlaceholder(Caches::Url(2), placeholder);
       },
       false},
      {"ImageCache::Get, AddReference and RemoveReference",
       [](Caches& c) {
         (void)c.images.Get(Caches::Url(3));
         if (c.images.AddReference(Caches::Url(3))) c.images.RemoveReference(Caches::Url(3));
         (void)c.surfaces.Lookup(SurfaceKey{2, 10, 10, 0});
       },
       false},
      {"ImageCache::Remove and Tick",
       [](Caches& c) {
         c.images.Remove(Caches::Url(2));
         c.clock.Advance(seconds(200));
         c.images.Tick();
       },
       false},
  };
}

TEST_P(CacheLowMemory, EveryCallReturnsWhenAnAllocationInsideTheLockFails) {
  const Scenario scenario = Scenarios().at(static_cast<size_t>(GetParam()));
  int inside_lock = SweepFailures(scenario);
  // The sweep must have reached the locked section at least once, or it proved nothing.
  if (scenario.name.rfind("ImageCache::Get", 0) == 0) {
    EXPECT_EQ(inside_lock, 0) << "lookups and references allocate nothing under the lock";
  } else {
    EXPECT_GT(inside_lock, 0) << scenario.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, CacheLowMemory, ::testing::Range(0, 7));

TEST(CacheLowMemoryOutcomes, AFailedInsertChangesNothingAndSaysOutOfMemory) {
  if (!NewIsLethes()) GTEST_SKIP() << "operator new is not Lethe's in this build";
  Caches caches;
  const uint64_t used = caches.surfaces.used_bytes();
  const size_t count = caches.surfaces.surface_count();
  auto surface = std::make_shared<HeapSurface>(100);
  SurfaceInsertOutcome outcome = SurfaceInsertOutcome::kInserted;
  RunWithFailure(1, [&] {
    outcome = caches.surfaces.Insert(SurfaceKey{9, 1, 1, 0}, surface, milliseconds(1));
  }, "Insert");
  EXPECT_EQ(outcome, SurfaceInsertOutcome::kOutOfMemory);
  EXPECT_EQ(caches.surfaces_busy.load(), 1);  // the callback ran inside Insert's lock
  // The callback could not reach the surfaces (locked); it dropped the unreferenced images.
  EXPECT_EQ(caches.surfaces.used_bytes(), used);
  EXPECT_EQ(caches.surfaces.surface_count(), count);
  EXPECT_EQ(caches.images.entry_count(), 1u);
  EXPECT_EQ(caches.surfaces.stats().out_of_memory_count, 1u);
  EXPECT_EQ(caches.surfaces.stats().low_memory_busy_count, 1u);
  EXPECT_EQ(caches.surfaces.Validate(), "");
  // The same insert succeeds once memory is there.
  EXPECT_EQ(caches.surfaces.Insert(SurfaceKey{9, 1, 1, 0}, surface, milliseconds(1)),
            SurfaceInsertOutcome::kInserted);
}

TEST(CacheLowMemoryOutcomes, TheCallbackFreesWhatItReachesOnAnotherThread) {
  Caches caches;
  const uint64_t locked = caches.surfaces.locked_bytes();
  // Called the way the allocator calls it, from a thread that holds no cache lock.
  std::async(std::launch::async, [&] { Caches::OnLowMemory(100, &caches); }).get();
  EXPECT_EQ(caches.surfaces_busy.load(), 0);
  EXPECT_EQ(caches.images_busy.load(), 0);
  EXPECT_EQ(caches.surfaces.used_bytes(), locked);   // every unlocked surface gone
  EXPECT_EQ(caches.images.entry_count(), 1u);        // the referenced image stays
}

}  // namespace
}  // namespace lethe
