// page_heap.h — the page-level allocator of one arena: runs of pages inside chunks.
//
// Who calls it: its arena (arena.cc, bins, the purger), always under the arena's lock; tests drive
// it directly. It owns its chunks (mapped through os.h, marked in the chunk registry).
//
// Algorithm (jemalloc 3 / mozjemalloc style, with the linear page map of chunk.h):
//  1. Free runs are kept in segregated lists, one per exact length in pages (1..253), and per
//     dirtiness (dirty = possibly resident, clean = purged/fresh). A bitmap per dirtiness marks
//     the non-empty lists, so the best fit (the shortest run >= the request) is found with at most
//     four word scans: O(1), no tree.
//  2. Which run of a list: the head. A run freed at a lower address than the current head goes
//     to the head, otherwise to the tail, so the head drifts to low addresses and allocation packs
//     the low end of the heap; high chunks empty out and are unmapped (an approximation of
//     lowest-address-first that stays O(1)).
//  3. Small runs take dirty runs first: their pages are written in full soon, so reusing resident
//     pages saves the faults. Large runs take clean runs first: a large block is often written
//     only at its start (a buffer with spare capacity), and on dirty pages its unwritten part
//     would stay resident for nothing; this is what lets purging lower the peak. Except runs of
//     kDirtyFirstLargePages (128 KiB) and more, and the run a realloc moves a block into: those
//     are written in full (decoded images, the copy), so they take dirty runs first, and on
//     clean pages each of their pages would be faulted in while the dirty pages of the block
//     freed before them waited to be purged.
//  4. Splitting takes the low end of the chosen run; the rest keeps its dirtiness and its place
//     in the dirty LRU. Only the map entries at the ends of the two pieces are written.
//  5. Freeing coalesces with the left and right neighbours of the same dirtiness, found by reading
//     the two entries adjacent to the run's ends. O(1).
//  6. A chunk that becomes entirely free is kept, dirty or clean, up to kMaxEmptyChunks per
//     heap; past that it is unmapped. Decay purges a kept chunk's pages like any dirty run; once
//     clean, it is unmapped when it has stayed empty for the decay time (UnmapIdleChunks, from
//     the decay pass), except the last one, so an idle heap keeps one; purge-all unmaps all.
//     Why keep them: buffers of 0.5-1 MiB take a chunk each, and mapping and unmapping one per
//     buffer costs a TLB shootdown to the other threads' CPUs each time; clean ones too, since
//     the dirty limit purges a chunk within milliseconds when buffers come in batches. A kept
//     clean chunk costs its header's 3 resident pages.
//  7. Purging takes dirty runs oldest first from the LRU, coalesces them with clean neighbours,
//     and returns their pages in one batch (os.h OsPurgeBatch) before the caller unlocks.
//  8. Parking: a freed large run of kParkMinPages..kParkMaxPages pages is kept whole (not
//     coalesced) in a list of its exact length, up to kParkPerLength per length and
//     kParkedMaxPages in all, and the next large request of that length takes it back (newest
//     first). Why: a block written only at its start, coalesced and split again at another
//     offset, leaves its written page resident in the middle of the next block while that
//     block's first page must be faulted in; reused whole, the written page is the next
//     owner's first page again (size-class allocators get this from their slots). A parked run
//     counts as dirty and sits in the dirty LRU, so decay, the dirty limit and purge-all take it
//     like any dirty run: those limits bound the parked pages, the quotas only choose which
//     freed runs stay whole. Why 128 per length: with many blocks of one length replaced at
//     random, the freed and requested counts of a length drift by hundreds.
//  9. Purging without the lock (the purger, for automatic arenas): the oldest dirty runs are
//     taken out of the lists under the arena's lock and marked purging (a large head with
//     kMapPurging: not live, not free, so no allocation takes them, no free coalesces into them
//     and their chunk stays mapped); their pages go back to the OS without the lock; then,
//     under the lock again, they are freed as clean runs. Why: madvise of a few MiB takes
//     milliseconds, and an allocation in that arena waited for it (issue 15 item 6).
// 10. Aligned large runs (alignment over a page): a run of pages + alignment / page - 1 pages
//     always holds an aligned block, but a freed aligned block is parked or listed at its own
//     length, too short for that. So first the parked and the dirty runs of each length in
//     between are checked for an aligned fit, newest parked and list head first, up to
//     kAlignedScanPerLength of each list and kAlignedScanBudget in all; else the longer run is
//     taken dirty first (an aligned buffer is mostly written in full). Why: without the check
//     an aligned buffer written and freed took fresh pages each time, and why deeper than the
//     heads: a run of L pages holds a block of P at its alignment only with odds
//     (L - P + 1) / (alignment / page).
// The measurements behind 3, 6, 8 and 10: tools/bench/alloc/README.md, "The figures behind the
// allocator's rules".
#ifndef LETHE_ALLOC_PAGE_HEAP_H_
#define LETHE_ALLOC_PAGE_HEAP_H_

#include <cstddef>
#include <cstdint>

#include "chunk.h"
#include "os.h"

namespace lethe::internal {

inline constexpr size_t kFreeListCount = kChunkUsablePages;
inline constexpr size_t kFreeListWords = (kFreeListCount + 63) / 64;
// Parking (step 8): the first large length (16 KiB) up to 128 KiB, at most 128 runs per length
// and 32 MiB in all per heap.
inline constexpr uint32_t kParkMinPages = PagesFor(kSmallMaxBytes + 1);
inline constexpr uint32_t kParkMaxPages = 32;
inline constexpr uint32_t kParkLengths = kParkMaxPages - kParkMinPages + 1;
inline constexpr uint32_t kParkPerLength = 128;
// How many free runs an aligned request looks at for a fit (step 10): per length and in all. The
// bound keeps a request that finds none to a few hundred list nodes.
inline constexpr uint32_t kAlignedScanPerLength = 64;
inline constexpr uint32_t kAlignedScanBudget = 256;
inline constexpr size_t kParkedMaxPages = 8192;
// Step 6: entirely free chunks kept mapped per heap.
inline constexpr uint32_t kMaxEmptyChunks = 64;
// A clean empty chunk's free-run node holds when it was first seen empty in dirty_since_ns
// (unused by clean runs otherwise); this value until a decay pass stamps it.
inline constexpr uint64_t kNotStamped = 0;
// Step 3: large runs of this length and more take dirty runs first.
inline constexpr uint32_t kDirtyFirstLargePages = 32;

// Runs taken out for purging without the lock (step 9): their address ranges.
struct PurgingRuns {
  static constexpr size_t kMax = OsPurgeBatch::kMaxRanges;
  void* addresses[kMax];
  size_t bytes[kMax];
  size_t count = 0;
  size_t decayed_pages = 0;  // of their pages, those taken for their age (not over the limit)
  // Returns the runs' pages to the OS (one batch); made without the arena's lock.
  void Purge() const;
  size_t pages() const;
};

class PageHeap {
 public:
  // `small_flags` go into every small run's map entries (kMapNoCache for a caller arena). A heap
  // that is all zero bytes is a valid empty heap with no flags: an automatic arena's is never
  // initialised (ArenasInit).
  void Init(uint32_t small_flags) { small_flags_ = small_flags; }

  // A run of `pages` (1..kChunkUsablePages) pages marked as one large block; nullptr when no chunk
  // can be mapped. *zeroed tells whether all its pages read as zero. `written`: the caller writes
  // most of the block at once (a realloc's copy), so dirty runs go first (step 3).
  void* AllocateLarge(uint32_t pages, bool* zeroed, bool written = false);
  // The same with the run's start aligned to `alignment` (a power of two > a page).
  void* AllocateLargeAligned(uint32_t pages, size_t alignment, uint64_t now_ns);
  // A run of `pages` pages marked as a small run of `klass`.
  void* AllocateSmallRun(uint32_t pages, uint32_t klass, bool* zeroed);
  // Frees the large run whose head is `page` (the caller checked the entry), as dirty: parked
  // when its length and the budget allow (step 8), else coalesced.
  void FreeLarge(Chunk* chunk, uint32_t page, uint64_t now_ns, bool park = true);
  // Frees the small run starting at `page`, as dirty.
  void FreeSmallRun(Chunk* chunk, uint32_t page, uint32_t pages, uint64_t now_ns);
  // Grows the large run at `page` to `new_pages` if the pages after it are free; false otherwise.
  bool GrowLargeInPlace(Chunk* chunk, uint32_t page, uint32_t new_pages);
  // Shrinks the large run at `page` to `new_pages` (>= 1), freeing its tail.
  void ShrinkLarge(Chunk* chunk, uint32_t page, uint32_t new_pages, uint64_t now_ns);

  // Purges dirty runs that became dirty at or before now_ns - decay_ns. Returns pages purged.
  size_t PurgeDecayed(uint64_t now_ns, uint64_t decay_ns);
  // Purges the oldest dirty runs until at most `max_dirty_pages` remain.
  size_t PurgeExcess(size_t max_dirty_pages);
  // Unmaps the clean empty chunks that have stayed empty for decay_ns, all but one (step 6);
  // returns since when the oldest one left has been empty, as OldestDirtyNs does for dirty runs
  // (UINT64_MAX: none will go). A chunk's emptiness is stamped by the first pass that sees it,
  // so it goes within two passes of decay_ns.
  uint64_t UnmapIdleChunks(uint64_t now_ns, uint64_t decay_ns);
  // Purges every dirty run and unmaps every empty chunk.
  size_t PurgeAll();
  // With no live run left (active_pages() == 0): unmaps every chunk without purging first and
  // leaves the heap as Init left it (the cumulative purge and clean-take counts stay). For a
  // caller arena whose last block went: its chunks go back whole.
  void ReleaseAll();
  // Step 9. Takes up to PurgingRuns::kMax of the oldest dirty runs while they are decayed
  // (dirty since now_ns - decay_ns or before), or while the dirty pages exceed max_dirty_pages
  // and the oldest has been dirty for excess_grace_ns, and marks them purging; returns how many.
  // The caller purges them unlocked, then gives them back.
  size_t TakeForPurge(uint64_t now_ns, uint64_t decay_ns, size_t max_dirty_pages,
                      uint64_t excess_grace_ns, PurgingRuns* runs);
  // Frees the runs of TakeForPurge, whose pages are gone, as clean runs.
  void ReturnPurged(const PurgingRuns& runs);
  size_t purging_pages() const { return purging_pages_; }
  // When the oldest dirty run became dirty; UINT64_MAX when there is none.
  uint64_t OldestDirtyNs() const;
  // The pages of up to `max_runs` dirty runs, half the oldest (those a purge takes first) and half
  // the newest, and how many of them are resident: a freed large run written only at its start
  // counts all its pages as dirty, and only the written ones cost memory.
  struct DirtySample {
    size_t pages = 0;
    size_t resident = 0;
  };
  DirtySample SampleDirty(uint32_t max_runs) const;

  size_t active_pages() const { return active_pages_; }
  size_t dirty_pages() const { return dirty_pages_; }  // parked runs included
  // What statistics call dirty: freed pages not yet given back, those of runs that a purge has
  // taken (TakeForPurge) included until ReturnPurged counts them purged. Without them, a reader
  // between the two saw the pages neither dirty nor purged.
  size_t unreturned_pages() const { return dirty_pages_ + purging_pages_; }
  size_t parked_pages() const { return parked_pages_; }
  size_t chunk_count() const { return chunk_count_; }
  uint64_t purged_pages_total() const { return purged_pages_total_; }
  // Clean pages (purged, or never written) handed out to runs, cumulative: each costs a fault
  // when written (decay_adaptation.h counts the purged ones that come back).
  uint64_t clean_pages_taken() const { return clean_pages_taken_; }
  size_t largest_free_run() const;  // for tests
  Chunk* first_chunk() const { return chunks_; }

  // Walks every chunk and list and LETHE_CHECKs every invariant of chunk.h and of the counters.
  void Validate() const;
  // Validate() at LETHE_DEBUG_LEVEL >= 2, after every operation that changes the map in bulk
  // (purge, large free, a small run's free, chunk unmaps), as mimalloc's expensive asserts do.
  void ValidateIfExpensive() const {
#if LETHE_DEBUG_LEVEL >= 2
    Validate();
#endif
  }

 private:
  struct Span {
    Chunk* chunk;
    uint32_t page;
    uint32_t pages;
  };

  // Best fit from the dirty lists then the clean ones, or the other way round (step 3).
  bool TakeRun(uint32_t pages, bool clean_first, Span* out, bool* zeroed);
  Chunk* NewChunk();
  void UnmapChunk(Chunk* chunk);
  void InsertFree(Chunk* chunk, uint32_t page, uint32_t pages, bool dirty, uint64_t since_ns,
                  FreeRunNode* lru_after);
  // Unlinks the free run starting at `page`; returns its LRU predecessor (for reinsertion).
  FreeRunNode* RemoveFree(Chunk* chunk, uint32_t page);
  // Frees [page, page + pages) with the given dirtiness, coalescing with like neighbours.
  void ReleaseRun(Chunk* chunk, uint32_t page, uint32_t pages, bool dirty, uint64_t now_ns);
  // Step 5, for ReleaseRun and PurgeRun: merges the run [page, page + pages) (out of every list)
  // with the free neighbours of the same dirtiness and inserts the result (InsertCoalesced).
  void Coalesce(Chunk* chunk, uint32_t page, uint32_t pages, bool dirty, uint64_t since_ns);
  // Inserts a coalesced free run, or retains/unmaps its chunk when the run is the whole chunk.
  void InsertCoalesced(Chunk* chunk, uint32_t page, uint32_t pages, bool dirty, uint64_t since_ns);
  // Takes the run out of the dirty lists as clean and adds its pages to `batch`.
  void PurgeRun(FreeRunNode* node, OsPurgeBatch* batch);
  // Purges the oldest dirty runs while keep_going() holds, in one batch flushed before it returns
  // (the caller still holds the arena's lock: no run is handed out before its pages are gone).
  // Returns the pages purged.
  template <typename KeepGoing>
  size_t PurgeOldestWhile(KeepGoing keep_going);
  void MarkLarge(Chunk* chunk, uint32_t page, uint32_t pages);
  // The dirty LRU: `node` enters after `after` (nullptr: at the head; kLruTail: at the tail);
  // LruRemove returns its predecessor.
  void LruInsert(FreeRunNode* node, uint64_t since_ns, FreeRunNode* after);
  FreeRunNode* LruRemove(FreeRunNode* node);
  // Step 10: a parked run (the newest) or a dirty free run (the first listed) of each length
  // from `pages` up to `total` - 1 that holds `pages` pages at `alignment`, taken out whole into
  // `out`; false when none does.
  bool TakeAlignedFit(uint32_t pages, uint32_t total, size_t alignment, Span* out);
  // Step 8. Park keeps the freed run [page, page + pages) whole; false when it may not.
  bool Park(Chunk* chunk, uint32_t page, uint32_t pages, uint64_t now_ns);
  // Takes the newest parked run of exactly `pages` pages back as a live large run; nullptr if
  // there is none.
  void* TakeParked(uint32_t pages);
  // Takes a parked run out of its list and the LRU; its entries still read as a large run.
  void Unpark(Chunk* chunk, uint32_t page);

  uint32_t small_flags_ = 0;
  Chunk* chunks_ = nullptr;  // ring through Chunk::prev/next
  // Chunks whose usable pages are one free run (IsEmpty), kept up to kMaxEmptyChunks (step 6);
  // counted where such a run enters and leaves the free lists.
  uint32_t empty_chunks_ = 0;
  // The batch of the purge in progress, flushed before any chunk is unmapped (a range left in it
  // could otherwise be purged after its address was mapped again for someone else).
  OsPurgeBatch* purge_batch_ = nullptr;
  FreeRunNode* lists_[2][kFreeListCount] = {};  // [dirty][pages - 1]
  uint64_t nonempty_[2][kFreeListWords] = {};
  // [pages - kParkMinPages]: circular lists through size_prev/size_next, head = newest.
  FreeRunNode* parked_[kParkLengths] = {};
  uint32_t parked_count_[kParkLengths] = {};
  size_t parked_pages_ = 0;
  FreeRunNode* lru_ = nullptr;  // ring of dirty runs, the oldest at the head
  size_t active_pages_ = 0;
  size_t dirty_pages_ = 0;
  size_t chunk_count_ = 0;
  uint64_t purged_pages_total_ = 0;
  uint64_t clean_pages_taken_ = 0;
  size_t purging_pages_ = 0;  // in runs taken for purging (step 9)
};

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_PAGE_HEAP_H_
