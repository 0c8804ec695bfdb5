// thread_cache.h — per-thread caches of small regions, so that most malloc/free pairs take no
// lock.
//
// Who calls it: the owning thread only (allocator.cc), except the statistics, which read the
// counters of every registered cache racily (relaxed atomic loads of words the owner writes).
// A thread's cache is made at its first malloc, or at its first free of a small region: a
// thread that only frees blocks other threads allocate (a consumer) batches them like any other.
// That first region goes to its arena, not into the new cache: a thread handed a block it frees
// at once would otherwise get it back at its first malloc, on the cache lines of the blocks
// handed to other threads (Hoard's cache-scratch: 4.4x the time on 2 threads).
//
// Bin capacity adapts to the bursts a bin sees, between a floor and a ceiling per class
// (cache_capacity.h; at most 3,626 KiB per thread when every small bin is full). A bin starts at
// its floor. A miss (the bin is empty) or an overflow (it is full) doubles its capacity up to the
// ceiling, so a burst of n allocations or frees costs O(log n) slow paths before the bin holds it;
// only a bin at its ceiling flushes its older half, into the owning arenas' transfer caches
// (transfer_cache.h) while they have room. An empty bin is refilled with half its capacity in one
// lock acquisition, from its arena's transfer cache first. Every kGcEvents allocations and every
// kGcEvents frees, one bin (round-robin) gives back half of what stayed unused since its last visit
// (its low-water mark), and halves its capacity when that was a quarter of it or more: a thread
// whose bursts are small keeps few regions. A thread that frees far more than it allocates sheds
// its whole cache instead (kShedShare), and until it allocates again returns what it frees to
// the runs, not to the transfer caches (kShedBinCapacity). Why up to 512: a page closed frees
// its thousands of small objects at once, and the next page allocates as many. Why by bytes: a
// steady random walk over many classes drifts every bin to its ceiling, and 512 regions of each
// cost it its cache lines.
// Why at least 64: fewer made a walk over 16-512 B refill or flush a bin every few hundred
// operations. (The measurements: tools/bench/alloc/README.md, history.)
// The whole cache is flushed at thread exit (pthread key destructor) and on lethe_purge(): the
// calling thread's at once, every other thread's at its next slow-path event (a refill, a full
// bin or the GC step), since only its owner may touch a cache; a thread that makes no allocator
// call after the purge keeps its (bounded) cache. A region cached here may come from any arena: a
// flush returns each region to the arena that owns its chunk.
//
// Large runs of 4..16 pages (16..64 KiB, page-aligned requests) are cached too, by exact page
// count: at most kLargeCacheSlots per length and kLargeCacheMaxBytes in all. A free that finds
// its length's bin full returns that bin's oldest block to its arena first; one that would pass
// the byte budget goes straight to its arena. A miss takes one run from the arena (no batch: a
// batch of 64 KiB runs would cost more memory than the lock it saves). Not beyond 64 KiB: longer
// runs left a short program with more resident at exit, and gain nothing where big blocks come
// and go in batches larger than any per-thread budget. 8 per length within 1 MiB: with thousands
// of 16-64 KiB blocks replaced at random, 4 per length missed about once a step. The GC
// step, thread exit and purge treat these bins like the small ones. A block in a large bin is
// still a large run in the page map (its arena counts it as out), its head flagged T
// (chunk.h): a second free of it, from any thread, finds no live head and aborts.
#ifndef LETHE_ALLOC_THREAD_CACHE_H_
#define LETHE_ALLOC_THREAD_CACHE_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "arena.h"
#include "cache_capacity.h"
#include "chunk.h"
#include "compiler.h"
#include "lethe/alloc.h"
#include "lethe/check.h"
#include "size_classes.h"

#ifndef LETHE_LARGE_CACHE_KB
#define LETHE_LARGE_CACHE_KB 1024
#endif

namespace lethe::internal {

// What one thread's cache may hold at most (small and large bins full): the public bound.
inline constexpr size_t kThreadCacheMaxBytes = LETHE_THREAD_CACHE_MAX_BYTES;

inline constexpr uint32_t kLargeCacheMinPages = kSmallMaxBytes / kPageBytes + 1;  // 16 KiB
inline constexpr uint32_t kLargeCacheMaxPages = 16;                                 // 64 KiB
inline constexpr uint32_t kLargeCacheBins = kLargeCacheMaxPages - kLargeCacheMinPages + 1;
inline constexpr uint32_t kLargeCacheSlots = 8;
inline constexpr size_t kLargeCacheMaxBytes = size_t{LETHE_LARGE_CACHE_KB} << 10;
static_assert(kLargeCacheMinPages * kPageBytes > kSmallMaxBytes &&
              (kLargeCacheMinPages - 1) * kPageBytes <= kSmallMaxBytes);

constexpr size_t TotalCacheBytes() {
  size_t total = kLargeCacheMaxBytes;
  for (uint32_t size : kSmallSizes) total += size_t{CacheMaxCapacity(size)} * size;
  return total;
}
// lethe/alloc.h states this bound for peak_allocated_bytes (cached blocks count as allocated).
static_assert(TotalCacheBytes() <= kThreadCacheMaxBytes, "the bound lethe/alloc.h states");
// The GC step runs every kGcEvents allocations served by the cache (allocation_countdown paces it,
// and the statistics' count rides on it), and about every kGcEvents frees: free's fast path counts
// nothing, so a bin found full charges the frees that will fill the room it makes (half its
// capacity; all of it while the thread sheds) to free_credit, and a step runs when the credit
// reaches kGcEvents.
inline constexpr uint32_t kGcEvents = 4096;
// A free-paced GC step that finds the thread made fewer than kGcEvents / kShedShare allocations
// since the last such step (and kGcEvents in all: not a consumer) sheds: every small bin goes back
// to its floor and the large bins are emptied. Why: a thread that let go of its working set (a
// phase or a process ending) kept its bins at their ceilings, up to 3.6 MB, which a
// one-bin-per-step GC takes hundreds of thousands of events to visit twice.
inline constexpr uint64_t kShedShare = 8;
// While a thread sheds, a full small bin grows to at most kShedBinCapacity regions, then returns
// all it holds to their runs' bitmaps, not to the transfer cache; the shed itself also returns the
// thread's arena's transfer cache to the bitmaps. Why: a program freeing its data (jq's last
// 140,000 frees) left 1,600 regions in the transfer cache and 600 in its bins, one or two per run,
// and those runs kept 5.6 MB of pages alive at exit, with as many dirty pages under a dirty floor
// that counts them as active (tools/bench/alloc/README.md, stop 54).
inline constexpr uint32_t kShedBinCapacity = 64;

// One small class's bin: a stack of regions over slots()[0, capacity()), slots()[0] the oldest
// (a flush takes the oldest, malloc the newest). Kept as jemalloc's cache_bin keeps one: the
// stack's top and the low 16 bits of the addresses that bound it, so that each fast path loads
// the top, compares its low 16 bits with one bound and moves it (free: the full bound; malloc: the
// low-water mark, which is never below the empty bound, so that only a top at the mark needs the
// empty test). A bin's slots span at most CacheMaxCapacity * 8 bytes, under 64 KiB: within a bin,
// low 16 bits tell addresses apart. All zero (g_no_cache's) is a bin both empty and full.
// 16 bytes, so that the fast paths index bins with a shift.
struct CacheBin {
  void** top;               // slots() + count(): where the next free goes
  uint16_t empty_bits;      // LowBits(slots())
  uint16_t full_bits;       // LowBits(slots() + capacity())
  uint16_t low_water_bits;  // LowBits(slots() + low_water()); low_water() <= count()
  uint16_t unused;

  static uint16_t LowBits(void* const* slot) {
    return static_cast<uint16_t>(reinterpret_cast<uintptr_t>(slot));
  }
  // Slots from the bound `from` up to the bound `to` (low bits of two addresses of one bin).
  static uint32_t Span(uint16_t to, uint16_t from) {
    return static_cast<uint16_t>(to - from) / sizeof(void*);
  }
  uint32_t count() const { return Span(LowBits(top), empty_bits); }
  uint32_t capacity() const { return Span(full_bits, empty_bits); }
  // The lowest count since the bin's last GC visit (or fill).
  uint32_t low_water() const { return Span(low_water_bits, empty_bits); }
  void** slots() const { return top - count(); }
  bool full() const { return LowBits(top) == full_bits; }

  // The bin over `slots`, holding its first `count` slots, `capacity` slots long.
  void Place(void** slots, uint32_t count, uint32_t capacity) {
    top = slots + count;
    empty_bits = LowBits(slots);
    full_bits = LowBits(slots + capacity);
    low_water_bits = LowBits(top);
  }
  // The bin over `slots`, where the caller copied its regions: count and low water kept.
  void Move(void** slots, uint32_t capacity) {
    uint32_t low = low_water();
    Place(slots, count(), capacity);
    low_water_bits = LowBits(slots + low);
  }
  void SetCapacity(uint32_t capacity) { full_bits = LowBits(slots() + capacity); }
  // Keeps slots()[0, count) (count <= count()), lowering the low-water mark with it.
  void Truncate(uint32_t count) {
    top = slots() + count;
    if (low_water() > count) low_water_bits = LowBits(top);
  }
  void ResetLowWater() { low_water_bits = LowBits(top); }
  // Not full.
  void Push(void* region) { *top++ = region; }
  // The newest region, or nullptr when the bin is empty: malloc's fast path. Only a top at the
  // low-water mark needs the empty test (the mark is never below the empty bound); otherwise the
  // mark goes down with the top.
  LETHE_ALWAYS_INLINE void* TryPop() {
    uint16_t bits = LowBits(top);
    if (LETHE_UNLIKELY(bits == low_water_bits)) {
      if (bits == empty_bits) return nullptr;
      low_water_bits = LowBits(top - 1);
    }
    void* region = *--top;
    // A bin never holds nullptr: told so, a caller's test for a miss folds away.
    if (region == nullptr) __builtin_unreachable();
    return region;
  }
};
static_assert(sizeof(CacheBin) == 16 && sizeof(CacheBin) == 1u << kMapClassShift &&
                  sizeof(CacheBin) == 1u << kClassLookupShift,
              "the fast paths index bins by the page-map entry's class field in place (free) and "
              "by SmallClassOffsetOf (malloc)");
static_assert(CacheMaxCapacity(8) * sizeof(void*) < 65536, "CacheBin: a bin's bounds in 16 bits");

struct LargeCacheBin {
  uint32_t count;
  uint32_t low_water;
  void* slots[kLargeCacheSlots];  // slots[0] is the oldest; each run's head is flagged T
};

struct ThreadCache {
  CacheBin bins[kSmallClassCount];  // first: see CacheBin
  LargeCacheBin large[kLargeCacheBins];  // [pages - kLargeCacheMinPages]
  uint64_t large_bytes;                  // in large[]; written by the owner, read racily
  Arena* arena;
  ThreadCache* prev;  // registry of live caches
  ThreadCache* next;
  // Counting without a counter per operation. malloc's fast path only counts down to the next GC
  // step, which adds the kGcEvents allocations it closes to the count: allocations served =
  // allocation_count (slow-path ones, and every finished countdown) + (kGcEvents - countdown).
  // free's fast path counts nothing: every region enters the cache by a refill or a free and
  // leaves it by an allocation or a flush, so frees = cached + allocations + flushed - refilled
  // (CacheFrees). Written by the owner, read racily by the statistics.
  uint32_t allocation_countdown;
  uint32_t free_credit;     // frees charged since the last free-paced GC step (see kGcEvents)
  uint64_t allocation_count;
  uint64_t refilled_count;  // regions refills brought in (small bins)
  uint64_t flushed_count;   // regions and runs that flushes sent to the arenas
  uint64_t flush_epoch;  // the g_flush_epoch this cache has honoured
  uint64_t allocations_at_free_gc;  // CacheAllocations at the last free-paced GC step
  uint32_t gc_next_bin;
  // Set by a free-paced GC step that sheds, cleared by the next step that does not (or by an
  // allocation-paced one): the thread is letting go of its working set (kShedBinCapacity).
  bool shedding;
  void* packed[kSmallClassCount][kPackedCacheSlots];  // bins at up to kPackedCacheSlots
  void* spread[kSpreadCacheOffsets[kSmallClassCount]];  // bins grown past them
};
static_assert(offsetof(ThreadCache, bins) == 0, "free's fast path: see CacheBin");

// The calling thread's cache, or &g_no_cache when it has none (not created yet, caches off, the
// thread exiting or bound to a caller arena). Never null, so that the fast paths need no null
// test: g_no_cache's bins are all empty with capacity 0, so malloc's fast path finds no region and
// free's finds the bin full, and both take their slow paths, which test for it (HasCache).
extern LETHE_HIDDEN LETHE_TLS ThreadCache* t_cache;
extern LETHE_HIDDEN constinit ThreadCache g_no_cache;
inline bool HasCache(const ThreadCache* cache) { return cache != &g_no_cache; }
// Bumped by lethe_purge(): every cache whose flush_epoch differs flushes itself at its next
// slow-path event.
extern LETHE_HIDDEN std::atomic<uint64_t> g_flush_epoch;

// The calling thread's cache, created on first use; nullptr when caches are off, the thread is
// exiting, or metadata cannot be mapped.
ThreadCache* ThreadCacheGet();
// While the thread is bound to a caller arena its cache is set aside (t_cache null, so that every
// call takes the slow paths to the bound arena), then put back (lethe_arena_bind).
void ThreadCacheSuspend();
void ThreadCacheResume();
// For its scope, the calling thread allocates from its automatic arena even while it is bound to
// a caller arena: for memory the allocator itself makes that outlives any caller arena (the
// purge thread's, which pthread_create allocates: made while bound, it kept the bound arena a
// ghost for the life of the process). The thread's cache stays set aside as the binding wants
// (one created within the scope is put back at unbind, ThreadCacheResume).
class AutomaticArenaScope {
 public:
  AutomaticArenaScope() : arena_(t_bound_arena), cache_(t_cache) { t_bound_arena = nullptr; }
  ~AutomaticArenaScope() {
    if (arena_ == nullptr) return;  // unbound: a cache created meanwhile is the thread's to keep
    t_bound_arena = arena_;
    t_cache = cache_;
  }
  AutomaticArenaScope(const AutomaticArenaScope&) = delete;
  AutomaticArenaScope& operator=(const AutomaticArenaScope&) = delete;

 private:
  Arena* arena_;
  ThreadCache* cache_;
};
// Refills the bin of `klass` from the thread's arena and pops one region; nullptr on OOM.
void* ThreadCacheFill(ThreadCache* cache, uint32_t klass);
// Returns the `count` oldest regions of the bin to their arenas.
void ThreadCacheFlushBin(ThreadCache* cache, uint32_t klass, uint32_t count);
// Makes room in the full bin of `klass` for one more region: doubles its capacity, or at the
// ceiling flushes its older half.
void ThreadCacheMakeRoom(ThreadCache* cache, uint32_t klass);
void ThreadCacheFlushAll(ThreadCache* cache);
// How many threads have a cache (a forked child still counts its parent's other threads'): a hint
// for policy, read without the registry's lock.
uint32_t LiveThreadCaches();
// Asks every thread's cache to flush itself (see above); the caller flushes its own.
void ThreadCacheRequestFlushAll();
// Flushes the whole cache if a purge asked since its last flush; true when it did.
bool ThreadCacheFlushAfterPurge(ThreadCache* cache);
// The incremental GC step, when the allocation countdown reached 0 or the free credit kGcEvents:
// rearms it, counts the round, then gives back half of one bin's unused regions (round-robin).
void ThreadCacheGcAfter(ThreadCache* cache, bool allocations) noexcept;
// Charges `frees` to the free credit, and runs a GC step when it reaches kGcEvents.
void ThreadCacheChargeFrees(ThreadCache* cache, uint32_t frees) noexcept;
// A cached large run of exactly `pages` pages, or nullptr.
inline void* ThreadCacheTakeLarge(ThreadCache* cache, uint32_t pages) {
  LargeCacheBin& bin = cache->large[pages - kLargeCacheMinPages];
  if (bin.count == 0) return nullptr;
  uint32_t count = bin.count - 1;
  void* block = bin.slots[count];
  bin.count = count;
  if (count < bin.low_water) bin.low_water = count;
  cache->large_bytes -= size_t{pages} << kLgPageBytes;
  ++cache->allocation_count;  // not the countdown: malloc's fast path must not call from here
  MarkThreadCached(block, pages, false);  // last: the cache's fields need no reload after it
  return block;
}
// The newest cached run of exactly `pages` pages whose start is aligned to `alignment` (a power
// of two over a page), taken out of the bin; nullptr if none is.
inline void* ThreadCacheTakeLargeAligned(ThreadCache* cache, uint32_t pages, size_t alignment) {
  LargeCacheBin& bin = cache->large[pages - kLargeCacheMinPages];
  for (uint32_t i = bin.count; i-- > 0;) {
    void* block = bin.slots[i];
    if ((reinterpret_cast<uintptr_t>(block) & (alignment - 1)) != 0) continue;
    // To the top (the others keep their order, oldest first), then taken as any other.
    for (uint32_t j = i + 1; j < bin.count; ++j) bin.slots[j - 1] = bin.slots[j];
    bin.slots[bin.count - 1] = block;
    return ThreadCacheTakeLarge(cache, pages);
  }
  return nullptr;
}
// ThreadCachePutLarge's slow end, when the bin is full or the GC step is due: parks the run
// unless the byte budget refuses it (false). Keeps errno.
bool ThreadCachePutLargeSlow(ThreadCache* cache, void* pointer, uint32_t pages) noexcept;
// Puts the live large run `pointer` of `pages` pages into its bin (not full, within the byte
// budget) and flags its head: the end that ThreadCachePutLarge and its slow end share.
inline void ParkInLargeBin(ThreadCache* cache, void* pointer, uint32_t pages) {
  LargeCacheBin& bin = cache->large[pages - kLargeCacheMinPages];
  bin.slots[bin.count++] = pointer;
  MarkThreadCached(pointer, pages, true);
  cache->large_bytes += size_t{pages} << kLgPageBytes;
}
// What ThreadCachePutLarge did with a run.
enum class LargePut { kParked, kRefused, kSlow };
// Parks the live large run `pointer` of `pages` pages (in the cached range) and flags its head,
// unless the byte budget says it must go to its arena (kRefused) or the bin is full or the GC
// step is due (kSlow: the caller calls ThreadCachePutLargeSlow, so that this path makes no call).
inline LargePut ThreadCachePutLarge(ThreadCache* cache, void* pointer, uint32_t pages) {
  LargeCacheBin& bin = cache->large[pages - kLargeCacheMinPages];
  if (LETHE_UNLIKELY(bin.count == kLargeCacheSlots || cache->free_credit + 1 >= kGcEvents)) {
    return LargePut::kSlow;
  }
  if (cache->large_bytes + (size_t{pages} << kLgPageBytes) > kLargeCacheMaxBytes) {
    return LargePut::kRefused;
  }
  ParkInLargeBin(cache, pointer, pages);
  ++cache->free_credit;  // ThreadCacheChargeFrees(cache, 1) without its step: not due
  return LargePut::kParked;
}

// ThreadCacheGcAfter(cache, true), then `block`: lets malloc's fast path end in a tail call.
__attribute__((returns_nonnull)) void* ThreadCacheGcThenReturn(ThreadCache* cache,
                                                                void* block) noexcept;
// What a cache has served (see ThreadCache); racy reads of another thread's cache are fine.
uint64_t CacheAllocations(const ThreadCache& cache);
uint64_t CacheFrees(const ThreadCache& cache);
// Creates the pthread key whose destructor flushes a cache at thread exit.
void ThreadCacheInitKey();

struct CacheTotals {
  uint64_t cached_bytes;
  uint64_t allocation_count;
  uint64_t free_count;
  uint64_t metadata_bytes;
  uint64_t cached_regions[kSmallClassCount];
};
// Sums every live cache plus what exited threads left in the global counters.
void ThreadCacheTotals(CacheTotals* totals);

void ThreadCacheLockForFork();
void ThreadCacheUnlockAfterFork(bool child);

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_THREAD_CACHE_H_
