// Huge regions (alloc/huge_region.h) through the allocator's API: freed blocks reused at the same
// address with their pages resident (mincore and the fault count prove nothing was faulted in
// again), coalescing, growth and shrinking in place, calloc over dirty pages, the dirty limit,
// decay and purges, the fallbacks to mappings of their own, and the full purge that makes room
// when span records run short.
#include <errno.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "decay.h"
#include "huge.h"
#include "huge_region.h"
#include "lethe/alloc.h"
#include "options.h"
#include "os.h"
#include "size_classes.h"

namespace lethe::internal {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Pages of [block, block + bytes) that are resident.
size_t ResidentPages(const void* block, size_t bytes) {
  std::vector<unsigned char> vector(bytes / kPageBytes);
  EXPECT_EQ(mincore(const_cast<void*>(block), bytes, vector.data()), 0);
  size_t resident = 0;
  for (unsigned char page : vector) resident += page & 1;
  return resident;
}

bool Mapped(const void* address) {
  unsigned char resident = 0;
  return mincore(const_cast<void*>(address), kPageBytes, &resident) == 0;
}

// Under ThreadSanitizer (tsan-alloc preset) its shadow pages fault too: the fault counts are not
// the allocator's there, and only the rest of each test holds.
#if defined(__SANITIZE_THREAD__)
constexpr bool kFaultsAreTheAllocators = false;
#else
constexpr bool kFaultsAreTheAllocators = true;
#endif

long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

unsigned char* FilledBlock(size_t bytes, unsigned char value) {
  auto* block = static_cast<unsigned char*>(lethe_malloc(bytes));
  EXPECT_NE(block, nullptr);
  if (block != nullptr) std::memset(block, value, bytes);
  return block;
}

bool AllBytesAre(const unsigned char* block, size_t bytes, unsigned char value) {
  for (size_t i = 0; i < bytes; ++i) {
    if (block[i] != value) return false;
  }
  return true;
}

// TheDirtyLimitBoundsWhatFreedBlocksKeepResidentAfterTheGrace needs the purge thread running
// from SetUp's frees: it starts at the first release here, not once releases have gone on for
// decay_ms / 16 (decay.h).
const bool kPurgerStartsAtOnce = (SetPurgerStartDelayForTesting(0), true);

class HugeRegion : public ::testing::Test {
 protected:
  void SetUp() override {
    // Freed pages stay dirty once kHugeWarmupBlocks were asked for.
    for (uint64_t i = 0; i < kHugeWarmupBlocks; ++i) lethe_free(lethe_malloc(2 * kMiB));
    lethe_purge();  // nothing dirty, and no region left: the next block starts a fresh one
    before_ = GetHugeRegionStats();
    ASSERT_EQ(before_.dirty_bytes, 0u);
    ASSERT_EQ(before_.regions, 0u);
  }
  void TearDown() override {
    OsFailMapsForTesting(0);
    HugeRegionLimitRecordsForTesting(0);
    HugeRegionValidate();
    lethe_purge();
  }
  HugeRegionStats before_{};
};

TEST_F(HugeRegion, AFreedBlocksPagesAreCutAgainInPlaceWithoutFaults) {
  unsigned char* first = FilledBlock(3 * kMiB, 0x33);
  lethe_free(first);
  EXPECT_EQ(GetHugeRegionStats().dirty_bytes, 3 * kMiB);
  EXPECT_EQ(ResidentPages(first, 3 * kMiB), 3 * kMiB / kPageBytes);
  long faults = MinorFaults();
  auto* again = static_cast<unsigned char*>(lethe_malloc(5 * kMiB / 2));
  ASSERT_EQ(again, first);
  EXPECT_TRUE(AllBytesAre(again, 5 * kMiB / 2, 0x33));  // the same pages, old data and all
  std::memset(again, 0x44, 5 * kMiB / 2);
  if (kFaultsAreTheAllocators) {  // 640 pages written, none faulted in
    EXPECT_LT(MinorFaults() - faults, 16);
  }
  HugeRegionStats cut = GetHugeRegionStats();
  EXPECT_EQ(cut.dirty_bytes, kMiB / 2);
  EXPECT_EQ(cut.reused_bytes, before_.reused_bytes + 5 * kMiB / 2);
  lethe_free(again);
  // Merged back with the tail it was cut from: one dirty span, one clean span after it.
  HugeRegionStats merged = GetHugeRegionStats();
  EXPECT_EQ(merged.dirty_bytes, 3 * kMiB);
  EXPECT_EQ(merged.free_spans, 2u);
  HugeRegionValidate();
}

TEST_F(HugeRegion, NeighboursCoalesceIntoOneSpanThatALargerBlockTakesWhole) {
  unsigned char* a = FilledBlock(2 * kMiB, 1);
  unsigned char* b = FilledBlock(2 * kMiB, 2);
  unsigned char* c = FilledBlock(2 * kMiB, 3);
  ASSERT_EQ(b, a + 2 * kMiB);
  ASSERT_EQ(c, b + 2 * kMiB);
  lethe_free(b);
  lethe_free(a);
  EXPECT_EQ(GetHugeRegionStats().free_spans, 2u);  // a+b dirty; the clean rest after c
  auto* both = static_cast<unsigned char*>(lethe_malloc(4 * kMiB));
  EXPECT_EQ(both, a);
  EXPECT_EQ(GetHugeRegionStats().dirty_bytes, 0u);
  EXPECT_TRUE(AllBytesAre(c, 2 * kMiB, 3));
  lethe_free(both);
  lethe_free(c);
  HugeRegionValidate();
}

// A dirty span too short for the request is completed by the clean pages after it; calloc zeroes
// the dirty part only, and the clean part stays untouched until written.
TEST_F(HugeRegion, ADirtySpanCompletedByCleanPagesIsZeroedByCallocWhereItWasDirtyOnly) {
  unsigned char* first = FilledBlock(2 * kMiB, 0x5a);
  lethe_free(first);
  auto* zeroed = static_cast<unsigned char*>(lethe_calloc(1, 3 * kMiB));
  ASSERT_EQ(zeroed, first);
  EXPECT_EQ(ResidentPages(zeroed + 2 * kMiB, kMiB), 0u);
  EXPECT_TRUE(AllBytesAre(zeroed, 3 * kMiB, 0));
  EXPECT_EQ(GetHugeRegionStats().reused_bytes, before_.reused_bytes + 2 * kMiB);
  lethe_free(zeroed);
}

TEST_F(HugeRegion, ABlockGrowsInPlaceIntoFreePagesAndMovesOnceWhenBlocked) {
  unsigned char* block = FilledBlock(2 * kMiB, 7);
  auto* grown = static_cast<unsigned char*>(lethe_realloc(block, 5 * kMiB));
  ASSERT_EQ(grown, block);
  EXPECT_EQ(lethe_usable_size(grown), 5 * kMiB);
  EXPECT_EQ(GetHugeRegionStats().grown_in_place, before_.grown_in_place + 1);
  EXPECT_TRUE(AllBytesAre(grown, 2 * kMiB, 7));
  std::memset(grown, 8, 5 * kMiB);
  unsigned char* after = FilledBlock(2 * kMiB, 9);
  ASSERT_EQ(after, grown + 5 * kMiB);
  auto* moved = static_cast<unsigned char*>(lethe_realloc(grown, 8 * kMiB));
  ASSERT_NE(moved, nullptr);
  EXPECT_NE(moved, grown);
  EXPECT_TRUE(AllBytesAre(moved, 5 * kMiB, 8));
  EXPECT_EQ(GetHugeRegionStats().dirty_bytes, 5 * kMiB);  // the old place, free and resident
  EXPECT_TRUE(AllBytesAre(after, 2 * kMiB, 9));
  lethe_free(moved);
  lethe_free(after);
  HugeRegionValidate();
}

// HugeRegionLiveBytes (realloc's and malloc_usable_size's lock-free path) reads a block's length
// from its first page's map entry: right after every change, and nothing for any other address.
TEST_F(HugeRegion, LiveBytesNamesOnlyALiveBlocksFirstPageAndFollowsItsChanges) {
  unsigned char* before = FilledBlock(2 * kMiB, 1);
  unsigned char* block = FilledBlock(3 * kMiB, 2);
  ASSERT_EQ(block, before + 2 * kMiB);
  EXPECT_EQ(HugeRegionLiveBytes(block), 3 * kMiB);
  EXPECT_EQ(HugeRegionLiveBytes(block + kPageBytes), 0u) << "inside the block";
  EXPECT_EQ(HugeRegionLiveBytes(block + 16), 0u) << "not page-aligned";
  int local = 0;
  EXPECT_EQ(HugeRegionLiveBytes(&local), 0u) << "in no region";
  ASSERT_EQ(lethe_realloc(block, 4 * kMiB), block);  // grown in place
  EXPECT_EQ(HugeRegionLiveBytes(block), 4 * kMiB);
  ASSERT_EQ(lethe_realloc(block, kMiB + kPageBytes), block);  // shrunk in place
  EXPECT_EQ(HugeRegionLiveBytes(block), kMiB + kPageBytes);
  EXPECT_EQ(HugeRegionLiveBytes(block + kMiB + kPageBytes), 0u) << "the freed tail";
  // Freed after the block before it: its first page ends up inside one free span.
  lethe_free(before);
  lethe_free(block);
  EXPECT_EQ(HugeRegionLiveBytes(block), 0u);
  EXPECT_EQ(HugeRegionLiveBytes(before), 0u);
  HugeRegionValidate();
  // realloc of a freed block's address is caught, though its old length is still in the pages.
  EXPECT_DEATH(lethe_realloc(block, kMiB + kPageBytes), "lethe: realloc\\(\\): invalid pointer");
}

// A region is reserved at its own alignment, so the lock-free lookup finds it from the pointer's
// aligned range; once unmapped, its range names no region, and addresses past the 47-bit user
// space name none either.
TEST_F(HugeRegion, ARegionIsFoundFromItsAlignedRangeAndForgottenOnceUnmapped) {
  unsigned char* block = FilledBlock(2 * kMiB, 3);
  ASSERT_EQ(GetHugeRegionStats().regions, 1u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % kHugeRegionBytes, 0u) << "cut at its start";
  EXPECT_TRUE(HugeRegionContains(block + kHugeRegionBytes - 1));
  EXPECT_FALSE(HugeRegionContains(block + kHugeRegionBytes));
  EXPECT_FALSE(HugeRegionContains(block - 1));
  EXPECT_EQ(HugeRegionLiveBytes(block), 2 * kMiB);
  // Its side map, and at least the page of the range table its entry lies in.
  EXPECT_GE(GetHugeRegionStats().metadata_bytes, size_t{kHugeRegionPages} * 4 + kPageBytes);
  EXPECT_EQ(HugeRegionLiveBytes(reinterpret_cast<void*>(uintptr_t{1} << 47)), 0u);
  EXPECT_EQ(HugeRegionLiveBytes(reinterpret_cast<void*>(~uintptr_t{0} << 12)), 0u);
  lethe_free(block);
  HugeRegionPurge(UINT64_MAX, 0);
  ASSERT_EQ(GetHugeRegionStats().regions, 0u);
  EXPECT_FALSE(HugeRegionContains(block));
  EXPECT_EQ(HugeRegionLiveBytes(block), 0u);
  EXPECT_FALSE(Mapped(block));
}

TEST_F(HugeRegion, ABlockShrinksInPlaceAndItsTailServesTheNextBlock) {
  unsigned char* block = FilledBlock(6 * kMiB, 4);
  auto* shrunk = static_cast<unsigned char*>(lethe_realloc(block, 2 * kMiB));
  ASSERT_EQ(shrunk, block);
  EXPECT_EQ(lethe_usable_size(shrunk), 2 * kMiB);
  EXPECT_EQ(GetHugeRegionStats().dirty_bytes, 4 * kMiB);
  auto* tail = static_cast<unsigned char*>(lethe_malloc(3 * kMiB));
  EXPECT_EQ(tail, block + 2 * kMiB);
  EXPECT_TRUE(AllBytesAre(shrunk, 2 * kMiB, 4));
  lethe_free(tail);
  lethe_free(shrunk);
}

TEST_F(HugeRegion, DecayPurgesSpansOlderThanTheDecayTimeAndUnmapsAnEmptyRegion) {
  unsigned char* kept = FilledBlock(2 * kMiB, 1);
  lethe_free(kept);
  uint64_t freed = DecayNowNs();
  constexpr uint64_t kDecay = 10'000'000'000ull;
  uint64_t deadline = HugeRegionPurge(freed, kDecay);
  EXPECT_GE(deadline, freed + kDecay - 1'000'000'000ull);
  EXPECT_NE(deadline, UINT64_MAX);
  EXPECT_EQ(GetHugeRegionStats().dirty_bytes, 2 * kMiB);
  EXPECT_EQ(ResidentPages(kept, 2 * kMiB), 2 * kMiB / kPageBytes);
  EXPECT_EQ(HugeRegionPurge(freed + 2 * kDecay, kDecay), UINT64_MAX);
  EXPECT_EQ(GetHugeRegionStats().dirty_bytes, 0u);
  // Nothing live was left in the region: it is gone, address space and all.
  EXPECT_EQ(GetHugeRegionStats().regions, 0u);
  EXPECT_FALSE(Mapped(kept));
}

// A block over kHugeRegionKeepMaxBytes still comes from a region, but its pages go back at once
// when it is freed: a program freeing 16-32 MiB buffers must not exit with them resident.
TEST_F(HugeRegion, ABlockOverTheKeepBoundIsCutFromARegionButPurgedWhenFreed) {
  constexpr size_t kBytes = kHugeRegionKeepMaxBytes + 4 * kMiB;
  static_assert(kBytes <= kHugeRegionMaxBlockBytes);
  unsigned char* live = FilledBlock(2 * kMiB, 1);  // keeps the region mapped
  unsigned char* big = FilledBlock(kBytes, 2);
  EXPECT_TRUE(HugeRegionContains(big));
  lethe_free(big);
  EXPECT_EQ(GetHugeRegionStats().dirty_bytes, 0u);
  EXPECT_EQ(ResidentPages(big, kBytes), 0u);
  // Under the bound, a freed block stays dirty for the next one.
  unsigned char* small = FilledBlock(kHugeRegionKeepMaxBytes, 3);
  lethe_free(small);
  EXPECT_EQ(GetHugeRegionStats().dirty_bytes, kHugeRegionKeepMaxBytes);
  lethe_free(live);
}

// ...unless more pages are live than would be dirty with it: with big buffers live and replaced
// (bigbuf large), a freed one is the next one's pages, and no page of it faults in again.
TEST_F(HugeRegion, ABlockOverTheKeepBoundStaysDirtyWhileTheLiveBlocksOutnumberTheDirtyPages) {
  constexpr size_t kBytes = kHugeRegionKeepMaxBytes + 2 * kMiB;
  static_assert(2 * kBytes <= kHugeRegionBytes && kBytes <= kHugeRegionMaxBlockBytes);
  unsigned char* first = FilledBlock(kBytes, 1);
  unsigned char* second = FilledBlock(kBytes, 2);
  ASSERT_TRUE(HugeRegionContains(first) && HugeRegionContains(second));
  lethe_free(first);  // kBytes dirty against kBytes live: kept
  EXPECT_EQ(GetHugeRegionStats().dirty_bytes, kBytes);
  long faults = MinorFaults();
  unsigned char* again = FilledBlock(kBytes, 3);
  EXPECT_EQ(again, first);
  if (kFaultsAreTheAllocators) {
    EXPECT_LT(MinorFaults() - faults, 16);
  }
  EXPECT_EQ(GetHugeRegionStats().dirty_bytes, 0u);
  // The last one freed, with nothing else live, is purged at once.
  lethe_free(again);   // kBytes dirty against kBytes live: kept
  lethe_free(second);  // 2 * kBytes dirty against none live: purged
  EXPECT_EQ(GetHugeRegionStats().dirty_bytes, kBytes);
  EXPECT_EQ(ResidentPages(second, kBytes), 0u);
}

TEST_F(HugeRegion, APurgeKeepsARegionWithALiveBlockAndReturnsTheRest) {
  unsigned char* live = FilledBlock(2 * kMiB, 1);
  unsigned char* freed = FilledBlock(3 * kMiB, 2);
  lethe_free(freed);
  lethe_stats_t kept;
  lethe_stats(&kept);
  EXPECT_GE(kept.dirty_bytes, 3 * kMiB);
  lethe_purge();
  EXPECT_EQ(GetHugeRegionStats().dirty_bytes, 0u);
  EXPECT_EQ(GetHugeRegionStats().regions, 1u);
  EXPECT_EQ(ResidentPages(freed, 3 * kMiB), 0u);
  EXPECT_TRUE(AllBytesAre(live, 2 * kMiB, 1));
  lethe_free(live);
}

// huge_cache_kb (128 MiB by default) bounds the dirty pages: past it, the oldest spans are purged
// (which ones is not checked: freed in the same clock tick, two spans are as old), once they have
// been dirty for the purge thread's excess grace (decay.h); with no grace, at once.
TEST_F(HugeRegion, TheDirtyLimitBoundsWhatFreedBlocksKeepResidentAfterTheGrace) {
  ASSERT_TRUE(kPurgerStartsAtOnce);
  ASSERT_TRUE(PurgerRunning());  // SetUp's frees started it: the free path leaves the excess
  const uint64_t decay_ms = g_options.decay_ms;
  // the thread's grace (225 s) and decay outlast the test
  SetOptionForTesting(&g_options.decay_ms, uint64_t{3'600'000});
  const uint64_t limit = g_options.huge_cache_kb << 10;
  const int count = static_cast<int>(limit / (14 * kMiB)) + 2;  // past the limit
  std::vector<unsigned char*> blocks;
  for (int i = 0; i < count; ++i) blocks.push_back(FilledBlock(14 * kMiB, 1));
  uint64_t first_freed = DecayNowNs();
  for (unsigned char* block : blocks) lethe_free(block);
  EXPECT_EQ(GetHugeRegionStats().dirty_bytes, count * 14 * kMiB);  // all within the grace
  constexpr uint64_t kGrace = 60'000'000'000ull, kDecay = 2 * kGrace;
  uint64_t deadline = HugeRegionPurge(DecayNowNs(), kDecay, kGrace);
  EXPECT_EQ(GetHugeRegionStats().dirty_bytes, count * 14 * kMiB);
  EXPECT_GE(deadline, first_freed + kGrace);  // the grace's end, not the decay's
  EXPECT_LT(deadline, first_freed + kDecay);
  HugeRegionPurge(DecayNowNs(), kDecay, 0);
  uint64_t dirty = GetHugeRegionStats().dirty_bytes;
  EXPECT_LE(dirty, limit);
  EXPECT_GE(dirty, 14 * kMiB);
  size_t resident = 0;
  for (unsigned char* block : blocks) resident += ResidentPages(block, 14 * kMiB);
  EXPECT_EQ(resident * kPageBytes, dirty);
  SetOptionForTesting(&g_options.decay_ms, uint64_t{decay_ms});
}

TEST_F(HugeRegion, BlocksOverTheRegionLimitAlignedOrNotAreMappingsOfTheirOwn) {
  unsigned char* big = FilledBlock(kHugeRegionMaxBlockBytes + kPageBytes, 1);
  EXPECT_FALSE(HugeRegionContains(big));
  lethe_free(big);
  EXPECT_FALSE(Mapped(big));  // unmapped at once
  // 20 MiB aligned to 16 MiB: the padded length (36 MiB - a page) is over the limit.
  void* aligned = lethe_aligned_alloc(16 * kMiB, 20 * kMiB);
  ASSERT_NE(aligned, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned) % (16 * kMiB), 0u);
  EXPECT_FALSE(HugeRegionContains(aligned));
  lethe_free(aligned);
  // A region block grown past the limit moves into a mapping of its own, contents kept.
  unsigned char* growing = FilledBlock(4 * kMiB, 6);
  ASSERT_TRUE(HugeRegionContains(growing));
  auto* grown = static_cast<unsigned char*>(lethe_realloc(growing, kHugeRegionMaxBlockBytes * 2));
  ASSERT_NE(grown, nullptr);
  EXPECT_FALSE(HugeRegionContains(grown));
  EXPECT_TRUE(AllBytesAre(grown, 4 * kMiB, 6));
  lethe_free(grown);
}

// A block aligned beyond a page is cut from a region too: from a padded span whose ends go back
// as they were (clean here), and, once freed, from its own dirty span, at the same address.
TEST_F(HugeRegion, AnAlignedBlockIsCutFromARegionAndItsFreedSpanServesTheNextOne) {
  constexpr size_t kAlign = 2 * kMiB;
  unsigned char* skew = FilledBlock(3 * kMiB / 2, 9);  // the region's start is taken
  auto* first = static_cast<unsigned char*>(lethe_aligned_alloc(kAlign, 2 * kMiB));
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % kAlign, 0u);
  EXPECT_TRUE(HugeRegionContains(first));
  EXPECT_EQ(GetHugeRegionStats().dirty_bytes, 0u) << "the padded span's ends went back clean";
  std::memset(first, 0x5a, 2 * kMiB);
  lethe_free(first);
  EXPECT_EQ(GetHugeRegionStats().dirty_bytes, 2 * kMiB);
  long faults = MinorFaults();
  auto* again = static_cast<unsigned char*>(lethe_aligned_alloc(kAlign, 2 * kMiB));
  ASSERT_EQ(again, first);
  EXPECT_TRUE(AllBytesAre(again, 2 * kMiB, 0x5a));  // the same pages
  std::memset(again, 0x6b, 2 * kMiB);
  if (kFaultsAreTheAllocators) {
    EXPECT_LT(MinorFaults() - faults, 16);
  }
  EXPECT_EQ(GetHugeRegionStats().dirty_bytes, 0u);
  lethe_free(again);
  lethe_free(skew);
  HugeRegionValidate();
}

// A dirty span that holds the block only past its start gives up its lead as a dirty span.
TEST_F(HugeRegion, AnAlignedBlockCutInsideADirtySpanLeavesItsLeadDirty) {
  constexpr size_t kAlign = 4 * kMiB;
  unsigned char* span = FilledBlock(12 * kMiB, 1);
  unsigned char* guard = FilledBlock(2 * kMiB, 2);
  lethe_free(span);
  ASSERT_EQ(GetHugeRegionStats().dirty_bytes, 12 * kMiB);
  auto* block = static_cast<unsigned char*>(lethe_aligned_alloc(kAlign, 4 * kMiB));
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % kAlign, 0u);
  ASSERT_GE(block, span);
  ASSERT_LE(block + 4 * kMiB, span + 12 * kMiB);
  EXPECT_EQ(GetHugeRegionStats().dirty_bytes, 8 * kMiB) << "lead and tail stay dirty";
  HugeRegionValidate();
  lethe_free(block);
  EXPECT_EQ(GetHugeRegionStats().dirty_bytes, 12 * kMiB);
  EXPECT_EQ(GetHugeRegionStats().free_spans, before_.free_spans + 2);  // dirty span, clean tail
  lethe_free(guard);
  HugeRegionValidate();
}

TEST_F(HugeRegion, ARefusedReservationFallsBackToAMappingOfItsOwn) {
  OsFailMapsForTesting(1);  // the region's reservation
  unsigned char* block = FilledBlock(2 * kMiB, 3);
  ASSERT_NE(block, nullptr);
  EXPECT_FALSE(HugeRegionContains(block));
  EXPECT_EQ(GetHugeRegionStats().regions, 0u);
  lethe_free(block);
  EXPECT_FALSE(Mapped(block));
}

// With records short, the next free purges every dirty span first (their clean pages merge), so
// the freed block still gets one.
TEST_F(HugeRegion, SpanRecordsRunningShortPurgeEveryDirtySpanToMakeRoom) {
  std::vector<unsigned char*> blocks;
  for (int i = 0; i < 8; ++i) blocks.push_back(FilledBlock(kMiB + kMiB / 4, 1));
  for (int i = 1; i < 8; ++i) ASSERT_EQ(blocks[i], blocks[i - 1] + kMiB + kMiB / 4);
  lethe_free(blocks[0]);
  lethe_free(blocks[2]);
  lethe_free(blocks[4]);  // three dirty spans, the clean rest after blocks[7]: four records
  HugeRegionLimitRecordsForTesting(5);  // no room for a fifth and a spare
  lethe_free(blocks[6]);
  HugeRegionStats after = GetHugeRegionStats();
  EXPECT_EQ(after.dirty_bytes, kMiB + kMiB / 4);  // blocks[6] only
  EXPECT_EQ(after.free_spans, 5u);
  EXPECT_EQ(ResidentPages(blocks[0], kMiB + kMiB / 4), 0u);
  EXPECT_EQ(ResidentPages(blocks[6], kMiB + kMiB / 4), (kMiB + kMiB / 4) / kPageBytes);
  HugeRegionValidate();
  for (int i : {1, 3, 5, 7}) lethe_free(blocks[i]);
}

// Threads allocate, write, grow, shrink and free huge blocks while another purges: contents stay
// whole, and the regions' invariants hold at the end.
TEST_F(HugeRegion, ThreadsAndPurgesTogetherKeepContentsAndInvariants) {
  std::atomic<bool> stop{false};
  std::thread purger([&] {
    while (!stop.load()) HugeRegionPurge(UINT64_MAX, 0);
  });
  auto work = [](unsigned seed) {
    std::mt19937 random(seed);
    std::vector<std::pair<unsigned char*, size_t>> live;
    for (int step = 0; step < 300; ++step) {
      if (live.size() == 4 || (!live.empty() && random() % 3 == 0)) {
        auto [block, bytes] = live[random() % live.size()];
        ASSERT_TRUE(block[0] == static_cast<unsigned char>(bytes) &&
                    block[bytes - 1] == static_cast<unsigned char>(bytes));
        if (random() % 2 == 0) {
          size_t resized = kMiB + random() % (6 * kMiB);
          auto* moved = static_cast<unsigned char*>(lethe_realloc(block, resized));
          ASSERT_NE(moved, nullptr);
          ASSERT_EQ(moved[0], static_cast<unsigned char>(bytes));
          std::memset(moved, static_cast<unsigned char>(resized), resized);
          for (auto& entry : live) {
            if (entry.first == block) entry = {moved, resized};
          }
        } else {
          lethe_free(block);
          std::erase(live, std::pair{block, bytes});
        }
      } else if (random() % 3 == 0) {  // aligned to 64 KiB-2 MiB (padded, or cut in a span)
        size_t bytes = kMiB + random() % (6 * kMiB);
        size_t alignment = (size_t{64} << 10) << (random() % 6);
        auto* block = static_cast<unsigned char*>(lethe_aligned_alloc(alignment, bytes));
        ASSERT_NE(block, nullptr);
        ASSERT_EQ(reinterpret_cast<uintptr_t>(block) % alignment, 0u);
        std::memset(block, static_cast<unsigned char>(bytes), bytes);
        live.emplace_back(block, bytes);
      } else {
        size_t bytes = kMiB + random() % (6 * kMiB);
        live.emplace_back(FilledBlock(bytes, static_cast<unsigned char>(bytes)), bytes);
      }
    }
    for (auto& [block, bytes] : live) lethe_free(block);
  };
  std::thread a(work, 1), b(work, 2);
  a.join();
  b.join();
  stop.store(true);
  purger.join();
  HugeRegionValidate();
}

}  // namespace
}  // namespace lethe::internal
