// The page heap on its own: split, coalesce with each neighbour, best fit, in-place resize,
// alignment, dirty accounting, decay on a manual clock, and Validate() after every step.
#include "page_heap.h"

#include <gtest/gtest.h>

#include <cstring>

#include "chunk_registry.h"
#include "os.h"

namespace lethe::internal {
namespace {

class PageHeapTest : public ::testing::Test {
 protected:
  void SetUp() override { heap_.Init(&heap_); }
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
  void* c = Large(4);
  void* guard = Large(1);
  FreeLarge(a);
  FreeLarge(c);
  EXPECT_EQ(heap_.dirty_pages(), 6u);
  FreeLarge(b);
  EXPECT_EQ(Entry(a), MapFree(9, true));
  EXPECT_EQ(Entry(c, 3), MapFree(9, true));
  EXPECT_EQ(heap_.dirty_pages(), 9u);
  FreeLarge(guard);
}

TEST_F(PageHeapTest, DirtyRunsDoNotCoalesceWithCleanOnes) {
  void* a = Large(2);
  FreeLarge(a);  // dirty [3,5) next to the clean rest of the chunk
  EXPECT_EQ(Entry(a), MapFree(2, true));
  EXPECT_EQ(Entry(a, 2), MapFree(kChunkUsablePages - 2, false));
}

TEST_F(PageHeapTest, BestFitTakesTheShortestRunThatHolds) {
  void* a = Large(5);
  void* g1 = Large(1);
  void* b = Large(2);
  void* g2 = Large(1);
  FreeLarge(a);
  FreeLarge(b);
  void* c = Large(2);  // fits both holes: takes the 2-page one
  EXPECT_EQ(c, b);
  void* d = Large(3);  // only the 5-page hole fits among the dirty runs
  EXPECT_EQ(d, a);
  EXPECT_EQ(Entry(d, 3), MapFree(2, true));
  FreeLarge(c);
  FreeLarge(d);
  FreeLarge(g1);
  FreeLarge(g2);
}

TEST_F(PageHeapTest, DirtyRunsAreReusedBeforeCleanOnes) {
  void* a = Large(3);
  void* guard = Large(1);
  FreeLarge(a);
  bool zeroed = true;
  void* b = heap_.AllocateLarge(1, &zeroed);
  EXPECT_EQ(b, a);
  EXPECT_FALSE(zeroed);
  FreeLarge(b);
  FreeLarge(guard);
}

TEST_F(PageHeapTest, GrowsInPlaceIntoAFreeRightNeighbour) {
  void* a = Large(2);
  void* b = Large(4);
  void* guard = Large(1);
  FreeLarge(b);
  Chunk* chunk = ChunkOf(a);
  EXPECT_TRUE(heap_.GrowLargeInPlace(chunk, Page(a), 5));
  heap_.Validate();
  EXPECT_EQ(Entry(a), MapLargeHead(5));
  EXPECT_EQ(Entry(a, 5), MapFree(1, true));  // what is left of b's run
  EXPECT_FALSE(heap_.GrowLargeInPlace(chunk, Page(a), 7));  // the guard is in the way
  heap_.ShrinkLarge(chunk, Page(a), 1, ++now_);
  heap_.Validate();
  EXPECT_EQ(Entry(a), MapLargeHead(1));
  EXPECT_EQ(Entry(a, 1), MapFree(5, true));  // the tail coalesced with the rest
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

TEST_F(PageHeapTest, AnEmptyChunkIsRetainedAndASecondIsUnmapped) {
  void* a = Large(kChunkUsablePages);
  void* b = Large(kChunkUsablePages);
  EXPECT_EQ(heap_.chunk_count(), 2u);
  FreeLarge(a);
  EXPECT_EQ(heap_.chunk_count(), 2u);  // retained
  FreeLarge(b);
  EXPECT_EQ(heap_.chunk_count(), 1u);  // the second empty chunk went back to the OS
  EXPECT_FALSE(IsArenaChunk(b));
  EXPECT_TRUE(IsArenaChunk(a));
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
  for (int i = 0; i < 200; ++i) blocks[i] = Large(1 + i % 7);
  // Free every other block, then the rest: everything coalesces back.
  for (int i = 0; i < 200; i += 2) FreeLarge(blocks[i]);
  for (int i = 1; i < 200; i += 2) FreeLarge(blocks[i]);
  EXPECT_EQ(heap_.active_pages(), 0u);
  EXPECT_EQ(heap_.largest_free_run(), kChunkUsablePages);
}

}  // namespace
}  // namespace lethe::internal
