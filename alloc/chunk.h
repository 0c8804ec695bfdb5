// chunk.h — a chunk: 1 MiB of address space aligned to 1 MiB, whose first pages hold its header
// with the linear page map (one 32-bit entry per page) and one free-run node per page.
//
// Who touches it: the owning arena, under its lock (PageHeap and the bins). The free path reads
// the entry of a live block's page without the lock: entries of allocated pages do not change
// while the block is live.
//
// Page map entry (uint32_t):
//
//   31                                12 11               4   3   2   1   0
//  +------------------------------------+------------------+---+---+-------+
//  |        count / offset (20 bits)    |   class (8 bits) | Z | D | kind  |
//  +------------------------------------+------------------+---+---+-------+
//
//  kind  00 kFree           page of a free run. count = run length in pages, valid at the first
//                           and last page of the run only (the interior is never read).
//        01 kLargeHead      first page of a large run; count = its length in pages. Class bit 0
//                           (P, kMapParked) set: the run is parked (freed, kept whole for a
//                           request of its exact length, page_heap.h step 8), not live.
//                           Class bit 1 (U, kMapPurging) set: the run is being purged by the
//                           purger without the arena's lock (page_heap.h step 9), not live.
//                           Class bit 2 (T, kMapThreadCached) set: freed by the program into a
//                           thread cache's large bin, still out of its arena, not live. Set and
//                           cleared by the cache's owner without the arena's lock: the arena never
//                           writes the entries of a run that is out, and reads such a head (a
//                           neighbour's, when it coalesces) with LoadSharedEntry, for its kind.
//        10 kLargeInterior  other pages of a large run; count = distance to the head.
//        11 kSmall          page of a small-object run; class = its size class, count = distance
//                           to the run's first page (a run has at most 16 pages).
//  D     dirty: the free run's pages may be resident (freed, not yet purged). Free runs only.
//  N     (bit 3 of a kSmall entry) no-cache: the run belongs to a caller-created arena, so the free
//        fast path sends its regions to their arena, never into a thread cache.
//  Z     zeroed: the free run's pages read as zero (fresh from mmap, or purged with
//        MADV_DONTNEED). Free runs only. With MADV_DONTNEED purging Z == !D; the two are kept
//        apart because a lazy purge (MADV_FREE) would give clean pages that are not zero.
//
//  Examples (pages 3..10 of a chunk):
//    large run of 3 pages    |H 3|I 1|I 2|
//    parked run of 4 pages   |H 4 P|I 1|I 2|I 3|
//    thread-cached, 4 pages  |H 4 T|I 1|I 2|I 3|
//    small run, class 13, 2p |S13 0|S13 1|
//    free dirty run of 3     |F 3 D| ? |F 3 D|     (? = stale, never read)
//
// Invariants (checked by PageHeap::Validate):
//  - pages [0, kChunkHeaderPages) are the header; the rest is tiled by runs, no gaps;
//  - no two free runs of the same dirtiness are adjacent (they would have been coalesced);
//  - every free run is in exactly one size list of its dirtiness, dirty ones also in the LRU;
//  - every parked run is in the parked list of its length and in the LRU, counted as dirty;
//  - an allocated run's pages all carry its kind (so a free() of a page inside a free run or of
//    a large run's interior finds a non-head entry and is rejected).
#ifndef LETHE_ALLOC_CHUNK_H_
#define LETHE_ALLOC_CHUNK_H_

#include <cstddef>
#include <cstdint>

#include "size_classes.h"

namespace lethe::internal {

class PageHeap;

enum class PageKind : uint32_t { kFree = 0, kLargeHead = 1, kLargeInterior = 2, kSmall = 3 };

inline constexpr uint32_t kMapKindMask = 3;
inline constexpr uint32_t kMapDirty = 1u << 2;
inline constexpr uint32_t kMapZeroed = 1u << 3;
inline constexpr uint32_t kMapClassShift = 4;
inline constexpr uint32_t kMapCountShift = 12;

inline constexpr uint32_t kMapParked = 1u << kMapClassShift;  // large heads only
inline constexpr uint32_t kMapPurging = 2u << kMapClassShift;  // large heads only
inline constexpr uint32_t kMapThreadCached = 4u << kMapClassShift;  // large heads only
inline constexpr uint32_t kMapNoCache = kMapZeroed;            // small pages only (N above)

constexpr PageKind MapKind(uint32_t entry) { return static_cast<PageKind>(entry & kMapKindMask); }
// The head of a live large block: kLargeHead with no flag (a parked head is freed memory).
constexpr bool MapLiveLargeHead(uint32_t entry) {
  return (entry & ((1u << kMapCountShift) - 1)) == static_cast<uint32_t>(PageKind::kLargeHead);
}
constexpr bool MapParked(uint32_t entry) {
  return MapKind(entry) == PageKind::kLargeHead && (entry & kMapParked) != 0;
}
constexpr bool MapPurging(uint32_t entry) {
  return MapKind(entry) == PageKind::kLargeHead && (entry & kMapPurging) != 0;
}
constexpr bool MapThreadCached(uint32_t entry) {
  return MapKind(entry) == PageKind::kLargeHead && (entry & kMapThreadCached) != 0;
}
constexpr uint32_t MapCount(uint32_t entry) { return entry >> kMapCountShift; }
constexpr uint32_t MapClass(uint32_t entry) { return (entry >> kMapClassShift) & 0xff; }
constexpr bool MapDirty(uint32_t entry) { return (entry & kMapDirty) != 0; }
constexpr bool MapZeroed(uint32_t entry) { return (entry & kMapZeroed) != 0; }

constexpr uint32_t MapFree(uint32_t pages, bool dirty) {
  return (pages << kMapCountShift) | (dirty ? kMapDirty : kMapZeroed);
}
constexpr uint32_t MapLargeHead(uint32_t pages) {
  return (pages << kMapCountShift) | static_cast<uint32_t>(PageKind::kLargeHead);
}
constexpr uint32_t MapLargeInterior(uint32_t offset) {
  return (offset << kMapCountShift) | static_cast<uint32_t>(PageKind::kLargeInterior);
}
constexpr uint32_t MapSmall(uint32_t klass, uint32_t offset, uint32_t flags = 0) {
  return (offset << kMapCountShift) | (klass << kMapClassShift) | flags |
         static_cast<uint32_t>(PageKind::kSmall);
}
// A small page whose regions a thread cache may take (not a caller arena's).
constexpr bool MapCachedSmall(uint32_t entry) {
  return (entry & (kMapKindMask | kMapNoCache)) == static_cast<uint32_t>(PageKind::kSmall);
}

// Links of a free or parked run, used at the run's first page only. Kept in the header, not in
// the run, so that listing a purged run does not fault its pages back in. While pages form a
// small run, their slots hold that run's RunHeader and bitmap instead (bin.h); the page heap
// reads the node of a free or parked run's first page only.
struct FreeRunNode {
  FreeRunNode* size_prev;
  FreeRunNode* size_next;
  FreeRunNode* dirty_prev;   // LRU of dirty runs, oldest first
  FreeRunNode* dirty_next;
  uint64_t dirty_since_ns;   // when the run (or its newest part) became dirty
};

struct Chunk {
  PageHeap* heap;      // owner; its arena's lock guards everything below
  Chunk* prev;         // the heap's ring of chunks
  Chunk* next;
  uint64_t reserved;
  uint32_t map[kChunkPages];
  FreeRunNode nodes[kChunkPages];
};

static_assert(sizeof(FreeRunNode) == kPageNodeBytes, "small runs keep headers in these slots");
static_assert(sizeof(Chunk) <= kChunkHeaderPages * kPageBytes, "kChunkHeaderPages too small");
static_assert(sizeof(Chunk) > (kChunkHeaderPages - 1) * kPageBytes, "kChunkHeaderPages too large");

inline Chunk* ChunkOf(const void* pointer) {
  return reinterpret_cast<Chunk*>(reinterpret_cast<uintptr_t>(pointer) & ~(kChunkBytes - 1));
}
inline uint32_t PageOf(const Chunk* chunk, const void* pointer) {
  return static_cast<uint32_t>(
      (reinterpret_cast<uintptr_t>(pointer) - reinterpret_cast<uintptr_t>(chunk)) >> kLgPageBytes);
}
inline char* PageAddress(Chunk* chunk, uint32_t page) {
  return reinterpret_cast<char*>(chunk) + (size_t{page} << kLgPageBytes);
}
inline uint32_t NodePage(const Chunk* chunk, const FreeRunNode* node) {
  return static_cast<uint32_t>(node - chunk->nodes);
}
// The entry of `page` where it may be the head of a run in some thread's large bin (a
// neighbour's head, or any page of a validation walk): that thread flips the T flag without the
// arena's lock, so the read is atomic too (relaxed; the kind bits it tests never change meanwhile).
inline uint32_t LoadSharedEntry(const Chunk* chunk, uint32_t page) {
  return __atomic_load_n(&chunk->map[page], __ATOMIC_RELAXED);
}
// Sets the T flag of the live large run `head` (kMapThreadCached above), or clears it again: the
// run's head entry becomes MapLargeHead(pages), with the flag when `cached`. A relaxed atomic
// store, the other side of LoadSharedEntry.
inline void MarkThreadCached(void* head, uint32_t pages, bool cached) {
  Chunk* chunk = ChunkOf(head);
  __atomic_store_n(&chunk->map[PageOf(chunk, head)],
                   MapLargeHead(pages) | (cached ? kMapThreadCached : 0), __ATOMIC_RELAXED);
}

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_CHUNK_H_
