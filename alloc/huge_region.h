// huge_region.h — huge blocks (over kLargeMaxBytes, up to kHugeRegionMaxBlockBytes; and growing
// buffers from kGrowingRegionMinBytes that a realloc moved) cut from regions of reserved address
// space, as a page heap of their own: a freed block becomes a free
// span at the same address, coalesced with its free neighbours, and its pages stay resident
// (dirty) until decay purges them with madvise. The next block of any length that fits is cut
// from a dirty span first, so a decoded image's pages are written again where they already are,
// with no page fault and no mapping call; a block grows in place when the span after it is free.
// A block aligned beyond a page is cut at its alignment from a span that holds it, or from a
// padded span whose ends go back (HugeRegionTakeAligned).
//
// Why: on virtual machines the cost of a buffer is not the faults the guest counts but first
// touches at new virtual addresses. Mapping each huge block on its own (and moving cached pages
// into new blocks with mremap) paid that for every buffer; a page heap that reuses resident
// pages in place, as tcmalloc's does and this one now does, pays it once.
//
// Layout: a region is kHugeRegionBytes of private anonymous memory mapped with MAP_NORESERVE
// (pages nobody writes cost neither RSS nor commit charge, except under overcommit_memory=2,
// where the kernel charges the whole reservation), plus a side map with one 32-bit entry per
// page. A free span's first and last pages carry 1 + the index of its span record; a live
// block's first page carries kLiveHead | its length in pages and its last page 0; other entries
// are stale and never read (none carries kLiveHead).
//
// Invariants (HugeRegionValidate): every region is tiled by live blocks and free spans; two free
// spans of the same state never touch (dirty pages are not coalesced with clean ones, so that
// the dirty byte count and calloc's zeroing stay exact); a span being purged (its madvise runs
// without the lock) is neither cut nor coalesced until it is clean.
//
// Thread-safety: one lock; madvise runs outside it, on spans marked purging.
#ifndef LETHE_ALLOC_HUGE_REGION_H_
#define LETHE_ALLOC_HUGE_REGION_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "chunk_registry.h"
#include "compiler.h"
#include "size_classes.h"

namespace lethe::internal {

inline constexpr size_t kLgHugeRegionBytes = 26;
inline constexpr size_t kHugeRegionBytes = size_t{1} << kLgHugeRegionBytes;  // 64 MiB
inline constexpr uint32_t kHugeRegionPages = kHugeRegionBytes >> kLgPageBytes;
// Larger blocks get a mapping of their own (huge.cc): a region holds at least two.
inline constexpr size_t kHugeRegionMaxBlockBytes = kHugeRegionBytes / 2;
// Freed blocks (or shrunk tails) larger than this stay dirty only while the dirty pages with
// them do not outnumber the pages of the blocks still live, and are purged at once otherwise.
// Why: a program that frees its last 16-32 MiB buffer has no use for its pages (jemalloc purges
// over 8 MiB always), but one with many such buffers live replaces them, and the freed one is
// the next one's pages. Cut from regions all the same, such blocks grow in place and leave their
// neighbours' dirty spans in place.
inline constexpr size_t kHugeRegionKeepMaxBytes = size_t{16} << 20;
// A large block that a realloc has to move (it outgrew its run and the pages after it) goes to a
// region from this length on, rather than to another run: a buffer that grows once grows again,
// and in a region the span after a block is not bounded by a chunk's end, nor cut by the small
// runs and large blocks of the page heaps, so its next growths are in place, past kLargeMaxBytes
// too (no copy into a huge block at 1 MiB). Runs are also best fits: the pages after a moved
// block were seldom free, so each growth was a copy that faulted in the whole new block.
inline constexpr size_t kGrowingRegionMinBytes = size_t{128} << 10;
inline constexpr size_t kMaxHugeRegions = 64;
// Span records, for every region. After a full purge there are no dirty spans and no two clean
// ones touch, so each is followed by a live block (>= kGrowingRegionMinBytes) or a region's end:
// at most 513 per region. When records run short, a full purge makes room (HugeRegionPut).
inline constexpr size_t kHugeSpanRecords = 32832;
static_assert(kMaxHugeRegions * (kHugeRegionBytes / kGrowingRegionMinBytes + 1) <=
              kHugeSpanRecords);
// Freed blocks stay dirty only once the process has asked for this many blocks over
// kLargeMaxBytes, or four times as many growing buffers moved in from runs: one that makes a huge
// block or two (python3 parsing a big file once) gains nothing from keeping them resident, and
// exits with them resident (issue 15 item 5); decoded images come by the dozen. Until then, a
// freed block stays dirty only while the dirty pages do not outnumber those of the blocks still
// live: a process that grows a buffer or two and drops them exits without them, one that keeps
// growing buffers reuses the pages.
inline constexpr uint64_t kHugeWarmupBlocks = 2;

// A block of `bytes` (a page multiple, > kLargeMaxBytes, or from kGrowingRegionMinBytes for a
// growing buffer) cut from a region; nullptr when it is
// larger than kHugeRegionMaxBlockBytes or no region has room and none can be reserved.
// *reused_bytes: the length of its start that may hold old data (dirty pages); the rest reads
// as zero.
void* HugeRegionTake(size_t bytes, size_t* reused_bytes);
// The same, the block's start aligned to `alignment` (a power of two): cut from a span of
// bytes + alignment - a page, whose ends go back as the spans they came from. nullptr also when
// that padded length is over kHugeRegionMaxBlockBytes.
void* HugeRegionTakeAligned(size_t bytes, size_t alignment, size_t* reused_bytes);
// Frees a block that HugeRegionTake returned (`bytes`: its current length); its pages stay dirty
// for reuse within LETHE_OPTIONS=huge_cache_kb (past it the oldest are purged, once they have
// been dirty for the excess grace, decay.h), or are purged at once before the warm-up
// (kHugeWarmupBlocks) or, for a block over kHugeRegionKeepMaxBytes, when the dirty pages would
// outnumber the live ones.
void HugeRegionPut(void* block, size_t bytes);
// Where a pointer's region is found without the lock or a search: regions are reserved at
// kHugeRegionBytes alignment, so each kHugeRegionBytes-aligned range of the 47-bit address space
// holds at most one. g_huge_region_at has 1 + its slot for each range (0: none; 2 MiB in .bss,
// of which a process writes a page or two), g_huge_region_maps each slot's side map (nullptr:
// the slot is free). Written under the regions' lock: the map first, then the range's entry;
// cleared in the other order before a region is unmapped.
inline constexpr size_t kHugeRegionRanges = size_t{1} << (kAddressBits - kLgHugeRegionBytes);
extern LETHE_HIDDEN constinit std::atomic<uint8_t> g_huge_region_at[kHugeRegionRanges];
extern LETHE_HIDDEN constinit std::atomic<uint32_t*> g_huge_region_maps[kMaxHugeRegions];
static_assert(kMaxHugeRegions < 256, "g_huge_region_at: a slot + 1 in a byte");
// A live block's first page entry in the side map: this bit | its length in pages.
inline constexpr uint32_t kHugeLiveHead = uint32_t{1} << 31;

// 1 + the slot of the region whose range holds `pointer`, 0 when none does (nor for addresses
// past the 47-bit space).
inline uint32_t HugeRegionSlotAt(const void* pointer) {
  const uintptr_t range = reinterpret_cast<uintptr_t>(pointer) >> kLgHugeRegionBytes;
  return range < kHugeRegionRanges ? g_huge_region_at[range].load(std::memory_order_acquire) : 0;
}

// The length of the live region block that starts at `block`, or 0 when no live block starts
// there. Takes no lock: for the owner of a block (realloc's and malloc_usable_size's fast path);
// a block freed or resized meanwhile by another thread is the caller's race (the entry read is
// then within some region's map, and may be stale).
inline size_t HugeRegionLiveBytes(const void* block) {
  const auto address = reinterpret_cast<uintptr_t>(block);
  if (address % kPageBytes != 0) return 0;
  const uint32_t slot = HugeRegionSlotAt(block);
  if (slot == 0) return 0;
  const uint32_t* map = g_huge_region_maps[slot - 1].load(std::memory_order_relaxed);
  if (map == nullptr) return 0;  // the region went meanwhile: not a live block's
  const uint32_t entry = __atomic_load_n(
      &map[(address & (kHugeRegionBytes - 1)) >> kLgPageBytes], __ATOMIC_RELAXED);
  return (entry & kHugeLiveHead) != 0 ? size_t{entry & ~kHugeLiveHead} << kLgPageBytes : 0;
}
// Grows the block in place into the free span(s) after it: to room_bytes (a growth step) when
// they are that long, else to new_bytes. Returns the new length, 0 when they are too short.
size_t HugeRegionGrowInPlace(void* block, size_t old_bytes, size_t new_bytes,
                             size_t room_bytes = 0);
// Shrinks the block in place; the tail becomes a dirty free span.
void HugeRegionShrink(void* block, size_t old_bytes, size_t new_bytes);
// Purges dirty spans freed at or before now_ns minus the regions' decay time (base_decay_ns,
// decay_ms, lengthened on refaults as an arena's: decay_adaptation.h; every span with
// base_decay_ns = 0 and now_ns = UINT64_MAX), and the oldest over huge_cache_kb once freed at or
// before now_ns - excess_grace_ns (the purge thread's ExcessGraceNs, decay.h), and unmaps regions
// left wholly free and clean; returns the next deadline (UINT64_MAX: nothing dirty).
uint64_t HugeRegionPurge(uint64_t now_ns, uint64_t base_decay_ns, uint64_t excess_grace_ns = 0);
// The regions' decay time now, for a base of base_decay_ns.
uint64_t HugeRegionDecayNs(uint64_t base_decay_ns);

struct HugeRegionStats {
  uint64_t dirty_bytes;     // in free spans, resident or maybe
  uint64_t free_spans;
  uint64_t regions;
  uint64_t metadata_bytes;  // the regions' side maps and the pages of g_huge_region_at written
  uint64_t reused_bytes;    // bytes of blocks cut from dirty spans, cumulative
  uint64_t grown_in_place;  // reallocs that grew a block in place, cumulative
};
HugeRegionStats GetHugeRegionStats();
// True when `pointer` lies in a region (live or free), for tests.
bool HugeRegionContains(const void* pointer);
// LETHE_CHECKs the invariants above.
void HugeRegionValidate();
// Test hook: at most `records` span records (0 restores kHugeSpanRecords), to reach the full
// purge that makes room.
void HugeRegionLimitRecordsForTesting(size_t records);
// Tests: the regions' decay back to its base, with nothing judged yet.
void HugeRegionResetDecayForTesting();

void HugeRegionLockForFork();
void HugeRegionUnlockAfterFork(bool child);

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_HUGE_REGION_H_
