// The page heap on its own: split, coalesce with each neighbour, best fit, in-place resize,
// alignment, dirty accounting, decay on a manual clock, and Validate() after every step.
#include "page_heap.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "chunk_registry.h"
#include "os.h"

namespace lethe::internal {
namespace {

class PageHeapTest : public ::testing::Test {
 protected:
  void TearDown() override {
    heap_.PurgeAll();
    heap_.Validate();
  }

  void* Large(uint32_t pages) {
    bool zeroed = false;
    void* block = heap_.AllocateLarge(pages, &zeroed);
    EXPECT_NE(block, nullptr);
    heap_.Validate();
    return block;
  }
  void FreeLarge(void* block) {
    Chunk* chunk = ChunkOf(block);
    heap_.FreeLarge(chunk, PageOf(chunk, block), ++now_);
    heap_.Validate();
  }
  static uint32_t Entry(void* block, int delta = 0) {
    Chunk* chunk = ChunkOf(block);
    return chunk->map[static_cast<int>(PageOf(chunk, block)) + delta];
  }
  static uint32_t Page(void* block) { return PageOf(ChunkOf(block), block); }

  // Parked 4-page runs, each before a live guard page so that none coalesce: `aligned` (64 KiB-
  // aligned) parked first, the oldest, then `unaligned` ones, which cannot hold 4 pages at
  // 64 KiB, newer and so nearer the list's head. The starts step by 5 pages: one in 16 is
  // aligned. `guards` holds every block left live.
  struct ParkedRuns {
    static constexpr size_t kAlign = 64 * 1024;
    void* aligned = nullptr;
    std::vector<void*> unaligned, guards;
  };
  ParkedRuns ParkAlignedBehind(size_t unaligned_count) {
    ParkedRuns parked;
    while (parked.aligned == nullptr || parked.unaligned.size() < unaligned_count) {
      void* run = Large(4);
      parked.guards.push_back(Large(1));
      bool is_aligned = reinterpret_cast<uintptr_t>(run) % ParkedRuns::kAlign == 0;
      if (parked.aligned == nullptr && is_aligned) {
        parked.aligned = run;
      } else if (parked.aligned != nullptr && !is_aligned) {
        parked.unaligned.push_back(run);
      } else {
        parked.guards.push_back(run);  // before the aligned one, or a second aligned one
      }
    }
    FreeLarge(parked.aligned);
    for (void* run : parked.unaligned) FreeLarge(run);
    return parked;
  }

  // 40 one-page runs, each between two live guards so that none coalesce, written, freed (dirty).
  struct ScatteredDirtyRuns {
    static constexpr int kRuns = 40;
    unsigned char* runs[kRuns];
    void* guards[kRuns + 1];
  };
  ScatteredDirtyRuns MakeScatteredDirtyRuns() {
    ScatteredDirtyRuns layout;
    layout.guards[0] = Large(1);
    for (int i = 0; i < ScatteredDirtyRuns::kRuns; ++i) {
      layout.runs[i] = static_cast<unsigned char*>(Large(1));
      layout.guards[i + 1] = Large(1);
      std::memset(layout.runs[i], 0x5a, kPageBytes);
    }
    for (unsigned char* run : layout.runs) FreeLarge(run);
    return layout;
  }
  // After a purge: the runs come back at the same addresses (lowest first), zeroed; then all go.
  void ExpectPurgedThenFreeAll(const ScatteredDirtyRuns& layout) {
    for (unsigned char* run : layout.runs) {
      bool zeroed = false;
      auto* again = static_cast<unsigned char*>(heap_.AllocateLarge(1, &zeroed));
      ASSERT_EQ(again, run);
      EXPECT_TRUE(zeroed);
      EXPECT_EQ(again[0], 0);
      EXPECT_EQ(again[kPageBytes - 1], 0);
    }
    for (unsigned char* run : layout.runs) FreeLarge(run);
    for (void* guard : layout.guards) FreeLarge(guard);
  }

  PageHeap heap_;
  uint64_t now_ = 1000;
};

TEST_F(PageHeapTest, SplittingTakesTheLowEndAndWritesOnlyTheEnds) {
  void* a = Large(2);
  void* b = Large(3);
  EXPECT_EQ(Page(a), kChunkHeaderPages);
  EXPECT_EQ(Page(b), kChunkHeaderPages + 2);
  EXPECT_EQ(Entry(a), MapLargeHead(2));
  EXPECT_EQ(Entry(a, 1), MapLargeInterior(1));
  // The rest of the chunk is one clean free run whose two ends say so.
  Chunk* chunk = ChunkOf(a);
  uint32_t rest = kChunkHeaderPages + 5;
  EXPECT_EQ(chunk->map[rest], MapFree(kChunkPages - rest, false));
  EXPECT_EQ(chunk->map[kChunkPages - 1], MapFree(kChunkPages - rest, false));
  EXPECT_EQ(heap_.active_pages(), 5u);
  FreeLarge(a);
  FreeLarge(b);
}

TEST_F(PageHeapTest, FreedRunCoalescesWithItsLeftNeighbour) {
  void* a = Large(2);
  void* b = Large(3);
  void* guard = Large(1);
  FreeLarge(a);
  FreeLarge(b);
  EXPECT_EQ(Entry(a), MapFree(5, true));
  EXPECT_EQ(Entry(b, 2), MapFree(5, true));
  EXPECT_EQ(heap_.dirty_pages(), 5u);
  FreeLarge(guard);
}

TEST_F(PageHeapTest, FreedRunCoalescesWithItsRightNeighbour) {
  void* a = Large(2);
  void* b = Large(3);
  void* guard = Large(1);
  FreeLarge(b);
  FreeLarge(a);
  EXPECT_EQ(Entry(a), MapFree(5, true));
  EXPECT_EQ(Entry(a, 4), MapFree(5, true));
  FreeLarge(guard);
}

TEST_F(PageHeapTest, FreedRunCoalescesWithBothNeighbours) {
  void* a = Large(2);
  void* b = Large(3);
  void* c = Large(3);
  void* guard = Large(1);
  FreeLarge(a);
  FreeLarge(c);
  EXPECT_EQ(heap_.dirty_pages(), 5u);
  FreeLarge(b);
  EXPECT_EQ(Entry(a), MapFree(8, true));
  EXPECT_EQ(Entry(c, 2), MapFree(8, true));
  EXPECT_EQ(heap_.dirty_pages(), 8u);
  FreeLarge(guard);
}

TEST_F(PageHeapTest, DirtyRunsDoNotCoalesceWithCleanOnes) {
  void* a = Large(2);
  FreeLarge(a);  // dirty [3,5) next to the clean rest of the chunk
  EXPECT_EQ(Entry(a), MapFree(2, true));
  EXPECT_EQ(Entry(a, 2), MapFree(kChunkUsablePages - 2, false));
}

TEST_F(PageHeapTest, BestFitTakesTheShortestRunThatHolds) {
  void* a = Large(3);
  void* g1 = Large(1);
  void* b = Large(1);
  void* g2 = Large(1);
  FreeLarge(a);
  FreeLarge(b);
  heap_.PurgeExcess(0);  // both holes clean now, like the rest of the chunk
  heap_.Validate();
  void* c = Large(1);  // fits both holes and the rest: takes the 1-page hole
  EXPECT_EQ(c, b);
  void* d = Large(2);  // fits the 3-page hole and the rest: takes the hole
  EXPECT_EQ(d, a);
  EXPECT_EQ(Entry(d, 2), MapFree(1, false));
  FreeLarge(c);
  FreeLarge(d);
  FreeLarge(g1);
  FreeLarge(g2);
}

// Step 3: small runs reuse dirty pages, large runs take clean ones while any fits.
TEST_F(PageHeapTest, SmallRunsTakeDirtyPagesFirst) {
  uint32_t klass = 0;
  while (kSmallClasses[klass].run_pages != 1) ++klass;
  void* a = Large(3);
  void* guard = Large(1);
  FreeLarge(a);
  bool zeroed = true;
  void* run = heap_.AllocateSmallRun(1, klass, &zeroed);
  heap_.Validate();
  EXPECT_EQ(run, a);
  EXPECT_FALSE(zeroed);  // a's pages, dirty
  EXPECT_EQ(Entry(run), MapSmall(klass, 0));
  heap_.FreeSmallRun(ChunkOf(run), Page(run), 1, ++now_);
  heap_.Validate();
  FreeLarge(guard);
}

TEST_F(PageHeapTest, LargeRunsTakeCleanPagesFirst) {
  void* a = Large(3);
  void* guard = Large(1);
  FreeLarge(a);
  bool zeroed = false;
  void* b = heap_.AllocateLarge(2, &zeroed);
  heap_.Validate();
  EXPECT_NE(b, a);  // from the clean rest of the chunk
  EXPECT_TRUE(zeroed);
  EXPECT_EQ(Entry(a), MapFree(3, true));  // the dirty hole waits for a small run
  FreeLarge(b);
  FreeLarge(guard);
}

// ...except runs of kDirtyFirstLargePages and more (images written in full): they reuse the
// dirty pages of the block freed before them instead of faulting in clean ones.
TEST_F(PageHeapTest, LongLargeRunsTakeDirtyPagesFirst) {
  void* a = Large(kDirtyFirstLargePages + 8);
  void* guard = Large(1);
  FreeLarge(a);
  bool zeroed = false;
  void* shorter = heap_.AllocateLarge(kDirtyFirstLargePages - 1, &zeroed);
  EXPECT_NE(shorter, a);  // one page shorter: the clean rest of the chunk, though a would fit
  EXPECT_TRUE(zeroed);
  void* b = heap_.AllocateLarge(kDirtyFirstLargePages, &zeroed);
  heap_.Validate();
  EXPECT_EQ(b, a);
  EXPECT_FALSE(zeroed);
  EXPECT_EQ(Entry(a, kDirtyFirstLargePages), MapFree(8, true));  // the dirty rest stays
  FreeLarge(shorter);
  FreeLarge(b);
  FreeLarge(guard);
}

// ...and so does a run that realloc copies a block into (written): the copy writes it at once.
TEST_F(PageHeapTest, ARunAboutToBeWrittenTakesDirtyPagesFirst) {
  void* a = Large(3);
  void* guard = Large(1);
  FreeLarge(a);
  bool zeroed = true;
  void* b = heap_.AllocateLarge(2, &zeroed, true);
  heap_.Validate();
  EXPECT_EQ(b, a);
  EXPECT_FALSE(zeroed);
  FreeLarge(b);
  FreeLarge(guard);
}

TEST_F(PageHeapTest, GrowsInPlaceIntoAFreeRightNeighbour) {
  void* a = Large(2);
  void* b = Large(3);
  void* guard = Large(1);
  FreeLarge(b);
  Chunk* chunk = ChunkOf(a);
  EXPECT_TRUE(heap_.GrowLargeInPlace(chunk, Page(a), 4));
  heap_.Validate();
  EXPECT_EQ(Entry(a), MapLargeHead(4));
  EXPECT_EQ(Entry(a, 4), MapFree(1, true));  // what is left of b's run
  EXPECT_FALSE(heap_.GrowLargeInPlace(chunk, Page(a), 6));  // the guard is in the way
  heap_.ShrinkLarge(chunk, Page(a), 1, ++now_);
  heap_.Validate();
  EXPECT_EQ(Entry(a), MapLargeHead(1));
  EXPECT_EQ(Entry(a, 1), MapFree(4, true));  // the tail coalesced with the rest
  FreeLarge(a);
  FreeLarge(guard);
}

TEST_F(PageHeapTest, AlignedRunsReturnTheirTrimmedEnds) {
  void* skew = Large(1);
  void* a = heap_.AllocateLargeAligned(3, 64 * 1024, ++now_);
  heap_.Validate();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % (64 * 1024), 0u);
  EXPECT_EQ(Entry(a), MapLargeHead(3));
  EXPECT_EQ(heap_.active_pages(), 4u);
  FreeLarge(a);
  FreeLarge(skew);
}

// Step 10: a freed aligned run is parked at its own length, shorter than the span an aligned
// request would otherwise take; the next request of that alignment gets it back.
TEST_F(PageHeapTest, AnAlignedRequestTakesBackAParkedRunThatFitsAtItsAlignment) {
  constexpr size_t kAlign = 64 * 1024;
  void* a = heap_.AllocateLargeAligned(16, kAlign, ++now_);
  ASSERT_NE(a, nullptr);
  void* guard = Large(1);
  FreeLarge(a);
  ASSERT_TRUE(MapParked(Entry(a)));
  void* b = heap_.AllocateLargeAligned(16, kAlign, ++now_);
  heap_.Validate();
  EXPECT_EQ(b, a);
  EXPECT_EQ(heap_.parked_pages(), 0u);
  EXPECT_EQ(Entry(b), MapLargeHead(16));
  FreeLarge(b);
  FreeLarge(guard);
}

// ...and a longer one, trimmed: its ends go back as dirty free runs.
TEST_F(PageHeapTest, AnAlignedRequestCutsItsBlockFromALongerParkedRun) {
  constexpr size_t kAlign = 64 * 1024;
  void* skew = Large(1);
  void* run = Large(20);  // its start is not 64 KiB-aligned: the chunk's first pages are taken
  void* guard = Large(1);
  ASSERT_NE(reinterpret_cast<uintptr_t>(run) % kAlign, 0u);
  FreeLarge(run);
  ASSERT_TRUE(MapParked(Entry(run)));
  const size_t active = heap_.active_pages();
  void* b = heap_.AllocateLargeAligned(8, kAlign, ++now_);
  heap_.Validate();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % kAlign, 0u);
  EXPECT_GT(b, run);
  EXPECT_LT(static_cast<char*>(b), static_cast<char*>(run) + 20 * kPageBytes);
  EXPECT_EQ(heap_.parked_pages(), 0u);
  EXPECT_EQ(heap_.active_pages(), active + 8);
  EXPECT_EQ(heap_.dirty_pages(), 12u);  // the pages before the aligned one (no trail here)
  FreeLarge(b);
  FreeLarge(guard);
  FreeLarge(skew);
}

// The failure path: a parked run with no room at the alignment stays parked, and the request
// is served from elsewhere.
TEST_F(PageHeapTest, AnAlignedRequestLeavesAParkedRunItDoesNotFit) {
  constexpr size_t kAlign = 64 * 1024;
  void* skew = Large(1);
  void* run = Large(16);
  void* guard = Large(1);
  ASSERT_NE(reinterpret_cast<uintptr_t>(run) % kAlign, 0u);
  FreeLarge(run);
  void* b = heap_.AllocateLargeAligned(16, kAlign, ++now_);
  heap_.Validate();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % kAlign, 0u);
  EXPECT_TRUE(MapParked(Entry(run)));
  EXPECT_EQ(heap_.parked_pages(), 16u);
  FreeLarge(b);
  FreeLarge(guard);
  FreeLarge(skew);
}

// A parked run that holds the block at its alignment is found behind newer ones that do not.
TEST_F(PageHeapTest, AnAlignedRequestLooksPastTheNewestParkedRunOfALength) {
  ParkedRuns parked = ParkAlignedBehind(8);
  ASSERT_TRUE(MapParked(Entry(parked.aligned)));
  ASSERT_EQ(heap_.parked_pages(), 36u);
  void* block = heap_.AllocateLargeAligned(4, ParkedRuns::kAlign, ++now_);
  heap_.Validate();
  EXPECT_EQ(block, parked.aligned);
  EXPECT_EQ(heap_.parked_pages(), 32u);  // the unaligned ones stay parked
  for (void* run : parked.unaligned) EXPECT_TRUE(MapParked(Entry(run)));
  FreeLarge(block);
  for (void* guard : parked.guards) FreeLarge(guard);
}

// The failure path: a run that fits, but behind more than kAlignedScanPerLength that do not, is
// not found; the request is served from a padded run, and every parked run stays parked.
TEST_F(PageHeapTest, AnAlignedRequestLooksAtABoundedNumberOfRunsPerLength) {
  ParkedRuns parked = ParkAlignedBehind(kAlignedScanPerLength);
  const size_t parked_pages = heap_.parked_pages();
  ASSERT_EQ(parked_pages, 4u * (kAlignedScanPerLength + 1));
  void* block = heap_.AllocateLargeAligned(4, ParkedRuns::kAlign, ++now_);
  heap_.Validate();
  ASSERT_NE(block, nullptr);
  EXPECT_NE(block, parked.aligned);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % ParkedRuns::kAlign, 0u);
  EXPECT_EQ(heap_.parked_pages(), parked_pages);
  EXPECT_TRUE(MapParked(Entry(parked.aligned)));
  FreeLarge(block);
  for (void* guard : parked.guards) FreeLarge(guard);
}

TEST_F(PageHeapTest, DecayPurgesOnlyRunsOlderThanTheDecayTime) {
  void* a = Large(2);
  void* g1 = Large(1);
  void* b = Large(3);
  void* g2 = Large(1);
  Chunk* chunk = ChunkOf(a);
  heap_.FreeLarge(chunk, Page(a), 1000);
  heap_.FreeLarge(chunk, Page(b), 2000);
  EXPECT_EQ(heap_.OldestDirtyNs(), 1000u);
  EXPECT_EQ(heap_.PurgeDecayed(1999, 1000), 0u);
  EXPECT_EQ(heap_.PurgeDecayed(2000, 1000), 2u);
  heap_.Validate();
  EXPECT_EQ(heap_.dirty_pages(), 3u);
  EXPECT_EQ(Entry(a), MapFree(2, false));
  EXPECT_EQ(heap_.PurgeDecayed(3000, 1000), 3u);
  EXPECT_EQ(heap_.dirty_pages(), 0u);
  EXPECT_EQ(heap_.purged_pages_total(), 5u);
  FreeLarge(g1);
  FreeLarge(g2);
}

// The purger's excess purge (decay.h's grace): runs over the limit go only once the oldest has
// been dirty for the grace; decayed runs go whatever the limit.
TEST_F(PageHeapTest, TakeForPurgeLeavesTheExcessToItsGrace) {
  constexpr uint64_t kDecay = 1'000'000, kGrace = 100;
  void* runs[4];
  void* guards[4];
  for (int i = 0; i < 4; ++i) {
    runs[i] = Large(2);
    guards[i] = Large(1);
  }
  for (void* run : runs) FreeLarge(run);  // dirty since now_ - 3 .. now_
  uint64_t oldest = now_ - 3;
  PurgingRuns taken;
  EXPECT_EQ(heap_.TakeForPurge(oldest + kGrace - 1, kDecay, 0, kGrace, &taken), 0u);
  EXPECT_EQ(heap_.dirty_pages(), 8u);
  // At the grace's end the two oldest have been dirty that long; down to 4 pages is the oldest one.
  EXPECT_EQ(heap_.TakeForPurge(oldest + kGrace, kDecay, 4, kGrace, &taken), 1u);
  EXPECT_EQ(taken.addresses[0], runs[0]);
  heap_.ReturnPurged(taken);
  EXPECT_EQ(heap_.dirty_pages(), 6u);
  EXPECT_EQ(Entry(runs[0]), MapFree(2, false));
  // Under the limit, decay alone takes them, the excess grace aside.
  EXPECT_EQ(heap_.TakeForPurge(now_ - 3 + kDecay, kDecay, 100, 0, &taken), 0u);  // runs[1]: -2
  EXPECT_EQ(heap_.TakeForPurge(now_ + kDecay, kDecay, 100, kGrace, &taken), 3u);
  heap_.ReturnPurged(taken);
  EXPECT_EQ(heap_.dirty_pages(), 0u);
  for (void* guard : guards) FreeLarge(guard);
  heap_.Validate();
}

TEST_F(PageHeapTest, PurgeExcessKeepsTheNewestDirtyRuns) {
  void* runs[4];
  void* guards[4];
  for (int i = 0; i < 4; ++i) {
    runs[i] = Large(2);
    guards[i] = Large(1);
  }
  for (void* run : runs) FreeLarge(run);
  EXPECT_EQ(heap_.PurgeExcess(4), 4u);
  EXPECT_EQ(heap_.dirty_pages(), 4u);
  EXPECT_EQ(Entry(runs[0]), MapFree(2, false));  // oldest purged first
  EXPECT_EQ(Entry(runs[3]), MapFree(2, true));
  heap_.Validate();
  for (void* guard : guards) FreeLarge(guard);
}

TEST_F(PageHeapTest, PurgedPagesReadAsZero) {
  auto* a = static_cast<unsigned char*>(Large(2));
  void* guard = Large(1);
  std::memset(a, 0x5a, 2 * kPageBytes);
  FreeLarge(a);
  heap_.PurgeAll();
  bool zeroed = false;
  auto* b = static_cast<unsigned char*>(heap_.AllocateLarge(2, &zeroed));
  ASSERT_EQ(b, a);
  EXPECT_TRUE(zeroed);
  EXPECT_EQ(b[0], 0);
  EXPECT_EQ(b[2 * kPageBytes - 1], 0);
  FreeLarge(b);
  FreeLarge(guard);
}


TEST_F(PageHeapTest, APurgeOfManyRunsIsOneSystemCallWhereTheKernelTakesABatch) {
  ScatteredDirtyRuns layout = MakeScatteredDirtyRuns();
  uint64_t calls_before = OsPurgeCallCount();
  EXPECT_EQ(heap_.PurgeExcess(0), static_cast<size_t>(ScatteredDirtyRuns::kRuns));
  uint64_t calls = OsPurgeCallCount() - calls_before;
  // One process_madvise for the 40 ranges (64 fit a batch); one madvise each where refused.
  RecordProperty("batched", OsPurgeIsBatched() ? "yes" : "no (madvise per range)");
  EXPECT_EQ(calls, OsPurgeIsBatched() ? 1u : static_cast<uint64_t>(ScatteredDirtyRuns::kRuns));
  ExpectPurgedThenFreeAll(layout);
}

TEST_F(PageHeapTest, WithoutProcessMadviseEveryRangeIsPurgedByItsOwnCall) {
  OsPurgeWithMadviseOnlyForTesting(true);
  ScatteredDirtyRuns layout = MakeScatteredDirtyRuns();
  uint64_t calls_before = OsPurgeCallCount();
  heap_.PurgeExcess(0);
  EXPECT_EQ(OsPurgeCallCount() - calls_before, static_cast<uint64_t>(ScatteredDirtyRuns::kRuns));
  OsPurgeWithMadviseOnlyForTesting(false);
  ExpectPurgedThenFreeAll(layout);
}

// A purge whose run completes an empty chunk unmaps that chunk in the middle of the batch: the
// batch must be flushed first, or its range in that chunk would be purged after the munmap (the
// kernel then refuses the whole batch, and a real process could have mapped the address again).
TEST_F(PageHeapTest, APurgeThatUnmapsAChunkFlushesItsBatchFirst) {
  {  // a batch of two first, so that OsPurgeIsBatched() tells whether this kernel takes batches
    void* first = Large(1);
    void* guard = Large(1);
    void* second = Large(1);
    FreeLarge(first);
    FreeLarge(second);
    heap_.PurgeExcess(0);
    FreeLarge(guard);
    heap_.PurgeAll();
  }
  void* c = Large(kChunkUsablePages);                                 // chunk C, whole
  auto* a = static_cast<unsigned char*>(Large(kChunkUsablePages - 1));  // chunk A
  void* a_tail = Large(1);
  void* x = Large(kChunkUsablePages - 1);                              // chunk B
  void* y = Large(1);
  ASSERT_NE(ChunkOf(c), ChunkOf(a));
  ASSERT_NE(ChunkOf(a), ChunkOf(x));
  ASSERT_EQ(ChunkOf(x), ChunkOf(y));
  // Empty chunks kept up to one below the bound, so that C makes it and B must be unmapped.
  std::vector<void*> fillers;
  for (uint32_t i = 0; i + 1 < kMaxEmptyChunks; ++i) fillers.push_back(Large(kChunkUsablePages));
  for (void* filler : fillers) FreeLarge(filler);
  FreeLarge(x);
  heap_.PurgeExcess(0);  // x clean
  FreeLarge(c);          // C: empty, retained (the kMaxEmptyChunks-th)
  std::memset(a, 0x5a, 2 * kPageBytes);
  FreeLarge(a);
  FreeLarge(y);  // y + clean x = all of B once y is purged
  bool batched_before = OsPurgeIsBatched();
  heap_.PurgeExcess(0);  // purges C's run, a, then y: B is unmapped (past the bound)
  EXPECT_FALSE(IsArenaChunk(x));
  EXPECT_TRUE(IsArenaChunk(a));
  EXPECT_EQ(OsPurgeIsBatched(), batched_before) << "the kernel refused a batch";
  bool zeroed = false;
  auto* again = static_cast<unsigned char*>(heap_.AllocateLarge(kChunkUsablePages - 1, &zeroed));
  ASSERT_EQ(again, a);
  EXPECT_EQ(again[0], 0);
  EXPECT_EQ(again[2 * kPageBytes - 1], 0);
  FreeLarge(again);
  FreeLarge(a_tail);
}

TEST_F(PageHeapTest, EmptyChunksAreKeptUntilCleanAndIdleForTheDecayTimeAndOneStays) {
  void* a = Large(kChunkUsablePages);
  void* b = Large(kChunkUsablePages);
  EXPECT_EQ(heap_.chunk_count(), 2u);
  FreeLarge(a);
  FreeLarge(b);
  EXPECT_EQ(heap_.chunk_count(), 2u);  // both kept, dirty
  heap_.PurgeExcess(0);
  EXPECT_EQ(heap_.chunk_count(), 2u);  // both kept, clean
  constexpr uint64_t kDecay = 100;
  EXPECT_EQ(heap_.UnmapIdleChunks(1000, kDecay), 1001u) << "the first pass stamps them";
  EXPECT_EQ(heap_.UnmapIdleChunks(1000 + kDecay, kDecay), 1001u) << "not idle for kDecay yet";
  EXPECT_EQ(heap_.chunk_count(), 2u);
  // Reused and emptied again, a chunk's idle time starts over.
  void* again = Large(kChunkUsablePages);
  FreeLarge(again);
  heap_.PurgeExcess(0);
  EXPECT_EQ(heap_.UnmapIdleChunks(1001 + kDecay, kDecay), UINT64_MAX)
      << "the one left is the last: it stays, so nothing is pending";
  EXPECT_EQ(heap_.chunk_count(), 1u) << "the one idle since 1001 went";
  EXPECT_TRUE(IsArenaChunk(again)) << "the reused one's idle time started over at 1101";
  EXPECT_EQ(heap_.UnmapIdleChunks(5000, kDecay), UINT64_MAX) << "the last one stays";
  EXPECT_EQ(heap_.chunk_count(), 1u);
  EXPECT_TRUE(IsArenaChunk(a) != IsArenaChunk(b));
  heap_.Validate();
  heap_.PurgeAll();
  EXPECT_EQ(heap_.chunk_count(), 0u);
}

TEST_F(PageHeapTest, ADirtyEmptyChunkIsNotUnmappedByIdleness) {
  void* a = Large(kChunkUsablePages);
  void* b = Large(kChunkUsablePages);
  FreeLarge(a);
  FreeLarge(b);
  EXPECT_EQ(heap_.UnmapIdleChunks(UINT64_MAX / 2, 0), UINT64_MAX);
  EXPECT_EQ(heap_.chunk_count(), 2u) << "dirty chunks wait for decay to purge them first";
  heap_.PurgeAll();
}

TEST_F(PageHeapTest, AtMostkMaxEmptyChunksAreKeptAndPurgeAllUnmapsThem) {
  std::vector<void*> blocks;
  for (uint32_t i = 0; i < kMaxEmptyChunks + 3; ++i) blocks.push_back(Large(kChunkUsablePages));
  for (void* block : blocks) FreeLarge(block);
  EXPECT_EQ(heap_.chunk_count(), kMaxEmptyChunks);
  heap_.Validate();
  // A run cut from a kept chunk makes it non-empty; freed again, it is kept again.
  void* again = Large(3);
  EXPECT_EQ(heap_.chunk_count(), kMaxEmptyChunks);
  FreeLarge(again);
  heap_.Validate();
  heap_.PurgeAll();
  EXPECT_EQ(heap_.chunk_count(), 0u);
}

TEST_F(PageHeapTest, MappingFailureReturnsNull) {
  OsFailMapsForTesting(1);
  bool zeroed = false;
  EXPECT_EQ(heap_.AllocateLarge(1, &zeroed), nullptr);
  OsFailMapsForTesting(0);
  heap_.Validate();
}

TEST_F(PageHeapTest, ManyRunsSplitAndCoalesceBackToOneFreeRun) {
  void* blocks[200];
  for (int i = 0; i < 200; ++i) blocks[i] = Large(1 + i % 3);  // below the parked lengths
  // Free every other block, then the rest: everything coalesces back.
  for (int i = 0; i < 200; i += 2) FreeLarge(blocks[i]);
  for (int i = 1; i < 200; i += 2) FreeLarge(blocks[i]);
  EXPECT_EQ(heap_.active_pages(), 0u);
  EXPECT_EQ(heap_.largest_free_run(), kChunkUsablePages);
}

// ---- parking (page_heap.h step 8) ---------------------------------------------------------------

TEST_F(PageHeapTest, AFreedMidSizeRunIsParkedWholeAndTakenBackForItsLengthOnly) {
  void* a = Large(8);
  void* guard = Large(1);
  FreeLarge(a);
  EXPECT_EQ(Entry(a), MapLargeHead(8) | kMapParked);
  EXPECT_TRUE(MapParked(Entry(a)));
  EXPECT_FALSE(MapLiveLargeHead(Entry(a)));  // free() and usable_size reject it
  EXPECT_EQ(heap_.parked_pages(), 8u);
  EXPECT_EQ(heap_.dirty_pages(), 8u);  // freed memory, possibly resident
  EXPECT_EQ(heap_.active_pages(), 1u);
  void* b = Large(7);  // another length: not from the parked run, nor from its pages
  EXPECT_NE(b, a);
  EXPECT_EQ(heap_.parked_pages(), 8u);
  bool zeroed = true;
  void* c = heap_.AllocateLarge(8, &zeroed);
  heap_.Validate();
  EXPECT_EQ(c, a);  // the same pages: whatever its last owner wrote at its start is reused
  EXPECT_FALSE(zeroed);
  EXPECT_EQ(Entry(c), MapLargeHead(8));
  EXPECT_EQ(heap_.parked_pages(), 0u);
  EXPECT_EQ(heap_.dirty_pages(), 0u);
  EXPECT_EQ(heap_.active_pages(), 16u);
  FreeLarge(b);
  FreeLarge(c);
  FreeLarge(guard);
}

TEST_F(PageHeapTest, AParkedRunIsNotCoalescedButItsNeighboursStillAre) {
  void* left = Large(2);
  void* parked = Large(6);
  void* right = Large(3);
  void* guard = Large(1);
  FreeLarge(parked);
  FreeLarge(left);
  FreeLarge(right);
  EXPECT_EQ(Entry(left), MapFree(2, true));  // stopped by the parked run on its right
  EXPECT_EQ(Entry(right), MapFree(3, true));
  EXPECT_EQ(heap_.dirty_pages(), 11u);
  // Purged, the parked run joins both (clean) neighbours: one run again.
  heap_.PurgeExcess(0);
  heap_.Validate();
  EXPECT_EQ(heap_.parked_pages(), 0u);
  EXPECT_EQ(Entry(left), MapFree(11, false));
  FreeLarge(guard);
}

TEST_F(PageHeapTest, ALargeRunGrowsInPlaceIntoAParkedRightNeighbour) {
  void* a = Large(2);
  void* b = Large(5);
  void* guard = Large(1);
  FreeLarge(b);
  ASSERT_TRUE(MapParked(Entry(b)));
  EXPECT_TRUE(heap_.GrowLargeInPlace(ChunkOf(a), Page(a), 4));
  heap_.Validate();
  EXPECT_EQ(Entry(a), MapLargeHead(4));
  EXPECT_EQ(Entry(a, 4), MapFree(3, true));  // the rest of the parked run, unparked
  EXPECT_EQ(heap_.parked_pages(), 0u);
  EXPECT_EQ(heap_.dirty_pages(), 3u);
  FreeLarge(a);
  FreeLarge(guard);
}

TEST_F(PageHeapTest, RunsOutsideTheParkedLengthsAreNotParked) {
  ASSERT_EQ(kParkMinPages, 4u);
  void* small = Large(kParkMinPages - 1);
  void* g1 = Large(1);
  void* big = Large(kParkMaxPages + 1);
  void* g2 = Large(1);
  FreeLarge(small);
  FreeLarge(big);
  EXPECT_EQ(heap_.parked_pages(), 0u);
  EXPECT_EQ(Entry(small), MapFree(kParkMinPages - 1, true));
  EXPECT_EQ(Entry(big), MapFree(kParkMaxPages + 1, true));
  FreeLarge(g1);
  FreeLarge(g2);
}

TEST_F(PageHeapTest, EachLengthParksAtMostItsQuotaAndItsOldestMakesRoom) {
  constexpr uint32_t kRuns = kParkPerLength + 1;
  void* runs[kRuns];
  void* guards[kRuns];
  for (uint32_t i = 0; i < kRuns; ++i) {
    runs[i] = Large(5);
    guards[i] = Large(1);
  }
  for (void* run : runs) FreeLarge(run);
  EXPECT_EQ(heap_.parked_pages(), size_t{kParkPerLength} * 5);
  EXPECT_EQ(Entry(runs[0]), MapFree(5, true));  // the oldest went back to the free lists
  for (uint32_t i = 1; i < kRuns; ++i) EXPECT_TRUE(MapParked(Entry(runs[i])));
  // Taken back newest first.
  EXPECT_EQ(Large(5), runs[kRuns - 1]);
  EXPECT_EQ(Large(5), runs[kRuns - 2]);
  FreeLarge(runs[kRuns - 1]);
  FreeLarge(runs[kRuns - 2]);
  for (void* guard : guards) FreeLarge(guard);
}

TEST_F(PageHeapTest, ParkingStopsAtTheHeapBudget) {
  // Lengths 32, 31, ... each parking its quota, until the budget refuses.
  std::vector<void*> runs;
  std::vector<void*> guards;
  for (uint32_t pages = kParkMaxPages; pages >= kParkMinPages; --pages) {
    for (uint32_t i = 0; i < kParkPerLength; ++i) {
      runs.push_back(Large(pages));
      guards.push_back(Large(1));
    }
  }
  size_t freed_pages = 0;
  for (void* run : runs) {
    freed_pages += MapCount(Entry(run));
    FreeLarge(run);
  }
  ASSERT_GT(freed_pages, kParkedMaxPages);
  EXPECT_LE(heap_.parked_pages(), kParkedMaxPages);
  EXPECT_GT(heap_.parked_pages(), kParkedMaxPages - kParkMaxPages);
  EXPECT_GT(heap_.dirty_pages(), heap_.parked_pages());  // the rest was freed as dirty runs
  EXPECT_FALSE(MapParked(Entry(runs.back())));  // the last ones were freed normally
  for (void* guard : guards) FreeLarge(guard);
}

TEST_F(PageHeapTest, PurgeAllReturnsParkedRunsOnceAndLetsTheirChunkGo) {
  void* parked = Large(10);
  void* other = Large(2);
  std::memset(parked, 0x33, 10 * kPageBytes);
  FreeLarge(parked);
  FreeLarge(other);
  EXPECT_EQ(heap_.dirty_pages(), 12u);
  uint64_t purged_before = heap_.purged_pages_total();
  EXPECT_EQ(heap_.PurgeAll(), 12u);
  heap_.Validate();
  EXPECT_EQ(heap_.purged_pages_total() - purged_before, 12u);  // each page counted once
  EXPECT_EQ(heap_.parked_pages(), 0u);
  EXPECT_EQ(heap_.dirty_pages(), 0u);
  EXPECT_EQ(heap_.chunk_count(), 0u);  // nothing held the chunk: it was unmapped
}

TEST_F(PageHeapTest, DecayPurgesParkedRunsLikeOtherDirtyRuns) {
  void* a = Large(6);
  void* guard = Large(1);
  Chunk* chunk = ChunkOf(a);
  heap_.FreeLarge(chunk, Page(a), 1000);
  heap_.Validate();
  EXPECT_EQ(heap_.OldestDirtyNs(), 1000u);
  EXPECT_EQ(heap_.PurgeDecayed(1500, 1000), 0u);  // younger than the decay time
  EXPECT_TRUE(MapParked(Entry(a)));
  EXPECT_EQ(heap_.PurgeDecayed(2000, 1000), 6u);
  heap_.Validate();
  EXPECT_EQ(heap_.parked_pages(), 0u);
  EXPECT_EQ(Entry(a), MapFree(6, false));  // a clean run now (the guard keeps it apart)
  bool zeroed = false;
  void* b = heap_.AllocateLarge(6, &zeroed);
  EXPECT_EQ(b, a);
  EXPECT_TRUE(zeroed);  // from the clean lists now
  FreeLarge(b);
  FreeLarge(guard);
}

// A heap that keeps growing maps each new chunk with one call: the next aligned mapping is asked
// for just below the last (os.cc). Without the hint, the kernel put each one in the highest gap,
// below the misaligned start of the last two-chunk try, and every chunk took two maps (64 here).
TEST(OsMap, ChunksMappedOneAfterAnotherTakeAboutOneCallEach) {
  constexpr int kChunks = 32;
  std::vector<void*> chunks;
  uint64_t before = OsMapCallCount();
  for (int i = 0; i < kChunks; ++i) {
    void* chunk = OsMap(kChunkBytes, kChunkBytes);
    ASSERT_NE(chunk, nullptr);
    ASSERT_EQ(reinterpret_cast<uintptr_t>(chunk) % kChunkBytes, 0u);
    std::memset(chunk, 1, kPageBytes);
    chunks.push_back(chunk);
  }
  EXPECT_LE(OsMapCallCount() - before, uint64_t{kChunks} + 4);
  for (void* chunk : chunks) OsUnmap(chunk, kChunkBytes);
}

// A reservation asked at an alignment starts on it however the kernel placed the first try, and
// a refusal is nullptr (the huge regions' reservations: huge_region.h).
TEST(OsReserve, StartsAtTheAlignmentAskedAndFailsWhenTheKernelRefuses) {
  constexpr size_t kBytes = size_t{64} << 20;
  std::vector<void*> reserved;
  for (int i = 0; i < 4; ++i) {
    auto* base = static_cast<unsigned char*>(OsReserve(kBytes, kBytes));
    ASSERT_NE(base, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % kBytes, 0u);
    base[0] = 1;
    base[kBytes - 1] = 2;  // the whole length is there
    reserved.push_back(base);
  }
  void* paged = OsReserve(3 * kPageBytes, kPageBytes);
  ASSERT_NE(paged, nullptr);
  OsUnmap(paged, 3 * kPageBytes);
  OsFailMapsForTesting(1);
  EXPECT_EQ(OsReserve(kBytes, kBytes), nullptr);
  OsFailMapsForTesting(0);
  for (void* base : reserved) OsUnmap(base, kBytes);
}

}  // namespace
}  // namespace lethe::internal
