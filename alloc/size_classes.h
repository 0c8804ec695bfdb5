// size_classes.h — the size classes of Lethe's allocator, computed at compile time.
//
// Who uses it: every allocation path (any thread); the table is constant, so no locking.
//
// Classes, in order:
//   tiny      8                                       (one class below the quantum)
//   quantum   16, 32, 48, ..., 256                     (16-byte steps: most browser objects)
//   8/double  288, 320, 352, ..., 3840                 (8 classes per doubling; sub-page)
//             4096, 4608, 5120, ..., 14336             (still small: served from multi-page runs)
//   large     4 per doubling of the page count: 16, 20, 24, 28, 32, 40, ... 896 KiB, then
//             kLargeMaxBytes (a whole chunk's usable pages): runs inside a chunk
//   huge      larger than kLargeMaxBytes (>= 1 MiB): cut from huge regions, or mapped alone;
//             also a block of 128 KiB or more that a realloc moves (huge_region.h)
//
// Worst-case internal waste of a request of n bytes: at most max(15, n / 8) bytes for a small
// one (quantum steps waste < 16 bytes; in the 8-per-doubling ranges a class is at most an
// eighth above the one below: 257 -> 288 wastes 31), max(15, n / 4) for a large one (16 KiB + 1
// -> 20 KiB wastes 4095). Why 8 per doubling, not 4 as jemalloc: on browser-like sizes 4 left
// more slop than tcmalloc, whose classes are that fine up to 1 KiB and beyond. The cost: 63 bins,
// so more partly used runs when few objects of each size live.
// Large classes are geometric, not every page multiple, so that a buffer grown "just enough" by
// realloc moves O(log n) times, not O(n) (copying O(n^2) bytes). The rounding costs address
// space, not memory: a large run taken from clean pages (page_heap.h step 3) has its tail pages
// faulted in only when written, and a tail nobody writes stays unbacked.
//
// Small classes live in runs of 1..16 pages; objects start at the page-aligned run start, so a
// class of size s is aligned to the largest power of two dividing s (up to a page), which
// aligned_alloc relies on. The run's header (links, counts, free bitmap) lives out of line, in
// the chunk header's free-run node slots of the run's pages (unused while the pages form a run:
// run_pages * kPageNodeBytes bytes), whenever it fits there; only the runs of the 8- and 16-byte
// classes (256+ regions, too many bits for one 40-byte slot) keep it at the end of the run.
#ifndef LETHE_ALLOC_SIZE_CLASSES_H_
#define LETHE_ALLOC_SIZE_CLASSES_H_

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace lethe::internal {

inline constexpr size_t kLgPageBytes = 12;
inline constexpr size_t kPageBytes = size_t{1} << kLgPageBytes;
inline constexpr size_t kLgChunkBytes = 20;
inline constexpr size_t kChunkBytes = size_t{1} << kLgChunkBytes;  // 1 MiB, aligned
inline constexpr size_t kChunkPages = kChunkBytes / kPageBytes;      // 256
inline constexpr size_t kQuantumBytes = 16;
inline constexpr size_t kSmallMaxBytes = 14336;
inline constexpr size_t kMaxRunPages = 16;
inline constexpr size_t kMaxRunRegions = 512;
// The fixed part of a small run's header (links, class, free count); the bitmap follows it.
inline constexpr size_t kRunHeaderFixedBytes = 24;
// The chunk header's free-run node per page (chunk.h checks sizeof(FreeRunNode)).
inline constexpr size_t kPageNodeBytes = 40;
// Pages at the start of each chunk taken by its header (the page map and free-run nodes); checked
// against sizeof(Chunk) in chunk.h.
inline constexpr size_t kChunkHeaderPages = 3;
inline constexpr size_t kChunkUsablePages = kChunkPages - kChunkHeaderPages;
inline constexpr size_t kLargeMaxBytes = kChunkUsablePages * kPageBytes;

inline constexpr size_t kQuantumMaxBytes = 256;  // the last 16-byte step
inline constexpr std::array<uint32_t, 63> kSmallSizes = {
    8,     16,    32,    48,    64,    80,    96,    112,   128,   144,   160,   176,   192,
    208,   224,   240,   256,   288,   320,   352,   384,   416,   448,   480,   512,   576,
    640,   704,   768,   832,   896,   960,   1024,  1152,  1280,  1408,  1536,  1664,  1792,
    1920,  2048,  2304,  2560,  2816,  3072,  3328,  3584,  3840,  4096,  4608,  5120,  5632,
    6144,  6656,  7168,  7680,  8192,  9216,  10240, 11264, 12288, 13312, 14336};
inline constexpr size_t kSmallClassCount = kSmallSizes.size();

struct SmallClass {
  uint32_t size_bytes = 0;
  uint32_t run_pages = 0;
  uint32_t region_count = 0;
  // From the run start to its RunHeader at the run's end; 0: the header is in the chunk header's
  // node slots instead (an in-run header never sits at offset 0: region 0 is there).
  uint32_t header_offset = 0;
  uint32_t bitmap_words = 0;
  constexpr bool header_in_chunk() const { return header_offset == 0; }
};

constexpr size_t RunHeaderBytes(size_t region_count) {
  return kRunHeaderFixedBytes + 8 * ((region_count + 63) / 64);
}

// The run of `pages` pages for regions of `size` bytes: as many regions as fit, with the header
// in the chunk's node slots when it fits there (and allow_chunk), else at the end of the run.
constexpr SmallClass LayoutRun(uint32_t size, uint32_t pages, bool allow_chunk = true) {
  SmallClass layout;
  layout.size_bytes = size;
  layout.run_pages = pages;
  size_t run_bytes = size_t{pages} * kPageBytes;
  size_t count = run_bytes / size;
  if (count > kMaxRunRegions) count = kMaxRunRegions;
  if (!allow_chunk || RunHeaderBytes(count) > pages * kPageNodeBytes) {
    while (count > 0 && count * size + RunHeaderBytes(count) > run_bytes) --count;
    layout.header_offset = static_cast<uint32_t>(run_bytes - RunHeaderBytes(count));
  }
  layout.region_count = static_cast<uint32_t>(count);
  layout.bitmap_words = static_cast<uint32_t>((count + 63) / 64);
  return layout;
}

// Run lengths. The waste rule: the smallest run whose waste is at most 1/64 of it, else the run
// with the least waste (ratio), judged as if the header were at the run's end, so that the small
// classes use one page; the run is then laid out with the header out of line (one more region
// wherever it frees the room).
constexpr uint32_t RunPagesByWaste(uint32_t size) {
  uint32_t best_pages = 0;
  uint64_t best_waste = 1, best_bytes = 0;  // compared as best_waste / best_bytes
  for (uint32_t pages = 1; pages <= kMaxRunPages; ++pages) {
    SmallClass candidate = LayoutRun(size, pages, false);
    if (candidate.region_count == 0) continue;
    uint64_t run_bytes = uint64_t{pages} * kPageBytes;
    uint64_t waste = run_bytes - uint64_t{candidate.region_count} * size;
    if (waste * 64 <= run_bytes) return pages;
    if (best_bytes == 0 || waste * best_bytes < best_waste * run_bytes) {
      best_pages = pages;
      best_waste = waste;
      best_bytes = run_bytes;
    }
  }
  return best_pages;
}

// An exact fit no longer than that run is taken instead: no tail at all, and no more pages in a
// run that must empty before its pages return (5120 B: 5 pages of 4 regions, not 14 of 11;
// 8192 B: 2 pages of 1, not 15 of 7). Not every exact fit: for most classes up to 1 KiB it is a
// longer run (48 B: 3 pages, 112 B: 7), which would raise the peak for little less slop.
constexpr SmallClass ChooseRun(uint32_t size) {
  uint32_t by_waste = RunPagesByWaste(size);
  for (uint32_t pages = 1; pages < by_waste; ++pages) {
    SmallClass exact = LayoutRun(size, pages);
    if (exact.header_in_chunk() && uint64_t{exact.region_count} * size == pages * kPageBytes) {
      return exact;
    }
  }
  return LayoutRun(size, by_waste);
}

constexpr std::array<SmallClass, kSmallClassCount> BuildSmallClasses() {
  std::array<SmallClass, kSmallClassCount> table{};
  for (size_t i = 0; i < kSmallClassCount; ++i) table[i] = ChooseRun(kSmallSizes[i]);
  return table;
}

inline constexpr std::array<SmallClass, kSmallClassCount> kSmallClasses = BuildSmallClasses();

// free() must tell a region start from any other address of a run, on its fast path, without a
// division. A class size s = 2^shift * odd; `inverse` is odd's inverse modulo 2^32. For an offset
// o into the run (o < 64 KiB), rotr32(o * inverse, shift) is o / s when s divides o (the low
// `shift` bits are zero and o / 2^shift times the inverse is exact), and otherwise at least
// 2^32 / s > 2^18 (bits rotated to the top, or the classic divisibility test's remainder range),
// so one multiply, one rotate and one compare against region_count check both "is a region
// start" and "is inside the run" (Granlund and Montgomery's exact division by invariants).
struct RegionCheck {
  uint32_t inverse;
  uint16_t shift;
  uint16_t region_count;
};
constexpr uint32_t InverseModulo2To32(uint32_t odd) {
  uint32_t inverse = odd;  // correct to 3 bits; each Newton step doubles the correct bits
  for (int step = 0; step < 4; ++step) inverse *= 2 - odd * inverse;
  return inverse;
}
constexpr std::array<RegionCheck, kSmallClassCount> BuildRegionChecks() {
  std::array<RegionCheck, kSmallClassCount> table{};
  for (size_t i = 0; i < kSmallClassCount; ++i) {
    uint32_t size = kSmallSizes[i];
    uint16_t shift = 0;
    while (((size >> shift) & 1) == 0) ++shift;
    table[i] = RegionCheck{InverseModulo2To32(size >> shift), shift,
                           static_cast<uint16_t>(kSmallClasses[i].region_count)};
  }
  return table;
}
inline constexpr std::array<RegionCheck, kSmallClassCount> kRegionChecks = BuildRegionChecks();
static_assert(kMaxRunPages * kPageBytes <= (size_t{1} << 16) && kSmallMaxBytes < (1u << 14),
              "offsets fit 32 bits and 2^32 / size exceeds every region count");
// The region index of the byte at `offset` from its run's start, or a value >= the class's
// region count when no region starts there.
inline uint32_t RegionAt(uint32_t offset, const RegionCheck& check) {
  return std::rotr(offset * check.inverse, check.shift);
}
inline uint32_t RegionAt(uint32_t offset, size_t klass) {
  return RegionAt(offset, kRegionChecks[klass]);
}
inline bool IsRegionStart(uint32_t offset, size_t klass) {
  return RegionAt(offset, klass) < kRegionChecks[klass].region_count;
}

// Index by (size + 7) / 8 for size <= kSmallMaxBytes. Entries hold class << kClassLookupShift:
// the byte offset of the class's 16-byte thread-cache bin, so that malloc's fast path adds it
// without a shift (thread_cache.h asserts the bin size).
inline constexpr size_t kClassLookupEntries = kSmallMaxBytes / 8 + 1;
inline constexpr uint32_t kClassLookupShift = 4;
constexpr std::array<uint16_t, kClassLookupEntries> BuildClassLookup() {
  std::array<uint16_t, kClassLookupEntries> lookup{};
  size_t klass = 0;
  for (size_t slot = 0; slot < kClassLookupEntries; ++slot) {
    while (kSmallSizes[klass] < slot * 8) ++klass;
    lookup[slot] = static_cast<uint16_t>(klass << kClassLookupShift);
  }
  return lookup;
}
inline constexpr std::array<uint16_t, kClassLookupEntries> kClassLookup = BuildClassLookup();

// The class of a small request (0 < size <= kSmallMaxBytes; 0 maps to the tiny class).
inline size_t SmallClassOf(size_t size) {
  return kClassLookup[(size + 7) >> 3] >> kClassLookupShift;
}
// SmallClassOf(size) << kClassLookupShift.
inline size_t SmallClassOffsetOf(size_t size) { return kClassLookup[(size + 7) >> 3]; }

inline constexpr size_t PagesFor(size_t bytes) { return (bytes + kPageBytes - 1) >> kLgPageBytes; }
// `address` rounded up to a multiple of `alignment` (a power of two).
inline constexpr uintptr_t AlignUp(uintptr_t address, size_t alignment) {
  return (address + alignment - 1) & ~(uintptr_t{alignment} - 1);
}

// The large class of a run of `pages` pages (kLargeMinPages..kChunkUsablePages): `pages` rounded
// up to a multiple of a quarter of the power of two below it (4 classes per doubling), at most
// kChunkUsablePages. A few instructions: malloc's fast path computes it.
inline constexpr uint32_t kLargeMinPages = static_cast<uint32_t>(PagesFor(kSmallMaxBytes + 1));
constexpr uint32_t LargeClassPages(size_t pages) {
  auto below = static_cast<uint32_t>(pages - 1);  // >= 3
  int granule_lg = 29 - std::countl_zero(below);  // floor(log2(below)) - 2, >= -1
  if (granule_lg < 0) granule_lg = 0;
  uint32_t rounded = ((below >> granule_lg) + 1) << granule_lg;
  return rounded < kChunkUsablePages ? rounded : static_cast<uint32_t>(kChunkUsablePages);
}

// `n` (>= 1) rounded up to 4 steps per doubling: a multiple of a quarter of the power of two
// below it (exact up to 4). The growth rule of realloc, for pages and for small bytes alike.
constexpr uint64_t QuarterStepCeil(uint64_t n) {
  uint64_t below = n - 1;
  int granule_lg = 61 - std::countl_zero(below);  // floor(log2(below)) - 2
  if (granule_lg < 0) granule_lg = 0;
  return ((below >> granule_lg) + 1) << granule_lg;
}

// The length in pages a growing buffer of `pages` (>= 4) pages gets when it has to move: the same
// 4 steps per doubling as the large classes, without their cap, so that a block that keeps growing
// moves O(log n) times past kLargeMaxBytes too (huge.h: a region block realloc copies).
constexpr size_t GrowthPages(size_t pages) { return QuarterStepCeil(pages); }

// The grid realloc grows small blocks on: from 129 B to a page, `n` rounded up to 4 classes per
// doubling (every such size is a class), as jemalloc's and mimalloc's classes are; other sizes as
// they are. Not above a page: those classes have runs of 2-7 pages for 2-4 regions, and a coarser
// class there left a short program with more resident at exit.
constexpr size_t SmallGrowthGrid(size_t n) {
  return n <= 128 || n > kPageBytes ? n : QuarterStepCeil(n);
}

// The size a small block of usable size `old_bytes` moves to when realloc grows it to `size`
// (> old_bytes): at least a quarter more than it had (tcmalloc's step), on SmallGrowthGrid.
// Why: a block grown by small steps moves at every class it passes; a block that grew once grows
// again, so the coarser step costs slop only on blocks that realloc grew.
constexpr size_t SmallGrowthBytes(size_t size, size_t old_bytes) {
  size_t step = old_bytes + old_bytes / 4;
  return SmallGrowthGrid(size < step && step <= kPageBytes ? step : size);
}
static_assert(SmallGrowthBytes(129, 128) == 160 && SmallGrowthBytes(193, 192) == 256 &&
              SmallGrowthBytes(330, 320) == 448 && SmallGrowthBytes(3585, 3584) == kPageBytes &&
              SmallGrowthBytes(4097, 4096) == 4097 && SmallGrowthBytes(20, 16) == 20);

// Whether realloc leaves a small block of usable size `old_bytes` in place for `size` (no more
// than it holds): while the block is no larger than growing to `size` would have made it (a
// quarter more, on the grid, in its class). So a block that SmallGrowthBytes gave room stays for
// every size it grows through, and a shrink to well under its size moves to a class of its own.
inline bool SmallReallocStays(size_t size, size_t old_bytes) {
  size_t room = SmallGrowthGrid(size + size / 4);
  if (room <= kSmallMaxBytes) room = kSmallSizes[SmallClassOf(room)];
  return size <= old_bytes && old_bytes <= room;
}

// The small size an aligned request takes (aligned_alloc), or 0 when no small class serves it:
// `size` rounded up to `alignment` (a power of two, up to a page). Every such multiple that is a
// small size is a class, or lies where the class step is a multiple of the alignment, so the
// rounded size's class is the smallest aligned class that holds `size`
// (SizeClasses.AlignedClassIsTheRoundedRequestsClass).
constexpr size_t SmallAlignedBytes(size_t size, size_t alignment) {
  if (alignment > kPageBytes || size > kSmallMaxBytes) return 0;
  size_t rounded = AlignUp(size, alignment);
  return rounded <= kSmallMaxBytes ? rounded : 0;
}

// The size a request of `size` bytes gets (the class size; page-rounded for huge).
// 0 when the size cannot be served (it would overflow).
inline size_t GoodSize(size_t size) {
  if (size <= kSmallMaxBytes) return kSmallSizes[SmallClassOf(size)];
  if (size <= kLargeMaxBytes) return size_t{LargeClassPages(PagesFor(size))} << kLgPageBytes;
  if (size > SIZE_MAX - kPageBytes) return 0;
  return PagesFor(size) << kLgPageBytes;
}

static_assert(kSmallSizes[0] == 8 && kSmallSizes.back() == kSmallMaxBytes);
static_assert(kSmallMaxBytes < 4 * kPageBytes, "the first large class is 16 KiB");
static_assert(LargeClassPages(4) == 4 && LargeClassPages(9) == 10 && LargeClassPages(17) == 20 &&
              LargeClassPages(225) == kChunkUsablePages && LargeClassPages(224) == 224);
static_assert(GrowthPages(9) == 10 && GrowthPages(224) == 224 && GrowthPages(257) == 320 &&
              GrowthPages(320) == 320 && GrowthPages(321) == 384);
static_assert(kChunkPages <= 256 * 16, "page numbers fit the map entry");

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_SIZE_CLASSES_H_
