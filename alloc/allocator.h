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

void* AllocateSlow(size_t size, size_t alignment, bool zero);
void* AllocateZeroed(size_t count, size_t size);
void* AllocateAligned(size_t alignment, size_t size);
void* Reallocate(void* pointer, size_t size);
size_t UsableSize(const void* pointer);
void FreeSlow(void* pointer, Chunk* chunk, uint32_t page, uint32_t entry);
void FreeNotInChunk(void* pointer);
void FreeToFullCacheBin(ThreadCache* cache, uint32_t klass, void* pointer);
void RecordSlop(size_t requested, size_t usable);
[[noreturn]] void InvalidPointer(const void* pointer);

LETHE_ALWAYS_INLINE void* Allocate(size_t size) {
  ThreadCache* cache = t_cache;
  if (LETHE_LIKELY(cache != nullptr && size <= kSmallMaxBytes && !FailArmed())) {
    size_t klass = SmallClassOf(size);
    CacheBin& bin = cache->bins[klass];
    if (LETHE_LIKELY(bin.count > 0)) {
      void* block = bin.slots[--bin.count];
      if (bin.count < bin.low_water) bin.low_water = bin.count;
      ++cache->allocation_count;
      if (LETHE_UNLIKELY(--cache->gc_countdown == 0)) ThreadCacheGc(cache);
      if (LETHE_UNLIKELY(g_options.slop)) RecordSlop(size, kSmallSizes[klass]);
      return block;
    }
  } else if (cache != nullptr && size - (kSmallMaxBytes + 1) < kLargeCacheMaxPages * kPageBytes -
                                                                    kSmallMaxBytes &&
             !FailArmed() && !g_options.slop) {
    // A cached large run of the same page count (thread_cache.h); a miss takes the slow path.
    if (void* block = ThreadCacheTakeLarge(cache, static_cast<uint32_t>(PagesFor(size)))) {
      return block;
    }
  }
  return AllocateSlow(size, 0, false);
}

LETHE_ALWAYS_INLINE void Free(void* pointer) {
  if (pointer == nullptr) return;
  if (LETHE_UNLIKELY(!IsArenaChunk(pointer))) {
    FreeNotInChunk(pointer);
    return;
  }
  Chunk* chunk = ChunkOf(pointer);
  uint32_t page = PageOf(chunk, pointer);
  uint32_t entry = chunk->map[page];
  ThreadCache* cache = t_cache;
  if (LETHE_LIKELY(MapKind(entry) == PageKind::kSmall && cache != nullptr)) {
    uint32_t klass = MapClass(entry);
    if (LETHE_UNLIKELY(RegionIndex(RunStart(chunk, page, entry), pointer, klass) < 0)) {
      InvalidPointer(pointer);
    }
    CacheBin& bin = cache->bins[klass];
    if (LETHE_UNLIKELY(bin.count == bin.capacity)) {
      FreeToFullCacheBin(cache, klass, pointer);
      return;
    }
#if LETHE_DEBUG_LEVEL >= 1
    for (uint32_t i = 0; i < bin.count; ++i) {
      if (bin.slots[i] == pointer) lethe_fatal_pointer("free(): double free ", pointer, "");
    }
#endif
    bin.slots[bin.count++] = pointer;
    ++cache->free_count;
    if (LETHE_UNLIKELY(--cache->gc_countdown == 0)) ThreadCacheGc(cache);
    return;
  }
  FreeSlow(pointer, chunk, page, entry);
}

// Every invariant of every arena (page heaps and bins); LETHE_CHECK-fails on the first broken one.
void ValidateHeap();

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_ALLOCATOR_H_
