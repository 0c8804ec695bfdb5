// The arenas' transfer caches: a full thread-cache bin's flush parks regions there, the next fill
// takes them back, decay passes trim what stayed unused, lethe_purge empties them, and a region
// that fails a flush's checks is not parked. This binary runs with LETHE_OPTIONS=decay_thread:0
// and a decay of an hour (CMakeLists.txt): no trim happens but those the tests make.
#include "transfer_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>
#include <vector>

#include "allocator.h"
#include "arena.h"
#include "decay.h"
#include "lethe/alloc.h"
#include "stats.h"
#include "thread_cache.h"

namespace lethe::internal {
namespace {

constexpr size_t kRequest = 24;  // the 32-byte class: a thread-cache ceiling of 512 regions

uint32_t ClassOf(size_t bytes) { return static_cast<uint32_t>(SmallClassOf(bytes)); }

std::vector<void*> Parked(Arena* arena, uint32_t klass) {
  MutexLock lock(&arena->lock);
  if (arena->transfer.slots.load() == nullptr) return {};
  void** stack = TransferStack(arena->transfer, klass);
  return std::vector<void*>(stack, stack + arena->transfer.count[klass]);
}

uint64_t RegionsOut(Arena* arena, uint32_t klass) {
  MutexLock lock(&arena->lock);
  return arena->bins[klass].regions_out;
}

std::vector<void*> AllocateMany(size_t count, size_t bytes) {
  std::vector<void*> blocks;
  for (size_t i = 0; i < count; ++i) blocks.push_back(lethe_malloc(bytes));
  return blocks;
}

// Frees `count` blocks in order: the bin grows to its ceiling, then each overflow flushes its
// older half into the transfer cache until that is full (512 regions of 32 bytes).
std::vector<void*> ParkAFullTransferCache(Arena** arena) {
  lethe_purge();
  std::vector<void*> blocks = AllocateMany(3000, kRequest);
  *arena = ArenaOf(ChunkOf(blocks[0]));
  for (void* block : blocks) lethe_free(block);
  return blocks;
}

TEST(TransferCache, AFullBinsFlushParksRegionsThatTheNextFillTakesBack) {
  Arena* arena = nullptr;
  ParkAFullTransferCache(&arena);
  uint32_t klass = ClassOf(kRequest);
  std::vector<void*> parked = Parked(arena, klass);
  ASSERT_EQ(parked.size(), CacheMaxCapacity(kSmallSizes[klass]));  // full: the rest went to runs
  ValidateHeap();  // each parked region is an allocated region of its class, once

  // Allocating as much again empties the thread cache, then refills it from the transfer cache
  // before any run's bitmap.
  std::vector<void*> again = AllocateMany(3000, kRequest);
  EXPECT_TRUE(Parked(arena, klass).empty());
  std::set<void*> handed_out(again.begin(), again.end());
  EXPECT_EQ(handed_out.size(), again.size());
  for (void* region : parked) EXPECT_EQ(handed_out.count(region), 1u) << region;
  for (void* block : again) lethe_free(block);
  lethe_purge();
  ValidateHeap();
}

TEST(TransferCache, ParkedRegionsAreReportedAndLethePurgeEmptiesThem) {
  uint32_t klass = ClassOf(kRequest);
  lethe_purge();
  Arena* arena = nullptr;
  uint64_t out_before = 0;
  {
    std::vector<void*> probe = AllocateMany(1, kRequest);
    arena = ArenaOf(ChunkOf(probe[0]));
    lethe_free(probe[0]);
    lethe_purge();
    out_before = RegionsOut(arena, klass);
  }
  ParkAFullTransferCache(&arena);
  size_t parked = Parked(arena, klass).size();
  ASSERT_GT(parked, 0u);

  lethe_stats_t stats;
  lethe_stats(&stats);
  EXPECT_EQ(stats.transfer_cache_bytes, parked * kSmallSizes[klass]);
  ClassStats classes[kSmallClassCount];
  CollectStats(&stats, classes);
  EXPECT_EQ(classes[klass].transfer_regions, parked);
  // Parked regions are not out: the thread cache's are.
  EXPECT_EQ(RegionsOut(arena, klass), out_before + t_cache->bins[klass].count());

  lethe_purge();
  EXPECT_TRUE(Parked(arena, klass).empty());
  EXPECT_EQ(RegionsOut(arena, klass), out_before);
  lethe_stats(&stats);
  EXPECT_EQ(stats.transfer_cache_bytes, 0u);
  ValidateHeap();
}

TEST(TransferCache, ADecayPassTrimsWhatStayedUnusedSinceThePreviousPass) {
  uint32_t klass = ClassOf(kRequest);
  void* probe = lethe_malloc(kRequest);
  Arena* arena = ArenaOf(ChunkOf(probe));
  lethe_free(probe);
  {
    // Without a purge thread the free path decays (and trims) at its first call, then every
    // decay_ms / 8: start that window now, so that only this test's passes trim.
    MutexLock lock(&arena->lock);
    arena->last_decay_ns = DecayNowNs();
  }
  ParkAFullTransferCache(&arena);
  size_t parked = Parked(arena, klass).size();
  ASSERT_EQ(parked, CacheMaxCapacity(kSmallSizes[klass]));
  {
    MutexLock lock(&arena->lock);
    // The low-water mark was 0 since lethe_purge's trim: nothing to give back yet.
    EXPECT_TRUE(ArenaTrimTransfer(arena, DecayNowNs(), false));
  }
  EXPECT_EQ(Parked(arena, klass).size(), parked);

  void* taken[100];
  ASSERT_EQ(ArenaAllocateSmall(arena, klass, taken, 100), 100u);  // the newest 100
  EXPECT_EQ(Parked(arena, klass).size(), parked - 100);
  {
    MutexLock lock(&arena->lock);
    // Every region still parked stayed unused since the last pass.
    EXPECT_FALSE(ArenaTrimTransfer(arena, DecayNowNs(), false));
  }
  EXPECT_TRUE(Parked(arena, klass).empty());
  ArenaFreeSmallBatch(arena, klass, taken, 100, /*park=*/false);
  lethe_purge();
  ValidateHeap();
}

TEST(TransferCache, RegionsFreedByAnotherThreadAreParkedInTheirOwnersArena) {
  lethe_purge();
  uint32_t klass = ClassOf(kRequest);
  std::vector<void*> blocks = AllocateMany(3000, kRequest);
  Arena* owner = ArenaOf(ChunkOf(blocks[0]));
  std::thread other([&] {
    lethe_free(lethe_malloc(kRequest));  // a thread that never allocates has no cache
    for (void* block : blocks) lethe_free(block);
    std::vector<void*> parked = Parked(owner, klass);
    std::set<void*> mine(blocks.begin(), blocks.end());
    EXPECT_FALSE(parked.empty());
    for (void* region : parked) EXPECT_EQ(mine.count(region), 1u) << region;
  });
  other.join();
  lethe_purge();
  ValidateHeap();
}

TEST(TransferCache, ARegionOfAnotherClassIsNotParkedButFreedToItsOwnRun) {
  lethe_purge();
  uint32_t klass = ClassOf(kRequest);
  uint32_t other_class = ClassOf(200);
  void* stray = lethe_malloc(200);
  Arena* arena = ArenaOf(ChunkOf(stray));
  uint64_t other_out = RegionsOut(arena, other_class);
  ArenaFreeSmallBatch(arena, klass, &stray, 1, /*park=*/true);
  EXPECT_TRUE(Parked(arena, klass).empty());
  EXPECT_TRUE(Parked(arena, other_class).empty());
  EXPECT_EQ(RegionsOut(arena, other_class), other_out - 1);
  ValidateHeap();
}

// A batch that fills the stack partway: the regions past the capacity come back after the ones
// that failed a check, in the batch's order, and a batch for a full stack comes back as it was.
TEST(TransferCache, WhatDoesNotFitComesBackAfterWhatFailedACheck) {
  TransferCache cache;  // its own (the slots are base memory, kept for good)
  ASSERT_TRUE(TransferReady(&cache));
  const uint32_t klass = ClassOf(kRequest);
  const uint32_t capacity = CacheMaxCapacity(kSmallSizes[klass]);
  std::vector<void*> blocks = AllocateMany(capacity + 3, kRequest);
  std::vector<void*> first(blocks.begin(), blocks.begin() + capacity - 2);
  ASSERT_EQ(TransferPark(&cache, klass, first.data(), capacity - 2), 0u);
  void* interior = static_cast<char*>(blocks[capacity - 2]) + 8;
  void* batch[5] = {interior, blocks[capacity - 2], blocks[capacity - 1], blocks[capacity],
                    blocks[capacity + 1]};
  ASSERT_EQ(TransferPark(&cache, klass, batch, 5), 3u);
  EXPECT_EQ(batch[0], interior);
  EXPECT_EQ(batch[1], blocks[capacity]);
  EXPECT_EQ(batch[2], blocks[capacity + 1]);
  EXPECT_EQ(cache.count[klass], capacity);
  void* full[2] = {blocks[capacity], blocks[capacity + 2]};
  EXPECT_EQ(TransferPark(&cache, klass, full, 2), 2u);
  EXPECT_EQ(full[0], blocks[capacity]);
  EXPECT_EQ(full[1], blocks[capacity + 2]);
  // Every block is still the caller's: take the parked ones back and free them all.
  std::vector<void*> taken(capacity);
  EXPECT_EQ(TransferTake(&cache, klass, taken.data(), capacity), capacity);
  for (void* block : blocks) lethe_free(block);
  ValidateHeap();
}

using TransferCacheDeathTest = ::testing::Test;

TEST_F(TransferCacheDeathTest, ARegionAlreadyFreeInItsRunAbortsAsADoubleFree) {
  EXPECT_DEATH(
      {
        void* block = lethe_malloc(kRequest);
        Arena* arena = ArenaOf(ChunkOf(block));
        uint32_t klass = ClassOf(kRequest);
        ArenaFreeSmallBatch(arena, klass, &block, 1, /*park=*/false);
        ArenaFreeSmallBatch(arena, klass, &block, 1, /*park=*/true);
      },
      "double free");
}

TEST_F(TransferCacheDeathTest, AnInteriorPointerIsNotParkedAndAborts) {
  EXPECT_DEATH(
      {
        auto* block = static_cast<char*>(lethe_malloc(kRequest));
        void* interior = block + 8;
        ArenaFreeSmallBatch(ArenaOf(ChunkOf(block)), ClassOf(kRequest), &interior, 1,
                            /*park=*/true);
      },
      "invalid pointer");
}

// The same two checks for a region right after a parked one of its run, which the parking loop
// tests against that run without reading the page map again.
void ParkAfterARegionOfItsRun(void* first, void* second) {
  void* batch[2] = {first, second};
  ArenaFreeSmallBatch(ArenaOf(ChunkOf(first)), ClassOf(kRequest), batch, 2, /*park=*/true);
}

TEST_F(TransferCacheDeathTest, AfterARegionOfItsRunAnInteriorPointerIsNotParkedAndAborts) {
  EXPECT_DEATH(
      {
        auto* block = static_cast<char*>(lethe_malloc(kRequest));
        ParkAfterARegionOfItsRun(block, block + 8);
      },
      "invalid pointer");
}

TEST_F(TransferCacheDeathTest, AfterARegionOfItsRunOneAlreadyFreeAbortsAsADoubleFree) {
  EXPECT_DEATH(
      {
        void* first = lethe_malloc(kRequest);
        void* second = lethe_malloc(kRequest);
        ArenaFreeSmallBatch(ArenaOf(ChunkOf(second)), ClassOf(kRequest), &second, 1,
                            /*park=*/false);
        ParkAfterARegionOfItsRun(first, second);
      },
      "double free");
}

TEST_F(TransferCacheDeathTest, ARegionParkedTwiceAbortsInACheckedBuild) {
#if LETHE_DEBUG_LEVEL >= 1
  EXPECT_DEATH(
      {
        void* block = lethe_malloc(kRequest);
        Arena* arena = ArenaOf(ChunkOf(block));
        void* again = block;
        ArenaFreeSmallBatch(arena, ClassOf(kRequest), &block, 1, /*park=*/true);
        ArenaFreeSmallBatch(arena, ClassOf(kRequest), &again, 1, /*park=*/true);
      },
      "double free");
#else
  GTEST_SKIP() << "release builds do not scan the transfer cache (transfer_cache.h)";
#endif
}

}  // namespace
}  // namespace lethe::internal
