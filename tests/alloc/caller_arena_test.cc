// Caller-created arenas in the bundled allocator: attribution of every kind of block, the thread
// cache kept apart, frees from other threads, chunks unmapped on destroy, ghosts released by
// their last free, and the heap's invariants afterwards.
#include <errno.h>
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <thread>
#include <vector>

#include "allocator.h"
#include "arena.h"
#include "lethe/alloc.h"
#include "os.h"

namespace lethe::internal {
namespace {

Arena* ArenaOfHandle(lethe_arena_t handle) {
  return g_caller_arenas[(handle & 0xffffffffu) - 1];
}

bool InArena(const void* block, lethe_arena_t handle) {
  return IsArenaChunk(block) && ArenaOf(ChunkOf(block)) == ArenaOfHandle(handle);
}

// True when the page at `address` is mapped (mincore fails with ENOMEM on unmapped ranges).
bool Mapped(const void* address) {
  unsigned char vector = 0;
  return mincore(const_cast<void*>(address), kPageBytes, &vector) == 0;
}

lethe_arena_stats_t Stats(lethe_arena_t arena) {
  lethe_arena_stats_t stats{};
  EXPECT_EQ(lethe_arena_stats(arena, &stats), 0);
  return stats;
}

// Sizes of every kind: small classes, large runs (cached and not), a huge block.
const std::vector<size_t> kSizes = {8, 100, 1000, 5000, 14000, 20000, 60000, 300000, 3 << 20};

TEST(CallerArena, EveryBlockAllocatedWhileBoundComesFromTheArena) {
  lethe_arena_t arena = lethe_arena_create();
  ASSERT_NE(arena, LETHE_ARENA_NONE);
  // Warm this thread's cache so that it holds regions of the automatic arena.
  std::vector<void*> warm;
  for (int i = 0; i < 200; ++i) warm.push_back(lethe_malloc(100));
  for (void* block : warm) lethe_free(block);
  std::vector<void*> blocks;
  uint64_t usable = 0;
  {
    lethe::ArenaScope scope(arena);
    ASSERT_TRUE(scope.ok());
    for (int round = 0; round < 50; ++round) {
      for (size_t size : kSizes) {
        void* block = lethe_malloc(size);
        ASSERT_NE(block, nullptr);
        usable += lethe_usable_size(block);
        if (size <= kLargeMaxBytes) {
          EXPECT_TRUE(InArena(block, arena)) << size;
        }
        blocks.push_back(block);
      }
    }
    void* aligned = lethe_aligned_alloc(4096, 3000);
    void* zeroed = lethe_calloc(10, 10);
    EXPECT_TRUE(InArena(aligned, arena));
    EXPECT_TRUE(InArena(zeroed, arena));
    usable += lethe_usable_size(aligned) + lethe_usable_size(zeroed);
    blocks.push_back(aligned);
    blocks.push_back(zeroed);
  }
  lethe_arena_stats_t stats = Stats(arena);
  EXPECT_EQ(stats.allocated_bytes, usable);
  EXPECT_EQ(stats.huge_bytes, 50u * (3 << 20));
  EXPECT_EQ(stats.allocation_count, blocks.size());
  EXPECT_GE(stats.active_bytes, stats.allocated_bytes);
  EXPECT_GE(stats.mapped_bytes, stats.active_bytes);
  // Unbound again: the thread's own arena and cache serve it.
  void* mine = lethe_malloc(100);
  EXPECT_FALSE(InArena(mine, arena));
  lethe_free(mine);
  for (void* block : blocks) lethe_free(block);
  stats = Stats(arena);
  EXPECT_EQ(stats.allocated_bytes, 0u);
  EXPECT_EQ(stats.active_bytes, 0u);
  EXPECT_EQ(stats.free_count, blocks.size());
  ValidateHeap();
  EXPECT_EQ(lethe_arena_destroy(arena, nullptr), 0);
}

TEST(CallerArena, ItsFreedRegionsNeverEnterAThreadCache) {
  lethe_arena_t arena = lethe_arena_create();
  std::vector<void*> blocks;
  {
    lethe::ArenaScope scope(arena);
    for (int i = 0; i < 300; ++i) blocks.push_back(lethe_malloc(48));
    blocks.push_back(lethe_malloc(20000));  // a length the large thread cache keeps
  }
  for (void* block : blocks) lethe_free(block);  // unbound, with a cache
  EXPECT_EQ(Stats(arena).allocated_bytes, 0u);
  // Neither this thread's cache nor its arena hands them out again.
  std::vector<void*> again;
  for (int i = 0; i < 300; ++i) again.push_back(lethe_malloc(48));
  again.push_back(lethe_malloc(20000));
  for (void* block : again) EXPECT_FALSE(InArena(block, arena));
  for (void* block : again) lethe_free(block);
  EXPECT_EQ(lethe_arena_destroy(arena, nullptr), 0);
}

TEST(CallerArena, BlocksFreedByAnotherThreadGoBackToTheirArena) {
  lethe_arena_t arena = lethe_arena_create();
  std::vector<void*> blocks;
  {
    lethe::ArenaScope scope(arena);
    for (int round = 0; round < 20; ++round) {
      for (size_t size : kSizes) blocks.push_back(lethe_malloc(size));
    }
  }
  ASSERT_GT(Stats(arena).allocated_bytes, 0u);
  std::thread([&blocks] {
    void* own = lethe_malloc(64);  // this thread has a cache
    for (void* block : blocks) lethe_free(block);
    lethe_free(own);
  }).join();
  lethe_arena_stats_t stats = Stats(arena);
  EXPECT_EQ(stats.allocated_bytes, 0u);
  EXPECT_EQ(stats.huge_bytes, 0u);
  EXPECT_EQ(stats.free_count, blocks.size());
  // The same from a thread bound to another arena.
  lethe_arena_t other = lethe_arena_create();
  void* block = nullptr;
  {
    lethe::ArenaScope scope(arena);
    block = lethe_malloc(500);
  }
  std::thread([other, block] {
    lethe::ArenaScope scope(other);
    lethe_free(block);
  }).join();
  EXPECT_EQ(Stats(arena).allocated_bytes, 0u);
  EXPECT_EQ(Stats(other).allocation_count, 0u);
  ValidateHeap();
  EXPECT_EQ(lethe_arena_destroy(arena, nullptr), 0);
  EXPECT_EQ(lethe_arena_destroy(other, nullptr), 0);
}

TEST(CallerArena, DestroyingAnEmptyArenaUnmapsItsChunks) {
  lethe_arena_t arena = lethe_arena_create();
  std::vector<void*> blocks;
  {
    lethe::ArenaScope scope(arena);
    // More than a chunk's worth, so that the arena holds several chunks.
    for (int i = 0; i < 3000; ++i) blocks.push_back(lethe_malloc(static_cast<size_t>(i % 7) * 300 + 16));
    for (int i = 0; i < 20; ++i) blocks.push_back(lethe_malloc(100000));
  }
  std::vector<void*> chunks;
  for (void* block : blocks) {
    void* chunk = ChunkOf(block);
    if (std::find(chunks.begin(), chunks.end(), chunk) == chunks.end()) chunks.push_back(chunk);
  }
  ASSERT_GE(chunks.size(), 2u);
  for (void* block : blocks) lethe_free(block);
  lethe_arena_stats_t stats = Stats(arena);
  EXPECT_EQ(stats.allocated_bytes, 0u);
  EXPECT_GT(stats.mapped_bytes, 0u) << "an empty chunk is retained while the arena is open";
  uint64_t left = 1;
  ASSERT_EQ(lethe_arena_destroy(arena, &left), 0);
  EXPECT_EQ(left, 0u);
  for (void* chunk : chunks) EXPECT_FALSE(Mapped(chunk)) << chunk;
  EXPECT_EQ(lethe_arena_stats(arena, &stats), ENOENT);
  ValidateHeap();
}

TEST(CallerArena, AnArenaDestroyedWithLiveBlocksIsAGhostUntilItsLastFree) {
  lethe_arena_t arena = lethe_arena_create();
  void* small = nullptr;
  void* large = nullptr;
  void* huge = nullptr;
  std::vector<void*> freed_before;
  {
    lethe::ArenaScope scope(arena);
    small = lethe_malloc(200);
    large = lethe_malloc(200000);
    huge = lethe_malloc(2 << 20);
    for (int i = 0; i < 500; ++i) freed_before.push_back(lethe_malloc(1000));
  }
  for (void* block : freed_before) lethe_free(block);
  uint64_t expected = lethe_usable_size(small) + lethe_usable_size(large) + lethe_usable_size(huge);
  Chunk* chunk = ChunkOf(small);
  uint64_t left = 0;
  ASSERT_EQ(lethe_arena_destroy(arena, &left), 0);
  EXPECT_EQ(left, expected);
  lethe_arena_stats_t stats = Stats(arena);
  EXPECT_EQ(stats.flags, unsigned{LETHE_ARENA_CLOSED});
  EXPECT_EQ(stats.allocated_bytes, expected);
  EXPECT_EQ(stats.dirty_bytes, 0u) << "a ghost's free pages go back at destroy";
  EXPECT_EQ(lethe_arena_bind(arena, nullptr), EBADF);
  EXPECT_EQ(lethe_arena_destroy(arena, nullptr), EBADF);
  std::memset(small, 1, 200);  // live blocks stay usable
  std::memset(large, 2, 200000);
  lethe_free(small);
  lethe_free(large);
  stats = Stats(arena);
  EXPECT_EQ(stats.allocated_bytes, uint64_t{2} << 20);
  EXPECT_TRUE(Mapped(chunk)) << "a ghost keeps its chunks until empty";
  std::thread([huge] { lethe_free(huge); }).join();  // the last block, from another thread
  EXPECT_EQ(lethe_arena_stats(arena, &stats), ENOENT);
  EXPECT_FALSE(Mapped(chunk));
  ValidateHeap();
}

// The allocator's own long-lived memory never comes from a caller arena: what it allocates for
// itself while the calling thread is bound (the purge thread, started by the first dirty page,
// whose pthread_create bookkeeping kept the bound arena a ghost for the life of the process;
// engine/HtmlPageTest's ghost tests caught it) is made in an AutomaticArenaScope.
TEST(CallerArena, AnAutomaticArenaScopeAllocatesOutsideTheBoundArena) {
  lethe_arena_t arena = lethe_arena_create();
  ASSERT_EQ(lethe_arena_bind(arena, nullptr), 0);
  void* bound = lethe_malloc(320);
  void* own;
  {
    AutomaticArenaScope unbound;
    own = lethe_malloc(320);
  }
  void* bound_again = lethe_malloc(320);
  ASSERT_EQ(lethe_arena_bind(LETHE_ARENA_NONE, nullptr), 0);
  EXPECT_TRUE(InArena(bound, arena));
  EXPECT_FALSE(InArena(own, arena));
  EXPECT_TRUE(InArena(bound_again, arena)) << "the scope gives the binding back";
  lethe_free(bound);
  lethe_free(bound_again);
  uint64_t left = 1;
  EXPECT_EQ(lethe_arena_destroy(arena, &left), 0);
  EXPECT_EQ(left, 0u);
  lethe_free(own);
  // Unbound, the scope changes nothing: a thread cache made within it stays the thread's.
  std::thread fresh([] {
    {
      AutomaticArenaScope unbound;
      lethe_free(lethe_malloc(64));  // the thread's first allocation makes its cache
    }
    EXPECT_TRUE(HasCache(t_cache));
  });
  fresh.join();
}

TEST(CallerArena, HugeReallocFollowsTheArenaItCountsTo) {
  lethe_arena_t arena = lethe_arena_create();
  void* block = nullptr;
  {
    lethe::ArenaScope scope(arena);
    block = lethe_malloc(2 << 20);
  }
  block = lethe_realloc(block, 5 << 20);  // unbound: the block keeps its arena
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(Stats(arena).huge_bytes, uint64_t{5} << 20);
  block = lethe_realloc(block, 3 << 20);
  EXPECT_EQ(Stats(arena).huge_bytes, uint64_t{3} << 20);
  lethe_free(block);
  EXPECT_EQ(Stats(arena).allocated_bytes, 0u);
  EXPECT_EQ(lethe_arena_destroy(arena, nullptr), 0);
}

// A small region that realloc moves goes back to its arena, bound or not (never into the thread's
// cache, where the automatic arena's next malloc would take it): the arena counts only the new block.
TEST(CallerArena, ASmallReallocThatMovesFreesTheOldRegionToItsArena) {
  lethe_arena_t arena = lethe_arena_create();
  void* block = nullptr;
  {
    lethe::ArenaScope scope(arena);
    block = lethe_malloc(40);
    block = lethe_realloc(block, 200);  // bound: a new region of the arena
  }
  ASSERT_TRUE(InArena(block, arena));
  EXPECT_EQ(Stats(arena).allocated_bytes, lethe_usable_size(block));
  void* moved = lethe_realloc(block, 1000);  // unbound: the thread's own arena
  ASSERT_NE(moved, nullptr);
  EXPECT_FALSE(InArena(moved, arena));
  EXPECT_EQ(Stats(arena).allocated_bytes, 0u);
  lethe_free(moved);
  EXPECT_EQ(lethe_arena_destroy(arena, nullptr), 0);
  ValidateHeap();
}

TEST(CallerArena, ManyThreadsBoundToOneArenaWhileOthersFreeItsBlocks) {
  lethe_arena_t arena = lethe_arena_create();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([arena, t] {
      std::vector<void*> blocks;
      for (int round = 0; round < 2000; ++round) {
        {
          lethe::ArenaScope scope(arena);
          blocks.push_back(lethe_malloc(static_cast<size_t>((round * 37 + t) % 5000) + 1));
        }
        if (blocks.size() > 64) {  // freed unbound, half of them by index parity
          lethe_free(blocks.front());
          blocks.erase(blocks.begin());
        }
      }
      for (void* block : blocks) lethe_free(block);
    });
  }
  for (std::thread& thread : threads) thread.join();
  lethe_arena_stats_t stats = Stats(arena);
  EXPECT_EQ(stats.allocated_bytes, 0u);
  EXPECT_EQ(stats.allocation_count, stats.free_count);
  EXPECT_EQ(stats.allocation_count, 8000u);
  ValidateHeap();
  EXPECT_EQ(lethe_arena_destroy(arena, nullptr), 0);
}

// Last: the first lethe_decay_tick switches this process to the caller's clock for good.
// A caller arena decays under its lock (not by the purger's unlocked pass), and adapts its decay
// as an automatic arena does: 512 pages purged by decay, then taken back clean by the next batch,
// double it (decay_adaptation.h).
TEST(CallerArena, ItsDecayDoublesWhenThePagesDecayPurgedAreTakenBack) {
  lethe_arena_t handle = lethe_arena_create();
  Arena* arena = ArenaOfHandle(handle);
  {
    MutexLock lock(&arena->lock);  // a dirty limit of kDirtyFloorMaxPages: the batches decay
    arena->dirty_floor_doublings =
        static_cast<uint32_t>(std::countr_zero(kDirtyFloorMaxPages / kDirtyFloorMinPages));
    arena->churn_active_pages = 0;
  }
  auto doublings = [arena] {
    MutexLock lock(&arena->lock);
    return arena->decay.doublings();
  };
  auto batch = [] {  // 8 runs of 256 KiB, written, freed: 512 dirty pages
    std::vector<void*> blocks;
    for (int i = 0; i < 8; ++i) {
      blocks.push_back(lethe_malloc(256 * 1024));
      std::memset(blocks.back(), 1, 256 * 1024);
    }
    for (void* block : blocks) lethe_free(block);
  };
  constexpr uint64_t kMs = 1'000'000;
  lethe::ArenaScope scope(handle);
  ASSERT_TRUE(scope.ok());
  void* keep = lethe_malloc(100);
  ASSERT_TRUE(InArena(keep, handle));
  uint64_t start = OsNowNs();
  lethe_decay_tick(start);
  batch();
  EXPECT_GE(Stats(handle).dirty_bytes, 512u * kPageBytes);
  lethe_decay_tick(start + 1000 * kMs);
  EXPECT_LT(Stats(handle).dirty_bytes, 512u * kPageBytes);  // decayed
  lethe_decay_tick(start + 1500 * kMs);
  batch();
  lethe_decay_tick(start + 2000 * kMs);
  lethe_decay_tick(start + 2500 * kMs);
  EXPECT_EQ(doublings(), 0u);
  lethe_decay_tick(start + 3500 * kMs);
  EXPECT_EQ(doublings(), 1u);
  lethe_free(keep);
  ValidateHeap();
}

}  // namespace
}  // namespace lethe::internal
