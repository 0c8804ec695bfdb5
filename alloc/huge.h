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
// rest reads as zero. `owner`: the caller arena it counts to (nullptr: none), kept with it.
void* HugeAllocate(size_t bytes, size_t alignment, size_t* reused_bytes, void* owner);
// The mapped size of the huge block at `pointer`, or 0 when it is not one.
size_t HugeSize(const void* pointer);
// The extents of the huge block at `pointer`; false when it is not one.
bool HugeLayoutOf(const void* pointer, HugeLayout* layout);
// Frees the huge block into the huge cache; false when `pointer` is not one. *owner and *bytes
// get the block's owner (HugeAllocate) and mapped size.
bool HugeFree(void* pointer, void** owner, size_t* bytes);
// Resizes the block; nullptr when the OS refuses (the block is then intact). Shrinking returns
// the tail to the OS (mremap; munmap for an assembled block's tail); growing uses mremap (in
// place, or moved with its pages), except for a block assembled from several VMAs, which is
// copied once into one fresh mapping.
// On success *owner and *old_bytes get the block's owner and former mapped size (the new one is
// `bytes` rounded up to pages); the owner stays.
void* HugeReallocate(void* pointer, size_t bytes, void** owner, size_t* old_bytes);

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
