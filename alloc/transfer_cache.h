// transfer_cache.h — an arena's transfer cache: per small class, a stack of regions that thread
// caches gave back from full bins, for the next thread-cache refill. A burst of frees followed by a
// burst of allocations (a page closed, the next one parsed) then moves regions between thread
// caches as pointers, without setting bits in the runs' bitmaps and finding them again (bin.cc).
//
// Who calls it: the arena (arena.cc), under its lock; decay and lethe_purge through the arena.
// Automatic arenas only: a caller arena's regions never enter thread caches.
//
// Invariants: a parked region is a region start of its class, allocated in its run's bitmap and
// not counted in its bin's regions_out (nor in the held bytes of stats.h), so that its run stays
// and the statistics report it apart (transfer_cache_bytes). At most CacheMaxCapacity regions per class (two flush
// batches of a thread-cache bin at its ceiling; at most TotalCacheSlots per arena). Its run
// cannot return to the page heap while it is parked, so TransferTrim gives back, per class, what
// stayed unused since the previous trim (its low-water mark), at each decay pass over the arena
// (the purge thread's, or the freeing thread's without one); lethe_purge gives back everything.
// While regions stay parked, the purge thread passes at least every kTransferTrimNs, so that what
// a burst left is back in its runs within two such intervals of the last take.
//
// Checks: a region is parked only after the checks a flush to the bitmap makes (its page shows
// the class, it is a region start, and the bitmap says it is allocated); one that fails goes to
// BinFreeBatch, which aborts or sends it to its page's bin. A region freed twice while both copies
// sit in caches is not caught in a release build, as in the thread cache; with LETHE_DEBUG_LEVEL
// >= 1 the stack is scanned for each region parked.
#ifndef LETHE_ALLOC_TRANSFER_CACHE_H_
#define LETHE_ALLOC_TRANSFER_CACHE_H_

#include <atomic>
#include <cstdint>

#include "bin.h"
#include "cache_capacity.h"
#include "page_heap.h"
#include "size_classes.h"

namespace lethe::internal {

inline constexpr uint64_t kTransferTrimNs = 125000000;  // 125 ms

struct TransferCache {
  std::atomic<void**> slots{nullptr};  // TotalCacheSlots() pointers, mapped at the first park
  uint16_t count[kSmallClassCount] = {};
  uint16_t low_water[kSmallClassCount] = {};  // the lowest count since the last trim
};

// Maps the slots when they are not yet (no lock held: BaseAllocate); false when that failed.
bool TransferReady(TransferCache* cache);
// Parks what it can of the `count` regions of `klass` at `pointers` (a thread-cache bin's flush,
// all of the arena's chunks) and moves the rest to the front; returns how many are left there
// for BinFreeBatch: those past the capacity, and those that fail a check (see above).
uint32_t TransferPark(TransferCache* cache, uint32_t klass, void** pointers, uint32_t count);
// Takes up to `count` regions of `klass`, the most recently parked first; returns how many.
uint32_t TransferTake(TransferCache* cache, uint32_t klass, void** out, uint32_t count);
// Gives back to their bins, per class, the regions unused since the last trim (`all`: every
// one), oldest first; returns how many stay parked.
uint64_t TransferTrim(TransferCache* cache, Bin* bins, PageHeap* heap, uint64_t now_ns, bool all);
// The stack of `klass`: its count[klass] regions, the oldest first (slots mapped).
void** TransferStack(const TransferCache& cache, uint32_t klass);
// LETHE_CHECKs the invariants above.
void TransferValidate(const TransferCache& cache);

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_TRANSFER_CACHE_H_
