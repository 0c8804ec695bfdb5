// stats.h — the allocator's counters and the snapshot behind lethe_stats()/lethe_stats_print().
//
// Most figures are derived when asked (from the arenas under their locks, the huge table, the
// thread caches); the few event counters kept here are relaxed atomics bumped on slow paths only,
// so the fast paths pay nothing for statistics.
#ifndef LETHE_ALLOC_STATS_H_
#define LETHE_ALLOC_STATS_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "lethe/alloc.h"
#include "size_classes.h"

namespace lethe::internal {

void CountUncachedAllocation();
void CountUncachedFree();
void CountHugeAllocation();
void CountHugeFree();
void CountOomEvent();
// Cumulative requested vs usable bytes (LETHE_OPTIONS=slop:1).
void RecordSlop(size_t requested, size_t usable);

// Bytes held outside the arenas and the huge table (live blocks plus blocks parked in thread
// caches), kept as one process-wide atomic by the slow paths that hand blocks out or take them
// back (arena.cc, huge.cc), with its high-water mark behind peak_allocated_bytes. The fast paths
// (thread-cache pops and pushes) do not touch it. Exact under any interleaving: every rise is
// compared with the peak using the value its own fetch_add produced.
void AddHeldBytes(uint64_t bytes);
void SubtractHeldBytes(uint64_t bytes);
// Sets the peak to the current held bytes (lethe_stats_reset_peak).
void ResetPeakHeldBytes();

struct ClassStats {
  uint64_t live_regions;   // handed to users (not in thread caches)
  uint64_t cached_regions; // parked in thread caches
  uint64_t transfer_regions;  // parked in the arenas' transfer caches
  uint64_t run_count;
  uint64_t runs_created;
};

// Fills *out (and per-class figures when `classes` is not null, and the bytes of parked large
// runs, a part of dirty_bytes (page_heap.h step 8), when `parked_bytes` is not null).
void CollectStats(lethe_stats_t* out, ClassStats* classes, uint64_t* parked_bytes = nullptr);
// Writes the human-readable report; uses no heap (formats into a stack buffer).
void PrintStats(FILE* out);

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_STATS_H_
