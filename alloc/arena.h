// arena.h — an arena: one lock, one page heap, one bin per small class. Threads are spread over
// the arenas (one per CPU by default, LETHE_OPTIONS=arenas:N) round-robin at their first
// allocation, so that two threads rarely share a lock. A block always returns to the arena that
// owns its chunk (ArenaOf), whichever thread frees it.
//
// Locking: everything in an Arena is guarded by its lock. The arena table itself is constant
// after initialisation.
#ifndef LETHE_ALLOC_ARENA_H_
#define LETHE_ALLOC_ARENA_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "arena_handles.h"
#include "bin.h"
#include "compiler.h"
#include "chunk.h"
#include "decay_adaptation.h"
#include "mutex.h"
#include "options.h"
#include "page_heap.h"
#include "transfer_cache.h"

namespace lethe::internal {

// Dirty pages an arena may keep whatever its dirty_percent allows: from 256 KiB (glibc's default
// trim threshold is 128 KiB), doubled up to 16 MiB each time an excess purge follows the last one
// within decay_ms (the arena frees and refaults pages faster than it should purge them). Past
// 256 KiB, the floor counts only up to the arena's active pages once they are under half of what
// they were at the last such repeat (churn_active_pages): a program that frees its data at exit
// keeps no floor grown while the data lived, and one that churns at a small active size keeps
// the floor it grew there, held to its active pages. Why adaptive: a fixed floor either leaves a
// short program exiting with megabytes dirty (issue 15 item 5), or makes a program that churns
// purge and refault the same pages all the time.
inline constexpr size_t kDirtyFloorMinPages = 64;
inline constexpr size_t kDirtyFloorMaxPages = 4096;
// The repeat window is the decay time: bursts a few tenths of a second apart (the engine's page
// loads) must count as repeats on a slow machine too. The floor holds back excess purges only:
// decay still purges every page dirty for the arena's decay time, idle or not.

// An excess over the dirty limit is left to decay when its pages hold little memory:
// kDirtySampleRuns dirty runs, the oldest and the newest, are sampled with mincore, and when at
// most 1/kDirtyResidentShare of their pages is resident and the dirty pages scaled by that share
// are within the limit, nothing is purged, and no new sample is taken until half the limit more
// is dirty. Why: a freed large run counts every page as dirty, but a buffer written only at its
// start has one page resident, and purging it costs a system call and a fault for one page.
// The share guards heaps of mixed runs, which a sample of 32 misjudges. Only the purge made at
// once by the freeing thread samples (a process with one caching thread, or no purge thread):
// the purge thread's pass holds the lock others wait for, and its excess is rare enough to purge.
// (The measurements behind these rules: tools/bench/alloc/README.md, "The figures behind the
// allocator's rules".)
inline constexpr uint32_t kDirtySampleRuns = 32;
inline constexpr size_t kDirtyResidentShare = 8;

struct Arena {
  Mutex lock;
  PageHeap heap;
  Bin bins[kSmallClassCount];
  TransferCache transfer;         // regions between thread caches (automatic arenas only)
  uint64_t large_bytes_out = 0;   // pages of live large runs, in bytes
  uint64_t large_allocations = 0; // cumulative
  uint64_t large_frees = 0;
  uint64_t last_decay_ns = 0;     // last opportunistic decay check
  DecayAdaptation decay;          // the arena's decay time: decay_ms, doubled on refaults
  // The dirty floor is kDirtyFloorMinPages << dirty_floor_doublings (DirtyFloorPages): zero
  // until grown, so that g_arenas stays in .bss, whose pages are not read from the file.
  uint32_t dirty_floor_doublings = 0;
  uint64_t last_excess_ns = 0;    // the last excess purge
  size_t churn_active_pages = 0;  // active pages at the last excess purge that repeated quickly
  size_t dirty_checked_pages = 0; // dirty pages when a sample found the excess not resident
  // Caller-created arenas (caller_arenas.cc). `caller` and `slot` are set at creation and constant
  // while the arena lives; the rest is under the lock.
  bool caller = false;
  bool closed = false;             // destroyed while holding bytes: released when it empties
  uint32_t slot = 0;               // its handle slot (arena_handles.h)
  uint64_t huge_bytes = 0;         // live huge blocks allocated while it was bound
  uint64_t huge_count = 0;
  // Blocks handed out and taken back since the arena was created (regions moved to and from
  // thread caches included: for a caller arena, whose blocks skip the caches, the user's blocks).
  uint64_t allocations = 0;
  uint64_t frees = 0;
  // Large runs freed by threads of other arenas, waiting to be freed under the lock (a stack
  // linked through the free-run node of each run's first page, unused while the run is live):
  // such a free takes no lock; whoever next holds the lock frees them (ArenaDrainRemoteFrees).
  std::atomic<FreeRunNode*> remote_frees{nullptr};
  std::atomic<uint32_t> remote_pages{0};
};

// Pages a remote-free stack may hold before the thread that pushes onto it drains it itself, when
// the lock is free.
inline constexpr uint32_t kRemoteFreeMaxPages = 4096;  // 16 MiB


extern LETHE_HIDDEN constinit Arena g_arenas[kMaxArenas];

inline size_t DirtyFloorPages(const Arena& arena) {
  return kDirtyFloorMinPages << arena.dirty_floor_doublings;
}
extern LETHE_HIDDEN constinit unsigned g_arena_count;
// Caller arenas: slots [0, g_caller_arena_slots) of g_caller_arenas hold an Arena each (mapped
// once, recycled after release; an entry never changes once set, so walkers read it unlocked).
extern LETHE_HIDDEN constinit Arena* g_caller_arenas[kMaxCallerArenas];
extern LETHE_HIDDEN constinit std::atomic<uint32_t> g_caller_arena_slots;

// Calls f(Arena&) for every automatic arena, then every caller arena (released ones too: their
// heap is empty). No lock is held by the walk itself.
template <typename F>
void ForEachArena(F f) {
  for (unsigned i = 0; i < g_arena_count; ++i) f(g_arenas[i]);
  uint32_t slots = g_caller_arena_slots.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < slots; ++i) f(*g_caller_arenas[i]);
}

// Sets up the arena table (called once by the initialisation).
void ArenasInit(unsigned count);
// The arena the calling thread's allocations come from: its bound caller arena, else its own.
Arena* ThreadArena();
// The calling thread's own (automatic) arena, whatever it is bound to.
Arena* AutomaticArena();
// The calling thread's bound caller arena (nullptr when unbound); set by caller_arenas.cc.
extern LETHE_HIDDEN LETHE_TLS Arena* t_bound_arena;
// Under the arena's lock: true when a closed caller arena holds nothing any more and must be
// released (ArenaRelease, after unlocking).
inline bool ArenaMustRelease(const Arena* arena) {
  return LETHE_UNLIKELY(arena->closed) && arena->heap.active_pages() == 0 &&
         arena->huge_bytes == 0;
}
// Releases a closed, empty caller arena (caller_arenas.cc): unmaps its chunks, frees its slot.
// Called with no lock held, by whoever saw ArenaMustRelease turn true.
void ArenaRelease(Arena* arena);
// Every page heap that owns chunks is an Arena's `heap`: its arena is found by offset, so that an
// automatic arena needs no pointer written into it before it is used (ArenasInit).
static_assert(std::is_standard_layout_v<Arena>, "ArenaOf finds the arena by offsetof");
inline Arena* ArenaOf(const Chunk* chunk) {
  return reinterpret_cast<Arena*>(reinterpret_cast<char*>(chunk->heap) - offsetof(Arena, heap));
}

// Small regions of `klass` into out[] (lock taken inside); returns how many.
uint32_t ArenaAllocateSmall(Arena* arena, uint32_t klass, void** out, uint32_t count);
// A large run of `pages` pages aligned to `alignment` (<= page: no constraint). nullptr on OOM.
// `written`: see PageHeap::AllocateLarge.
void* ArenaAllocateLarge(Arena* arena, uint32_t pages, size_t alignment, bool* zeroed,
                         bool written = false);
// Frees one block of a chunk of `arena` (small or large; entry already read and checked to be a
// small page or a large head).
// `park`: a freed large run may be parked for its length (page_heap.h step 8); realloc passes
// false for the run it moved away from (a growing buffer does not ask for its old length again).
void ArenaFree(Arena* arena, Chunk* chunk, uint32_t page, uint32_t entry, void* pointer,
               bool park = true);
// Frees `count` large runs (heads), all in chunks of `arena`, under one lock acquisition; for
// thread-cache flushes (the frees were counted when the blocks entered the cache).
void ArenaFreeLargeBatch(Arena* arena, void** pointers, uint32_t count);
// Frees `count` regions of `klass` (a thread-cache bin's), all in chunks of `arena`, under one
// lock acquisition. `park`: into the arena's transfer cache while it has room (a full bin's
// flush: the regions are likely wanted again soon), else to their runs' bitmaps.
void ArenaFreeSmallBatch(Arena* arena, uint32_t klass, void** pointers, uint32_t count,
                         bool park);
// Under the arena's lock, at a decay pass: gives the transfer cache's idle regions (all: every
// one) back to their runs; true when some stay parked.
bool ArenaTrimTransfer(Arena* arena, uint64_t now_ns, bool all);
// Takes the arena's lock and gives every region of its transfer cache back to its run (a thread
// shedding its working set, thread_cache.h), enforcing the dirty limit after.
void ArenaTrimTransferAll(Arena* arena);
// Large realloc in place: true when the run at `page` now has `new_pages` pages.
bool ArenaResizeLargeInPlace(Arena* arena, Chunk* chunk, uint32_t page, uint32_t new_pages);

// Frees a live large run of an automatic arena that the calling thread does not own without
// taking the arena's lock (see Arena::remote_frees).
void ArenaFreeRemote(Arena* arena, Chunk* chunk, uint32_t page);
// Under the arena's lock: frees the runs other threads left on its remote-free stack.
inline void ArenaDrainRemoteFrees(Arena* arena);
void ArenaDrainRemoteFreesSlow(Arena* arena);
inline void ArenaDrainRemoteFrees(Arena* arena) {
  if (LETHE_UNLIKELY(arena->remote_frees.load(std::memory_order_relaxed) != nullptr)) {
    ArenaDrainRemoteFreesSlow(arena);
  }
}
// The arena's lock, held for a scope, with the remote-free stack drained as soon as it is taken:
// every holder frees what other threads left before doing its own work, so a push that found the
// lock busy (ArenaFreeRemote tries it only) is drained by the next acquisition.
class ArenaLock {
 public:
  explicit ArenaLock(Arena* arena) : lock_(&arena->lock) { ArenaDrainRemoteFrees(arena); }

 private:
  MutexLock lock_;
};
// Under the arena's lock: purges down to half the dirty limit when the dirty pages exceed it.
void ArenaPurgeExcess(Arena* arena);
// The purger's pass over an automatic arena (not a caller arena, whose chunks ReleaseAll may
// unmap meanwhile): takes the decayed dirty runs, and those above the dirty limit that have been
// dirty for excess_grace_ns (decay.h; no grace while both the dirty pages and the floor are under
// kDirtyFloorMaxPages), under the lock, and returns their pages to the OS without it
// (page_heap.h step 9), so that allocations in the arena do not wait for madvise. Trims the
// transfer cache first. Returns when the arena next has work (UINT64_MAX: none): a decay
// deadline, or sooner the end of the grace of pages over the limit, or the next trim while
// regions stay in the transfer cache.
// `base_decay_ns` is decay_ms; the arena's own decay time is arena->decay's.
uint64_t ArenaPurgeUnlocked(Arena* arena, uint64_t now_ns, uint64_t base_decay_ns,
                           uint64_t excess_grace_ns);
// Under the arena's lock, after a decay pass that purged `decayed_pages` for their age: tells
// the arena's decay adaptation (decay_adaptation.h).
inline void ArenaNoteDecayPass(Arena* arena, uint64_t now_ns, size_t decayed_pages,
                               uint64_t base_decay_ns) {
  arena->decay.AfterPass(now_ns, arena->heap.clean_pages_taken(), decayed_pages, base_decay_ns);
}
// Under the arena's lock: purges the runs dirty for the arena's decay time and tells its
// adaptation; returns the arena's decay time after the pass (its next deadline's).
inline uint64_t ArenaDecayLocked(Arena* arena, uint64_t now_ns, uint64_t base_decay_ns) {
  size_t decayed = arena->heap.PurgeDecayed(now_ns, arena->decay.DecayNs(base_decay_ns));
  ArenaNoteDecayPass(arena, now_ns, decayed, base_decay_ns);
  return arena->decay.DecayNs(base_decay_ns);
}
// Under the arena's lock, at the end of a decay pass: unmaps the heap's idle empty chunks
// (page_heap.h step 6) and returns the oldest time that decay_ns later makes work (a dirty run's
// or an empty chunk's), which the purger sleeps until.
inline uint64_t ArenaFinishDecayPass(PageHeap* heap, uint64_t now_ns, uint64_t decay_ns) {
  uint64_t idle_since = heap->UnmapIdleChunks(now_ns, decay_ns);
  uint64_t dirty_since = heap->OldestDirtyNs();
  return idle_since < dirty_since ? idle_since : dirty_since;
}
// For tests: called by ArenaPurgeUnlocked with no lock held, just before it purges.
extern LETHE_HIDDEN void (*g_purge_unlocked_hook)(Arena* arena);
// Under the arena's lock after pages were freed: enforces the dirty limit (dirty_percent of active
// pages, at least the arena's dirty floor allowed; purging down to half of it) and, without a
// background thread, decays. `remote`: the pages were freed by other threads (remote frees
// drained), so the excess always waits for the purge thread (DeferExcessPurge).
void ArenaAfterRelease(Arena* arena, bool remote = false);

void ArenasLockForFork();
void ArenasUnlockAfterFork(bool child);

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_ARENA_H_
