// huge_cache.h — freed huge mappings kept resident for reuse, as pieces; a new huge block is cut
// from one piece, or assembled from several by moving their page tables (mremap MREMAP_FIXED),
// so that pages once faulted in are neither faulted in nor zeroed by the kernel again.
//
// Why: decoded images of 1-3 MiB are freed and allocated at other sizes all session long. Fitting
// one cached mapping to the next request with mremap dropped the spare tail of a larger one and
// faulted fresh pages into a smaller one that had to grow: in lethe-alloc-workload churn, Lethe's
// image buffers took 72,000 page faults against tcmalloc's 39,000 (its page heap reuses resident
// pages at any length). Here a fault costs ~2 us a page (map and write 2 MiB: 1 ms); moving a
// resident 2 MiB piece costs ~17 us.
//
// Invariant: every cached piece, and every extent of a live huge block, lies inside one VMA of
// the process. Kernels before 6.17 refuse to move a range that spans VMAs (EFAULT), and none
// grows one; pieces moved next to each other stay separate VMAs (their page offsets and anon_vma
// differ, so the kernel does not merge them). So a block records its extents (HugeLayout) and,
// freed, enters the cache as one piece per extent; an assembled block that must grow is copied
// into one fresh mapping once (huge.cc).
//
// Which pieces: the smallest piece that holds the request (best fit), its tail staying cached
// in place; else the largest pieces first (fewest extents), at most kMaxHugeExtents - 1 of them,
// moved to the start of a fresh mapping whose pages after them stay untouched (zero) until
// written. Pieces shorter than kHugeMinPieceBytes are unmapped rather than kept (a VMA each for
// little memory). Bounds: kHugeCachePieces pieces, LETHE_OPTIONS=huge_cache_kb bytes (a piece
// over a quarter of that is not kept: one freed buffer must not flush the rest); the oldest
// piece makes room. The cached bytes count as dirty; decay unmaps pieces older than the decay
// time, lethe_purge all of them.
//
// Thread-safety: one lock around the piece table. System calls are made outside it, on pieces
// taken out of the table (the caller owns them meanwhile).
#ifndef LETHE_ALLOC_HUGE_CACHE_H_
#define LETHE_ALLOC_HUGE_CACHE_H_

#include <cstddef>
#include <cstdint>

#include "size_classes.h"

namespace lethe::internal {

inline constexpr size_t kMaxHugeExtents = 4;
inline constexpr size_t kHugeCachePieces = 32;
inline constexpr size_t kHugeMinPieceBytes = size_t{64} << 10;
// Freed blocks are kept only once the process has asked for this many huge blocks: one that
// makes a huge block or two (python3 parsing a big file once) gains nothing from keeping them
// resident, and exited with them resident (issue 15 item 5); decoded images come by the dozen.
inline constexpr uint64_t kHugeCacheWarmupBlocks = 2;

// The VMAs a huge block is made of, in address order: extent i ends ends[i] pages from the
// block's start (ends[count - 1] is the block's length in pages) and lies in the VMA ids[i].
// A VMA id names the pages of one mapping or one move (HugeNewVmaId); two pieces with the same id
// that touch are in one VMA (what lay between them would have left a hole when moved away), so
// the cache merges them back into one piece.
struct HugeLayout {
  uint32_t ends[kMaxHugeExtents];
  uint32_t ids[kMaxHugeExtents];
  uint32_t count;
};
constexpr HugeLayout OneExtent(uint32_t pages, uint32_t id) {
  return HugeLayout{{pages, 0, 0, 0}, {id, 0, 0, 0}, 1};
}
// A page-multiple length in pages, as a layout counts them (a huge block is < 2^32 pages).
constexpr uint32_t LayoutPages(size_t bytes) {
  return static_cast<uint32_t>(bytes >> kLgPageBytes);
}
// A new VMA id, for a new mapping or a moved one.
uint32_t HugeNewVmaId();

// A block of `bytes` (a page multiple) made of cached pieces, and of fresh pages for what they
// do not cover; nullptr when the cache is empty or the fresh mapping fails (the caller maps the
// block itself; *layout and *reused_bytes are then untouched). Otherwise *layout receives its
// extents and *reused_bytes the length of its start that holds old data (the rest reads as zero).
void* HugeCacheTake(size_t bytes, HugeLayout* layout, size_t* reused_bytes);
// Keeps the freed extents of the block at `block` for reuse (or unmaps them, see above, and
// before kHugeCacheWarmupBlocks requests).
void HugeCachePutBlock(uintptr_t block, const HugeLayout& layout);
// Unmaps pieces freed at or before now_ns - decay_ns (every piece with decay_ns = 0 and now_ns =
// UINT64_MAX); returns the next deadline (UINT64_MAX: none).
uint64_t HugeCachePurge(uint64_t now_ns, uint64_t decay_ns);

struct HugeCacheStats {
  uint64_t cached_bytes;
  uint64_t cached_pieces;
  uint64_t reused_bytes;  // bytes of blocks served from pieces, cumulative
  uint64_t moves;         // pieces moved into assembled blocks, cumulative
  uint64_t failed_moves;  // moves the kernel refused (their pieces were unmapped), cumulative
};
HugeCacheStats GetHugeCacheStats();
// For tests: copies up to `max` cached pieces (address, bytes, VMA id); returns how many.
struct HugePieceView {
  uintptr_t address;
  size_t bytes;
  uint32_t id;
};
size_t HugeCacheCopyPieces(HugePieceView* out, size_t max);
// LETHE_CHECKs the piece table: bounds, page alignment, no overlap, byte count.
void HugeCacheValidate();

void HugeCacheLockForFork();
void HugeCacheUnlockAfterFork(bool child);

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_HUGE_CACHE_H_
