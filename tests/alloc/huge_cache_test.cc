// The huge cache (alloc/huge_cache.h) through the allocator's API: blocks cut from a cached piece
// or assembled from several by moving their pages, with the pages' residency and contents as the
// proof that nothing was faulted in again; one VMA per piece and per extent, read back from
// /proc/self/maps; growth and shrinking of assembled blocks; the bounds; refused moves and
// mappings.
#include <errno.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "huge.h"
#include "huge_cache.h"
#include "lethe/alloc.h"
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

unsigned char* FilledBlock(size_t bytes, unsigned char value) {
  auto* block = static_cast<unsigned char*>(lethe_malloc(bytes));
  EXPECT_NE(block, nullptr);
  std::memset(block, value, bytes);
  return block;
}

bool AllBytesAre(const unsigned char* block, size_t bytes, unsigned char value) {
  for (size_t i = 0; i < bytes; ++i) {
    if (block[i] != value) return false;
  }
  return true;
}

// Leaves the cache with one piece of each length (all allocated before any is freed: a block
// allocated after a free would be cut from the freed piece).
void FreeBlocksOf(std::initializer_list<size_t> lengths) {
  std::vector<unsigned char*> blocks;
  for (size_t bytes : lengths) blocks.push_back(FilledBlock(bytes, 0x44));
  for (unsigned char* block : blocks) lethe_free(block);
  ASSERT_EQ(GetHugeCacheStats().cached_pieces, lengths.size());
}

std::vector<HugePieceView> Pieces() {
  std::vector<HugePieceView> pieces(kHugeCachePieces);
  pieces.resize(HugeCacheCopyPieces(pieces.data(), pieces.size()));
  return pieces;
}

// The VMAs of the process, from /proc/self/maps: [start, end) pairs.
std::vector<std::pair<uintptr_t, uintptr_t>> Vmas() {
  std::vector<std::pair<uintptr_t, uintptr_t>> vmas;
  FILE* file = std::fopen("/proc/self/maps", "r");
  EXPECT_NE(file, nullptr);
  unsigned long start = 0, end = 0;
  char line[512];
  while (std::fgets(line, sizeof(line), file) != nullptr) {
    if (std::sscanf(line, "%lx-%lx", &start, &end) == 2) vmas.emplace_back(start, end);
  }
  std::fclose(file);
  return vmas;
}

bool InsideOneVma(const std::vector<std::pair<uintptr_t, uintptr_t>>& vmas, uintptr_t address,
                  size_t bytes) {
  for (const auto& [start, end] : vmas) {
    if (start <= address && address < end) return address + bytes <= end;
  }
  return false;
}

// The invariant of huge_cache.h, checked against the kernel's own list.
void ExpectOneVmaEach(const std::vector<const void*>& blocks) {
  auto vmas = Vmas();
  for (const HugePieceView& piece : Pieces()) {
    EXPECT_TRUE(InsideOneVma(vmas, piece.address, piece.bytes)) << std::hex << piece.address;
  }
  for (const void* block : blocks) {
    HugeLayout layout{};
    ASSERT_TRUE(HugeLayoutOf(block, &layout));
    uint32_t start = 0;
    for (uint32_t i = 0; i < layout.count; ++i) {
      uintptr_t address = reinterpret_cast<uintptr_t>(block) + (size_t{start} << kLgPageBytes);
      EXPECT_TRUE(InsideOneVma(vmas, address, size_t{layout.ends[i] - start} << kLgPageBytes))
          << "extent " << i;
      start = layout.ends[i];
    }
  }
}

// The cache keeps freed blocks once kHugeCacheWarmupBlocks were asked for.
void WarmUpHugeCache() {
  for (uint64_t i = 0; i < kHugeCacheWarmupBlocks; ++i) lethe_free(lethe_malloc(2 * kMiB));
}

class HugeCache : public ::testing::Test {
 protected:
  void SetUp() override {
    WarmUpHugeCache();
    lethe_purge();  // an empty cache
    before_ = GetHugeCacheStats();
    ASSERT_EQ(before_.cached_bytes, 0u);
  }
  void TearDown() override {
    OsFailMovesForTesting(0);
    OsFailMapsForTesting(0);
    HugeCacheValidate();
    lethe_purge();
  }
  HugeCacheStats before_{};
};

TEST_F(HugeCache, CutsABlockFromTheBestFittingPieceWhoseTailStaysAndMergesBack) {
  unsigned char* small = FilledBlock(2 * kMiB, 0x22);
  unsigned char* large = FilledBlock(3 * kMiB, 0x33);
  lethe_free(small);
  lethe_free(large);
  ASSERT_EQ(GetHugeCacheStats().cached_bytes, 5 * kMiB);
  // 2.5 MiB fits the 3 MiB piece best: its head, with its old contents, all resident.
  auto* block = static_cast<unsigned char*>(lethe_malloc(5 * kMiB / 2));
  EXPECT_EQ(block, large);
  EXPECT_EQ(ResidentPages(block, 5 * kMiB / 2), 5 * kMiB / 2 / kPageBytes);
  EXPECT_TRUE(AllBytesAre(block, 5 * kMiB / 2, 0x33));
  HugeCacheStats cut = GetHugeCacheStats();
  EXPECT_EQ(cut.cached_bytes, 2 * kMiB + kMiB / 2);
  EXPECT_EQ(cut.cached_pieces, 2u);
  EXPECT_EQ(cut.moves, before_.moves);
  ExpectOneVmaEach({block});
  // Freed, the block rejoins its tail: one 3 MiB piece again.
  lethe_free(block);
  bool whole = false;
  for (const HugePieceView& piece : Pieces()) {
    whole |= piece.address == reinterpret_cast<uintptr_t>(large) && piece.bytes == 3 * kMiB;
  }
  EXPECT_TRUE(whole);
  EXPECT_EQ(GetHugeCacheStats().cached_pieces, 2u);
}

TEST_F(HugeCache, AssemblesABlockFromSeveralPiecesByMovingTheirResidentPages) {
  unsigned char* first = FilledBlock(2 * kMiB, 0xaa);
  unsigned char* second = FilledBlock(3 * kMiB / 2, 0xbb);
  lethe_free(first);
  lethe_free(second);
  // No piece holds 4 MiB: the largest first, then the next, then 0.5 MiB of fresh pages.
  auto* block = static_cast<unsigned char*>(lethe_malloc(4 * kMiB));
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(ResidentPages(block, 7 * kMiB / 2), 7 * kMiB / 2 / kPageBytes);
  EXPECT_EQ(ResidentPages(block + 7 * kMiB / 2, kMiB / 2), 0u);
  EXPECT_TRUE(AllBytesAre(block, 2 * kMiB, 0xaa));
  EXPECT_TRUE(AllBytesAre(block + 2 * kMiB, 3 * kMiB / 2, 0xbb));
  HugeCacheStats after = GetHugeCacheStats();
  EXPECT_EQ(after.moves, before_.moves + 2);
  EXPECT_EQ(after.reused_bytes, before_.reused_bytes + 7 * kMiB / 2);
  EXPECT_EQ(after.cached_bytes, 0u);
  HugeLayout layout{};
  ASSERT_TRUE(HugeLayoutOf(block, &layout));
  ASSERT_EQ(layout.count, 3u);
  EXPECT_EQ(layout.ends[0], 512u);
  EXPECT_EQ(layout.ends[1], 896u);
  EXPECT_EQ(layout.ends[2], 1024u);
  ExpectOneVmaEach({block});
  EXPECT_EQ(lethe_usable_size(block), 4 * kMiB);
  // Freed, it is one piece per extent: three VMAs, none merged with another.
  lethe_free(block);
  EXPECT_EQ(GetHugeCacheStats().cached_pieces, 3u);
  EXPECT_EQ(GetHugeCacheStats().cached_bytes, 4 * kMiB);
  ExpectOneVmaEach({});
}

TEST_F(HugeCache, CallocZeroesTheReusedPartOnly) {
  lethe_free(FilledBlock(2 * kMiB, 0x5a));
  auto* block = static_cast<unsigned char*>(lethe_calloc(1, 3 * kMiB));
  ASSERT_NE(block, nullptr);
  // The 2 MiB piece was written with 0x5a and is cleared; the fresh megabyte after it was not
  // written by calloc (it reads as zero by itself).
  EXPECT_EQ(ResidentPages(block + 2 * kMiB, kMiB), 0u);
  EXPECT_TRUE(AllBytesAre(block, 3 * kMiB, 0));
  EXPECT_EQ(GetHugeCacheStats().reused_bytes, before_.reused_bytes + 2 * kMiB);
  lethe_free(block);
}

TEST_F(HugeCache, AnAssembledBlockGrowsByOneCopyAndThenInPlaceOrByMremap) {
  FreeBlocksOf({2 * kMiB, 2 * kMiB});
  auto* block = static_cast<unsigned char*>(lethe_malloc(5 * kMiB));
  HugeLayout layout{};
  ASSERT_TRUE(HugeLayoutOf(block, &layout));
  ASSERT_EQ(layout.count, 3u);
  for (size_t i = 0; i < 5 * kMiB; ++i) block[i] = static_cast<unsigned char>(i * 7);
  auto* grown = static_cast<unsigned char*>(lethe_realloc(block, 6 * kMiB));
  ASSERT_NE(grown, nullptr);
  ASSERT_TRUE(HugeLayoutOf(grown, &layout));
  EXPECT_EQ(layout.count, 1u);
  for (size_t i = 0; i < 5 * kMiB; ++i) {
    ASSERT_EQ(grown[i], static_cast<unsigned char>(i * 7)) << i;
  }
  // The old extents went back to the cache, and the block now grows as one VMA.
  EXPECT_EQ(GetHugeCacheStats().cached_bytes, 5 * kMiB);
  auto* again = static_cast<unsigned char*>(lethe_realloc(grown, 9 * kMiB));
  ASSERT_NE(again, nullptr);
  ASSERT_TRUE(HugeLayoutOf(again, &layout));
  EXPECT_EQ(layout.count, 1u);
  EXPECT_EQ(again[5 * kMiB - 1], static_cast<unsigned char>((5 * kMiB - 1) * 7));
  ExpectOneVmaEach({again});
  lethe_free(again);
}

TEST_F(HugeCache, AFailedGrowthOfAnAssembledBlockLeavesItIntact) {
  FreeBlocksOf({2 * kMiB, 2 * kMiB});
  auto* block = static_cast<unsigned char*>(lethe_malloc(5 * kMiB));
  std::memset(block, 0x3c, 5 * kMiB);
  OsFailMapsForTesting(1000);
  errno = 0;
  EXPECT_EQ(lethe_realloc(block, 8 * kMiB), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  OsFailMapsForTesting(0);
  HugeLayout layout{};
  ASSERT_TRUE(HugeLayoutOf(block, &layout));
  EXPECT_EQ(layout.count, 3u);
  EXPECT_EQ(lethe_usable_size(block), 5 * kMiB);
  EXPECT_TRUE(AllBytesAre(block, 5 * kMiB, 0x3c));
  lethe_free(block);
}

TEST_F(HugeCache, ShrinkingAnAssembledBlockReturnsItsTailToTheOs) {
  FreeBlocksOf({2 * kMiB, 3 * kMiB / 2});
  auto* block = static_cast<unsigned char*>(lethe_malloc(4 * kMiB));  // 3 extents
  std::memset(block, 9, 4 * kMiB);
  auto* shrunk = static_cast<unsigned char*>(lethe_realloc(block, 3 * kMiB / 2));
  EXPECT_EQ(shrunk, block);
  EXPECT_EQ(lethe_usable_size(shrunk), 3 * kMiB / 2);
  HugeLayout layout{};
  ASSERT_TRUE(HugeLayoutOf(shrunk, &layout));
  EXPECT_EQ(layout.count, 1u);
  EXPECT_EQ(layout.ends[0], 384u);
  EXPECT_EQ(GetHugeCacheStats().cached_bytes, 0u);
  auto vmas = Vmas();
  EXPECT_FALSE(InsideOneVma(vmas, reinterpret_cast<uintptr_t>(block) + 3 * kMiB / 2, kPageBytes));
  EXPECT_FALSE(InsideOneVma(vmas, reinterpret_cast<uintptr_t>(block) + 4 * kMiB - kPageBytes,
                            kPageBytes));
  EXPECT_TRUE(AllBytesAre(shrunk, 3 * kMiB / 2, 9));
  ExpectOneVmaEach({shrunk});
  lethe_free(shrunk);
  EXPECT_EQ(GetHugeCacheStats().cached_bytes, 3 * kMiB / 2);
}

TEST_F(HugeCache, ARefusedMoveUnmapsThatPieceAndTheBlockIsFreshAndWhole) {
  FreeBlocksOf({2 * kMiB, 3 * kMiB / 2});
  OsFailMovesForTesting(1);
  auto* block = static_cast<unsigned char*>(lethe_calloc(1, 4 * kMiB));
  ASSERT_NE(block, nullptr);
  EXPECT_TRUE(AllBytesAre(block, 4 * kMiB, 0));
  HugeCacheStats after = GetHugeCacheStats();
  EXPECT_EQ(after.failed_moves, before_.failed_moves + 1);
  EXPECT_EQ(after.moves, before_.moves);
  // The refused 2 MiB piece is gone; the 1.5 MiB one, not tried, is back in the cache.
  EXPECT_EQ(after.cached_bytes, 3 * kMiB / 2);
  HugeLayout layout{};
  ASSERT_TRUE(HugeLayoutOf(block, &layout));
  EXPECT_EQ(layout.count, 1u);
  std::memset(block, 7, 4 * kMiB);
  lethe_free(block);
}

TEST_F(HugeCache, AFailedMappingForAnAssemblyPutsEveryPieceBack) {
  FreeBlocksOf({2 * kMiB, 3 * kMiB / 2});
  OsFailMapsForTesting(1);  // the assembly's mapping; the allocator's own mapping then succeeds
  auto* block = static_cast<unsigned char*>(lethe_malloc(4 * kMiB));
  ASSERT_NE(block, nullptr);
  HugeCacheStats after = GetHugeCacheStats();
  EXPECT_EQ(after.cached_bytes, 7 * kMiB / 2);
  EXPECT_EQ(after.cached_pieces, 2u);
  EXPECT_EQ(after.moves, before_.moves);
  std::memset(block, 3, 4 * kMiB);
  lethe_free(block);
}

TEST_F(HugeCache, TheOldestPieceMakesRoomAndShortPiecesAreNotKept) {
  std::vector<void*> blocks;
  for (size_t i = 0; i <= kHugeCachePieces; ++i) blocks.push_back(FilledBlock(kMiB + kMiB / 8, 1));
  for (void* block : blocks) lethe_free(block);  // freed oldest first
  HugeCacheStats full = GetHugeCacheStats();
  EXPECT_EQ(full.cached_pieces, kHugeCachePieces);
  bool oldest_kept = false;
  for (const HugePieceView& piece : Pieces()) {
    oldest_kept |= piece.address == reinterpret_cast<uintptr_t>(blocks[0]);
  }
  EXPECT_FALSE(oldest_kept);
  lethe_purge();
  // A cut that would leave a tail under kHugeMinPieceBytes unmaps the tail.
  lethe_free(FilledBlock(kMiB + kMiB / 8, 1));
  void* block = lethe_malloc(kMiB + kMiB / 8 - 32 * 1024);
  EXPECT_EQ(GetHugeCacheStats().cached_bytes, 0u);
  lethe_free(block);
  EXPECT_EQ(GetHugeCacheStats().cached_bytes, kMiB + kMiB / 8 - 32 * 1024);
}

// One freed buffer over a quarter of huge_cache_kb (64 MiB by default) must not flush the rest:
// it is unmapped at once, and the budget evicts the oldest pieces.
TEST_F(HugeCache, APieceOverAQuarterOfTheBudgetIsNotKeptAndTheBudgetEvictsTheOldest) {
  unsigned char* big = FilledBlock(16 * kMiB + kPageBytes, 1);
  lethe_free(big);
  EXPECT_EQ(GetHugeCacheStats().cached_bytes, 0u);
  EXPECT_FALSE(InsideOneVma(Vmas(), reinterpret_cast<uintptr_t>(big), kPageBytes));
  std::vector<unsigned char*> blocks;
  for (int i = 0; i < 5; ++i) blocks.push_back(FilledBlock(14 * kMiB, 1));
  for (unsigned char* block : blocks) lethe_free(block);  // 70 MiB freed, oldest first
  HugeCacheStats after = GetHugeCacheStats();
  EXPECT_EQ(after.cached_bytes, 4 * 14 * kMiB);
  bool oldest_kept = false;
  for (const HugePieceView& piece : Pieces()) {
    oldest_kept |= piece.address == reinterpret_cast<uintptr_t>(blocks[0]);
  }
  EXPECT_FALSE(oldest_kept);
}

TEST_F(HugeCache, APurgeUnmapsEveryPiece) {
  unsigned char* block = FilledBlock(3 * kMiB, 1);
  lethe_free(block);
  EXPECT_EQ(ResidentPages(block, 3 * kMiB), 3 * kMiB / kPageBytes);
  lethe_stats_t kept;
  lethe_stats(&kept);
  EXPECT_GE(kept.dirty_bytes, 3 * kMiB);
  lethe_purge();
  EXPECT_EQ(GetHugeCacheStats().cached_bytes, 0u);
  EXPECT_FALSE(InsideOneVma(Vmas(), reinterpret_cast<uintptr_t>(block), kPageBytes));
}

}  // namespace
}  // namespace lethe::internal
