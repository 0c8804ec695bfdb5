// Thread caches (see thread_cache.h).
#include "thread_cache.h"

#include <errno.h>
#include <pthread.h>

#include <atomic>
#include <cstring>
#include <utility>

#include "base.h"
#include "decay.h"
#include "lethe/check.h"
#include "mutex.h"
#include "ring.h"

namespace lethe::internal {

LETHE_TABLE constinit ThreadCache g_no_cache{};  // all zero, never written
LETHE_TLS ThreadCache* t_cache = &g_no_cache;
constinit std::atomic<uint64_t> g_flush_epoch{0};

namespace {

enum CacheState : uint8_t { kFresh = 0, kCreating = 1, kActive = 2, kGone = 3 };

LETHE_TLS uint8_t t_state = kFresh;
constinit Mutex g_registry_lock;
constinit ThreadCache* g_live = nullptr;   // ring of live caches, guarded by g_registry_lock
constinit ThreadCache* g_spare = nullptr;  // caches of exited threads, for reuse
constinit uint64_t g_dead_allocations = 0;
constinit uint64_t g_dead_frees = 0;
constinit size_t g_cache_count = 0;
constinit std::atomic<uint32_t> g_live_caches{0};  // in g_live
constinit pthread_key_t g_key = 0;
constinit bool g_key_ready = false;

using CacheRing = Ring<ThreadCache, &ThreadCache::prev, &ThreadCache::next>;

uint64_t Load(const uint64_t& word) { return __atomic_load_n(&word, __ATOMIC_RELAXED); }
uint32_t Load(const uint32_t& word) { return __atomic_load_n(&word, __ATOMIC_RELAXED); }
uint16_t Load(const uint16_t& word) { return __atomic_load_n(&word, __ATOMIC_RELAXED); }
// A bin's count read by another thread (the statistics): from two racy loads, which a concurrent
// move of the bin's slots (Grow) may pair wrong, so bounded by the bin's ceiling.
uint32_t CountRacily(const ThreadCache& cache, uint32_t klass) {
  const CacheBin& bin = cache.bins[klass];
  void** top = __atomic_load_n(&bin.top, __ATOMIC_RELAXED);
  uint32_t count = CacheBin::Span(CacheBin::LowBits(top), Load(bin.empty_bits));
  uint32_t ceiling = CacheMaxCapacity(kSmallSizes[klass]);
  return count < ceiling ? count : ceiling;
}

void InitBins(ThreadCache* cache) {
  for (uint32_t klass = 0; klass < kSmallClassCount; ++klass) {
    cache->bins[klass].Place(cache->packed[klass], 0, CacheMinCapacity(kSmallSizes[klass]));
  }
  std::memset(cache->large, 0, sizeof(cache->large));
  cache->large_bytes = 0;
  cache->flush_epoch = g_flush_epoch.load(std::memory_order_relaxed);
  cache->gc_next_bin = 0;
  cache->shedding = false;
  cache->allocations_at_free_gc = 0;
  cache->allocation_countdown = kGcEvents;
  cache->free_credit = 0;
  cache->allocation_count = 0;
  cache->refilled_count = 0;
  cache->flushed_count = 0;
}

void Destroy(void* value) {
  auto* cache = static_cast<ThreadCache*>(value);
  t_cache = &g_no_cache;
  t_state = kGone;
  ThreadCacheFlushAll(cache);
  MutexLock lock(&g_registry_lock);
  g_dead_allocations += CacheAllocations(*cache);
  g_dead_frees += CacheFrees(*cache);
  CacheRing::Unlink(g_live, cache);
  g_live_caches.fetch_sub(1, std::memory_order_relaxed);
  cache->next = g_spare;
  g_spare = cache;
}

}  // namespace

bool ThreadCacheFlushAfterPurge(ThreadCache* cache) {
  uint64_t epoch = g_flush_epoch.load(std::memory_order_relaxed);
  if (LETHE_LIKELY(cache->flush_epoch == epoch)) return false;
  cache->flush_epoch = epoch;
  ThreadCacheFlushAll(cache);
  return true;
}

void ThreadCacheInitKey() {
  if (pthread_key_create(&g_key, Destroy) == 0) g_key_ready = true;
}

ThreadCache* ThreadCacheGet() {
  if (HasCache(t_cache)) return t_cache;
  if (t_state != kFresh || !g_options.tcache || !g_key_ready || t_bound_arena != nullptr) {
    return nullptr;
  }
  t_state = kCreating;  // allocations made while creating (pthread_setspecific) go uncached
  ThreadCache* cache;
  {
    MutexLock lock(&g_registry_lock);
    cache = g_spare;
    if (cache != nullptr) {
      g_spare = cache->next;
    } else {
      cache = static_cast<ThreadCache*>(BaseAllocate(sizeof(ThreadCache)));
      if (cache == nullptr) {
        t_state = kFresh;
        return nullptr;
      }
      ++g_cache_count;
    }
    InitBins(cache);
    cache->arena = AutomaticArena();
    CacheRing::Append(g_live, cache);
    g_live_caches.fetch_add(1, std::memory_order_relaxed);
  }
  pthread_setspecific(g_key, cache);
  t_cache = cache;
  t_state = kActive;
  return cache;
}

void ThreadCacheSuspend() { t_cache = &g_no_cache; }

void ThreadCacheResume() {
  if (t_state == kActive) t_cache = static_cast<ThreadCache*>(pthread_getspecific(g_key));
}

namespace {

// Doubles the bin's capacity up to its ceiling, moving its slots from the packed array to its own
// when they no longer fit there (once: a bin that shrinks back keeps its own); false when the bin
// is at its ceiling already.
bool Grow(ThreadCache* cache, uint32_t klass) {
  CacheBin& bin = cache->bins[klass];
  uint32_t ceiling = CacheMaxCapacity(kSmallSizes[klass]);
  uint32_t capacity = bin.capacity();
  if (capacity >= ceiling) return false;
  uint32_t grown = capacity * 2 < ceiling ? capacity * 2 : ceiling;
  if (grown > kPackedCacheSlots && bin.slots() == cache->packed[klass]) {
    void** own = cache->spread + kSpreadCacheOffsets[klass];
    std::memcpy(own, bin.slots(), bin.count() * sizeof(void*));
    bin.Move(own, grown);
  } else {
    bin.SetCapacity(grown);
  }
  return true;
}

// Lowers the bin's capacity to `capacity` (never under its floor) and flushes what no longer fits.
void ShrinkTo(ThreadCache* cache, uint32_t klass, uint32_t capacity) {
  CacheBin& bin = cache->bins[klass];
  uint32_t floor = CacheMinCapacity(kSmallSizes[klass]);
  if (capacity < floor) capacity = floor;
  // Flushed first: the bin's bounds never leave the top outside them.
  if (bin.count() > capacity) ThreadCacheFlushBin(cache, klass, bin.count() - capacity);
  bin.SetCapacity(capacity);
}

// Halves the bin's capacity down to its floor, flushing what no longer fits.
void Shrink(ThreadCache* cache, uint32_t klass) {
  ShrinkTo(cache, klass, cache->bins[klass].capacity() / 2);
}

}  // namespace

void* ThreadCacheFill(ThreadCache* cache, uint32_t klass) {
  ThreadCacheFlushAfterPurge(cache);
  CacheBin& bin = cache->bins[klass];
  Grow(cache, klass);  // a miss: the bursts here are larger than the bin
  uint32_t count = bin.count();
  uint32_t half = bin.capacity() / 2;
  uint32_t want = half > count ? half - count : 1;
  // Fill above the top so that slots()[0] stays the oldest.
  uint32_t got = ArenaAllocateSmall(cache->arena, klass, bin.top, want);
  if (got == 0) return nullptr;
  cache->refilled_count += got;
  bin.top += got - 1;
  void* block = *bin.top;
  bin.ResetLowWater();
  ++cache->allocation_count;
  return block;
}

namespace {

// Returns blocks[0, count) to the arenas that own them, each arena's lock taken once per 64 of its
// blocks: each pass moves the first block's arena's blocks to the front of `blocks` (which it
// reorders; only compares when, as usual, they all are the thread's own arena's) and frees them
// with free_batch(arena, blocks, n). Blocks are told apart by their chunk's page heap (one per
// arena): one load per block, where the arena (the heap's owner) would take two.
template <typename FreeBatch>
void FlushToOwners(void** blocks, uint32_t count, FreeBatch free_batch) {
  constexpr uint32_t kBatch = 64;
  while (count > 0) {
    const PageHeap* heap = ChunkOf(blocks[0])->heap;
    uint32_t owned = 1;
    // The usual case, every block the first one's arena's, compares and nothing more.
    while (owned < count && ChunkOf(blocks[owned])->heap == heap) ++owned;
    for (uint32_t i = owned + 1; i < count; ++i) {
      if (ChunkOf(blocks[i])->heap != heap) continue;
      if (i != owned) std::swap(blocks[i], blocks[owned]);
      ++owned;
    }
    Arena* arena = ArenaOf(ChunkOf(blocks[0]));
    for (uint32_t done = 0; done < owned; done += kBatch) {
      free_batch(arena, blocks + done, owned - done < kBatch ? owned - done : kBatch);
    }
    blocks += owned;
    count -= owned;
  }
}

// Returns the `count` oldest regions of the bin of `klass` to their arenas (park: see
// ArenaFreeSmallBatch).
void FlushBin(ThreadCache* cache, uint32_t klass, uint32_t count, bool park) {
  CacheBin& bin = cache->bins[klass];
  uint32_t cached = bin.count();
  if (count > cached) count = cached;
  void** slots = bin.slots();
  FlushToOwners(slots, count, [klass, park](Arena* arena, void** blocks, uint32_t n) {
    ArenaFreeSmallBatch(arena, klass, blocks, n, park);
  });
  std::memmove(slots, slots + count, (cached - count) * sizeof(void*));
  bin.Truncate(cached - count);
  cache->flushed_count += count;
}

}  // namespace

void ThreadCacheFlushBin(ThreadCache* cache, uint32_t klass, uint32_t count) {
  FlushBin(cache, klass, count, false);
}

void ThreadCacheMakeRoom(ThreadCache* cache, uint32_t klass) {
  CacheBin& bin = cache->bins[klass];
  if (LETHE_UNLIKELY(cache->shedding)) {
    if (bin.capacity() < kShedBinCapacity && Grow(cache, klass)) return;
    return FlushBin(cache, klass, bin.count(), false);
  }
  if (!Grow(cache, klass)) FlushBin(cache, klass, bin.capacity() / 2, true);
}

namespace {

// Returns the `count` oldest blocks of large bin `index` to their arenas.
void FlushLargeBin(ThreadCache* cache, uint32_t index, uint32_t count) {
  LargeCacheBin& bin = cache->large[index];
  if (count > bin.count) count = bin.count;
  void* pending[kLargeCacheSlots];
  std::memcpy(pending, bin.slots, count * sizeof(void*));
  std::memmove(bin.slots, bin.slots + count, (bin.count - count) * sizeof(void*));
  bin.count -= count;
  if (bin.low_water > bin.count) bin.low_water = bin.count;
  for (uint32_t i = 0; i < count; ++i) {
    MarkThreadCached(pending[i], index + kLargeCacheMinPages, false);
  }
  cache->flushed_count += count;
  cache->large_bytes -= (size_t{count} * (index + kLargeCacheMinPages)) << kLgPageBytes;
  // A block freed by this thread may come from another thread's arena.
  FlushToOwners(pending, count, ArenaFreeLargeBatch);
}

}  // namespace

bool ThreadCachePutLargeSlow(ThreadCache* cache, void* pointer, uint32_t pages) noexcept {
  int saved_errno = errno;  // the flush and the GC step may purge
  uint32_t index = pages - kLargeCacheMinPages;
  LargeCacheBin& bin = cache->large[index];
  if (bin.count == kLargeCacheSlots) FlushLargeBin(cache, index, 1);
  bool cached = cache->large_bytes + (size_t{pages} << kLgPageBytes) <= kLargeCacheMaxBytes;
  if (cached) {
    ParkInLargeBin(cache, pointer, pages);
    ThreadCacheChargeFrees(cache, 1);
  }
  errno = saved_errno;
  return cached;
}

namespace {

void FlushLargeBins(ThreadCache* cache) {
  for (uint32_t index = 0; index < kLargeCacheBins; ++index) {
    if (cache->large[index].count > 0) FlushLargeBin(cache, index, cache->large[index].count);
  }
}

}  // namespace

void ThreadCacheFlushAll(ThreadCache* cache) {
  for (uint32_t klass = 0; klass < kSmallClassCount; ++klass) {
    uint32_t count = cache->bins[klass].count();
    if (count > 0) ThreadCacheFlushBin(cache, klass, count);
  }
  FlushLargeBins(cache);
}

uint32_t LiveThreadCaches() { return g_live_caches.load(std::memory_order_relaxed); }

void ThreadCacheRequestFlushAll() { g_flush_epoch.fetch_add(1, std::memory_order_relaxed); }

uint64_t CacheAllocations(const ThreadCache& cache) {
  return Load(cache.allocation_count) + (kGcEvents - Load(cache.allocation_countdown));
}

uint64_t CacheFrees(const ThreadCache& cache) {
  // Read racily, the terms may disagree for a moment: never below 0.
  uint64_t in = Load(cache.refilled_count);
  uint64_t out = CacheAllocations(cache) + Load(cache.flushed_count);
  for (uint32_t klass = 0; klass < kSmallClassCount; ++klass) out += CountRacily(cache, klass);
  for (const LargeCacheBin& bin : cache.large) out += Load(bin.count);
  return out > in ? out - in : 0;
}

void ThreadCacheChargeFrees(ThreadCache* cache, uint32_t frees) noexcept {
  cache->free_credit += frees;
  if (cache->free_credit >= kGcEvents) ThreadCacheGcAfter(cache, false);
}

void* ThreadCacheGcThenReturn(ThreadCache* cache, void* block) noexcept {
  ThreadCacheGcAfter(cache, true);
  return block;
}

namespace {

// A thread that frees far more than it allocates is letting go of its working set: every bin
// goes back to its floor, the large bins are emptied, and its arena's transfer cache goes back to
// the runs (kShedBinCapacity).
void Shed(ThreadCache* cache) {
  for (uint32_t klass = 0; klass < kSmallClassCount; ++klass) {
    ShrinkTo(cache, klass, 0);
    cache->bins[klass].ResetLowWater();
  }
  FlushLargeBins(cache);
  ArenaTrimTransferAll(cache->arena);
}

}  // namespace

void ThreadCacheGcAfter(ThreadCache* cache, bool allocations) noexcept {
  if (allocations) {
    cache->allocation_count += kGcEvents;
    cache->allocation_countdown = kGcEvents;
    cache->shedding = false;
  } else {
    cache->free_credit = 0;
  }
  if (ThreadCacheFlushAfterPurge(cache)) return;
  if (!allocations) {
    uint64_t made = CacheAllocations(*cache);
    // Not a thread that only frees what others allocate (a consumer): its bins pass regions
    // through, and it has no working set to let go of.
    bool shedding = made >= kGcEvents &&
                    (made - cache->allocations_at_free_gc) * kShedShare < kGcEvents;
    cache->allocations_at_free_gc = made;
    cache->shedding = shedding;
    if (shedding) return Shed(cache);
  }
  uint32_t klass = cache->gc_next_bin;
  cache->gc_next_bin = (klass + 1) % (kSmallClassCount + kLargeCacheBins);
  if (klass >= kSmallClassCount) {
    LargeCacheBin& large = cache->large[klass - kSmallClassCount];
    if (large.low_water > 0) FlushLargeBin(cache, klass - kSmallClassCount, (large.low_water + 1) / 2);
    large.low_water = large.count;
    return;
  }
  CacheBin& bin = cache->bins[klass];
  uint32_t idle = bin.low_water();
  if (idle > 0) ThreadCacheFlushBin(cache, klass, (idle + 1) / 2);
  if (idle * 4 >= bin.capacity()) Shrink(cache, klass);  // capacity >= 2: never when idle is 0
  bin.ResetLowWater();
}

void ThreadCacheTotals(CacheTotals* totals) {
  std::memset(totals, 0, sizeof(*totals));
  MutexLock lock(&g_registry_lock);
  totals->allocation_count = g_dead_allocations;
  totals->free_count = g_dead_frees;
  totals->metadata_bytes = g_cache_count * sizeof(ThreadCache);
  CacheRing::ForEach(g_live, [totals](const ThreadCache* cache) {
    totals->allocation_count += CacheAllocations(*cache);
    totals->free_count += CacheFrees(*cache);
    totals->cached_bytes += Load(cache->large_bytes);
    for (uint32_t klass = 0; klass < kSmallClassCount; ++klass) {
      uint32_t count = CountRacily(*cache, klass);
      totals->cached_regions[klass] += count;
      totals->cached_bytes += uint64_t{count} * kSmallSizes[klass];
    }
  });
}

void ThreadCacheLockForFork() { g_registry_lock.Lock(); }
void ThreadCacheUnlockAfterFork(bool child) {
  if (child) g_registry_lock.ResetAfterFork(); else g_registry_lock.Unlock();
}

}  // namespace lethe::internal
