// huge.h — blocks larger than kLargeMaxBytes: their own page-granular mappings, recorded in a
// hash table (address -> mapped bytes) so that free, usable_size and realloc find them, grown and
// shrunk with mremap. Decoded surfaces of 1 MiB and more live here; munmap returns them to the OS
// the moment they are freed.
//
// Thread-safety: one lock around the table; the system calls are made outside it.
#ifndef LETHE_ALLOC_HUGE_H_
#define LETHE_ALLOC_HUGE_H_

#include <cstddef>
#include <cstdint>

namespace lethe::internal {

// A block of at least `bytes`, aligned to `alignment` (>= a page); nullptr if the OS refuses.
// *zeroed tells whether it reads as zero (a fresh mapping; a reused cached one does not).
void* HugeAllocate(size_t bytes, size_t alignment, bool* zeroed);
// The mapped size of the huge block at `pointer`, or 0 when it is not one.
size_t HugeSize(const void* pointer);
// Frees the huge block; false when `pointer` is not one. Blocks up to 16 MiB are kept in a small
// cache (at most 16 mappings, 64 MiB) for reuse and counted as dirty until purged.
bool HugeFree(void* pointer);
// Unmaps cached mappings freed at or before now_ns - decay_ns (all with decay_ns = 0 and now_ns =
// UINT64_MAX); returns the next deadline (UINT64_MAX: none).
uint64_t HugeCachePurge(uint64_t now_ns, uint64_t decay_ns);
// Resizes with mremap (may move); nullptr when the OS refuses (the block is then intact).
void* HugeReallocate(void* pointer, size_t bytes);

struct HugeStats {
  uint64_t live_bytes;
  uint64_t live_count;
  uint64_t table_bytes;
  uint64_t cached_bytes;
};
HugeStats GetHugeStats();
void HugeLockForFork();
void HugeUnlockAfterFork(bool child);

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_HUGE_H_
