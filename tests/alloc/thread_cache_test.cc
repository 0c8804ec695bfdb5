// Threads: per-thread caches, cross-thread frees returning to the owner arena, flush at thread
// exit, and a many-thread stress that checks a pattern in every block.
#include "thread_cache.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "allocator.h"
#include "lethe/alloc.h"

namespace lethe::internal {
namespace {

uint64_t RegionsOut(Arena* arena, uint32_t klass) {
  MutexLock lock(&arena->lock);
  return arena->bins[klass].regions_out;
}

// Slots whose addresses cross a 64 KiB boundary, so that the low 16 bits of the bin's bounds
// wrap between its first slot and its last: 8 slots before the boundary, the rest after.
struct WrappingSlots {
  static constexpr uint32_t kSlots = 64;
  WrappingSlots() {
    memory = static_cast<char*>(std::aligned_alloc(65536, 2 * 65536));
    slots = reinterpret_cast<void**>(memory + 65536) - 8;
  }
  ~WrappingSlots() { std::free(memory); }
  char* memory;
  void** slots;
};

void* Token(uintptr_t i) { return reinterpret_cast<void*>((i + 1) * 16); }

TEST(CacheBin, CountsAcrossBoundsWhoseLow16BitsWrap) {
  WrappingSlots memory;
  CacheBin bin{};
  bin.Place(memory.slots, 0, WrappingSlots::kSlots);
  EXPECT_EQ(bin.count(), 0u);
  EXPECT_EQ(bin.capacity(), WrappingSlots::kSlots);
  EXPECT_GT(bin.empty_bits, bin.full_bits) << "the test's bounds must wrap";
  for (uint32_t i = 0; i < WrappingSlots::kSlots; ++i) {
    ASSERT_FALSE(bin.full()) << i;
    bin.Push(Token(i));
    EXPECT_EQ(bin.count(), i + 1);
  }
  EXPECT_TRUE(bin.full());
  EXPECT_EQ(bin.slots(), memory.slots);
  for (uint32_t i = WrappingSlots::kSlots; i-- > 0;) EXPECT_EQ(bin.TryPop(), Token(i));
  EXPECT_EQ(bin.count(), 0u);
  EXPECT_EQ(bin.TryPop(), nullptr) << "empty";
}

TEST(CacheBin, AllZeroIsEmptyAndFull) {
  CacheBin bin{};  // g_no_cache's bins: both fast paths must take their slow ends
  EXPECT_EQ(bin.count(), 0u);
  EXPECT_TRUE(bin.full());
  EXPECT_EQ(CacheBin::LowBits(bin.top), bin.low_water_bits) << "malloc's test: at the mark";
  EXPECT_EQ(CacheBin::LowBits(bin.top), bin.empty_bits) << "and empty";
  EXPECT_EQ(bin.TryPop(), nullptr);
}

TEST(CacheBin, TheLowWaterMarkFollowsPopsAndTruncationsDownOnly) {
  WrappingSlots memory;
  CacheBin bin{};
  bin.Place(memory.slots, 0, WrappingSlots::kSlots);
  for (uint32_t i = 0; i < 20; ++i) bin.Push(Token(i));
  bin.ResetLowWater();
  EXPECT_EQ(bin.low_water(), 20u);
  bin.TryPop();
  bin.TryPop();
  EXPECT_EQ(bin.low_water(), 18u);
  bin.Push(Token(30));
  EXPECT_EQ(bin.low_water(), 18u) << "a push leaves the mark";
  bin.Truncate(10);  // a flush of the oldest: the rest moved down by the caller
  EXPECT_EQ(bin.count(), 10u);
  EXPECT_EQ(bin.low_water(), 10u);
  bin.Truncate(10);
  bin.Push(Token(40));
  bin.Truncate(11);
  EXPECT_EQ(bin.low_water(), 10u) << "a truncation above the mark leaves it";
}

TEST(CacheBin, AMoveKeepsTheRegionsTheirOrderAndTheLowWaterMark) {
  WrappingSlots memory;
  CacheBin bin{};
  void* packed[16];
  bin.Place(packed, 0, 16);
  for (uint32_t i = 0; i < 12; ++i) bin.Push(Token(i));
  bin.ResetLowWater();
  bin.TryPop();
  bin.TryPop();  // count 10, low water 10
  bin.Push(Token(50));  // count 11
  std::memcpy(memory.slots, bin.slots(), bin.count() * sizeof(void*));
  bin.Move(memory.slots, WrappingSlots::kSlots);
  EXPECT_EQ(bin.slots(), memory.slots);
  EXPECT_EQ(bin.count(), 11u);
  EXPECT_EQ(bin.capacity(), WrappingSlots::kSlots);
  EXPECT_EQ(bin.low_water(), 10u);
  EXPECT_EQ(bin.TryPop(), Token(50));
  for (uint32_t i = 10; i-- > 0;) EXPECT_EQ(bin.TryPop(), Token(i));
}

TEST(ThreadCache, ASmallFreeStaysInTheCacheAndComesBackFirst) {
  void* block = lethe_malloc(200);
  lethe_free(block);
  EXPECT_EQ(lethe_malloc(200), block);
  lethe_free(block);
}

TEST(ThreadCache, CacheIsBoundedAndFlushesHalfWhenFull) {
  lethe_purge();
  std::vector<void*> blocks;
  for (int i = 0; i < 1000; ++i) blocks.push_back(lethe_malloc(24));
  for (void* block : blocks) lethe_free(block);
  ThreadCache* cache = t_cache;
  ASSERT_NE(cache, nullptr);
  uint32_t klass = static_cast<uint32_t>(SmallClassOf(24));
  EXPECT_LE(cache->bins[klass].count(), cache->bins[klass].capacity());
  lethe_stats_t stats;
  lethe_stats(&stats);
  EXPECT_LE(stats.thread_cache_bytes, 64u * 32 + 100000);
  lethe_purge();
  EXPECT_EQ(cache->bins[klass].count(), 0u);
}

TEST(ThreadCache, BlocksFreedByAnotherThreadReturnToTheirOwnerArena) {
  lethe_purge();
  constexpr int kCount = 500;
  std::vector<void*> blocks;
  for (int i = 0; i < kCount; ++i) blocks.push_back(lethe_malloc(512));
  Arena* owner = ArenaOf(ChunkOf(blocks[0]));
  uint32_t klass = static_cast<uint32_t>(SmallClassOf(512));
  uint64_t before = RegionsOut(owner, klass);
  std::thread other([&] {
    for (void* block : blocks) lethe_free(block);
    // Exit flushes this thread's cache to the owner arenas.
  });
  other.join();
  EXPECT_EQ(RegionsOut(owner, klass), before - kCount);
  ValidateHeap();
}

// A flush of a bin whose regions come from two arenas, in runs of one and of several, returns
// each region to its own arena: the owners' counts drop by exactly their regions.
TEST(ThreadCache, AFlushOfRegionsFromTwoArenasReturnsEachToItsOwner) {
  lethe_purge();
  void* mine = lethe_malloc(512);
  Arena* own = ArenaOf(ChunkOf(mine));
  lethe_free(mine);
  if (g_arena_count < 2) GTEST_SKIP() << "one arena on this machine";
  std::vector<void*> foreign;
  Arena* other = nullptr;
  for (int attempt = 0; attempt < 16 && other == nullptr; ++attempt) {
    std::thread([&] {
      void* probe = lethe_malloc(512);
      if (ArenaOf(ChunkOf(probe)) != own) {
        other = ArenaOf(ChunkOf(probe));
        for (int i = 0; i < 300; ++i) foreign.push_back(lethe_malloc(512));
      }
      lethe_free(probe);
    }).join();
  }
  if (other == nullptr) GTEST_SKIP() << "every thread got this thread's arena";
  uint32_t klass = static_cast<uint32_t>(SmallClassOf(512));
  std::vector<void*> local;
  for (int i = 0; i < 300; ++i) local.push_back(lethe_malloc(512));
  // The regions this thread's bin holds are out too, and go back at the purge below.
  uint64_t own_before = RegionsOut(own, klass) - t_cache->bins[klass].count();
  uint64_t other_before = RegionsOut(other, klass);
  // Own, foreign, then three own to one foreign: the flushes meet both orders.
  for (size_t i = 0, j = 0; i < local.size() || j < foreign.size();) {
    size_t run = (i + j) % 5 == 0 ? 1 : 3;
    for (size_t k = 0; k < run && i < local.size(); ++k) lethe_free(local[i++]);
    if (j < foreign.size()) lethe_free(foreign[j++]);
  }
  lethe_purge();  // flushes what the bin still holds
  EXPECT_EQ(RegionsOut(own, klass), own_before - local.size());
  EXPECT_EQ(RegionsOut(other, klass), other_before - foreign.size());
  ValidateHeap();
}

// A thread that never calls malloc (a consumer of another thread's blocks) gets its cache at its
// first free: its later frees stay in it, and none goes back to the owner arena (under its lock)
// until the thread flushes.
TEST(ThreadCache, AThreadThatOnlyFreesGetsACacheAtItsFirstFree) {
  lethe_purge();
  constexpr uint32_t kCount = 32;  // within the bin's ceiling: it grows, and never flushes
  std::vector<void*> blocks;
  for (uint32_t i = 0; i < kCount; ++i) blocks.push_back(lethe_malloc(512));
  Arena* owner = ArenaOf(ChunkOf(blocks[0]));
  const auto klass = static_cast<uint32_t>(SmallClassOf(512));
  ASSERT_GE(CacheMaxCapacity(static_cast<uint32_t>(kSmallSizes[klass])), kCount);
  const uint64_t before = RegionsOut(owner, klass);
  std::thread consumer([&] {
    ASSERT_FALSE(HasCache(t_cache));
    lethe_free(blocks[0]);
    ASSERT_TRUE(HasCache(t_cache));
    // The first region went to its arena, not into the new cache (allocator.cc:
    // FreeToFullCacheBin, passive false sharing).
    EXPECT_EQ(t_cache->bins[klass].count(), 0u);
    EXPECT_EQ(RegionsOut(owner, klass), before - 1);
    for (uint32_t i = 1; i < kCount; ++i) lethe_free(blocks[i]);
    EXPECT_EQ(t_cache->bins[klass].count(), kCount - 1);
    EXPECT_EQ(RegionsOut(owner, klass), before - 1) << "no later free reached the arena";
  });
  consumer.join();
  EXPECT_EQ(RegionsOut(owner, klass), before - kCount) << "the consumer's exit flushed them";
  ValidateHeap();
}

// ...but not a thread bound to a caller arena, whose frees go to the blocks' arenas at once.
TEST(ThreadCache, AThreadBoundToACallerArenaGetsNoCacheFromAFree) {
  void* block = lethe_malloc(512);
  Arena* owner = ArenaOf(ChunkOf(block));
  const auto klass = static_cast<uint32_t>(SmallClassOf(512));
  const uint64_t before = RegionsOut(owner, klass);
  lethe_arena_t arena = lethe_arena_create();
  ASSERT_NE(arena, LETHE_ARENA_NONE);
  std::thread bound([&] {
    ASSERT_EQ(lethe_arena_bind(arena, nullptr), 0);
    lethe_free(block);
    EXPECT_FALSE(HasCache(t_cache));
    EXPECT_EQ(RegionsOut(owner, klass), before - 1);
    EXPECT_EQ(lethe_arena_bind(LETHE_ARENA_NONE, nullptr), 0);
  });
  bound.join();
  EXPECT_EQ(lethe_arena_destroy(arena, nullptr), 0);
}

TEST(ThreadCache, ThreadExitFlushesItsCache) {
  lethe_purge();
  lethe_stats_t before;
  lethe_stats(&before);
  std::thread worker([] {
    std::vector<void*> blocks;
    for (int i = 0; i < 300; ++i) blocks.push_back(lethe_malloc(48 + i % 7 * 100));
    for (void* block : blocks) lethe_free(block);
  });
  worker.join();
  lethe_stats_t after;
  lethe_stats(&after);
  EXPECT_EQ(after.thread_cache_bytes, before.thread_cache_bytes);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_GE(after.allocation_count, before.allocation_count + 300);
}

// lethe_purge() cannot touch another thread's cache, so it asks: the other thread flushes its
// whole cache at its next slow-path event (here a refill of a class it never used).
TEST(ThreadCache, PurgeMakesOtherThreadsFlushAtTheirNextSlowPathEvent) {
  lethe_purge();
  std::atomic<int> phase{0};
  auto wait_for = [&phase](int value) {
    while (phase.load() != value) std::this_thread::yield();
  };
  std::thread worker([&] {
    std::vector<void*> blocks;
    for (size_t size : {200u, 400u, 900u}) {
      for (int i = 0; i < 30; ++i) blocks.push_back(lethe_malloc(size));
    }
    for (void* block : blocks) lethe_free(block);  // parked in this thread's cache
    phase.store(1);
    wait_for(2);
    lethe_free(lethe_malloc(9000));  // empty bin: a refill, the slow path
    phase.store(3);
    wait_for(4);
  });
  wait_for(1);
  lethe_stats_t parked;
  lethe_stats(&parked);
  EXPECT_GE(parked.thread_cache_bytes, 30u * (208 + 448 + 896));
  lethe_purge();
  lethe_stats_t asked;
  lethe_stats(&asked);
  EXPECT_EQ(asked.thread_cache_bytes, parked.thread_cache_bytes) << "only the owner flushes";
  phase.store(2);
  wait_for(3);
  lethe_stats_t flushed;
  lethe_stats(&flushed);
  EXPECT_LE(flushed.thread_cache_bytes, 2u * 10240) << "only the new refill stays cached";
  phase.store(4);
  worker.join();
}

uint64_t LargeBytesOut(Arena* arena) {
  MutexLock lock(&arena->lock);
  return arena->large_bytes_out;
}

TEST(ThreadCache, ALargeFreeStaysInTheCacheByExactPageCountAndPurgeReturnsIt) {
  lethe_purge();
  void* block = lethe_malloc(20 * 1024);  // 5 pages
  ASSERT_NE(block, nullptr);
  Arena* owner = ArenaOf(ChunkOf(block));
  const uint64_t out = LargeBytesOut(owner);
  lethe_free(block);
  EXPECT_EQ(LargeBytesOut(owner), out) << "parked in the cache, still a run of its arena";
  lethe_stats_t parked;
  lethe_stats(&parked);
  EXPECT_EQ(parked.thread_cache_bytes, 20u * 1024);
  void* six_pages = lethe_malloc(6 * 4096);
  EXPECT_NE(six_pages, block) << "another page count is another bin";
  void* again = lethe_malloc(17 * 1024);  // 5 pages too
  EXPECT_EQ(again, block);
  lethe_free(six_pages);
  lethe_free(again);
  lethe_purge();
  EXPECT_EQ(LargeBytesOut(owner), out - 20 * 1024);
  lethe_stats_t purged;
  lethe_stats(&purged);
  EXPECT_EQ(purged.thread_cache_bytes, 0u);
  ValidateHeap();
}

TEST(ThreadCache, LargeBinsStayWithinTheirSlotsAndByteBudget) {
  lethe_purge();
  std::vector<void*> blocks;
  for (uint32_t pages = kLargeCacheMinPages - 1; pages <= kLargeCacheMaxPages + 1; ++pages) {
    for (uint32_t i = 0; i < 2 * kLargeCacheSlots; ++i) blocks.push_back(lethe_malloc(pages * 4096));
  }
  for (void* block : blocks) lethe_free(block);
  ThreadCache* cache = t_cache;
  ASSERT_NE(cache, nullptr);
  uint64_t parked = 0;
  for (uint32_t index = 0; index < kLargeCacheBins; ++index) {
    const LargeCacheBin& bin = cache->large[index];
    EXPECT_LE(bin.count, kLargeCacheSlots);
    // Freed blocks: not lethe_usable_size, which rejects a cached run as it does any freed one.
    parked += uint64_t{bin.count} * (index + kLargeCacheMinPages) * kPageBytes;
  }
  EXPECT_EQ(parked, cache->large_bytes);
  EXPECT_GT(parked, 0u);
  EXPECT_LE(parked, kLargeCacheMaxBytes);
  ValidateHeap();
  lethe_purge();
  EXPECT_EQ(cache->large_bytes, 0u);
}

uint32_t HeadEntry(void* block) {
  Chunk* chunk = ChunkOf(block);
  return chunk->map[PageOf(chunk, block)];
}

// A run in a large bin carries the T flag at its head (chunk.h), which a take and a flush clear:
// the page map, not a scan of the bin, tells a second free of it from a free of a live block.
TEST(ThreadCache, ARunInALargeBinIsFlaggedInThePageMapUntilTakenOrFlushed) {
  lethe_purge();
  void* block = lethe_malloc(20 * 1024);  // 5 pages
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(HeadEntry(block), MapLargeHead(5));
  lethe_free(block);
  ThreadCache* cache = t_cache;  // made by the first allocation, if the thread had none
  ASSERT_TRUE(HasCache(cache));
  LargeCacheBin& bin = cache->large[5 - kLargeCacheMinPages];
  ASSERT_EQ(bin.count, 1u);
  ASSERT_EQ(bin.slots[0], block);
  EXPECT_EQ(HeadEntry(block), MapLargeHead(5) | kMapThreadCached);
  EXPECT_FALSE(MapLiveLargeHead(HeadEntry(block)));
  ValidateHeap();  // a flagged head is a run that is out

  EXPECT_EQ(lethe_malloc(20 * 1024), block) << "taken back from its bin";
  EXPECT_EQ(HeadEntry(block), MapLargeHead(5)) << "the take cleared the flag";
  EXPECT_EQ(lethe_usable_size(block), 20u * 1024);
  lethe_free(block);  // a free of a live block, not a double free
  EXPECT_TRUE(MapThreadCached(HeadEntry(block)));

  // A full bin's free flushes the oldest run (`block`) to its arena; the arena's free aborts on a
  // head that is not live, so a flush that left the flag would not get this far. The heap is read
  // through ValidateHeap only from here: a flushed run's chunk may be unmapped.
  ASSERT_EQ(lethe_malloc(20 * 1024), block);
  std::vector<void*> others;
  for (uint32_t i = 0; i < kLargeCacheSlots; ++i) others.push_back(lethe_malloc(20 * 1024));
  lethe_free(block);
  for (void* other : others) lethe_free(other);
  ASSERT_EQ(bin.count, kLargeCacheSlots);
  for (uint32_t i = 0; i < bin.count; ++i) EXPECT_NE(bin.slots[i], block) << "flushed";
  for (void* other : others) EXPECT_TRUE(MapThreadCached(HeadEntry(other)));
  ValidateHeap();
  lethe_purge();  // flushes the rest, through the same check
  EXPECT_EQ(bin.count, 0u);
  ValidateHeap();
}

TEST(ThreadCacheDeathTest, ASecondFreeOfARunInALargeBinAbortsAtOnce) {
  EXPECT_DEATH(
      {
        void* keep = lethe_malloc(20 * 1024);
        void* block = lethe_malloc(20 * 1024);
        lethe_free(block);
        lethe_free(block);
        lethe_free(keep);
      },
      "lethe: free\\(\\): invalid pointer 0x[0-9a-f]+ \\(double free\\)");
}

// A run in a large bin is a freed block: malloc_usable_size and realloc reject it as they reject
// any freed block (before the flag, both served it as if it were live).
TEST(ThreadCacheDeathTest, UsableSizeAndReallocOfARunInALargeBinAbort) {
  auto cached_run = [] {
    void* block = lethe_malloc(20 * 1024);
    lethe_free(block);
    LETHE_CHECK(MapThreadCached(HeadEntry(block)), "the block is not in a large bin");
    return block;
  };
  EXPECT_DEATH(lethe_usable_size(cached_run()),
               "lethe: malloc_usable_size\\(\\): invalid pointer 0x[0-9a-f]+");
  EXPECT_DEATH(lethe_realloc(cached_run(), 40 * 1024),
               "lethe: realloc\\(\\): invalid pointer 0x[0-9a-f]+");
}

// The flag is in the page map, which every thread reads: a run cached by one thread and freed
// again by another is caught too (a scan of the freeing thread's own bin could not see it).
TEST(ThreadCacheDeathTest, ASecondFreeFromAnotherThreadOfACachedRunAborts) {
  EXPECT_DEATH(
      {
        void* block = lethe_malloc(24 * 1024);
        lethe_free(block);  // into this thread's large bin
        std::thread([block] { lethe_free(block); }).join();
      },
      "lethe: free\\(\\): invalid pointer 0x[0-9a-f]+ \\(double free\\)");
}

// A large free into the cache keeps errno on its slow ends too: a full bin's flush (which returns
// the oldest run to its arena, and may purge) and the free-paced GC step.
TEST(ThreadCache, LargeFreesKeepErrnoWhenTheirBinFlushesAndWhenTheGcStepRuns) {
  lethe_purge();
  std::vector<void*> blocks;
  for (uint32_t i = 0; i <= kLargeCacheSlots; ++i) blocks.push_back(lethe_malloc(20 * 1024));
  ThreadCache* cache = t_cache;
  ASSERT_NE(cache, nullptr);
  const uint64_t flushed = cache->flushed_count;
  for (void* block : blocks) {
    errno = 4242;
    lethe_free(block);
    ASSERT_EQ(errno, 4242);
  }
  EXPECT_EQ(cache->flushed_count, flushed + 1) << "the last free flushed the bin's oldest run";
  EXPECT_EQ(cache->large[5 - kLargeCacheMinPages].count, kLargeCacheSlots);

  const uint32_t gc_bin = cache->gc_next_bin;
  for (uint32_t i = 0; i < kGcEvents; ++i) {
    void* block = lethe_malloc(24 * 1024);  // 6 pages: taken back from its bin after the first
    errno = 4242;
    lethe_free(block);
    ASSERT_EQ(errno, 4242) << "free " << i;
  }
  EXPECT_NE(cache->gc_next_bin, gc_bin) << "the frees' credit ran a GC step";
  lethe_purge();
  EXPECT_EQ(cache->large_bytes, 0u);
}

// An aligned request of a cached length takes the newest cached run that is aligned, and
// leaves the others (the failure path: none is, and the request goes to the arena).
TEST(ThreadCache, AnAlignedRequestTakesOnlyAnAlignedRunFromTheCache) {
  lethe_purge();
  constexpr size_t kAlign = 64 * 1024;
  constexpr uint32_t kPages = 16;
  ASSERT_LE(kPages, kLargeCacheMaxPages);
  void* aligned = lethe_aligned_alloc(kAlign, kPages * kPageBytes);
  ASSERT_NE(aligned, nullptr);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(aligned) % kAlign, 0u);
  // A run of the same length that is not aligned, from the arena.
  std::vector<void*> plain;
  while (plain.empty() || reinterpret_cast<uintptr_t>(plain.back()) % kAlign == 0) {
    plain.push_back(lethe_malloc(kPages * kPageBytes));
    ASSERT_LT(plain.size(), 32u);
  }
  void* unaligned = plain.back();
  plain.pop_back();
  ThreadCache* cache = t_cache;
  ASSERT_NE(cache, nullptr);
  LargeCacheBin& bin = cache->large[kPages - kLargeCacheMinPages];
  lethe_free(aligned);
  lethe_free(unaligned);  // the newest
  ASSERT_EQ(bin.count, 2u);
  EXPECT_EQ(lethe_aligned_alloc(kAlign, kPages * kPageBytes), aligned);
  ASSERT_EQ(bin.count, 1u);
  EXPECT_EQ(bin.slots[0], unaligned);
  void* other = lethe_aligned_alloc(kAlign, kPages * kPageBytes);  // from the arena
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(other) % kAlign, 0u);
  EXPECT_EQ(bin.count, 1u) << "the unaligned run stays cached";
  for (void* block : {aligned, other}) lethe_free(block);
  for (void* block : plain) lethe_free(block);
  ValidateHeap();
}

// Another thread's frees of an arena's large runs take no lock and enter no thread cache: they
// wait on the arena's remote-free stack until its lock is next taken.
TEST(ThreadCache, LargeBlocksFreedByAnotherThreadGoBackToTheirArenaWithoutItsLock) {
  lethe_purge();
  std::vector<void*> blocks;
  for (int i = 0; i < 8; ++i) blocks.push_back(lethe_malloc(32 * 1024));
  Arena* owner = ArenaOf(ChunkOf(blocks[0]));
  for (void* block : blocks) ASSERT_EQ(ArenaOf(ChunkOf(block)), owner);
  const uint64_t out = LargeBytesOut(owner);
  // The owner's lock is held (without ArenaLock's drain) until the stack is read, so that the
  // purge thread's pass, which takes it and drains, cannot come between; a remote free never
  // waits for it (it only tries it, and only past kRemoteFreeMaxPages).
  owner->lock.Lock();
  std::thread other([&] {
    if (AutomaticArena() == owner) return;  // one arena: the frees are the owner's own
    for (void* block : blocks) lethe_free(block);
    EXPECT_TRUE(t_cache == nullptr || t_cache->large_bytes == 0) << "not into this thread's cache";
  });
  other.join();
  const uint32_t pending = owner->remote_pages.load();
  const uint64_t out_while_pending = owner->large_bytes_out;
  owner->lock.Unlock();
  if (g_arena_count < 2) GTEST_SKIP() << "one arena on this machine";
  EXPECT_EQ(pending, 8u * 8) << "pending on the remote-free stack";
  EXPECT_EQ(out_while_pending, out) << "not freed yet";
  void* block = lethe_malloc(32 * 1024);  // the owner takes its lock: the stack is drained
  EXPECT_EQ(owner->remote_pages.load(), 0u);
  EXPECT_EQ(LargeBytesOut(owner), out - 7 * 32 * 1024);
  lethe_free(block);
  ValidateHeap();
}

// Adaptive capacity (thread_cache.h): a bin starts at its floor, grows with the bursts it sees
// (no flush before it reaches its ceiling), and shrinks back when its regions sit idle.
// The whole pages within [begin, end), and how many of them are resident.
struct PagesWithin {
  char* first;
  size_t count;
};
PagesWithin WholePagesWithin(void* begin, void* end) {
  auto first = (reinterpret_cast<uintptr_t>(begin) + kPageBytes - 1) & ~(kPageBytes - 1);
  auto last = reinterpret_cast<uintptr_t>(end) & ~(kPageBytes - 1);
  return {reinterpret_cast<char*>(first), last > first ? (last - first) / kPageBytes : 0};
}
size_t ResidentCount(PagesWithin pages) {
  std::vector<unsigned char> resident(pages.count);
  if (mincore(pages.first, pages.count * kPageBytes, resident.data()) != 0) return SIZE_MAX;
  return static_cast<size_t>(std::count_if(resident.begin(), resident.end(),
                                           [](unsigned char page) { return page & 1; }));
}

// A thread that uses every small class a little writes its bins' slots in the packed array only:
// none of the pages of the bins' own arrays (ThreadCache::spread) is resident after it. A bin
// that grows past the packed slots moves to its own array with the regions it holds.
TEST(ThreadCache, BinsThatStaySmallWriteOnlyThePackedSlots) {
  std::thread fresh([] {
    lethe_free(lethe_malloc(8));  // creates this thread's cache (or takes an exited thread's)
    ThreadCache* cache = t_cache;
    ASSERT_TRUE(HasCache(cache));
    for (uint32_t klass = 0; klass < kSmallClassCount; ++klass) {
      ASSERT_EQ(cache->bins[klass].slots(), cache->packed[klass]) << "class " << klass;
    }
    // A reused cache's spread pages may hold its last owner's slots, dead since InitBins.
    PagesWithin spread = WholePagesWithin(cache->spread, std::end(cache->spread));
    ASSERT_GE(spread.count, 10u);
    ASSERT_EQ(madvise(spread.first, spread.count * kPageBytes, MADV_DONTNEED), 0);

    std::vector<void*> blocks;
    for (uint32_t klass = 0; klass < kSmallClassCount; ++klass) {
      for (int i = 0; i < 4; ++i) blocks.push_back(lethe_malloc(kSmallSizes[klass]));
    }
    for (void* block : blocks) lethe_free(block);
    for (uint32_t klass = 0; klass < kSmallClassCount; ++klass) {
      EXPECT_EQ(cache->bins[klass].slots(), cache->packed[klass]) << "class " << klass;
      EXPECT_LE(cache->bins[klass].capacity(), kPackedCacheSlots) << "class " << klass;
    }
    EXPECT_EQ(ResidentCount(spread), 0u);

    constexpr uint32_t kKlass = 0;
    CacheBin& bin = cache->bins[kKlass];
    std::vector<void*> burst;
    for (uint32_t i = 0; i < 3 * kPackedCacheSlots; ++i) burst.push_back(lethe_malloc(8));
    for (void* block : burst) lethe_free(block);
    EXPECT_GT(bin.capacity(), kPackedCacheSlots);
    EXPECT_EQ(bin.slots(), cache->spread + kSpreadCacheOffsets[kKlass]);
    // The burst's blocks, the newest regions in the bin, come back each once.
    std::vector<void*> again;
    for (uint32_t i = 0; i < burst.size(); ++i) again.push_back(lethe_malloc(8));
    std::sort(burst.begin(), burst.end());
    std::sort(again.begin(), again.end());
    EXPECT_EQ(again, burst);
    for (void* block : again) lethe_free(block);
  });
  fresh.join();
  ValidateHeap();
}

TEST(ThreadCache, ABinGrowsWithABurstAndKeepsItWithoutFlushing) {
  constexpr uint32_t kSize = 24;
  const auto klass = static_cast<uint32_t>(SmallClassOf(kSize));
  const uint32_t floor = CacheMinCapacity(kSmallSizes[klass]);
  const uint32_t ceiling = CacheMaxCapacity(kSmallSizes[klass]);
  // More than half the ceiling: the misses double the bin up to it, and the frees fit in it.
  const int burst = static_cast<int>(ceiling * 5 / 8);
  std::thread fresh([klass, floor, ceiling, burst] {
    void* first = lethe_malloc(kSize);  // creates this thread's cache
    ThreadCache* cache = t_cache;
    ASSERT_TRUE(HasCache(cache));
    CacheBin& bin = cache->bins[klass];
    EXPECT_EQ(bin.capacity(), floor * 2) << "the first miss doubled the floor";
    std::vector<void*> blocks{first};
    for (int i = 1; i < burst; ++i) blocks.push_back(lethe_malloc(kSize));
    Arena* arena = cache->arena;
    uint64_t out = RegionsOut(arena, klass);
    for (void* block : blocks) lethe_free(block);
    EXPECT_EQ(bin.capacity(), ceiling);
    EXPECT_EQ(RegionsOut(arena, klass), out) << "a burst's frees under the ceiling flush nothing";
    EXPECT_GE(bin.count(), static_cast<uint32_t>(burst));
    // Past the ceiling the bin flushes (older half) and stays bounded.
    blocks.clear();
    for (uint32_t i = 0; i < 4 * ceiling; ++i) blocks.push_back(lethe_malloc(kSize));
    for (void* block : blocks) lethe_free(block);
    EXPECT_EQ(bin.capacity(), ceiling);
    EXPECT_LE(bin.count(), bin.capacity());
  });
  fresh.join();
  ValidateHeap();
}

TEST(ThreadCache, AnIdleBinShrinksToItsFloorAndGivesItsRegionsBack) {
  constexpr uint32_t kSize = 400;
  const auto klass = static_cast<uint32_t>(SmallClassOf(kSize));
  const uint32_t floor = CacheMinCapacity(kSmallSizes[klass]);
  const uint32_t ceiling = CacheMaxCapacity(kSmallSizes[klass]);
  std::thread worker([klass, floor, ceiling] {
    std::vector<void*> blocks;
    // Twice the ceiling: the misses grow the bin to it (a burst larger than the bin).
    for (uint32_t i = 0; i < 2 * ceiling; ++i) blocks.push_back(lethe_malloc(kSize));
    ThreadCache* cache = t_cache;
    ASSERT_TRUE(HasCache(cache));
    for (void* block : blocks) lethe_free(block);
    CacheBin& bin = cache->bins[klass];
    ASSERT_EQ(bin.capacity(), ceiling);
    uint64_t out = RegionsOut(cache->arena, klass);
    uint32_t cached = bin.count();
    // GC rounds with no allocation: every visit finds the bin's regions idle.
    for (int round = 0; round < 8; ++round) {
      for (size_t step = 0; step < kSmallClassCount + kLargeCacheBins; ++step) {
        ThreadCacheGcAfter(cache, false);
      }
    }
    EXPECT_EQ(bin.capacity(), floor);
    EXPECT_LE(bin.count(), bin.capacity());
    EXPECT_EQ(RegionsOut(cache->arena, klass), out - (cached - bin.count()));
  });
  worker.join();
  ValidateHeap();
}

// A thread that allocated its working set and now frees it (a phase or a process ending) gives its
// cache back at the second free-paced GC step that finds no allocation since the first: every
// small bin at its floor, the large bins empty (kShedShare).
TEST(ThreadCache, AThreadThatFreesItsWorkingSetShedsItsBinsToTheirFloors) {
  constexpr size_t kSmall = 600;
  constexpr size_t kLarge = 20 << 10;
  const auto klass = static_cast<uint32_t>(SmallClassOf(kSmall));
  std::thread worker([klass] {
    std::vector<void*> blocks;
    for (uint32_t i = 0; i < kGcEvents; ++i) blocks.push_back(lethe_malloc(kSmall));
    for (int i = 0; i < 4; ++i) blocks.push_back(lethe_malloc(kLarge));
    ThreadCache* cache = t_cache;
    ASSERT_TRUE(HasCache(cache));
    uint64_t out = RegionsOut(cache->arena, klass);
    for (void* block : blocks) lethe_free(block);
    ThreadCacheGcAfter(cache, false);
    ThreadCacheGcAfter(cache, false);
    for (uint32_t k = 0; k < kSmallClassCount; ++k) {
      EXPECT_EQ(cache->bins[k].capacity(), CacheMinCapacity(kSmallSizes[k])) << "class " << k;
      EXPECT_LE(cache->bins[k].count(), cache->bins[k].capacity()) << "class " << k;
    }
    EXPECT_EQ(cache->large_bytes, 0u);
    EXPECT_GE(out - RegionsOut(cache->arena, klass), kGcEvents - CacheMinCapacity(kSmallSizes[klass]))
        << "the shed regions went back to the arena";
  });
  worker.join();
  ValidateHeap();
}

// While a thread sheds (a program freeing its data at exit, as jq's last 140,000 frees), what it
// frees goes back to the runs: the transfer cache ends empty, the bin holds at most
// kShedBinCapacity, and the runs the regions came from are free again. The next allocation-paced
// GC step ends the shedding: bins grow and park again.
TEST(ThreadCache, AThreadThatShedsReturnsWhatItFreesToTheRunsUntilItAllocatesAgain) {
  constexpr size_t kSize = 64;
  constexpr uint32_t kCount = 8 * kGcEvents;
  const auto klass = static_cast<uint32_t>(SmallClassOf(kSize));
  std::thread worker([klass] {
    std::vector<void*> blocks;
    for (uint32_t i = 0; i < kCount; ++i) blocks.push_back(lethe_malloc(kSize));
    ThreadCache* cache = t_cache;
    ASSERT_TRUE(HasCache(cache));
    const uint64_t out = RegionsOut(cache->arena, klass);
    for (void* block : blocks) lethe_free(block);
    EXPECT_TRUE(cache->shedding);
    EXPECT_LE(cache->bins[klass].count(), kShedBinCapacity);
    {
      MutexLock lock(&cache->arena->lock);
      EXPECT_EQ(cache->arena->transfer.count[klass], 0u) << "nothing parked while shedding";
    }
    EXPECT_GE(out - RegionsOut(cache->arena, klass), kCount - kShedBinCapacity)
        << "every freed region but the bin's is back in its run";
    blocks.clear();
    for (uint32_t i = 0; i < kGcEvents; ++i) blocks.push_back(lethe_malloc(kSize));
    EXPECT_FALSE(cache->shedding) << "an allocation-paced step ends it";
    for (void* block : blocks) lethe_free(block);
    EXPECT_GT(cache->bins[klass].capacity(), kShedBinCapacity) << "the bin grows again";
  });
  worker.join();
  ValidateHeap();
}

// The same frees with allocations between the steps (a quarter of kGcEvents, over kGcEvents /
// kShedShare), or from a thread that never allocated kGcEvents blocks (one that frees what others
// allocate), shed nothing: the bin keeps its ceiling.
TEST(ThreadCache, AThreadThatAllocatesAsItFreesOrOnlyFreesKeepsItsBins) {
  constexpr size_t kSmall = 600;
  const auto klass = static_cast<uint32_t>(SmallClassOf(kSmall));
  const uint32_t ceiling = CacheMaxCapacity(kSmallSizes[klass]);
  std::thread balanced([klass, ceiling] {
    std::vector<void*> blocks;
    for (uint32_t i = 0; i < kGcEvents; ++i) blocks.push_back(lethe_malloc(kSmall));
    ThreadCache* cache = t_cache;
    ASSERT_TRUE(HasCache(cache));
    for (void* block : blocks) lethe_free(block);
    for (int round = 0; round < 3; ++round) {
      blocks.clear();
      for (uint32_t i = 0; i < kGcEvents / 4; ++i) blocks.push_back(lethe_malloc(kSmall));
      for (void* block : blocks) lethe_free(block);
      ThreadCacheGcAfter(cache, false);
    }
    EXPECT_EQ(cache->bins[klass].capacity(), ceiling);
  });
  balanced.join();
  std::vector<void*> blocks;
  for (uint32_t i = 0; i < kGcEvents; ++i) blocks.push_back(lethe_malloc(kSmall));
  std::thread consumer([&blocks, klass, ceiling] {
    lethe_free(lethe_malloc(kSmall));  // creates the cache
    ThreadCache* cache = t_cache;
    ASSERT_TRUE(HasCache(cache));
    for (void* block : blocks) lethe_free(block);
    ThreadCacheGcAfter(cache, false);
    ThreadCacheGcAfter(cache, false);
    EXPECT_EQ(cache->bins[klass].capacity(), ceiling);
  });
  consumer.join();
  ValidateHeap();
}

// free's fast path counts nothing; a bin found full charges the frees that filled it, so that a
// thread that only frees still runs a GC step about every kGcEvents frees.
TEST(ThreadCache, AThreadThatOnlyFreesStillRunsGcSteps) {
  std::vector<void*> blocks;
  for (uint32_t i = 0; i < 4 * kGcEvents; ++i) blocks.push_back(lethe_malloc(48));
  std::thread freer([&blocks] {
    lethe_free(lethe_malloc(48));  // creates the cache
    ThreadCache* cache = t_cache;
    ASSERT_TRUE(HasCache(cache));
    const uint32_t first = cache->gc_next_bin;
    for (void* block : blocks) lethe_free(block);
    const uint32_t steps = cache->gc_next_bin - first;  // no wrap: far fewer than the bins
    EXPECT_GE(steps, 3u);
    EXPECT_LE(steps, 4u);
  });
  freer.join();
  ValidateHeap();
}

// Past kRemoteFreeMaxPages the pushing thread drains the stack itself, but only when the lock is
// free: a consumer's frees never wait behind the owner's work.
TEST(ThreadCache, ARemoteFreePastTheBoundDrainsOnlyWhenTheArenaLockIsFree) {
  lethe_purge();
  constexpr uint32_t kPages = 224;  // 896 KiB, a large class: past the thread cache
  constexpr size_t kBlocks = kRemoteFreeMaxPages / kPages + 2;
  std::vector<void*> blocks;
  for (size_t i = 0; i < kBlocks + 1; ++i) blocks.push_back(lethe_malloc(kPages * kPageBytes));
  ASSERT_EQ(lethe_usable_size(blocks[0]), kPages * kPageBytes);
  Arena* owner = ArenaOf(ChunkOf(blocks[0]));
  for (void* block : blocks) ASSERT_EQ(ArenaOf(ChunkOf(block)), owner);
  bool other_arena = false;
  {
    MutexLock lock(&owner->lock);
    std::thread other([&] {
      if (AutomaticArena() == owner) return;  // its frees would need the lock held here
      other_arena = true;
      for (size_t i = 0; i < kBlocks; ++i) lethe_free(blocks[i]);  // must not block
    });
    other.join();
    if (other_arena) {
      EXPECT_EQ(owner->remote_pages.load(), kBlocks * kPages) << "past the bound, not drained";
    }
  }
  if (!other_arena) {
    for (size_t i = 0; i < kBlocks; ++i) lethe_free(blocks[i]);
    lethe_free(blocks[kBlocks]);
    GTEST_SKIP() << "the second thread shares the owner's arena";
  }
  std::thread again([&] { lethe_free(blocks[kBlocks]); });  // the lock is free now: drains
  again.join();
  EXPECT_EQ(owner->remote_pages.load(), 0u);
  ValidateHeap();
}

TEST(ThreadCache, ThreadsSpreadOverArenas) {
  lethe_free(lethe_malloc(1));  // initialises the arena table
  if (g_arena_count < 2) GTEST_SKIP() << "one arena on this machine";
  std::vector<Arena*> arenas(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&arenas, i] {
      void* block = lethe_malloc(100);
      arenas[i] = ArenaOf(ChunkOf(block));
      lethe_free(block);
    });
  }
  for (auto& thread : threads) thread.join();
  int distinct = 0;
  for (int i = 1; i < 4; ++i) distinct += arenas[i] != arenas[0];
  EXPECT_GT(distinct, 0);
}

// Pattern: every byte of a block derived from its address and size.
unsigned char PatternByte(const void* block, size_t size) {
  return static_cast<unsigned char>((reinterpret_cast<uintptr_t>(block) >> 4) ^ size);
}
void Fill(void* block, size_t size) { std::memset(block, PatternByte(block, size), size); }
// Checks the first `prefix` bytes (all by default) of a block of `size` bytes.
bool Check(const void* block, size_t size, size_t prefix = SIZE_MAX) {
  unsigned char expected = PatternByte(block, size);
  const auto* bytes = static_cast<const unsigned char*>(block);
  size_t end = prefix < size ? prefix : size;
  for (size_t i = 0; i < end; ++i) {
    if (bytes[i] != expected) return false;
  }
  return true;
}

TEST(ThreadCacheStress, ManyThreadsWithRemoteFreesAndReallocKeepEveryBlockIntact) {
  const int kThreads = getenv("STRESS_THREADS") ? atoi(getenv("STRESS_THREADS")) : 8;
  constexpr int kSteps = 20000;
  struct Block {
    void* pointer;
    size_t size;
  };
  std::mutex exchange_lock;
  std::vector<Block> exchange;  // blocks handed to whichever thread picks them up
  std::atomic<int> corrupt{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 random(static_cast<unsigned>(t) * 7919u + 1);
      std::vector<Block> own;
      for (int step = 0; step < kSteps; ++step) {
        unsigned choice = random() % 100;
        if (choice < 50 || own.empty()) {
          unsigned kind = random() % 1000;
          size_t size = kind < 900 ? random() % 256 + 1
                        : kind < 995 ? random() % 70000 + 1  // small and cached large
                                     : random() % (3 << 19) + 1;
          void* pointer = lethe_malloc(size);
          if (pointer == nullptr) {
            ++corrupt;
            continue;
          }
          Fill(pointer, size);
          own.push_back({pointer, size});
        } else if (choice < 80) {
          size_t index = random() % own.size();
          if (!Check(own[index].pointer, own[index].size)) ++corrupt;
          lethe_free(own[index].pointer);
          own[index] = own.back();
          own.pop_back();
        } else if (choice < 90) {
          size_t index = random() % own.size();
          std::lock_guard<std::mutex> lock(exchange_lock);
          exchange.push_back(own[index]);
          own[index] = own.back();
          own.pop_back();
        } else if (choice < 95) {
          Block taken{nullptr, 0};
          {
            std::lock_guard<std::mutex> lock(exchange_lock);
            if (!exchange.empty()) {
              taken = exchange.back();
              exchange.pop_back();
            }
          }
          if (taken.pointer != nullptr) {
            if (!Check(taken.pointer, taken.size)) ++corrupt;
            lethe_free(taken.pointer);
          }
        } else {
          size_t index = random() % own.size();
          Block& block = own[index];
          if (!Check(block.pointer, block.size, 64)) ++corrupt;
          size_t size = random() % 40000 + 1;
          void* moved = lethe_realloc(block.pointer, size);
          if (moved == nullptr) {
            ++corrupt;
            continue;
          }
          block = {moved, size};
          Fill(moved, size);
        }
      }
      for (Block& block : own) {
        if (!Check(block.pointer, block.size)) ++corrupt;
        lethe_free(block.pointer);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (Block& block : exchange) {
    if (!Check(block.pointer, block.size)) ++corrupt;
    lethe_free(block.pointer);
  }
  EXPECT_EQ(corrupt.load(), 0);
  ValidateHeap();
}

}  // namespace
}  // namespace lethe::internal
