// The allocator's slow paths: initialisation, uncached and large allocation, huge blocks, realloc,
// the out-of-memory sequence (oom.h), fork handling, and the heap walker.
#include "allocator.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstring>

#include "arena.h"
#include "base.h"
#include "caller_arenas.h"
#include "decay.h"
#include "huge.h"
#include "os.h"
#include "stats.h"

namespace lethe::internal {
namespace {

constinit std::atomic<int> g_init_state{0};  // 0 none, 1 running, 2 done

void ForkPrepare() {
  ThreadCacheLockForFork();
  BaseLockForFork();
  PurgerLockForFork();
  ArenasLockForFork();
  HugeLockForFork();
}
void ForkParent() {
  HugeUnlockAfterFork(false);
  ArenasUnlockAfterFork(false);
  PurgerUnlockAfterFork(false);
  BaseUnlockAfterFork(false);
  ThreadCacheUnlockAfterFork(false);
}
void ForkChild() {
  HugeUnlockAfterFork(true);
  ArenasUnlockAfterFork(true);
  PurgerUnlockAfterFork(true);
  BaseUnlockAfterFork(true);
  ThreadCacheUnlockAfterFork(true);
}

LETHE_NOINLINE bool InitSlow() {
  int expected = 0;
  if (g_init_state.compare_exchange_strong(expected, 1)) {
    LoadOptionsFromEnvironment();
    if (g_options.slop) g_slow_allocations.fetch_or(kSlowForSlop);
    ArenasInit(g_options.arenas != 0 ? g_options.arenas : OsCpuCount());
    ReserveInit(g_options.oom_reserve_kb * 1024);
    ThreadCacheInitKey();
    CallerArenasInit();
    g_init_state.store(2, std::memory_order_release);
    // May allocate (glibc keeps its handler list in malloc'd memory): the allocator is ready.
    pthread_atfork(ForkPrepare, ForkParent, ForkChild);
    return true;
  }
  while (g_init_state.load(std::memory_order_acquire) != 2) sched_yield();
  return true;
}

// The smallest class that holds `size` and whose regions are aligned to `alignment` (a power of
// two), or -1. Over a page, none: a region is aligned to its size's largest power-of-two
// divisor, up to a page (size_classes.h SmallAlignedBytes).
int SmallClassFor(size_t size, size_t alignment) {
  size_t bytes = SmallAlignedBytes(size, alignment);
  return bytes != 0 ? static_cast<int>(SmallClassOf(bytes)) : -1;
}

void* AllocateSmall(uint32_t klass) {
  ThreadCache* cache = ThreadCacheGet();
  if (cache != nullptr) {
    if (void* block = cache->bins[klass].TryPop()) {
      ++cache->allocation_count;
      return block;
    }
    return ThreadCacheFill(cache, klass);
  }
  void* block = nullptr;
  if (ArenaAllocateSmall(ThreadArena(), klass, &block, 1) == 0) return nullptr;
  CountUncachedAllocation();
  return block;
}

// Faults in the pages of [block, block + written) from `resident` on, the part of a block that
// the caller writes at once and that lies on fresh pages: one system call (os.h OsPopulate), not
// an exception per page. Pages at or past `written` stay unfaulted until written.
void PopulateWritten(void* block, size_t resident, size_t written) {
  size_t end = written & ~(kPageBytes - 1);
  if (end > resident) OsPopulate(static_cast<char*>(block) + resident, end - resident);
}

// One attempt, no out-of-memory handling. size > 0. `written`: the bytes the caller writes at
// once from the block's start (realloc's copy; 0: none known). A large run then takes resident
// (dirty) pages first, and the fresh pages under those bytes are populated.
void* TryAllocate(size_t size, size_t alignment, bool zero, size_t written) {
  if (alignment < 8) alignment = 8;
  int klass = SmallClassFor(size, alignment);
  if (klass >= 0) {
    void* block = AllocateSmall(static_cast<uint32_t>(klass));
    if (block != nullptr && zero) std::memset(block, 0, size);
    return block;
  }
  if (size <= kLargeMaxBytes && !(written != 0 && size >= kGrowingRegionMinBytes)) {
    size_t pages = LargeClassPages(PagesFor(size));
    // An aligned request may be shorter than any large class: a small size, aligned over a page.
    if (pages >= kLargeCacheMinPages && pages <= kLargeCacheMaxPages) {
      ThreadCache* cache = ThreadCacheGet();
      if (cache != nullptr) {
        auto length = static_cast<uint32_t>(pages);
        if (void* block = alignment <= kPageBytes
                              ? ThreadCacheTakeLarge(cache, length)
                              : ThreadCacheTakeLargeAligned(cache, length, alignment)) {
          if (zero) std::memset(block, 0, size);
          return block;
        }
      }
    }
    size_t extra = alignment > kPageBytes ? alignment / kPageBytes - 1 : 0;
    if (pages + extra <= kChunkUsablePages) {
      bool zeroed = false;
      void* block =
          ArenaAllocateLarge(ThreadArena(), static_cast<uint32_t>(pages), alignment, &zeroed,
                             written != 0);
      if (block != nullptr && zero && !zeroed) std::memset(block, 0, size);
      if (block != nullptr && zeroed) PopulateWritten(block, 0, written);
      return block;
    }
  }
  size_t reused = 0;
  Arena* owner = t_bound_arena;
  // A block that a realloc moves gets room to grow (GrowthPages): unwritten, the room costs
  // address space, not memory.
  size_t bytes = written != 0 ? GrowthPages(PagesFor(size)) << kLgPageBytes : size;
  void* block =
      HugeAllocate(bytes, alignment < kPageBytes ? kPageBytes : alignment, &reused, owner);
  if (block != nullptr) {
    CountHugeAllocation();
    if (owner != nullptr) ArenaAddHuge(owner, HugeSize(block));
    if (zero) std::memset(block, 0, reused < size ? reused : size);  // fresh pages read as zero
    PopulateWritten(block, reused, written);
  }
  return block;
}

// The fail-after hook's refusal, as the OS's looks to the layers above: the low-memory callback
// runs on this thread (whatever locks it holds), then the allocation fails.
LETHE_NOINLINE void* InjectedFailure(size_t size) {
  RunLowMemoryCallback(size);
  errno = ENOMEM;
  return nullptr;
}

// Steps 1-4 of oom.h after a first attempt failed.
LETHE_NOINLINE void* AllocateAfterFailure(size_t size, size_t alignment, bool zero,
                                          size_t written) {
  CountOomEvent();
  PurgeAllArenas();
  if (void* block = TryAllocate(size, alignment, zero, written)) return block;
  if (RunLowMemoryCallback(size)) {
    if (void* block = TryAllocate(size, alignment, zero, written)) return block;
  }
  ReserveAllow(true);
  void* block = TryAllocate(size, alignment, zero, written);
  ReserveAllow(false);
  if (block == nullptr) errno = ENOMEM;
  return block;
}

}  // namespace

bool EnsureInit() {
  if (LETHE_LIKELY(g_init_state.load(std::memory_order_acquire) == 2)) return true;
  return InitSlow();
}

[[noreturn]] void InvalidPointer(const void* pointer) {
  lethe_fatal_pointer("free(): invalid pointer ", pointer, "");
}

void* AllocateSlow(size_t size, size_t alignment, bool zero, size_t written) noexcept {
  EnsureInit();
  if (LETHE_UNLIKELY(FailArmed()) && FailureInjected()) return InjectedFailure(size);
  if (size == 0) size = 1;
  if (size > SIZE_MAX / 2) {
    errno = ENOMEM;
    return nullptr;
  }
  void* block = TryAllocate(size, alignment, zero, written);
  if (LETHE_UNLIKELY(block == nullptr)) {
    block = AllocateAfterFailure(size, alignment, zero, written);
  }
  if (block != nullptr && LETHE_UNLIKELY(g_options.slop)) RecordSlop(size, UsableSize(block));
  PurgerAfterUnlock();
  return block;
}

void* AllocateZeroed(size_t count, size_t size) {
  size_t total = 0;
  if (__builtin_mul_overflow(count, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  // A small block takes malloc's fast path, then is zeroed (a cached region holds old bytes);
  // the slow path knows when a large one's pages are fresh, and reads as zero already.
  if (SmallAndFast(total)) {
    void* block = Allocate(total);
    if (block != nullptr) std::memset(block, 0, total);
    return block;
  }
  return AllocateSlow(total, 0, true);
}

void* AllocateAligned(size_t alignment, size_t size) {
  if (alignment <= 8) return Allocate(size);
  if (size == 0) size = 1;
  // A small aligned request takes malloc's fast path, rounded up to its alignment
  // (SmallAlignedBytes). With slop counting or fail-after on, the slow path, which counts the
  // request as asked.
  if (SmallAndFast(size)) {
    if (size_t bytes = SmallAlignedBytes(size, alignment)) return Allocate(bytes);
  }
  return AllocateSlow(size, alignment, false);
}

void FreeToFullCacheBin(ThreadCache* cache, uint32_t klass, void* pointer) noexcept {
  int saved_errno = errno;
  // A thread that only frees gets its cache here (thread_cache.h): without one, each of its
  // frees took the owner arena's lock. The region that made it goes to its arena, not into the
  // new cache, where the thread's first malloc of its class would take it back: it was another
  // thread's, and its neighbours likely still are (passive false sharing).
  if (!HasCache(cache)) {
    ThreadCacheGet();
    errno = saved_errno;
    return FreeInChunkSlow(pointer);
  }
  CacheBin& bin = cache->bins[klass];
  // The bin is full. A pending purge empties every bin (this one too); otherwise grow or flush
  // this one.
  bool made_room = !ThreadCacheFlushAfterPurge(cache);
  if (made_room) ThreadCacheMakeRoom(cache, klass);
  // The frees that will fill the room made, charged now (after the region is in: a GC step may
  // shrink the bin): half the capacity after a growth or a half flush, all of it after a
  // shedding thread's whole flush.
  uint32_t room = bin.capacity() - bin.count();
  bin.Push(pointer);
  if (made_room) ThreadCacheChargeFrees(cache, room);
  PurgerAfterUnlock();
  errno = saved_errno;
}

namespace {
// Frees a checked block of `chunk` to its arena (park: see ArenaFree), keeping errno. A large run
// of another thread's automatic arena goes on that arena's remote-free stack, without its lock.
void FreeToArena(void* pointer, Chunk* chunk, uint32_t page, uint32_t entry, bool park) noexcept {
  int saved_errno = errno;
  Arena* arena = ArenaOf(chunk);
  if (park && MapKind(entry) != PageKind::kSmall && !arena->caller &&
      arena != AutomaticArena()) {
    ArenaFreeRemote(arena, chunk, page);
    errno = saved_errno;
    return;
  }
  ArenaFree(arena, chunk, page, entry, pointer, park);
  PurgerAfterUnlock();
  errno = saved_errno;
}
}  // namespace

namespace {
// A run that the thread's large bins may keep: a live large head of a cached length, at its
// block's start, of the thread's own arena. Only the thread's own arena's runs: another arena's
// (a caller arena's, or another thread's, which FreeToArena sends back without a lock) would fill
// the cache of a thread that may never ask for them, and flush one at a time. g_no_cache's arena
// is null, so a thread without a cache never matches. No test of the page against the header's:
// the header pages' own entries are never written (zero, kFree), so none is a live head.
LETHE_ALWAYS_INLINE bool LargeRunForCache(const ThreadCache* cache, Chunk* chunk, uint32_t page,
                                          uint32_t entry, const void* pointer) {
  return MapLiveLargeHead(entry) && MapCount(entry) - kLargeCacheMinPages <=
                                        kLargeCacheMaxPages - kLargeCacheMinPages &&
         PageAddress(chunk, page) == pointer && ArenaOf(chunk) == cache->arena;
}

// Every free in an arena chunk that no thread-cache bin takes: checked, then to its arena.
LETHE_NOINLINE void FreeUncached(void* pointer, Chunk* chunk, uint32_t page,
                                 uint32_t entry) noexcept {
  if (MapKind(entry) == PageKind::kSmall) {
    if (RegionIndex(RunStart(chunk, page, entry), pointer, MapClass(entry)) < 0) {
      InvalidPointer(pointer);
    }
    CountUncachedFree();
  } else if (!MapLiveLargeHead(entry) || page < kChunkHeaderPages ||
             PageAddress(chunk, page) != pointer) {
    if (MapThreadCached(entry) && PageAddress(chunk, page) == pointer) {
      lethe_fatal_pointer("free(): invalid pointer ", pointer, " (double free)");
    }
    InvalidPointer(pointer);
  }
  FreeToArena(pointer, chunk, page, entry, true);
}
LETHE_NOINLINE void FreeToLargeBinSlow(void* pointer, Chunk* chunk, uint32_t page,
                                       uint32_t entry) noexcept {
  if (!ThreadCachePutLargeSlow(t_cache, pointer, MapCount(entry))) {
    FreeUncached(pointer, chunk, page, entry);
  }
}
}  // namespace

// The large bins' put is tried first, with every call in tail position, so that a run they take
// costs no stack frame; everything else goes to FreeUncached.
void FreeInChunkSlow(void* pointer) noexcept {
  Chunk* chunk = ChunkOf(pointer);
  uint32_t page = PageOf(chunk, pointer);
  uint32_t entry = chunk->map[page];
  ThreadCache* cache = t_cache;
  if (LargeRunForCache(cache, chunk, page, entry, pointer)) {
    LargePut put = ThreadCachePutLarge(cache, pointer, MapCount(entry));
    if (LETHE_LIKELY(put == LargePut::kParked)) return;
    if (put == LargePut::kSlow) return FreeToLargeBinSlow(pointer, chunk, page, entry);
  }
  FreeUncached(pointer, chunk, page, entry);
}

void FreeNotInChunk(void* pointer) noexcept {
  if (pointer == nullptr) return;
  int saved_errno = errno;
  void* owner = nullptr;
  size_t bytes = 0;
  if (!HugeFree(pointer, &owner, &bytes)) InvalidPointer(pointer);
  CountHugeFree();
  if (owner != nullptr) ArenaRemoveHuge(static_cast<Arena*>(owner), bytes);
  DecayAfterHugeFree();
  errno = saved_errno;
}

namespace {
// The usable size of the block at `pointer` in an arena chunk, whose page-map entry is `entry`; 0
// when no block starts there (an interior or stray pointer).
inline size_t ChunkBlockSize(Chunk* chunk, uint32_t page, uint32_t entry, const void* pointer) {
  if (MapKind(entry) == PageKind::kSmall) {
    return RegionIndex(RunStart(chunk, page, entry), pointer, MapClass(entry)) >= 0
               ? kSmallSizes[MapClass(entry)]
               : 0;
  }
  if (MapLiveLargeHead(entry) && page >= kChunkHeaderPages &&
      PageAddress(chunk, page) == pointer) {
    return size_t{MapCount(entry)} << kLgPageBytes;
  }
  return 0;
}
}  // namespace

size_t UsableSize(const void* pointer) {
  if (pointer == nullptr) return 0;
  size_t bytes;
  if (!IsArenaChunk(pointer)) {
    bytes = HugeRegionLiveBytes(pointer);  // no lock
    if (bytes == 0) bytes = HugeSize(pointer);
  } else {
    Chunk* chunk = ChunkOf(pointer);
    uint32_t page = PageOf(chunk, pointer);
    bytes = ChunkBlockSize(chunk, page, chunk->map[page], pointer);
  }
  if (bytes == 0) lethe_fatal_pointer("malloc_usable_size(): invalid pointer ", pointer, "");
  return bytes;
}

// realloc of a huge block to a size that stays huge (>= kGrowingRegionMinBytes). No UsableSize
// first: a buffer grown by small appends calls this at every append, and one table lookup is
// enough (HugeReallocate rejects a pointer it does not know).
static void* ReallocateHuge(void* pointer, size_t size) {
  void* owner = nullptr;
  size_t old_bytes = 0, new_bytes = 0;
  void* moved = HugeReallocate(pointer, size, &owner, &old_bytes, &new_bytes);
  if (moved == nullptr && old_bytes == 0) {
    lethe_fatal_pointer("realloc(): invalid pointer ", pointer, "");
  }
  if (moved == nullptr) {
    PurgeAllArenas();
    if (RunLowMemoryCallback(size)) {
      moved = HugeReallocate(pointer, size, &owner, &old_bytes, &new_bytes);
    }
  }
  if (moved == nullptr) {
    errno = ENOMEM;
  } else if (owner != nullptr) {
    ArenaResizeHuge(static_cast<Arena*>(owner), old_bytes, new_bytes);
  }
  return moved;
}

namespace {
// realloc's move, up to the old block's free: a new block of `size` holding the old one's first
// bytes (`old_size`: its usable size); nullptr when none could be had (the old block stays).
// A small new block takes malloc's fast path (its pages populated by the fill, bin.h); the copy's
// length matters to large and huge blocks only.
LETHE_ALWAYS_INLINE void* CopyToNewBlock(const void* pointer, size_t size, size_t old_size) {
  const size_t copied = old_size < size ? old_size : size;
  void* block = size <= kSmallMaxBytes ? Allocate(size) : AllocateSlow(size, 0, false, copied);
  if (block != nullptr) std::memcpy(block, pointer, copied);
  return block;
}

// realloc that moves a block: `large`, a run of an arena chunk, else a block outside them (a
// small region moves through ReallocateSmallByMoving).
LETHE_NOINLINE void* ReallocateByMoving(void* pointer, size_t size, size_t old_size, bool large) {
  void* block = CopyToNewBlock(pointer, size, old_size);
  if (block == nullptr) return nullptr;
  if (large) {
    // The run left behind goes straight back to the free runs (no thread cache, no parking):
    // a buffer that grows does not ask for its old length again, and coalesced, the run lets
    // its neighbours grow in place.
    Chunk* chunk = ChunkOf(pointer);
    uint32_t page = PageOf(chunk, pointer);
    FreeToArena(pointer, chunk, page, chunk->map[page], false);
  } else {
    Free(pointer);
  }
  return block;
}

// realloc that moves a small region whose page's entry is `entry` (old_size: its class size).
// The entry read before the move still holds after it: a live region's run keeps its pages.
LETHE_NOINLINE void* ReallocateSmallByMoving(void* pointer, size_t size, size_t old_size,
                                             uint32_t entry) {
  void* block = CopyToNewBlock(pointer, size, old_size);
  if (block != nullptr) FreeInChunk(pointer, entry);
  return block;
}

// realloc of a block outside the arena chunks that Reallocate does not keep as it is: a huge
// block (or region block), or invalid.
LETHE_NOINLINE void* ReallocateNotInChunk(void* pointer, size_t size) {
  if (size >= kGrowingRegionMinBytes) return ReallocateHuge(pointer, size);
  return ReallocateByMoving(pointer, size, UsableSize(pointer), false);
}
}  // namespace

// The common case decides from one page-map entry, with no call: a small region that stays in
// its class, or a large run that stays in its class.
void* Reallocate(void* pointer, size_t size) {
  if (pointer == nullptr) return Allocate(size);
  if (size == 0) size = 1;
  if (LETHE_UNLIKELY(FailArmed()) && FailureInjected()) return InjectedFailure(size);
  if (!IsArenaChunk(pointer)) {
    // A buffer grown by appends asks at every append: within its region block's step, realloc
    // reads one map entry, with no lock and no call.
    if (size >= kGrowingRegionMinBytes && HugeRegionBlockKept(HugeRegionLiveBytes(pointer), size)) {
      return pointer;
    }
    return ReallocateNotInChunk(pointer, size);
  }
  Chunk* chunk = ChunkOf(pointer);
  uint32_t page = PageOf(chunk, pointer);
  uint32_t entry = chunk->map[page];
  const size_t old_size = ChunkBlockSize(chunk, page, entry, pointer);
  if (old_size == 0) lethe_fatal_pointer("realloc(): invalid pointer ", pointer, "");
  if (MapKind(entry) == PageKind::kSmall) {
    // Past its class size a region always moves (tested first: growth is the usual case). A
    // block that realloc grew into a coarser class (SmallGrowthBytes) stays there for every size
    // that would grow into it, so that the next steps of its growth do not move it back.
    if (size > old_size) {
      return ReallocateSmallByMoving(pointer, SmallGrowthBytes(size, old_size), old_size, entry);
    }
    if (SmallClassOf(size) == MapClass(entry) || SmallReallocStays(size, old_size)) {
      return pointer;
    }
    return ReallocateSmallByMoving(pointer, size, old_size, entry);
  }
  if (size > kSmallMaxBytes && size <= kLargeMaxBytes) {
    // Within its class a large block stays as it is; past it, it grows in place to the new
    // size's class when the pages after it are free, else it moves: into that class, or from
    // kGrowingRegionMinBytes on into a huge region (huge_region.h).
    uint32_t new_pages = LargeClassPages(PagesFor(size));
    if (size_t{new_pages} << kLgPageBytes == old_size) return pointer;
    if (ArenaResizeLargeInPlace(ArenaOf(chunk), chunk, page, new_pages)) {
      PurgerAfterUnlock();
      return pointer;
    }
  }
  return ReallocateByMoving(pointer, size, old_size, true);
}

void ValidateHeap() {
  ForEachArena([](Arena& arena) {
    ArenaLock lock(&arena);
    arena.heap.Validate();
    size_t small_pages = 0;
    for (uint32_t klass = 0; klass < kSmallClassCount; ++klass) {
      BinValidate(arena.bins[klass], klass);
      small_pages += arena.bins[klass].run_count * kSmallClasses[klass].run_pages;
      LETHE_CHECK(arena.bins[klass].regions_out + arena.transfer.count[klass] <=
                      arena.bins[klass].run_count * kSmallClasses[klass].region_count,
                  "more regions out than the runs hold");
    }
    TransferValidate(arena.transfer);
    LETHE_CHECK(small_pages * kPageBytes + arena.large_bytes_out ==
                    arena.heap.active_pages() * kPageBytes,
                "active pages != small runs + large runs");
  });
}

}  // namespace lethe::internal
