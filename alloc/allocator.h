// allocator.h — the allocator's entry points, shared by the lethe_* API (api.cc) and the malloc
// family (malloc_exports.cc). The fast paths are inline: a thread-cache pop for malloc, a page-map
// read and a thread-cache push for free. Everything else is in allocator.cc.
//
// Thread-safe; never throws; failures return nullptr with errno = ENOMEM.
#ifndef LETHE_ALLOC_ALLOCATOR_H_
#define LETHE_ALLOC_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>

#include "bin.h"
#include "chunk.h"
#include "chunk_registry.h"
#include "compiler.h"
#include "lethe/check.h"
#include "oom.h"
#include "options.h"
#include "size_classes.h"
#include "thread_cache.h"

namespace lethe::internal {

// Initialises on first use (no allocation); true once ready.
bool EnsureInit();

// `written`: the bytes the caller writes at once from the block's start (realloc's copy; see
// TryAllocate), 0 when none are known.
void* AllocateSlow(size_t size, size_t alignment, bool zero, size_t written = 0) noexcept;
void* AllocateZeroed(size_t count, size_t size);
void* AllocateAligned(size_t alignment, size_t size);
void* Reallocate(void* pointer, size_t size);
size_t UsableSize(const void* pointer);
// Free's slow end for a pointer in an arena chunk: finds the chunk and page again, so that free's
// fast path keeps no registers alive for it.
void FreeInChunkSlow(void* pointer) noexcept;
void FreeNotInChunk(void* pointer) noexcept;
void FreeToFullCacheBin(ThreadCache* cache, uint32_t klass, void* pointer) noexcept;
void RecordSlop(size_t requested, size_t usable);
[[noreturn]] void InvalidPointer(const void* pointer);

// Free's fast-path test of a pointer into a small page before the region enters the cache.
// With LETHE_DEBUG_LEVEL >= 1 it is exact: a region start of the run (the multiply-and-rotate test
// of size_classes.h). Release builds test only the alignment every region has (8 bytes) and leave
// the exact test to the flush that returns the region to its arena (bin.cc's FreeRegion: region
// start, then the bitmap's double-free bit), as they already leave double frees: 14 fewer
// instructions per free (tools/bench/alloc/README.md). The price: a 8-aligned interior pointer
// freed in a release build may be handed out by the next malloc of its class before a flush
// catches it, as a double free may.
LETHE_ALWAYS_INLINE bool MayBeCachedRegion(const void* pointer, uint32_t entry, uint32_t klass) {
#if LETHE_DEBUG_LEVEL >= 1
  // The run starts MapCount(entry) pages below this page: the offset from the run's start is
  // the offset within this page plus that many pages (the entry's count field, in place).
  uint32_t offset = (static_cast<uint32_t>(reinterpret_cast<uintptr_t>(pointer)) &
                     (kPageBytes - 1)) +
                    (entry & ~((1u << kMapCountShift) - 1));
  return IsRegionStart(offset, klass);
#else
  static_assert(kSmallSizes[0] == 8, "every region is 8-aligned");
  (void)entry;
  (void)klass;
  return (reinterpret_cast<uintptr_t>(pointer) & 7) == 0;
#endif
}

// The fast paths below keep to what every call must do: one TLS load (never null: g_no_cache
// stands for "no cache" and sends both paths to their slow ends), one flag load or-ed into the
// size (fail-after or slop counting send every allocation to the slow path), the bin, and on
// malloc's one countdown that paces the GC step and, with what each step adds to the count, gives
// the statistics theirs (free's count is derived: thread_cache.h). They call nothing but in tail
// position, so they need no stack frame.
//
// malloc's fast path: a block of `size` from this thread's cache, or nullptr when the cache has
// none for it (the caller takes its slow path: AllocateSlow, or operator new's).
LETHE_ALWAYS_INLINE void* AllocateCached(size_t size) {
  ThreadCache* cache = t_cache;
  if (LETHE_LIKELY(SmallAndFast(size))) {
    CacheBin& bin = *reinterpret_cast<CacheBin*>(reinterpret_cast<char*>(cache->bins) +
                                                 SmallClassOffsetOf(size));
    void* block = bin.TryPop();
    if (LETHE_UNLIKELY(block == nullptr)) return nullptr;
    if (LETHE_UNLIKELY(--cache->allocation_countdown == 0)) {
      return ThreadCacheGcThenReturn(cache, block);
    }
    return block;
  } else if (size - (kSmallMaxBytes + 1) < kLargeCacheMaxPages * kPageBytes -
                                                                    kSmallMaxBytes &&
             !SlowAllocations()) {
    // A cached large run of the same page count (thread_cache.h).
    return ThreadCacheTakeLarge(cache, LargeClassPages(PagesFor(size)));
  }
  return nullptr;
}

LETHE_ALWAYS_INLINE void* Allocate(size_t size) {
  if (void* block = AllocateCached(size)) return block;
  return AllocateSlow(size, 0, false);
}

// Free of a pointer in an arena chunk whose page's entry is `entry`, read by the caller.
LETHE_ALWAYS_INLINE void FreeInChunk(void* pointer, uint32_t entry) {
  ThreadCache* cache = t_cache;
  // A caller arena's regions (kMapNoCache) go to their arena: FreeInChunkSlow. Without a cache
  // (g_no_cache), the bin is full: FreeToFullCacheBin makes the thread's cache, or when it may
  // have none, sends the region to FreeInChunkSlow.
  if (LETHE_LIKELY(MapCachedSmall(entry))) {
    if (LETHE_UNLIKELY(!MayBeCachedRegion(pointer, entry, MapClass(entry)))) {
      InvalidPointer(pointer);
    }
    // The entry's class field, in place, is the bin's byte offset (16-byte bins at offset 0).
    CacheBin& bin = *reinterpret_cast<CacheBin*>(reinterpret_cast<char*>(cache->bins) +
                                                 (entry & (0xffu << kMapClassShift)));
    if (LETHE_UNLIKELY(bin.full())) return FreeToFullCacheBin(cache, MapClass(entry), pointer);
#if LETHE_DEBUG_LEVEL >= 1
    for (void** slot = bin.slots(); slot != bin.top; ++slot) {
      if (*slot == pointer) lethe_fatal_pointer("free(): double free ", pointer, "");
    }
#endif
    bin.Push(pointer);
    return;
  }
  FreeInChunkSlow(pointer);
}

// free(NULL) needs no test of its own: the first MiB is never an arena chunk, so it goes to
// FreeNotInChunk, which returns on it.
LETHE_ALWAYS_INLINE void Free(void* pointer) {
  if (LETHE_UNLIKELY(!IsArenaChunk(pointer))) return FreeNotInChunk(pointer);
  Chunk* chunk = ChunkOf(pointer);
  FreeInChunk(pointer, chunk->map[PageOf(chunk, pointer)]);
}

// Every invariant of every arena (page heaps and bins); LETHE_CHECK-fails on the first broken one.
void ValidateHeap();

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_ALLOCATOR_H_
