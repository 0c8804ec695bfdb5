// base.h — the allocator's own metadata memory (thread caches, arena bookkeeping that is not in
// the static arena table): bump allocation from mapped 64 KiB blocks, never returned to the OS.
// Thread caches of exited threads are recycled by thread_cache.cc, so the total is bounded by the
// peak number of threads.
//
// Thread-safe (one lock). Never calls malloc.
#ifndef LETHE_ALLOC_BASE_H_
#define LETHE_ALLOC_BASE_H_

#include <cstddef>

namespace lethe::internal {

// `bytes` of zeroed memory aligned to 64; nullptr if the OS refuses.
void* BaseAllocate(size_t bytes);
size_t BaseMappedBytes();
void BaseLockForFork();
void BaseUnlockAfterFork(bool child);

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_BASE_H_
