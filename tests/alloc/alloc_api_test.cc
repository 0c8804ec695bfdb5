// The contract of lethe/alloc.h that holds whichever allocator serves it (bundled or system).
#include "lethe/alloc.h"

#include <errno.h>
#include <gtest/gtest.h>

#include <barrier>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

TEST(AllocApi, MallocGivesAtLeastTheRequestedUsableSize) {
  for (size_t size : {1u, 7u, 16u, 100u, 4096u, 100000u, 3u << 20}) {
    void* block = lethe_malloc(size);
    ASSERT_NE(block, nullptr) << size;
    EXPECT_GE(lethe_usable_size(block), size);
    std::memset(block, 0xab, lethe_usable_size(block));
    lethe_free(block);
  }
}

TEST(AllocApi, GoodSizeIsAtLeastTheRequest) {
  for (size_t size = 1; size < 70000; size = size * 3 / 2 + 1) EXPECT_GE(lethe_good_size(size), size);
}

TEST(AllocApi, CallocOverflowFailsWithEnomem) {
  errno = 0;
  EXPECT_EQ(lethe_calloc(SIZE_MAX / 2, 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(AllocApi, CallocZeroes) {
  auto* bytes = static_cast<unsigned char*>(lethe_calloc(1000, 3));
  ASSERT_NE(bytes, nullptr);
  for (size_t i = 0; i < 3000; ++i) ASSERT_EQ(bytes[i], 0) << i;
  lethe_free(bytes);
}

TEST(AllocApi, ReallocKeepsContents) {
  auto* bytes = static_cast<unsigned char*>(lethe_malloc(100));
  ASSERT_NE(bytes, nullptr);
  for (int i = 0; i < 100; ++i) bytes[i] = static_cast<unsigned char>(i);
  bytes = static_cast<unsigned char*>(lethe_realloc(bytes, 1 << 20));
  ASSERT_NE(bytes, nullptr);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(bytes[i], i);
  lethe_free(bytes);
}

TEST(AllocApi, AlignedAllocHonoursAlignment) {
  for (size_t alignment : {8u, 64u, 4096u, 65536u}) {
    void* block = lethe_aligned_alloc(alignment, 100);
    ASSERT_NE(block, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % alignment, 0u);
    lethe_free(block);
  }
}

TEST(AllocApi, FailAfterFailsExactlyTheNthAllocationOnce) {
  lethe_fail_after(3);
  void* first = lethe_malloc(10);
  void* second = lethe_malloc(10);
  errno = 0;
  void* third = lethe_malloc(10);
  EXPECT_EQ(errno, ENOMEM);
  void* fourth = lethe_malloc(10);
  EXPECT_NE(first, nullptr);
  EXPECT_NE(second, nullptr);
  EXPECT_EQ(third, nullptr);
  EXPECT_NE(fourth, nullptr);
  lethe_free(first);
  lethe_free(second);
  lethe_free(fourth);
}

// calloc and a realloc that moves a small block take malloc's fast path; the injected failure
// still reaches them, and a failed realloc leaves the block as it was.
TEST(AllocApi, FailAfterReachesSmallCallocAndASmallReallocThatMoves) {
  lethe_fail_after(1);
  errno = 0;
  EXPECT_EQ(lethe_calloc(4, 10), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  auto* block = static_cast<unsigned char*>(lethe_malloc(24));
  ASSERT_NE(block, nullptr);
  std::memset(block, 0x5a, 24);
  lethe_fail_after(1);
  errno = 0;
  EXPECT_EQ(lethe_realloc(block, 200), nullptr);  // another class: it would move
  EXPECT_EQ(errno, ENOMEM);
  for (int i = 0; i < 24; ++i) ASSERT_EQ(block[i], 0x5a);
  auto* moved = static_cast<unsigned char*>(lethe_realloc(block, 200));
  ASSERT_NE(moved, nullptr);
  for (int i = 0; i < 24; ++i) ASSERT_EQ(moved[i], 0x5a);
  lethe_free(moved);
}

TEST(AllocApi, StatsCountLiveBytes) {
  lethe_stats_t before;
  lethe_stats(&before);
  void* block = lethe_malloc(1 << 16);
  ASSERT_NE(block, nullptr);
  lethe_stats_t during;
  lethe_stats(&during);
  EXPECT_GE(during.allocated_bytes, before.allocated_bytes + lethe_usable_size(block));
  EXPECT_GT(during.allocation_count, before.allocation_count);
  lethe_free(block);
  lethe_stats_t after;
  lethe_stats(&after);
  EXPECT_GT(after.free_count, during.free_count);
}

TEST(AllocApi, FreeNullIsANoOpAndKeepsErrno) {
  errno = 1234;
  lethe_free(nullptr);
  EXPECT_EQ(errno, 1234);
}

TEST(AllocApi, AllocatorNameIsKnown) {
  std::string name = lethe_allocator_name();
  EXPECT_TRUE(name == "lethe" || name == "system") << name;
}

// ---- peak_allocated_bytes ----------------------------------------------------------------------
// What lethe/alloc.h promises: with the bundled allocator the peak counts blocks parked in thread
// caches as allocated (at most LETHE_THREAD_CACHE_MAX_BYTES per thread above the true peak); the
// system shim is exact.

uint64_t CacheSlackPerThread() {
  return std::string(lethe_allocator_name()) == "lethe" ? LETHE_THREAD_CACHE_MAX_BYTES : 0;
}

// The figure the peak restarts from: what lethe_stats_reset_peak() reads as "current".
uint64_t Held(const lethe_stats_t& stats) {
  return stats.allocated_bytes + stats.thread_cache_bytes;
}

lethe_stats_t StatsAfterReset() {
  lethe_purge();  // empties this thread's cache: the baseline is exact
  lethe_stats_reset_peak();
  lethe_stats_t stats;
  lethe_stats(&stats);
  return stats;
}

TEST(AllocPeak, RisesWithABigAllocationAndStaysAfterItIsFreed) {
  const lethe_stats_t before = StatsAfterReset();
  void* block = lethe_malloc(3u << 20);
  ASSERT_NE(block, nullptr);
  const uint64_t usable = lethe_usable_size(block);
  lethe_stats_t during;
  lethe_stats(&during);
  EXPECT_EQ(during.peak_allocated_bytes, Held(before) + usable);
  lethe_free(block);
  lethe_stats_t after;
  lethe_stats(&after);
  EXPECT_EQ(after.peak_allocated_bytes, during.peak_allocated_bytes);
  EXPECT_LE(after.allocated_bytes + usable, after.peak_allocated_bytes);
}

TEST(AllocPeak, ResetBringsItBackToTheCurrentFigure) {
  void* block = lethe_malloc(5u << 20);
  ASSERT_NE(block, nullptr);
  lethe_free(block);
  lethe_stats_t high;
  lethe_stats(&high);
  ASSERT_GE(high.peak_allocated_bytes, Held(high) + (5u << 20));
  lethe_stats_reset_peak();
  lethe_stats_t reset;
  lethe_stats(&reset);
  EXPECT_EQ(reset.peak_allocated_bytes, Held(reset));
  EXPECT_LT(reset.peak_allocated_bytes, high.peak_allocated_bytes);
}

TEST(AllocPeak, HugeAndLargeBlocksCountExactly) {
  // 2 MiB and 6 MiB are huge (own mappings); 24 KiB and 200 KiB are large runs of the bundled
  // allocator. After lethe_purge() this thread's cache is empty, so each comes from its arena (or
  // the huge table) and the peak rises by exactly its usable size.
  for (size_t size : {size_t{24} << 10, size_t{200} << 10, size_t{2} << 20, size_t{6} << 20}) {
    const lethe_stats_t before = StatsAfterReset();
    void* block = lethe_malloc(size);
    ASSERT_NE(block, nullptr);
    lethe_stats_t during;
    lethe_stats(&during);
    EXPECT_EQ(during.peak_allocated_bytes - Held(before), lethe_usable_size(block)) << size;
    lethe_free(block);
  }
}

TEST(AllocPeak, SmallBlocksCountWithinTheThreadCacheBound) {
  const lethe_stats_t before = StatsAfterReset();
  std::vector<void*> blocks;
  uint64_t usable = 0;
  for (int i = 0; i < 2000; ++i) {
    blocks.push_back(lethe_malloc(static_cast<size_t>(16 + i % 48)));
    ASSERT_NE(blocks.back(), nullptr);
    usable += lethe_usable_size(blocks.back());
  }
  lethe_stats_t during;
  lethe_stats(&during);
  const uint64_t rise = during.peak_allocated_bytes - Held(before);
  EXPECT_GE(rise, usable);
  EXPECT_LE(rise, usable + CacheSlackPerThread());
  for (void* block : blocks) lethe_free(block);
}

TEST(AllocPeak, ReallocGrowthCountsTheNewSize) {
  const lethe_stats_t before = StatsAfterReset();
  void* block = lethe_malloc(100);
  ASSERT_NE(block, nullptr);
  block = lethe_realloc(block, 4u << 20);
  ASSERT_NE(block, nullptr);
  lethe_stats_t during;
  lethe_stats(&during);
  EXPECT_GE(during.peak_allocated_bytes - Held(before), lethe_usable_size(block));
  lethe_free(block);
}

TEST(AllocPeak, ConcurrentThreadsAddUpToTheirCombinedHighWaterMark) {
  constexpr int kThreads = 4;
  const lethe_stats_t before = StatsAfterReset();
  std::barrier all_hold(kThreads + 1);
  std::barrier may_free(kThreads + 1);
  std::vector<uint64_t> usable(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<void*> blocks;
      for (int i = 0; i < 300; ++i) blocks.push_back(lethe_malloc(static_cast<size_t>(24 + i % 200)));
      for (int i = 0; i < 6; ++i) blocks.push_back(lethe_malloc(static_cast<size_t>(20 + 8 * i) << 10));
      blocks.push_back(lethe_malloc((size_t{3} << 19) + static_cast<size_t>(t) * 4096));  // huge
      for (void* block : blocks) usable[static_cast<size_t>(t)] += lethe_usable_size(block);
      all_hold.arrive_and_wait();
      may_free.arrive_and_wait();
      for (void* block : blocks) lethe_free(block);
      lethe_purge();  // returns this thread's cache before it exits (exit does too)
    });
  }
  all_hold.arrive_and_wait();
  lethe_stats_t holding;
  lethe_stats(&holding);
  may_free.arrive_and_wait();
  for (std::thread& thread : threads) thread.join();
  uint64_t total = 0;
  for (uint64_t bytes : usable) total += bytes;
  lethe_stats_t after;
  lethe_stats(&after);
  EXPECT_GE(holding.peak_allocated_bytes - Held(before), total);
  // Nothing counted twice: at most the thread caches' contents above what was live together.
  EXPECT_LE(after.peak_allocated_bytes - Held(before), total + kThreads * CacheSlackPerThread());
  EXPECT_EQ(after.peak_allocated_bytes, holding.peak_allocated_bytes);
}

// The fail-after hook fails as the OS does: the low-memory callback runs first, on the allocating
// thread, so that the layers above can test their callbacks (issue 17: a cache's lock held).
TEST(AllocApi, FailAfterRunsTheLowMemoryCallbackThenFails) {
  struct Context {
    int calls = 0;
    size_t request_bytes = 0;
  } context;
  lethe_set_low_memory_callback(
      [](size_t request_bytes, void* data) {
        auto* seen = static_cast<Context*>(data);
        ++seen->calls;
        seen->request_bytes = request_bytes;
      },
      &context);
  lethe_fail_after(1);
  errno = 0;
  EXPECT_EQ(lethe_malloc(300), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(context.calls, 1);
  EXPECT_EQ(context.request_bytes, 300u);
  void* block = lethe_malloc(300);  // once only
  EXPECT_NE(block, nullptr);
  lethe_fail_after(1);
  EXPECT_EQ(lethe_realloc(block, 5000), nullptr);  // the block stays, as on any failed realloc
  EXPECT_EQ(context.calls, 2);
  EXPECT_EQ(context.request_bytes, 5000u);
  lethe_set_low_memory_callback(nullptr, nullptr);
  lethe_free(block);
}

}  // namespace
