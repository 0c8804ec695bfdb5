// huge.h — blocks larger than kLargeMaxBytes: their own page-granular mappings, recorded in a
// hash table (address -> bytes and extents) so that free, usable_size and realloc find them,
// grown with mremap. Decoded surfaces of 1 MiB and more live here. A freed block's pages go to
// the huge cache (huge_cache.h), which cuts or assembles the next huge blocks from them and
// unmaps them when they decay, on lethe_purge, or when its bounds are reached.
//
// Thread-safety: one lock around the table; the system calls are made outside it.
#ifndef LETHE_ALLOC_HUGE_H_
#define LETHE_ALLOC_HUGE_H_

#include <cstddef>
#include <cstdint>

#include "huge_cache.h"

namespace lethe::internal {

// A block of at least `bytes`, aligned to `alignment` (>= a page); nullptr if the OS refuses.
// *reused_bytes: the length of its start that holds old data (pages from the huge cache); the
// rest reads as zero.
void* HugeAllocate(size_t bytes, size_t alignment, size_t* reused_bytes);
// The mapped size of the huge block at `pointer`, or 0 when it is not one.
size_t HugeSize(const void* pointer);
// The extents of the huge block at `pointer`; false when it is not one.
bool HugeLayoutOf(const void* pointer, HugeLayout* layout);
// Frees the huge block into the huge cache; false when `pointer` is not one.
bool HugeFree(void* pointer);
// Resizes the block; nullptr when the OS refuses (the block is then intact). Shrinking returns
// the tail to the OS (mremap; munmap for an assembled block's tail); growing uses mremap (in
// place, or moved with its pages), except for a block assembled from several VMAs, which is
// copied once into one fresh mapping.
void* HugeReallocate(void* pointer, size_t bytes);

struct HugeStats {
  uint64_t live_bytes;
  uint64_t live_count;
  uint64_t table_bytes;
  uint64_t cached_bytes;  // in the huge cache
};
HugeStats GetHugeStats();
void HugeLockForFork();
void HugeUnlockAfterFork(bool child);

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_HUGE_H_
