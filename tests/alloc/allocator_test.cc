// The bundled allocator through lethe/alloc.h: realloc in place, huge blocks, alignment, calloc on
// reused memory, statistics, fail-after, the checks on free, and Validate() after random work.
#include "allocator.h"

#include <errno.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "arena.h"
#include "huge.h"
#include "huge_region.h"
#include "lethe/alloc.h"
#include "os.h"

// The bounds of the executable's zero-initialised data, from the GNU linker's default script.
extern "C" char __bss_start[], _end[];

namespace lethe::internal {
namespace {

TEST(Allocator, NameIsLethe) { EXPECT_STREQ(lethe_allocator_name(), "lethe"); }

// 64 arenas of about 7 KiB: with all-zero defaults the table is .bss, whose pages cost nothing
// until an arena is used. One non-zero member initializer moves it to .data: 448 KiB of the file
// that each process maps, and reads pages of (with the kernel's fault-around, 64 KiB at a time).
TEST(Allocator, TheArenaTableIsZeroInitialisedData) {
  const char* table = reinterpret_cast<const char*>(g_arenas);
  EXPECT_GE(table, __bss_start);
  EXPECT_LE(table + sizeof(g_arenas), _end);
}

TEST(Allocator, LargeReallocGrowsAndShrinksInPlace) {
  void* guard = lethe_malloc(64 * 1024);  // keeps the chunk from being retained/unmapped
  auto* block = static_cast<unsigned char*>(lethe_malloc(20 * 1024));
  ASSERT_NE(block, nullptr);
  // Make sure the pages after the block are free: allocate and free a neighbour.
  void* neighbour = lethe_malloc(200 * 1024);
  lethe_free(neighbour);
  std::memset(block, 0x77, 20 * 1024);
  Chunk* chunk = ChunkOf(block);
  uint32_t page = PageOf(chunk, block);
  // The purge thread may be giving those free pages back meanwhile: one atomic read of the entry.
  uint32_t after = LoadSharedEntry(chunk, page + 5);
  if (after == MapFree(MapCount(after), true) || MapKind(after) == PageKind::kFree) {
    void* grown = lethe_realloc(block, 100 * 1024);
    EXPECT_EQ(grown, block) << "grew in place";
    EXPECT_EQ(lethe_usable_size(grown), lethe_good_size(100 * 1024)) << "to its class";
    for (size_t i = 0; i < 20 * 1024; ++i) ASSERT_EQ(block[i], 0x77);
  }
  void* shrunk = lethe_realloc(block, 40 * 1024);
  EXPECT_EQ(shrunk, block) << "shrank in place";
  EXPECT_EQ(lethe_usable_size(shrunk), 40u * 1024);
  ValidateHeap();
  lethe_free(shrunk);
  lethe_free(guard);
  ValidateHeap();
}

// 80 KiB is past the thread cache's large bins: a plain free parks the run (page_heap.h step 8).
TEST(Allocator, LargeReallocWithinItsClassDoesNothingAndPastItMovesOnceToTheNextClass) {
  // A buffer grown by small appends from 16 KiB to 900 KiB: within a class realloc returns the
  // same block; past it, it either grows in place or moves, and in both cases lands on the new
  // size's class, so it changes at most once per class (25 classes), not once per page.
  std::vector<void*> neighbours;  // blocks after the buffer keep it from always growing in place
  auto* buffer = static_cast<unsigned char*>(lethe_malloc(16 * 1024));
  ASSERT_NE(buffer, nullptr);
  size_t changes = 0, moves = 0;
  for (size_t size = 16 * 1024; size <= 900 * 1024; size += 1000) {
    size_t before = lethe_usable_size(buffer);
    buffer[size - 1001] = static_cast<unsigned char>(size);
    auto* grown = static_cast<unsigned char*>(lethe_realloc(buffer, size));
    ASSERT_NE(grown, nullptr);
    ASSERT_EQ(grown[size - 1001], static_cast<unsigned char>(size)) << size;
    // A run is of the size's class; a block that moved into a region (from
    // kGrowingRegionMinBytes on) is of its growth step.
    size_t step = IsArenaChunk(grown) ? lethe_good_size(size)
                                      : GrowthPages(PagesFor(size)) << kLgPageBytes;
    ASSERT_EQ(lethe_usable_size(grown), step) << size;
    if (size <= before) {
      ASSERT_EQ(grown, buffer) << "within its class " << size;
    }
    if (lethe_usable_size(grown) != before) ++changes;
    if (grown != buffer) {
      ++moves;
      neighbours.push_back(lethe_malloc(8 * 1024));  // occupy the pages after the new block
    }
    buffer = grown;
  }
  EXPECT_LE(changes, 25u);
  EXPECT_LE(moves, changes);
  EXPECT_EQ(lethe_usable_size(buffer),
            IsArenaChunk(buffer) ? kLargeMaxBytes : GrowthPages(kChunkUsablePages) << kLgPageBytes);
  // Shrinking into a smaller class gives the tail back in place, or, under
  // kGrowingRegionMinBytes, out of a region into a run.
  void* shrunk = lethe_realloc(buffer, 100 * 1024);
  EXPECT_EQ(shrunk == buffer, IsArenaChunk(buffer));
  EXPECT_EQ(lethe_usable_size(shrunk), lethe_good_size(100 * 1024));
  lethe_free(shrunk);
  for (void* block : neighbours) lethe_free(block);
  ValidateHeap();
}

TEST(Allocator, AReallocThatMovesFreesTheRunItLeftWithoutParkingIt) {
  auto* parked = static_cast<unsigned char*>(lethe_malloc(80 * 1024));
  auto* moving = static_cast<unsigned char*>(lethe_malloc(80 * 1024));
  void* guard = lethe_malloc(80 * 1024);
  ASSERT_TRUE(parked != nullptr && moving != nullptr && guard != nullptr);
  std::memset(moving, 0x5c, 80 * 1024);
  lethe_free(parked);
  Chunk* chunk = ChunkOf(parked);
  EXPECT_TRUE(MapParked(chunk->map[PageOf(chunk, parked)]));
  auto* moved = static_cast<unsigned char*>(lethe_realloc(moving, 2 << 20));  // huge: moves
  ASSERT_NE(moved, nullptr);
  ASSERT_NE(moved, moving);
  for (size_t i = 0; i < 80 * 1024; ++i) ASSERT_EQ(moved[i], 0x5c);
  chunk = ChunkOf(moving);
  uint32_t entry = chunk->map[PageOf(chunk, moving)];
  EXPECT_EQ(MapKind(entry), PageKind::kFree);  // a free run (or inside one), not parked
  ValidateHeap();
  lethe_free(moved);
  lethe_free(guard);
  ValidateHeap();
}

TEST(Allocator, ReallocAcrossSmallLargeAndHugeKeepsContents) {
  auto* block = static_cast<unsigned char*>(lethe_malloc(10));
  for (int i = 0; i < 10; ++i) block[i] = static_cast<unsigned char>(i + 1);
  for (size_t size : {100u, 5000u, 70000u, 3u << 20, 9u << 20, 2u << 20, 50000u, 12u}) {
    block = static_cast<unsigned char*>(lethe_realloc(block, size));
    ASSERT_NE(block, nullptr) << size;
    EXPECT_GE(lethe_usable_size(block), size);
    for (int i = 0; i < 10; ++i) ASSERT_EQ(block[i], i + 1) << size;
  }
  lethe_free(block);
  ValidateHeap();
}

// A buffer that a realloc moves from kGrowingRegionMinBytes on goes to a huge region with room to
// grow (GrowthPages), then grows in place there, past kLargeMaxBytes too, instead of moving at
// every class (huge_region.h).
TEST(Allocator, AGrowingBufferThatMovesGrowsOnInAHugeRegion) {
  auto* buffer = static_cast<unsigned char*>(lethe_malloc(260 * 1024));
  ASSERT_NE(buffer, nullptr);
  ASSERT_TRUE(IsArenaChunk(buffer)) << "malloc gives a run";
  std::memset(buffer, 0x3d, 260 * 1024);
  // Whatever follows the run, a block taken there now keeps it from growing in place.
  Chunk* chunk = ChunkOf(buffer);
  uint32_t after = PageOf(chunk, buffer) + MapCount(chunk->map[PageOf(chunk, buffer)]);
  std::vector<void*> blockers;
  auto free_after = [&] { return after < kChunkPages && MapKind(chunk->map[after]) == PageKind::kFree; };
  for (int i = 0; i < 16 && free_after(); ++i) blockers.push_back(lethe_malloc(100 * 1024));
  ASSERT_FALSE(free_after()) << "the test needs the pages after the run taken";
  auto* moved = static_cast<unsigned char*>(lethe_realloc(buffer, 400 * 1024));
  ASSERT_NE(moved, nullptr);
  EXPECT_FALSE(IsArenaChunk(moved)) << "moved into a region, not into another run";
  EXPECT_EQ(HugeSize(moved), GrowthPages(PagesFor(400 * 1024)) << kLgPageBytes)
      << "with room to grow";
  EXPECT_EQ(lethe_usable_size(moved), HugeSize(moved));
  buffer = moved;
  // Then grown 12.5% at a time, as Python grows its lists and byte arrays, up to 3 MiB.
  size_t size = 400 * 1024, moves = 0, reallocs = 0;
  while (size < (size_t{3} << 20)) {
    size += size / 8;
    auto* grown = static_cast<unsigned char*>(lethe_realloc(buffer, size));
    ASSERT_NE(grown, nullptr);
    ASSERT_FALSE(IsArenaChunk(grown)) << size;
    ASSERT_GE(lethe_usable_size(grown), size);
    ASSERT_EQ(grown[0], 0x3d);
    ASSERT_EQ(grown[260 * 1024 - 1], 0x3d);
    if (grown != buffer) ++moves;
    ++reallocs;
    buffer = grown;
  }
  // In a fresh region the pages after the block are free: every later growth is in place, by a
  // whole growth step.
  EXPECT_LE(moves, 1u) << "of " << reallocs << " reallocs";
  EXPECT_EQ(lethe_usable_size(buffer), GrowthPages(PagesFor(size)) << kLgPageBytes);
  // Shrinking by less than a quarter keeps the block as it is; by more, its tail goes back.
  size_t usable = lethe_usable_size(buffer);
  EXPECT_EQ(lethe_realloc(buffer, usable - usable / 5), buffer);
  EXPECT_EQ(lethe_usable_size(buffer), usable);
  EXPECT_EQ(lethe_realloc(buffer, usable / 2), buffer);
  EXPECT_EQ(lethe_usable_size(buffer), usable / 2);
  // Under kGrowingRegionMinBytes it goes back into a run, contents kept.
  auto* small = static_cast<unsigned char*>(lethe_realloc(buffer, 100 * 1024));
  ASSERT_NE(small, nullptr);
  EXPECT_TRUE(IsArenaChunk(small));
  for (size_t i = 0; i < 100 * 1024; i += 4096) ASSERT_EQ(small[i], 0x3d) << i;
  lethe_free(small);
  for (void* block : blockers) lethe_free(block);
  ValidateHeap();
}

TEST(Allocator, HugeBlocksAreTrackedAndUnmappedOnFree) {
  lethe_stats_t before, during, after;
  lethe_stats(&before);
  void* block = lethe_malloc(5 << 20);
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(HugeSize(block), size_t{5} << 20);
  lethe_stats(&during);
  EXPECT_EQ(during.huge_bytes, before.huge_bytes + (5 << 20));
  EXPECT_EQ(during.huge_count, before.huge_count + 1);
  lethe_free(block);
  lethe_stats(&after);
  EXPECT_EQ(after.huge_bytes, before.huge_bytes);
  EXPECT_EQ(HugeSize(block), 0u);
}

TEST(Allocator, AlignedAllocationsOfEverySizeAndAlignment) {
  std::vector<void*> blocks;
  for (size_t alignment = 16; alignment <= (size_t{4} << 20); alignment *= 4) {
    for (size_t size : {1u, 48u, 100u, 5000u, 40000u, 300000u}) {
      void* block = lethe_aligned_alloc(alignment, size);
      ASSERT_NE(block, nullptr) << alignment << " " << size;
      ASSERT_EQ(reinterpret_cast<uintptr_t>(block) % alignment, 0u) << alignment << " " << size;
      ASSERT_GE(lethe_usable_size(block), size);
      std::memset(block, 1, size);
      blocks.push_back(block);
    }
  }
  ValidateHeap();
  for (void* block : blocks) lethe_free(block);
  ValidateHeap();
  errno = 0;
  EXPECT_EQ(lethe_aligned_alloc(48, 10), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

// A small aligned request takes the smallest class that is aligned enough and holds it, as
// malloc of the request rounded up to the alignment would: 100 B at 64 -> 128, 300 B at 256 ->
// 512, 3000 B at 4 KiB -> 4096; and it comes from the thread cache like any small block.
TEST(Allocator, ASmallAlignedRequestGetsTheSmallestAlignedClassThatHoldsIt) {
  struct Case {
    size_t alignment, size, usable;
  };
  for (Case c : {Case{16, 1, 16}, Case{32, 40, 64}, Case{64, 100, 128}, Case{256, 300, 512},
                 Case{256, 2305, 2560}, Case{1024, 4097, 5120}, Case{4096, 3000, 4096},
                 Case{4096, 8193, 12288}}) {
    void* block = lethe_aligned_alloc(c.alignment, c.size);
    ASSERT_NE(block, nullptr) << c.alignment << " " << c.size;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % c.alignment, 0u) << c.size;
    EXPECT_EQ(lethe_usable_size(block), c.usable) << c.alignment << " " << c.size;
    std::memset(block, 3, c.size);
    lethe_free(block);
    EXPECT_EQ(lethe_aligned_alloc(c.alignment, c.size), block) << "the cached region again";
    lethe_free(block);
  }
}

TEST(Allocator, CallocZeroesReusedMemory) {
  for (size_t size : {24u, 3000u, 40000u, 100000u}) {  // 40000: through the large thread cache
    void* dirty = lethe_malloc(size);
    std::memset(dirty, 0xee, size);
    lethe_free(dirty);
    auto* clean = static_cast<unsigned char*>(lethe_calloc(1, size));
    if (size <= kSmallMaxBytes) {
      EXPECT_EQ(clean, dirty) << "the cached region, bytes and all";
    }
    for (size_t i = 0; i < size; ++i) ASSERT_EQ(clean[i], 0) << size << " " << i;
    lethe_free(clean);
  }
}

TEST(Allocator, StatisticsAddUp) {
  lethe_purge();
  lethe_stats_t before;
  lethe_stats(&before);
  std::vector<void*> blocks;
  for (int i = 0; i < 1000; ++i) blocks.push_back(lethe_malloc(100));
  blocks.push_back(lethe_malloc(100000));
  lethe_stats_t during;
  lethe_stats(&during);
  EXPECT_GE(during.allocated_bytes, before.allocated_bytes + 1000 * 112 + 102400);
  EXPECT_GE(during.allocation_count, before.allocation_count + 1001);
  EXPECT_GE(during.active_bytes, during.allocated_bytes);
  EXPECT_GE(during.mapped_bytes, during.active_bytes + during.dirty_bytes);
  EXPECT_GT(during.metadata_bytes, 0u);
  for (void* block : blocks) lethe_free(block);
  lethe_purge();
  lethe_stats_t after;
  lethe_stats(&after);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_EQ(after.dirty_bytes, 0u);
  EXPECT_EQ(after.thread_cache_bytes, 0u);
  EXPECT_GE(after.free_count, before.free_count + 1001);
  EXPECT_GT(after.purged_bytes, before.purged_bytes);
  char* text = nullptr;
  size_t length = 0;
  FILE* stream = open_memstream(&text, &length);
  lethe_stats_print(stream);
  fclose(stream);
  EXPECT_NE(std::string(text).find("allocated"), std::string::npos);
  free(text);
}

// The thread cache counts malloc's fast-path operations with the GC countdown and derives its
// frees (thread_cache.h): the counts stay exact across many GC steps.
TEST(Allocator, OperationCountsStayExactAcrossThreadCacheGcSteps) {
  constexpr uint64_t kPairs = 5 * kGcEvents + 123;
  lethe_stats_t before;
  lethe_stats(&before);
  for (uint64_t i = 0; i < kPairs; ++i) lethe_free(lethe_malloc(48));
  lethe_stats_t after;
  lethe_stats(&after);
  EXPECT_EQ(after.allocation_count - before.allocation_count, kPairs);
  EXPECT_EQ(after.free_count - before.free_count, kPairs);
}

// Frees derived from the cache's other counts stay exact when one thread only frees what another
// allocated (its bins fill, flush and park), for small regions and cached large runs alike.
TEST(Allocator, FreeCountsStayExactForAThreadThatOnlyFrees) {
  std::vector<void*> blocks;
  for (int i = 0; i < 3000; ++i) blocks.push_back(lethe_malloc(i % 3 == 0 ? 20000 : 16 + i % 700));
  lethe_stats_t before;
  lethe_stats(&before);
  lethe_stats_t during;
  std::thread freer([&] {
    for (void* block : blocks) lethe_free(block);
    lethe_stats(&during);  // this thread's cache still holds some of them
  });
  freer.join();
  lethe_stats_t after;
  lethe_stats(&after);
  EXPECT_EQ(during.free_count - before.free_count, blocks.size());
  EXPECT_EQ(after.free_count - before.free_count, blocks.size());
  EXPECT_EQ(after.allocation_count, before.allocation_count);
}

TEST(Allocator, FailAfterAlsoFailsTheCachedFastPath) {
  void* warm = lethe_malloc(32);
  lethe_free(warm);  // now a cached region is waiting
  lethe_fail_after(1);
  errno = 0;
  EXPECT_EQ(lethe_malloc(32), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  void* fine = lethe_malloc(32);
  EXPECT_NE(fine, nullptr);
  lethe_free(fine);
}

// realloc's failure contract: NULL with ENOMEM, and the old block still there, unchanged, with
// its size, and freeable. Once through the fail-after hook (small, large), once with the kernel
// refusing to grow a huge mapping in place or elsewhere (mremap).
TEST(Allocator, AFailedReallocLeavesTheOldBlockIntact) {
  for (size_t size : {40u, 30000u, 3u << 20}) {
    auto* block = static_cast<unsigned char*>(lethe_malloc(size));
    ASSERT_NE(block, nullptr);
    std::memset(block, 0x3c, size);
    size_t usable = lethe_usable_size(block);
    lethe_fail_after(1);
    errno = 0;
    EXPECT_EQ(lethe_realloc(block, size * 4), nullptr) << size;
    EXPECT_EQ(errno, ENOMEM);
    if (size > kLargeMaxBytes) {
      OsFailMapsForTesting(1000);
      errno = 0;
      // Past what a region holds: a mapping of its own, which the OS refuses.
      EXPECT_EQ(lethe_realloc(block, kHugeRegionMaxBlockBytes + size), nullptr) << "refused";
      EXPECT_EQ(errno, ENOMEM);
      OsFailMapsForTesting(0);
    }
    EXPECT_EQ(lethe_usable_size(block), usable);
    for (size_t i = 0; i < size; ++i) ASSERT_EQ(block[i], 0x3c) << size << " " << i;
    lethe_free(block);
  }
  ValidateHeap();
}

TEST(Allocator, MappingFailureRunsTheLowMemoryCallbackThenFails) {
  struct Context {
    int calls = 0;
  } context;
  lethe_set_low_memory_callback(
      [](size_t request_bytes, void* data) {
        EXPECT_GE(request_bytes, size_t{8} << 20);
        ++static_cast<Context*>(data)->calls;
      },
      &context);
  // Over a region's largest block: one mapping of its own per attempt, which the hook refuses.
  constexpr size_t kBytes = kHugeRegionMaxBlockBytes + (8 << 20);
  OsFailMapsForTesting(1000);
  errno = 0;
  EXPECT_EQ(lethe_malloc(kBytes), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  OsFailMapsForTesting(0);
  EXPECT_EQ(context.calls, 1);
  // When the callback frees what was needed, the retry succeeds.
  OsFailMapsForTesting(2);  // the first attempt and the one after purging fail
  void* block = lethe_malloc(kBytes);
  EXPECT_NE(block, nullptr);
  EXPECT_EQ(context.calls, 2);
  OsFailMapsForTesting(0);
  lethe_free(block);
  lethe_set_low_memory_callback(nullptr, nullptr);
}

TEST(Allocator, RandomWorkKeepsEveryInvariant) {
  std::mt19937 random(42);
  std::vector<std::pair<unsigned char*, size_t>> live;
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || random() % 3 != 0) {
      size_t size = random() % 8 == 0 ? random() % 300000 + 1 : random() % 2000 + 1;
      auto* block = static_cast<unsigned char*>(lethe_malloc(size));
      ASSERT_NE(block, nullptr);
      std::memset(block, static_cast<int>(size & 0xff), size);
      live.emplace_back(block, size);
    } else {
      size_t index = random() % live.size();
      auto [block, size] = live[index];
      ASSERT_EQ(block[0], size & 0xff);
      ASSERT_EQ(block[size - 1], size & 0xff);
      if (random() % 4 == 0) {
        size_t new_size = random() % 100000 + 1;
        block = static_cast<unsigned char*>(lethe_realloc(block, new_size));
        std::memset(block, static_cast<int>(new_size & 0xff), new_size);
        live[index] = {block, new_size};
      } else {
        lethe_free(block);
        live[index] = live.back();
        live.pop_back();
      }
    }
    if (step % 2000 == 0) ValidateHeap();
  }
  for (auto& [block, size] : live) lethe_free(block);
  ValidateHeap();
}

// The counter behind peak_allocated_bytes is kept by the slow paths only; after every kind of call
// (small, large, huge, aligned, calloc, realloc in place, by mremap and by moving) it must equal
// what the arenas and the huge table say is out: a reset peak reads allocated + cached exactly.
TEST(Allocator, PeakCounterMatchesTheArenasAfterEveryKindOfCall) {
  std::mt19937 random(7);
  std::vector<void*> live;
  auto check = [](int step) {
    lethe_stats_reset_peak();
    lethe_stats_t stats;
    lethe_stats(&stats);
    ASSERT_EQ(stats.peak_allocated_bytes, stats.allocated_bytes + stats.thread_cache_bytes)
        << "step " << step;
  };
  for (int step = 0; step < 6000; ++step) {
    unsigned choice = random() % 10;
    if (live.empty() || choice < 5) {
      size_t size = choice == 0 ? random() % 3000000 + 1 : random() % 40000 + 1;
      void* block = choice == 1   ? lethe_aligned_alloc(size_t{1} << (random() % 16), size)
                    : choice == 2 ? lethe_calloc(1, size)
                                  : lethe_malloc(size);
      ASSERT_NE(block, nullptr);
      live.push_back(block);
    } else if (choice < 7) {
      size_t index = random() % live.size();
      size_t size = random() % 4 == 0 ? random() % 3000000 + 1 : random() % 200000 + 1;
      void* block = lethe_realloc(live[index], size);
      ASSERT_NE(block, nullptr);
      live[index] = block;
    } else {
      size_t index = random() % live.size();
      lethe_free(live[index]);
      live[index] = live.back();
      live.pop_back();
    }
    if (step % 500 == 0) check(step);
  }
  for (void* block : live) lethe_free(block);
  check(-1);
  lethe_purge();
  check(-2);
}

TEST(AllocatorDeathTest, FreeingAStackAddressAborts) {
  int local = 0;
  EXPECT_DEATH(lethe_free(&local), "lethe: free\\(\\): invalid pointer 0x[0-9a-f]+");
}

TEST(AllocatorDeathTest, ReallocOfAnAddressNoAllocatorGaveToAHugeSizeAborts) {
  int local = 0;
  EXPECT_DEATH(lethe_realloc(&local, 1 << 20), "lethe: realloc\\(\\): invalid pointer 0x[0-9a-f]+");
}

// realloc reads the page map itself (no malloc_usable_size first): an interior pointer of a small
// region or of a large run, a stack address at a small size, each aborts naming realloc.
TEST(AllocatorDeathTest, ReallocOfAnInteriorPointerAborts) {
  auto* small = static_cast<char*>(lethe_malloc(48));
  auto* large = static_cast<char*>(lethe_malloc(100000));
  int local = 0;
  EXPECT_DEATH(lethe_realloc(small + 8, 48), "lethe: realloc\\(\\): invalid pointer 0x[0-9a-f]+");
  EXPECT_DEATH(lethe_realloc(small + 8, 4000), "lethe: realloc\\(\\): invalid pointer");
  EXPECT_DEATH(lethe_realloc(large + 4096, 100000), "lethe: realloc\\(\\): invalid pointer");
  EXPECT_DEATH(lethe_realloc(large + 16, 200000), "lethe: realloc\\(\\): invalid pointer");
  EXPECT_DEATH(lethe_realloc(&local, 64), "invalid pointer 0x[0-9a-f]+");
  lethe_free(small);
  lethe_free(large);
}

// The cases realloc decides without moving, and the ones where it must move, keep the bytes.
TEST(Allocator, ReallocKeepsABlockWithinItsClassAndMovesItPast) {
  auto* small = static_cast<char*>(lethe_malloc(40));  // class 48
  std::memset(small, 7, 40);
  EXPECT_EQ(lethe_realloc(small, 48), small);
  EXPECT_EQ(lethe_realloc(small, 41), small);
  auto* moved = static_cast<char*>(lethe_realloc(small, 49));
  ASSERT_NE(moved, nullptr);
  EXPECT_NE(moved, small);
  for (int i = 0; i < 40; ++i) ASSERT_EQ(moved[i], 7);
  auto* large = static_cast<char*>(lethe_realloc(moved, 100000));  // small -> large: moves
  ASSERT_NE(large, nullptr);
  for (int i = 0; i < 40; ++i) ASSERT_EQ(large[i], 7);
  size_t usable = lethe_usable_size(large);
  EXPECT_EQ(lethe_realloc(large, usable), large);  // within its large class
  auto* back = static_cast<char*>(lethe_realloc(large, 100));  // large -> small: moves
  ASSERT_NE(back, nullptr);
  EXPECT_NE(back, large);
  for (int i = 0; i < 40; ++i) ASSERT_EQ(back[i], 7);
  lethe_free(back);
}

// A small block grown a few bytes at a time moves by SmallGrowthBytes: from 129 B to 4 KiB each
// move gives it at least a quarter more than it had (the last one up to the page), so it moves at
// most 3 times per doubling (5 doublings), not once per class (8 per doubling: 39); and every
// byte written survives each move.
TEST(Allocator, ASmallBlockGrownByReallocMovesAtMostThreeTimesPerDoubling) {
  auto* block = static_cast<unsigned char*>(lethe_malloc(129));
  ASSERT_NE(block, nullptr);
  for (size_t i = 0; i < 129; ++i) block[i] = static_cast<unsigned char>(i * 7);
  int moves = 0;
  for (size_t length = 130; length <= 4096; ++length) {
    const size_t before = lethe_usable_size(block);
    auto* grown = static_cast<unsigned char*>(lethe_realloc(block, length));
    ASSERT_NE(grown, nullptr);
    if (grown != block) {
      ++moves;
      const size_t after = lethe_usable_size(grown);
      ASSERT_GE(after, std::min<size_t>(before + before / 4, 4096)) << length;
    }
    block = grown;
    block[length - 1] = static_cast<unsigned char>((length - 1) * 7);
  }
  for (size_t i = 0; i < 4096; ++i) ASSERT_EQ(block[i], static_cast<unsigned char>(i * 7)) << i;
  EXPECT_LE(moves, 3 * 5);
  EXPECT_EQ(lethe_usable_size(block), 4096u);
  lethe_free(block);
}

// A realloc that moves a large block faults the copy's pages in with one system call
// (OsPopulate), and on a kernel without it the copy is the same, page faults doing the work.
TEST(Allocator, AReallocThatMovesALargeBlockPopulatesTheCopiedPagesInOneCall) {
  constexpr size_t kOld = 40 * 1024 + 100, kNew = 3 * 1024 * 1024;  // past the large classes
  for (bool supported : {true, false}) {
    OsPopulateUnsupportedForTesting(!supported);
    auto* block = static_cast<unsigned char*>(lethe_malloc(kOld));
    ASSERT_NE(block, nullptr);
    for (size_t i = 0; i < kOld; ++i) block[i] = static_cast<unsigned char>(i * 13);
    lethe_purge();  // no dirty pages left: the block moves onto fresh ones
    const uint64_t calls = OsPopulateCallCount();
    auto* moved = static_cast<unsigned char*>(lethe_realloc(block, kNew));
    ASSERT_NE(moved, nullptr);
    EXPECT_EQ(OsPopulateCallCount(), calls + (supported ? 1 : 0));
    for (size_t i = 0; i < kOld; ++i) ASSERT_EQ(moved[i], static_cast<unsigned char>(i * 13)) << i;
    lethe_free(moved);
  }
  OsPopulateUnsupportedForTesting(false);
}

// A realloc that moves a block onto pages still resident (a run just freed) makes no populate
// call: only fresh pages are populated.
TEST(Allocator, AReallocOntoResidentPagesMakesNoPopulateCall) {
  constexpr size_t kOld = 12 * 1024, kNew = 60 * 1024;  // a small region into a large run
  void* resident = lethe_malloc(kNew);
  ASSERT_NE(resident, nullptr);
  std::memset(resident, 1, kNew);
  lethe_free(resident);  // cached by the thread, or a dirty run: written pages either way
  auto* block = static_cast<unsigned char*>(lethe_malloc(kOld));
  ASSERT_NE(block, nullptr);
  for (size_t i = 0; i < kOld; ++i) block[i] = static_cast<unsigned char>(i * 7);
  const uint64_t calls = OsPopulateCallCount();
  auto* moved = static_cast<unsigned char*>(lethe_realloc(block, kNew));
  ASSERT_NE(moved, nullptr);
  EXPECT_EQ(OsPopulateCallCount(), calls);
  for (size_t i = 0; i < kOld; ++i) ASSERT_EQ(moved[i], static_cast<unsigned char>(i * 7)) << i;
  lethe_free(moved);
}

// A grown block keeps its coarser class while realloc asks for any size that would grow into it,
// and moves down to a class of its own when asked for less than that: a shrink to well under its
// size gives the bytes back.
TEST(Allocator, AGrownBlockStaysInItsClassUntilARequestNoLongerGrowsIntoIt) {
  auto* block = static_cast<char*>(lethe_malloc(300));  // class 320
  ASSERT_NE(block, nullptr);
  std::memset(block, 5, 300);
  // Past 320: a quarter more is 400, on the grid 448 (not 352, the class of 330).
  auto* grown = static_cast<char*>(lethe_realloc(block, 330));
  ASSERT_NE(grown, nullptr);
  ASSERT_EQ(lethe_usable_size(grown), 448u);
  EXPECT_EQ(lethe_realloc(grown, 340), grown);  // a quarter more is 425: grows into 448, stays
  EXPECT_EQ(lethe_realloc(grown, 321), grown);
  EXPECT_EQ(lethe_realloc(grown, 448), grown);
  auto* shrunk = static_cast<char*>(lethe_realloc(grown, 200));  // grows into 256 only: moves
  ASSERT_NE(shrunk, nullptr);
  EXPECT_NE(shrunk, grown);
  EXPECT_EQ(lethe_usable_size(shrunk), 208u);  // a shrink takes the request's own class
  for (int i = 0; i < 200; ++i) ASSERT_EQ(shrunk[i], 5) << i;
  lethe_free(shrunk);
}

TEST(AllocatorDeathTest, FreeingTheMiddleOfALargeBlockAborts) {
  auto* block = static_cast<char*>(lethe_malloc(100000));
  EXPECT_DEATH(lethe_free(block + 8192), "lethe: free\\(\\): invalid pointer");
  EXPECT_DEATH(lethe_free(block + 16), "lethe: free\\(\\): invalid pointer");
  lethe_free(block);
}

TEST(AllocatorDeathTest, FreeingAMisalignedSmallPointerAborts) {
  auto* block = static_cast<char*>(lethe_malloc(64));
  EXPECT_DEATH(lethe_free(block + 1), "lethe: free\\(\\): invalid pointer");
  lethe_free(block);
}

// At the free itself only where the free path looks through the bin (LETHE_DEBUG_LEVEL >= 1);
// release builds catch it at the flush (DoubleFreeOfASmallBlockAbortsByTheFlush, below).
TEST(AllocatorDeathTest, DoubleFreeOfASmallBlockAborts) {
#if LETHE_DEBUG_LEVEL < 1
  GTEST_SKIP() << "release builds (LETHE_DEBUG_LEVEL 0) leave double frees to the cache's flush";
#endif
  EXPECT_DEATH(
      {
        void* block = lethe_malloc(40);
        lethe_free(block);
        lethe_free(block);
      },
      "lethe: free\\(\\): double free");
}

// Release builds check a cached free only for 8-byte alignment and leave the region-start and
// double-free checks to the flush (allocator.h, MayBeCachedRegion): debug builds abort at the
// free, release builds at the latest when the cache returns the region to its arena.
TEST(AllocatorDeathTest, AlignedInteriorPointerOfASmallBlockAbortsByTheFlush) {
  EXPECT_DEATH(
      {
        auto* block = static_cast<char*>(lethe_malloc(48));
        lethe_free(block + 16);
        lethe_purge();
      },
      "lethe: free\\(\\): invalid pointer");
}

TEST(AllocatorDeathTest, DoubleFreeOfASmallBlockAbortsByTheFlush) {
  EXPECT_DEATH(
      {
        void* block = lethe_malloc(48);
        lethe_free(block);
        lethe_free(block);
        lethe_purge();
      },
      // At the flush, the first copy may empty the run and give its pages back, so that the
      // second finds a free page: an invalid pointer.
      "lethe: free\\(\\): (double free|invalid pointer)");
}

TEST(AllocatorDeathTest, DoubleFreeOfALargeBlockAborts) {
  EXPECT_DEATH(
      {
        void* keep = lethe_malloc(50000);
        void* block = lethe_malloc(50000);
        lethe_free(block);
        lethe_free(block);
        lethe_free(keep);
      },
      "lethe: free\\(\\): invalid pointer");
}

// A freed 80 KiB block: past the thread cache's large bins, so its run is parked in its arena
// (page_heap.h step 8). A parked head must not pass for a live block.
static void* FreedParkedBlock() {
  void* block = lethe_malloc(80 * 1024);
  lethe_free(block);
  Chunk* chunk = ChunkOf(block);
  LETHE_CHECK(MapParked(chunk->map[PageOf(chunk, block)]), "the block was not parked");
  return block;
}

TEST(AllocatorDeathTest, DoubleFreeOfAParkedLargeBlockAborts) {
  EXPECT_DEATH(lethe_free(FreedParkedBlock()), "lethe: free\\(\\): invalid pointer");
}

TEST(AllocatorDeathTest, UsableSizeOfAParkedLargeBlockAborts) {
  EXPECT_DEATH(lethe_usable_size(FreedParkedBlock()),
               "lethe: malloc_usable_size\\(\\): invalid pointer");
}

TEST(AllocatorDeathTest, DoubleFreeOfAHugeBlockAborts) {
  EXPECT_DEATH(
      {
        void* block = lethe_malloc(4 << 20);
        lethe_free(block);
        lethe_free(block);
      },
      "lethe: free\\(\\): invalid pointer");
}

TEST(AllocatorDeathTest, UsableSizeOfAForeignPointerAborts) {
  int local = 0;
  EXPECT_DEATH(lethe_usable_size(&local), "lethe: malloc_usable_size\\(\\): invalid pointer");
}

}  // namespace
}  // namespace lethe::internal

namespace lethe::internal {
namespace {

// A growing buffer moved into a region (200 KiB, then grown past a blocker to 400 KiB), freed.
// Returns the bytes it had.
size_t GrowIntoARegionAndFree() {
  auto* buffer = static_cast<unsigned char*>(lethe_malloc(200 * 1024));
  std::vector<void*> blockers;
  Chunk* chunk = ChunkOf(buffer);
  uint32_t after = PageOf(chunk, buffer) + MapCount(chunk->map[PageOf(chunk, buffer)]);
  for (int i = 0; i < 16 && after < kChunkPages && MapKind(chunk->map[after]) == PageKind::kFree;
       ++i) {
    blockers.push_back(lethe_malloc(100 * 1024));
  }
  buffer = static_cast<unsigned char*>(lethe_realloc(buffer, 400 * 1024));
  size_t bytes = IsArenaChunk(buffer) ? 0 : HugeSize(buffer);
  std::memset(buffer, 1, 400 * 1024);
  lethe_free(buffer);
  for (void* block : blockers) lethe_free(block);
  return bytes;
}

// Before the warm-up (kHugeWarmupBlocks), a freed growing buffer stays dirty only while the
// blocks still live in regions outnumber the dirty pages. In a fresh process (the warm-up is
// one-way): the "threadsafe" death-test style runs the statement in a re-executed binary.
TEST(AllocatorHugeRegionDeathTest, BeforeTheWarmUpAGrowingBufferStaysDirtyOnlyBesideLiveBlocks) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        size_t alone = GrowIntoARegionAndFree();
        uint64_t dirty_alone = GetHugeRegionStats().dirty_bytes;
        void* live = lethe_malloc(2 << 20);  // a huge block: a step of the warm-up, not all
        size_t beside = GrowIntoARegionAndFree();
        uint64_t dirty_beside = GetHugeRegionStats().dirty_bytes;
        std::fprintf(stderr, "alone %zu dirty %llu; beside %zu dirty %llu\n", alone,
                     static_cast<unsigned long long>(dirty_alone), beside,
                     static_cast<unsigned long long>(dirty_beside));
        lethe_free(live);
        bool ok = alone > 0 && dirty_alone == 0 && beside > 0 && dirty_beside == beside;
        std::_Exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(AllocatorHugeRegion, FreedHugeBlocksAreKeptAsDirtyReusedZeroedByCallocAndPurged) {
  // Freed huge pages are kept once kHugeWarmupBlocks were asked for.
  for (uint64_t i = 0; i < kHugeWarmupBlocks; ++i) lethe_free(lethe_malloc(2 << 20));
  lethe_purge();
  auto* first = static_cast<unsigned char*>(lethe_malloc(3 << 20));
  ASSERT_NE(first, nullptr);
  std::memset(first, 0x11, 3 << 20);
  lethe_free(first);
  lethe_stats_t kept;
  lethe_stats(&kept);
  EXPECT_GE(kept.dirty_bytes, 3u << 20);
  auto* second = static_cast<unsigned char*>(lethe_calloc(1, 2 << 20));
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(lethe_usable_size(second), size_t{2} << 20);
  for (size_t i = 0; i < (2u << 20); i += 512) ASSERT_EQ(second[i], 0) << i;
  lethe_free(second);
  lethe_purge();
  lethe_stats_t purged;
  lethe_stats(&purged);
  EXPECT_EQ(purged.dirty_bytes, 0u);
}

}  // namespace
}  // namespace lethe::internal
