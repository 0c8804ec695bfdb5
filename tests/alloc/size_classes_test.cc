// Size classes: every request maps to the smallest class that holds it, the spacing and waste
// bounds hold, the run layouts fit, and lethe_good_size/lethe_usable_size agree with the table.
#include "size_classes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "lethe/alloc.h"

namespace lethe::internal {
namespace {

// The class list rebuilt from its definition (tiny, quantum steps, then 8 per doubling).
std::vector<size_t> ExpectedClasses() {
  std::vector<size_t> classes = {8};
  for (size_t size = 16; size <= 256; size += 16) classes.push_back(size);
  for (size_t base = 256; base < kSmallMaxBytes; base *= 2) {
    for (size_t step = 1; step <= 8 && base + step * base / 8 <= kSmallMaxBytes; ++step) {
      classes.push_back(base + step * base / 8);
    }
  }
  return classes;
}

// The large class of a request: the page count rounded up to the next of 4 steps per doubling
// (16, 20, 24, 28, 32, 40, ... KiB), at most the usable pages of a chunk.
size_t ExpectedLargeClass(size_t size) {
  size_t pages = (size + kPageBytes - 1) / kPageBytes;
  for (size_t base = 4;; base *= 2) {
    for (size_t step = 0; step < 4; ++step) {
      size_t candidate = base + step * base / 4;
      if (candidate >= pages) return std::min(candidate, kChunkUsablePages) * kPageBytes;
    }
  }
}

TEST(SizeClasses, TableMatchesTheDefinition) {
  std::vector<size_t> expected = ExpectedClasses();
  ASSERT_EQ(expected.size(), kSmallClassCount);
  for (size_t i = 0; i < kSmallClassCount; ++i) EXPECT_EQ(kSmallSizes[i], expected[i]) << i;
}

TEST(SizeClasses, EverySizeUpTo64KiBMapsToTheSmallestClassThatHoldsIt) {
  std::vector<size_t> classes = ExpectedClasses();
  for (size_t size = 1; size <= 64 * 1024; ++size) {
    size_t expected = 0;
    for (size_t candidate : classes) {
      if (candidate >= size) {
        expected = candidate;
        break;
      }
    }
    if (expected == 0) expected = ExpectedLargeClass(size);
    ASSERT_EQ(GoodSize(size), expected) << size;
    ASSERT_EQ(lethe_good_size(size), expected) << size;
  }
}

TEST(SizeClasses, UsableSizeOfABlockIsTheGoodSizeOfItsRequest) {
  for (size_t size = 1; size <= 64 * 1024; size += (size < 4096 ? 1 : 61)) {
    void* block = lethe_malloc(size);
    ASSERT_NE(block, nullptr);
    ASSERT_EQ(lethe_usable_size(block), lethe_good_size(size)) << size;
    lethe_free(block);
  }
  void* huge = lethe_malloc(3 * kChunkBytes + 5);
  EXPECT_EQ(lethe_usable_size(huge), lethe_good_size(3 * kChunkBytes + 5));
  lethe_free(huge);
}

TEST(SizeClasses, WasteIsAtMostAnEighthOfASmallRequestAndAQuarterOfALargeOneOr15Bytes) {
  for (size_t size = 1; size <= kLargeMaxBytes; ++size) {
    size_t waste = GoodSize(size) - size;
    size_t bound = size <= kSmallMaxBytes ? size / 8 : size / 4;
    ASSERT_LE(waste, bound > 15 ? bound : 15) << size;
  }
}

TEST(SizeClasses, AtMostEightClassesPerDoublingAboveTheQuantumSteps) {
  EXPECT_EQ(kQuantumMaxBytes, 256u);
  for (size_t base = kQuantumMaxBytes; base < kSmallMaxBytes; base *= 2) {
    int count = 0;
    for (size_t size : kSmallSizes) count += size > base && size <= 2 * base;
    EXPECT_LE(count, 8) << base;
  }
}

// A small block that realloc grows past its class moves to SmallGrowthBytes: a class of its own
// from 129 B to a page (so that the move lands on a block of exactly that size), at least a
// quarter larger than the block it leaves while that stays within a page, and at most a grid
// step (a quarter) above what it must hold.
TEST(SizeClasses, AGrownBlockMovesToAClassAQuarterLargerOnTheGrid) {
  for (size_t size = 2; size <= kSmallMaxBytes; ++size) {
    const size_t old_bytes = GoodSize(size - 1);
    if (old_bytes >= size) continue;  // size - 1 is its class's last byte: size passes it
    const size_t grown = SmallGrowthBytes(size, old_bytes);
    const size_t step = old_bytes + old_bytes / 4;
    const size_t wanted = step <= kPageBytes && step > size ? step : size;
    ASSERT_GE(grown, wanted) << size;
    ASSERT_LE(GoodSize(grown) - wanted, wanted <= 128 ? 15 : wanted / 4) << size;
    if (size > kPageBytes) {
      ASSERT_EQ(grown, size) << size;  // multi-page runs: the request's own class
    }
    if (grown > 128 && grown <= kPageBytes) {
      ASSERT_EQ(GoodSize(grown), grown) << size;
    }
  }
  EXPECT_EQ(SmallGrowthBytes(kSmallMaxBytes + 1, kSmallMaxBytes), kSmallMaxBytes + 1);
}

// Growth never moves a block back: every size from the one that made it move up to the class it
// moved to leaves it in place (its class, or SmallReallocStays); a size well under it, or over
// it, does not.
TEST(SizeClasses, AGrownBlockStaysForEverySizeItGrowsThrough) {
  for (size_t size = 2; size <= kSmallMaxBytes; ++size) {
    const size_t old_bytes = GoodSize(size - 1);
    if (old_bytes >= size) continue;
    const size_t usable = GoodSize(SmallGrowthBytes(size, old_bytes));
    for (size_t next = size; next <= usable; ++next) {
      ASSERT_TRUE(SmallClassOf(next) == SmallClassOf(usable) || SmallReallocStays(next, usable))
          << size << " -> " << next << " in " << usable;
    }
  }
  EXPECT_TRUE(SmallReallocStays(321, 448));
  EXPECT_FALSE(SmallReallocStays(300, 448));  // a quarter more is 375: 384 on the grid
  EXPECT_FALSE(SmallReallocStays(449, 448));  // more than it holds
}

// Grown a byte at a time from 129 B to a page, a block moves at most 3 times per doubling (4 on
// the grid alone, 8 on the classes).
TEST(SizeClasses, ABlockGrownByBytesMovesAtMostThreeTimesPerDoubling) {
  size_t usable = GoodSize(129);
  int moves = 0;
  for (size_t size = 130; size <= kPageBytes; ++size) {
    if (SmallClassOf(size) == SmallClassOf(usable) || SmallReallocStays(size, usable)) continue;
    usable = GoodSize(SmallGrowthBytes(size, usable));
    ++moves;
  }
  EXPECT_EQ(usable, kPageBytes);
  EXPECT_LE(moves, 3 * 5);
  EXPECT_GE(moves, 5);  // at most a doubling per move
}

// aligned_alloc's fast path (SmallAlignedBytes): for an alignment up to a page, the class of the
// request rounded up to the alignment is the smallest class that holds the request and is a
// multiple of the alignment, and where the rounded request is no small size, no small class is
// both.
TEST(SizeClasses, AlignedClassIsTheRoundedRequestsClass) {
  for (size_t alignment = 16; alignment <= kPageBytes; alignment *= 2) {
    for (size_t size = 1; size <= kSmallMaxBytes; ++size) {
      size_t scanned = 0;  // the smallest aligned class that holds `size`, by a scan
      for (uint32_t klass : kSmallSizes) {
        if (klass >= size && klass % alignment == 0) {
          scanned = klass;
          break;
        }
      }
      size_t bytes = SmallAlignedBytes(size, alignment);
      size_t found = bytes != 0 ? kSmallSizes[SmallClassOf(bytes)] : 0;
      ASSERT_EQ(found, scanned) << alignment << " " << size;
    }
  }
}

TEST(SizeClasses, RunLayoutsHoldTheirRegionsAndHeader) {
  int in_chunk = 0;
  for (const SmallClass& layout : kSmallClasses) {
    size_t run_bytes = size_t{layout.run_pages} * kPageBytes;
    EXPECT_GE(layout.region_count, 1u) << layout.size_bytes;
    EXPECT_LE(layout.region_count, kMaxRunRegions);
    if (layout.header_in_chunk()) {
      // The header and bitmap fit the run's node slots in the chunk header; regions fill the run.
      ++in_chunk;
      EXPECT_LE(RunHeaderBytes(layout.region_count), layout.run_pages * kPageNodeBytes);
      EXPECT_LE(size_t{layout.region_count} * layout.size_bytes, run_bytes);
      EXPECT_EQ(layout.region_count,
                std::min<size_t>(run_bytes / layout.size_bytes, kMaxRunRegions));
    } else {
      EXPECT_GT(RunHeaderBytes(run_bytes / layout.size_bytes), layout.run_pages * kPageNodeBytes);
      EXPECT_LE(size_t{layout.region_count} * layout.size_bytes, layout.header_offset);
      EXPECT_EQ(layout.header_offset + RunHeaderBytes(layout.region_count), run_bytes);
      EXPECT_EQ(layout.header_offset % 8, 0u);
    }
    // No run wastes more than an eighth of its pages.
    EXPECT_LE((run_bytes - size_t{layout.region_count} * layout.size_bytes) * 8, run_bytes)
        << layout.size_bytes;
  }
  EXPECT_EQ(in_chunk, static_cast<int>(kSmallClassCount) - 2) << "all but the 8- and 16-byte runs";
}

// A run with a tail has no exact fit at its length or shorter. The classes of 4 KiB and more
// waste at most a sixteenth of their run: most fit exactly, the others take the waste rule's
// shorter run (7680 B: one region in 2 pages, not 8 in 15 pages that empty last).
TEST(SizeClasses, RunsAreExactFitsWhereOneIsNoLongerThanTheWasteRulesRun) {
  for (const SmallClass& layout : kSmallClasses) {
    size_t used = size_t{layout.region_count} * layout.size_bytes;
    if (used == size_t{layout.run_pages} * kPageBytes || !layout.header_in_chunk()) continue;
    for (uint32_t pages = 1; pages <= layout.run_pages; ++pages) {
      EXPECT_NE((pages * kPageBytes) % layout.size_bytes, 0u)
          << layout.size_bytes << " B fits " << pages << " pages exactly";
    }
  }
  for (const SmallClass& layout : kSmallClasses) {
    if (layout.size_bytes < 4096) continue;
    size_t run_bytes = size_t{layout.run_pages} * kPageBytes;
    EXPECT_LE((run_bytes - size_t{layout.region_count} * layout.size_bytes) * 16, run_bytes)
        << layout.size_bytes;
  }
  EXPECT_EQ(kSmallClasses[SmallClassOf(5120)].run_pages, 5u);
  EXPECT_EQ(kSmallClasses[SmallClassOf(8192)].run_pages, 2u);
  EXPECT_EQ(kSmallClasses[SmallClassOf(48)].run_pages, 1u);  // not 3: see ChooseRun
}

TEST(SizeClasses, RegionCheckAcceptsExactlyTheRegionStartsOfARun) {
  for (size_t klass = 0; klass < kSmallClassCount; ++klass) {
    const SmallClass& layout = kSmallClasses[klass];
    for (uint32_t offset = 0; offset < layout.run_pages * kPageBytes; ++offset) {
      bool start = offset % layout.size_bytes == 0 &&
                   offset / layout.size_bytes < layout.region_count;
      ASSERT_EQ(IsRegionStart(offset, klass), start) << layout.size_bytes << " " << offset;
      if (start) {
        ASSERT_EQ(RegionAt(offset, klass), offset / layout.size_bytes);
      }
    }
  }
}

TEST(SizeClasses, LargeClassesAreGeometricAndHugeBeyondAChunk) {
  EXPECT_EQ(GoodSize(kSmallMaxBytes + 1), 4 * kPageBytes);
  EXPECT_EQ(GoodSize(16 * 1024 + 1), 20 * 1024u);
  EXPECT_EQ(GoodSize(33 * 1024), 40 * 1024u);
  EXPECT_EQ(GoodSize(600 * 1024), 640 * 1024u);
  EXPECT_EQ(GoodSize(897 * 1024), kLargeMaxBytes);
  EXPECT_EQ(GoodSize(kLargeMaxBytes), kLargeMaxBytes);
  // Every large request up to a chunk: the expected class, and at most 4 classes per doubling.
  std::vector<size_t> classes;
  for (size_t size = kSmallMaxBytes + 1; size <= kLargeMaxBytes; size += 512) {
    ASSERT_EQ(GoodSize(size), ExpectedLargeClass(size)) << size;
    if (classes.empty() || classes.back() != GoodSize(size)) classes.push_back(GoodSize(size));
  }
  EXPECT_EQ(classes.size(), 25u) << "16 KiB .. 896 KiB, 4 per doubling, and a chunk's worth";
  for (size_t base = 16 * 1024; base < kLargeMaxBytes; base *= 2) {
    EXPECT_LE(std::count_if(classes.begin(), classes.end(),
                            [base](size_t c) { return c > base && c <= 2 * base; }),
              4)
        << base;
  }
  EXPECT_EQ(GoodSize(kChunkBytes + 1), kChunkBytes + kPageBytes);
  EXPECT_EQ(GoodSize(SIZE_MAX), 0u);
}

}  // namespace
}  // namespace lethe::internal
