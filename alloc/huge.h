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
void* HugeAllocate(size_t bytes, size_t alignment);
// The mapped size of the huge block at `pointer`, or 0 when it is not one.
size_t HugeSize(const void* pointer);
// Frees the huge block; false when `pointer` is not one.
bool HugeFree(void* pointer);
// Resizes with mremap (may move); nullptr when the OS refuses (the block is then intact).
void* HugeReallocate(void* pointer, size_t bytes);

struct HugeStats {
  uint64_t live_bytes;
  uint64_t live_count;
  uint64_t table_bytes;
};
HugeStats GetHugeStats();
void HugeLockForFork();
void HugeUnlockAfterFork(bool child);

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_HUGE_H_
