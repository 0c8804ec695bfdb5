// Small runs and bins on a private page heap: bitmaps, free counts, run release, and the checks
// on free (invalid pointer, double free).
#include "bin.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "os.h"

namespace lethe::internal {
namespace {

class BinTest : public ::testing::Test {
 protected:
  void TearDown() override {
    heap_.PurgeAll();
    heap_.Validate();
  }
  // BinAllocate through a FreshPages that the test populates, as the arena does.
  uint32_t Allocate(uint32_t klass, void** out, uint32_t count) {
    FreshPages fresh;
    uint32_t got = BinAllocate(&bins_[klass], klass, &heap_, out, count, &fresh);
    fresh.Populate();
    return got;
  }
  void FreeRegion(uint32_t klass, void* pointer) {
    Chunk* chunk = ChunkOf(pointer);
    uint32_t page = PageOf(chunk, pointer);
    BinFree(&bins_[klass], &heap_, chunk, page, chunk->map[page], pointer, 1);
  }

  PageHeap heap_;
  Bin bins_[kSmallClassCount];
};

TEST_F(BinTest, ARunHandsOutEveryRegionOnceAlignedToItsClass) {
  for (uint32_t klass = 0; klass < kSmallClassCount; ++klass) {
    const SmallClass& layout = kSmallClasses[klass];
    std::vector<void*> regions(layout.region_count);
    ASSERT_EQ(Allocate(klass, regions.data(), layout.region_count),
              layout.region_count);
    EXPECT_EQ(bins_[klass].nonfull, nullptr) << "a full run leaves the non-full list";
    std::set<void*> distinct(regions.begin(), regions.end());
    EXPECT_EQ(distinct.size(), regions.size());
    size_t natural = layout.size_bytes & (~layout.size_bytes + 1);
    if (natural > kPageBytes) natural = kPageBytes;
    for (void* region : regions) {
      ASSERT_EQ(reinterpret_cast<uintptr_t>(region) % natural, 0u) << layout.size_bytes;
    }
    heap_.Validate();
    BinValidate(bins_[klass], klass);
    for (void* region : regions) FreeRegion(klass, region);
    EXPECT_EQ(bins_[klass].run_count, 0u) << "an empty run goes back to the page heap";
    EXPECT_EQ(heap_.active_pages(), 0u);
  }
}

TEST_F(BinTest, FreeCountAndBitmapAgreeAfterPartialFrees) {
  constexpr uint32_t kKlass = 4;  // 64 bytes
  std::vector<void*> regions(100);
  ASSERT_EQ(Allocate(kKlass, regions.data(), 100), 100u);
  for (size_t i = 0; i < regions.size(); i += 3) FreeRegion(kKlass, regions[i]);
  BinValidate(bins_[kKlass], kKlass);
  // The lowest free region is handed out first.
  void* again = nullptr;
  ASSERT_EQ(Allocate(kKlass, &again, 1), 1u);
  EXPECT_EQ(again, regions[0]);
  regions[0] = again;
  BinValidate(bins_[kKlass], kKlass);
  for (size_t i = 0; i < regions.size(); ++i) {
    if (i % 3 != 0 || i == 0) FreeRegion(kKlass, regions[i]);
  }
  EXPECT_EQ(heap_.active_pages(), 0u);
}

TEST_F(BinTest, RunsFillLowestAddressFirst) {
  constexpr uint32_t kKlass = 20;  // 1024 bytes, 3 runs' worth
  const uint32_t per_run = kSmallClasses[kKlass].region_count;
  std::vector<void*> regions(per_run * 3);
  ASSERT_EQ(Allocate(kKlass, regions.data(), per_run * 3), per_run * 3);
  // One region free in the first and the last run: the first run's is reused first.
  FreeRegion(kKlass, regions.back());
  FreeRegion(kKlass, regions.front());
  void* again = nullptr;
  Allocate(kKlass, &again, 1);
  EXPECT_EQ(again, regions.front());
  regions.pop_back();
  for (void* region : regions) FreeRegion(kKlass, region);
  EXPECT_EQ(heap_.active_pages(), 0u);
}

// A thread cache returns one bin's regions in one batch; a region whose page shows another class
// (only an invalid or double free can put one there) goes to its own page's bin, and the bytes
// returned are the regions' own sizes.
TEST_F(BinTest, ABatchFreesItsClassAndSendsAStrayRegionToItsOwnBin) {
  constexpr uint32_t kKlass = 4, kOther = 9;  // 64 and 144 bytes
  std::vector<void*> regions(40);
  ASSERT_EQ(Allocate(kKlass, regions.data(), 40), 40u);
  void* stray = nullptr;
  ASSERT_EQ(Allocate(kOther, &stray, 1), 1u);
  regions.push_back(stray);
  uint64_t bytes = BinFreeBatch(bins_, kKlass, &heap_, regions.data(),
                                static_cast<uint32_t>(regions.size()), 1);
  EXPECT_EQ(bytes, 40 * kSmallSizes[kKlass] + kSmallSizes[kOther]);
  EXPECT_EQ(bins_[kKlass].regions_out, 0u);
  EXPECT_EQ(bins_[kOther].regions_out, 0u);
  EXPECT_EQ(bins_[kKlass].run_count + bins_[kOther].run_count, 0u);
  EXPECT_EQ(heap_.active_pages(), 0u);
}

// Every class, both header layouts (in the chunk's node slots, or at the run's end): a batch
// frees three runs' regions out of order, the odd ones first (every run stays, each with free
// regions), then the rest (every run is empty and goes back to the page heap).
TEST_F(BinTest, BatchesOfEveryClassEmptyTheirRunsAndOnlyThen) {
  int in_chunk = 0, in_run = 0;
  for (uint32_t klass = 0; klass < kSmallClassCount; ++klass) {
    const SmallClass& layout = kSmallClasses[klass];
    (layout.header_in_chunk() ? in_chunk : in_run) += 1;
    std::vector<void*> regions(3 * layout.region_count);
    auto count = static_cast<uint32_t>(regions.size());
    ASSERT_EQ(Allocate(klass, regions.data(), count), count) << klass;
    std::vector<void*> odd, even;
    for (uint32_t i = count; i-- > 0;) (i % 2 == 1 ? odd : even).push_back(regions[i]);
    uint64_t bytes = BinFreeBatch(bins_, klass, &heap_, odd.data(),
                                  static_cast<uint32_t>(odd.size()), 1);
    EXPECT_EQ(bytes, odd.size() * layout.size_bytes) << klass;
    BinValidate(bins_[klass], klass);
    // A run stays while it holds an even-numbered region (regions are handed out in order).
    uint64_t kept = 0;
    for (uint32_t run = 0; run < 3; ++run) kept += layout.region_count > 1 || run % 2 == 0;
    EXPECT_EQ(bins_[klass].run_count, kept) << klass;
    BinFreeBatch(bins_, klass, &heap_, even.data(), static_cast<uint32_t>(even.size()), 1);
    EXPECT_EQ(bins_[klass].regions_out, 0u) << klass;
    EXPECT_EQ(bins_[klass].run_count, 0u) << klass;
    EXPECT_EQ(heap_.active_pages(), 0u) << klass;
  }
  EXPECT_GT(in_chunk, 0);
  EXPECT_GT(in_run, 0);
}

// A run cut from fresh pages is populated up to the page where its last region handed out
// starts, never further: each fill names the pages its regions begin on, and the pages of regions
// still in the run (or of a region's tail alone) stay unfaulted. A run cut from dirty pages names
// none, nor does one of a class whose regions span pages that hold no region's start.
TEST_F(BinTest, AFreshRunIsPopulatedUpToItsLastRegionsStart) {
  uint32_t klass = 0;  // regions straddling pages in a run of several, header out of line
  while (kSmallClasses[klass].run_pages < 3 || kSmallClasses[klass].size_bytes > kPageBytes ||
         kSmallClasses[klass].size_bytes <= kPageBytes / 2 ||
         !kSmallClasses[klass].header_in_chunk()) {
    ++klass;
  }
  ASSERT_LT(klass, kSmallClassCount);
  const SmallClass& layout = kSmallClasses[klass];
  const size_t size = layout.size_bytes;
  // The pages that the first n regions start on.
  auto pages_through = [size](size_t n) { return (n - 1) * size / kPageBytes + 1; };
  std::vector<void*> regions(layout.region_count);
  FreshPages fresh;
  ASSERT_EQ(BinAllocate(&bins_[klass], klass, &heap_, regions.data(), 2, &fresh), 2u);
  auto* start = static_cast<char*>(regions[0]);
  ASSERT_EQ(fresh.count, 1u);
  EXPECT_EQ(fresh.ranges[0].start, start);
  EXPECT_EQ(fresh.ranges[0].bytes, pages_through(2) * kPageBytes);
  fresh.Populate();  // populated only from kPopulateMinPages on (the next test)
  EXPECT_EQ(OsResidentPages(start, layout.run_pages),
            pages_through(2) >= kPopulateMinPages ? pages_through(2) : 0u);

  FreshPages next;  // the third region: only the pages past those named already
  ASSERT_EQ(BinAllocate(&bins_[klass], klass, &heap_, &regions[2], 1, &next), 1u);
  ASSERT_GT(pages_through(3), pages_through(2));  // regions over half a page
  ASSERT_EQ(next.count, 1u);
  EXPECT_EQ(next.ranges[0].start, start + pages_through(2) * kPageBytes);
  EXPECT_EQ(next.ranges[0].bytes, (pages_through(3) - pages_through(2)) * kPageBytes);
  // A region handed out again, below the populated pages, names nothing.
  FreeRegion(klass, regions[0]);
  FreshPages again;
  ASSERT_EQ(BinAllocate(&bins_[klass], klass, &heap_, &regions[0], 1, &again), 1u);
  EXPECT_EQ(regions[0], start);
  EXPECT_EQ(again.count, 0u);
  for (int i = 0; i < 3; ++i) FreeRegion(klass, regions[i]);

  // The run's pages are dirty now: a new run on them names none.
  FreshPages dirty;
  ASSERT_EQ(BinAllocate(&bins_[klass], klass, &heap_, regions.data(), 1, &dirty), 1u);
  EXPECT_EQ(regions[0], start);
  EXPECT_EQ(dirty.count, 0u);
  FreeRegion(klass, regions[0]);

  // Regions of two pages or more: their middle pages hold no region's start, none named.
  uint32_t big = kSmallClassCount - 1;
  ASSERT_GE(kSmallClasses[big].size_bytes, 2 * kPageBytes);
  FreshPages none;
  void* block = nullptr;
  ASSERT_EQ(BinAllocate(&bins_[big], big, &heap_, &block, 1, &none), 1u);
  EXPECT_EQ(none.count, 0u);
  FreeRegion(big, block);
}

// A range shorter than kPopulateMinPages is left to fault in when written (a call for it costs
// more than its faults); one of kPopulateMinPages is populated whole, in one call.
TEST_F(BinTest, OnlyRangesOfTheMinimumLengthArePopulated) {
  constexpr size_t kPages = 4 * kPopulateMinPages;
  auto* bytes = static_cast<char*>(OsMap(kPages * kPageBytes, kPageBytes));
  ASSERT_NE(bytes, nullptr);
  char* longer = bytes + 2 * kPopulateMinPages * kPageBytes;
  FreshPages fresh;
  fresh.Add(bytes, (kPopulateMinPages - 1) * kPageBytes);
  fresh.Add(longer, kPopulateMinPages * kPageBytes);
  ASSERT_EQ(fresh.count, 2u);
  const uint64_t calls = OsPopulateCallCount();
  fresh.Populate();
  EXPECT_EQ(OsPopulateCallCount(), calls + 1);
  EXPECT_EQ(OsResidentPages(bytes, kPopulateMinPages), 0u);
  EXPECT_EQ(OsResidentPages(longer, kPages - 2 * kPopulateMinPages), kPopulateMinPages);
  OsUnmap(bytes, kPages * kPageBytes);
}

TEST_F(BinTest, AFillOverAdjacentFreshRunsNamesOneRange) {
  // 2 KiB regions: two to a one-page run, so a fill of 8 takes 4 runs, cut one after another
  // from the clean pages of a new chunk.
  const uint32_t klass = SmallClassOf(2048);
  ASSERT_EQ(kSmallClasses[klass].run_pages, 1u);
  ASSERT_EQ(kSmallClasses[klass].region_count, 2u);
  void* regions[8];
  FreshPages fresh;
  ASSERT_EQ(BinAllocate(&bins_[klass], klass, &heap_, regions, 8, &fresh), 8u);
  auto* low = static_cast<char*>(regions[0]);
  for (void* region : regions) low = std::min(low, static_cast<char*>(region));
  ASSERT_EQ(fresh.count, 1u) << "adjacent runs merge into one range";
  EXPECT_EQ(fresh.ranges[0].start, low);
  EXPECT_EQ(fresh.ranges[0].bytes, 4 * kPageBytes);
  fresh.Populate();
  EXPECT_EQ(OsResidentPages(low, 4), 4u);
  for (void* region : regions) FreeRegion(klass, region);

  // Ranges that do not touch stay apart, and past kMaxRanges the pages are left to fault in.
  FreshPages apart;
  char* base = low;
  for (uint32_t i = 0; i <= FreshPages::kMaxRanges; ++i) {
    apart.Add(base + size_t{2} * i * kPageBytes, kPageBytes);
  }
  ASSERT_EQ(apart.count, FreshPages::kMaxRanges);
  for (uint32_t i = 0; i < FreshPages::kMaxRanges; ++i) {
    EXPECT_EQ(apart.ranges[i].start, base + size_t{2} * i * kPageBytes);
    EXPECT_EQ(apart.ranges[i].bytes, kPageBytes);
  }
  // A range that follows the last one extends it even when the ranges are all taken.
  apart.Add(apart.ranges[FreshPages::kMaxRanges - 1].start + kPageBytes, kPageBytes);
  EXPECT_EQ(apart.count, FreshPages::kMaxRanges);
  EXPECT_EQ(apart.ranges[FreshPages::kMaxRanges - 1].bytes, 2 * kPageBytes);
}

using BinDeathTest = BinTest;

TEST_F(BinDeathTest, ABatchCatchesADoubleFreeAndAnInteriorPointer) {
  constexpr uint32_t kKlass = 3;
  void* regions[3];
  Allocate(kKlass, regions, 3);
  void* twice[2] = {regions[0], regions[0]};
  EXPECT_DEATH(BinFreeBatch(bins_, kKlass, &heap_, twice, 2, 1),
               "lethe: free\\(\\): double free 0x[0-9a-f]+");
  void* interior = static_cast<char*>(regions[1]) + 8;
  EXPECT_DEATH(BinFreeBatch(bins_, kKlass, &heap_, &interior, 1, 1),
               "lethe: free\\(\\): invalid pointer 0x[0-9a-f]+");
  // After a region of the same run, whose page-map entry the batch then does not read again.
  void* after_its_run[2] = {regions[0], interior};
  EXPECT_DEATH(BinFreeBatch(bins_, kKlass, &heap_, after_its_run, 2, 1),
               "lethe: free\\(\\): invalid pointer 0x[0-9a-f]+");
  BinFreeBatch(bins_, kKlass, &heap_, regions, 3, 1);
}

TEST_F(BinDeathTest, ABatchThatEmptiesARunCatchesAFreeIntoItsPagesAfter) {
  // 2 KiB regions, two to a one-page run: once the batch has freed both regions of the first run
  // and moved to the second, the first is back in the page heap, and a double free of its first
  // region finds its page no longer a run.
  const uint32_t klass = SmallClassOf(2048);
  ASSERT_EQ(kSmallClasses[klass].region_count, 2u);
  void* regions[4];
  ASSERT_EQ(Allocate(klass, regions, 4), 4u);
  ASSERT_EQ(ChunkOf(regions[0]), ChunkOf(regions[1]));
  ASSERT_EQ(PageOf(ChunkOf(regions[0]), regions[0]), PageOf(ChunkOf(regions[1]), regions[1]));
  ASSERT_NE(PageOf(ChunkOf(regions[0]), regions[0]), PageOf(ChunkOf(regions[2]), regions[2]));
  void* batch[4] = {regions[0], regions[1], regions[2], regions[0]};
  EXPECT_DEATH(BinFreeBatch(bins_, klass, &heap_, batch, 4, 1),
               "lethe: free\\(\\): invalid pointer 0x[0-9a-f]+");
  // Still in the run (the batch settles a run's count when it leaves it): the bitmap's bit.
  void* in_a_row[3] = {regions[0], regions[1], regions[0]};
  EXPECT_DEATH(BinFreeBatch(bins_, klass, &heap_, in_a_row, 3, 1),
               "lethe: free\\(\\): double free 0x[0-9a-f]+");
  EXPECT_EQ(BinFreeBatch(bins_, klass, &heap_, regions, 4, 1), 4u * 2048);
  EXPECT_EQ(bins_[klass].run_count, 0u);
  EXPECT_EQ(heap_.active_pages(), 0u);
}

TEST_F(BinDeathTest, ABatchRefusesARegionWhosePageIsNoLongerASmallRun) {
  constexpr uint32_t kKlass = 3;
  void* region = nullptr;
  Allocate(kKlass, &region, 1);
  BinFreeBatch(bins_, kKlass, &heap_, &region, 1, 1);  // the run is empty: back to the heap
  EXPECT_DEATH(BinFreeBatch(bins_, kKlass, &heap_, &region, 1, 1),
               "lethe: free\\(\\): invalid pointer 0x[0-9a-f]+");
}

TEST_F(BinDeathTest, DoubleFreeIsCaughtByTheBitmap) {
  void* regions[2];
  Allocate(3, regions, 2);
  FreeRegion(3, regions[0]);
  EXPECT_DEATH(FreeRegion(3, regions[0]), "lethe: free\\(\\): double free 0x[0-9a-f]+");
  FreeRegion(3, regions[1]);
}

TEST_F(BinDeathTest, PointerInsideARegionIsInvalid) {
  void* region = nullptr;
  Allocate(5, &region, 1);
  EXPECT_DEATH(FreeRegion(5, static_cast<char*>(region) + 8),
               "lethe: free\\(\\): invalid pointer 0x[0-9a-f]+");
  FreeRegion(5, region);
}

}  // namespace
}  // namespace lethe::internal
