// huge.h — blocks larger than kLargeMaxBytes (and growing buffers from kGrowingRegionMinBytes:
// huge_region.h), recorded in a hash table (address -> bytes, owner, where they come from) so
// that free, usable_size and realloc find them. Decoded surfaces of
// 1 MiB and more live here. Up to kHugeRegionMaxBlockBytes they are cut from huge regions
// (huge_region.h), which keep a freed block's pages resident for the next block at the same
// place until decay; larger ones, and those aligned beyond a page, are mappings of their own,
// unmapped when freed and resized with mremap.
//
// Thread-safety: one lock around the table; the system calls are made outside it.
#ifndef LETHE_ALLOC_HUGE_H_
#define LETHE_ALLOC_HUGE_H_

#include <cstddef>
#include <cstdint>

#include "huge_region.h"

namespace lethe::internal {

// A block of at least `bytes`, aligned to `alignment` (>= a page); nullptr if the OS refuses.
// *reused_bytes: the length of its start that may hold old data (a region's dirty pages); the
// rest reads as zero. `owner`: the caller arena it counts to (nullptr: none), kept with it.
void* HugeAllocate(size_t bytes, size_t alignment, size_t* reused_bytes, void* owner);
// The mapped size of the huge block at `pointer`, or 0 when it is not one.
size_t HugeSize(const void* pointer);
// Frees the huge block (to its region, or unmapped); false when `pointer` is not one. *owner and *bytes
// get the block's owner (HugeAllocate) and mapped size.
bool HugeFree(void* pointer, void** owner, size_t* bytes);
// Resizes the block; nullptr when the OS refuses (the block is then intact). A region's block
// stays as it is when `bytes` is within a quarter under its size, else shrinks in place (the tail
// becomes free, dirty), grows in place into free pages after it, or else is copied once into a
// new block with room to grow (GrowthPages); a mapping of its own is resized with mremap.
// On success *owner, *old_bytes and *new_bytes get the block's owner and its former and new mapped
// sizes; the owner stays. On failure *old_bytes is 0 when `pointer` is not a huge block.
void* HugeReallocate(void* pointer, size_t bytes, void** owner, size_t* old_bytes,
                     size_t* new_bytes);
// Whether realloc keeps a region block of `block_bytes` as it is for a request of `bytes`: within
// its growth step, or shrunk by less than a quarter.
inline bool HugeRegionBlockKept(size_t block_bytes, size_t bytes) {
  return bytes <= block_bytes && bytes > block_bytes - block_bytes / 4;
}

struct HugeStats {
  uint64_t live_bytes;
  uint64_t live_count;
  uint64_t metadata_bytes;  // the table and the regions' side maps
  uint64_t cached_bytes;  // dirty pages of freed blocks in the regions
};
HugeStats GetHugeStats();
void HugeLockForFork();
void HugeUnlockAfterFork(bool child);

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_HUGE_H_
