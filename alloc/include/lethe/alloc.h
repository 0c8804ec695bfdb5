/* lethe/alloc.h — the C API of Lethe's allocator.
 *
 * Who calls it: every layer of Lethe allocates its large and long-lived buffers (pixel rows,
 * compressed image bytes, cache entries) through lethe_malloc/lethe_free, from any thread.
 *
 * Which allocator serves these calls depends on the build (see README, "Presets and options"):
 *   - LETHE_REPLACE_MALLOC=ON (default outside the sanitizer presets): the bundled jemalloc-style
 *     allocator (alloc/), with size classes, a linear page map, decay purging and statistics.
 *   - LETHE_REPLACE_MALLOC=OFF (sanitizer presets): the calls forward to the system malloc so that
 *     ASan/LSan see every buffer. Statistics then count what went through lethe_* only.
 *   lethe_allocator_name() says which one is in use.
 *
 * Linking lethe::alloc never replaces the process's malloc; that is the separate opt-in target
 * lethe::malloc (liblethe-malloc.so or its static variant).
 *
 * Every function is thread-safe and noexcept; failures return NULL with errno = ENOMEM.
 */
#ifndef LETHE_ALLOC_H_
#define LETHE_ALLOC_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#define LETHE_NOEXCEPT noexcept
#else
#define LETHE_NOEXCEPT
#endif

/* ---- allocation -------------------------------------------------------------------------- */
void* lethe_malloc(size_t size) LETHE_NOEXCEPT;
void* lethe_calloc(size_t count, size_t size) LETHE_NOEXCEPT; /* overflow -> NULL, ENOMEM */
void* lethe_realloc(void* pointer, size_t size) LETHE_NOEXCEPT;
/* alignment: a power of two; size need not be a multiple of it. */
void* lethe_aligned_alloc(size_t alignment, size_t size) LETHE_NOEXCEPT;
void lethe_free(void* pointer) LETHE_NOEXCEPT;

/* The size the block at pointer really has (>= what was requested). 0 for NULL. */
size_t lethe_usable_size(const void* pointer) LETHE_NOEXCEPT;
/* The size a request of `size` bytes gets: grow buffers to this and waste nothing. */
size_t lethe_good_size(size_t size) LETHE_NOEXCEPT;

/* ---- returning memory -------------------------------------------------------------------- */
/* Returns every dirty page to the OS now (madvise), and flushes this thread's cache. */
void lethe_purge(void) LETHE_NOEXCEPT;
/* Drives decay purging from an external clock (nanoseconds, monotonic, any origin). Meant for a
 * program on simulated time with the background purge thread turned off (decay_thread:0). */
void lethe_decay_tick(uint64_t now_ns) LETHE_NOEXCEPT;

/* ---- statistics -------------------------------------------------------------------------- */
/* What one thread's cache of the bundled allocator may hold at most (blocks freed by that thread
 * and kept for its next allocations), in bytes. */
#define LETHE_THREAD_CACHE_MAX_BYTES (4864u * 1024u)

typedef struct lethe_stats_t {
  uint64_t allocated_bytes; /* sum of usable sizes of live blocks */
  uint64_t active_bytes;    /* pages backing live runs (allocated + unused parts of runs) */
  uint64_t mapped_bytes;    /* address space mapped by the allocator */
  uint64_t resident_bytes;  /* estimate: active + dirty + metadata */
  uint64_t dirty_bytes;     /* freed pages not yet returned to the OS (free runs, large runs
                               kept whole for reuse, freed huge blocks' pages in huge regions) */
  uint64_t purged_bytes;    /* cumulative bytes returned with madvise */
  uint64_t metadata_bytes;  /* chunk headers, arena and thread-cache bookkeeping */
  uint64_t bin_unused_bytes; /* free slots inside small runs */
  uint64_t thread_cache_bytes; /* blocks parked in thread caches */
  uint64_t allocation_count;   /* cumulative allocations served */
  uint64_t free_count;         /* cumulative frees */
  uint64_t huge_bytes;         /* part of allocated_bytes in huge (mmap'd) blocks */
  uint64_t oom_reserve_bytes_used; /* bytes of the out-of-memory reserve handed out */
  uint64_t low_memory_callbacks;   /* times the low-memory callback ran */
  /* Added with the bundled allocator (0 when forwarding to the system malloc): */
  uint64_t chunk_count;            /* arena chunks mapped */
  uint64_t huge_count;             /* live huge blocks */
  uint64_t arena_count;            /* automatic arenas, plus caller arenas holding memory */
  uint64_t oom_count;              /* allocations that found the OS refusing memory */
  uint64_t requested_bytes;        /* cumulative bytes requested (LETHE_OPTIONS=slop:1 only) */
  uint64_t served_bytes;           /* cumulative usable bytes given for them (slop:1 only) */
  /* High-water mark of allocated bytes since the process started or the last
   * lethe_stats_reset_peak(), counting huge blocks (>= 1 MiB) exactly.
   * Bundled allocator: tracked where the allocator already accounts bytes (the arenas and the
   * huge table), so a block parked in a thread cache counts as allocated there: the figure is the
   * highest value reached by (allocated_bytes + thread_cache_bytes), exact for that sum under any
   * number of threads and arenas, and exceeds the true peak of allocated_bytes by at most the
   * thread caches' contents at that moment (at most LETHE_THREAD_CACHE_MAX_BYTES per thread; 0
   * with tcache:0). It never reads below the true peak, except after a reset racing with other
   * threads' allocations.
   * System malloc (sanitizer presets): the exact peak of the usable sizes live through lethe_*. */
  uint64_t peak_allocated_bytes;
  /* Small blocks freed by thread caches and kept by their arenas for the next refills (bundled
   * allocator only; not in allocated_bytes, nor in bin_unused_bytes). */
  uint64_t transfer_cache_bytes;
} lethe_stats_t;

void lethe_stats(lethe_stats_t* out) LETHE_NOEXCEPT;
/* Restarts peak_allocated_bytes from the current figure, to measure one section of work:
 * lethe_purge() (empties the calling thread's cache), lethe_stats_reset_peak(), lethe_stats(&a),
 * work, lethe_stats(&b): b.peak_allocated_bytes - (a.allocated_bytes + a.thread_cache_bytes) is
 * the section's peak, exact up to what the section left in thread caches. */
void lethe_stats_reset_peak(void) LETHE_NOEXCEPT;
/* Human-readable statistics (totals and per size class) to `out` (stderr when NULL). */
void lethe_stats_print(FILE* out) LETHE_NOEXCEPT;
/* "lethe" for the bundled allocator, "system" when forwarding to the system malloc. */
const char* lethe_allocator_name(void) LETHE_NOEXCEPT;

/* ---- arenas a caller creates ------------------------------------------------------------- */
/* An arena a caller creates, binds to a thread for a scope, measures and destroys (the engine
 * gives each document its own, so that its bytes are counted exactly and go back whole).
 *
 * Contract (bundled allocator):
 *   - While an arena is bound to a thread, every allocation of that thread (lethe_*, and malloc and
 *     operator new when the process runs on Lethe) comes from it, huge blocks (>= 1 MiB) included.
 *     The thread's cache is set aside meanwhile: bound allocations and frees take the arena's
 *     lock, and no block of another arena is handed out.
 *   - A block keeps its arena for life: freed from any thread, bound or not, it goes back to it
 *     (blocks of caller arenas never enter a thread cache). realloc keeps a block in its arena
 *     when it can resize in place; a moved block comes from the arena bound at the realloc.
 *   - lethe_arena_destroy closes the arena. Empty, it goes back at once: every chunk unmapped.
 *     Holding bytes, it is kept, closed (a "ghost"), reported by lethe_arena_stats with
 *     LETHE_ARENA_CLOSED, and released (chunks unmapped, handle stale) when its last block is
 *     freed. Freed huge blocks' pages go to the process-wide huge regions, as any huge block's do.
 *   - Handles are never reused: a stale handle (its arena released) gives ENOENT, a handle that
 *     never existed EINVAL.
 * System malloc (sanitizer presets): the same handles, limits, binding and errors, so that code
 * above behaves alike; blocks come from the system malloc, so lethe_arena_stats reports zeros
 * with LETHE_ARENA_UNTRACKED, and a destroyed arena is released at once (no ghosts).
 * All functions are thread-safe. */
typedef uint64_t lethe_arena_t;
#define LETHE_ARENA_NONE ((lethe_arena_t)0) /* no arena: the thread's own (automatic) arenas */
#define LETHE_ARENA_MAX 256                 /* caller arenas alive at once, ghosts included */

/* A new, open arena; LETHE_ARENA_NONE with errno = EAGAIN when LETHE_ARENA_MAX are alive, or
 * ENOMEM. */
lethe_arena_t lethe_arena_create(void) LETHE_NOEXCEPT;
/* Binds `arena` (LETHE_ARENA_NONE: unbinds) to the calling thread and stores the previous
 * binding in *previous (may be NULL), so that a scope can restore it. Returns 0, or EINVAL /
 * ENOENT for a bad or stale handle and EBADF for a closed arena (the binding is then unchanged).
 * A thread that exits while bound is unbound. */
int lethe_arena_bind(lethe_arena_t arena, lethe_arena_t* previous) LETHE_NOEXCEPT;
/* The calling thread's binding (LETHE_ARENA_NONE when unbound). */
lethe_arena_t lethe_arena_bound(void) LETHE_NOEXCEPT;

#define LETHE_ARENA_CLOSED 1u    /* destroyed, still holding bytes: a ghost */
#define LETHE_ARENA_UNTRACKED 2u /* system malloc build: the figures are not tracked (zeros) */
typedef struct lethe_arena_stats_t {
  uint64_t allocated_bytes; /* usable sizes of the arena's live blocks, huge ones included */
  uint64_t active_bytes;    /* pages under its live runs, plus its huge blocks */
  uint64_t mapped_bytes;    /* its chunks, plus its huge blocks */
  uint64_t dirty_bytes;     /* freed pages of its chunks not yet returned to the OS */
  uint64_t huge_bytes;      /* part of allocated_bytes in huge blocks */
  uint64_t allocation_count; /* cumulative blocks allocated from it */
  uint64_t free_count;       /* cumulative blocks freed back to it */
  uint32_t flags;            /* LETHE_ARENA_CLOSED, LETHE_ARENA_UNTRACKED */
  uint32_t bound_threads;    /* threads it is bound to now */
} lethe_arena_stats_t;
/* Fills *out. Returns 0, EINVAL (bad handle or out NULL) or ENOENT (released). */
int lethe_arena_stats(lethe_arena_t arena, lethe_arena_stats_t* out) LETHE_NOEXCEPT;
/* Closes `arena` (see the contract above); *bytes_left (may be NULL) gets the bytes its live
 * blocks still hold (0: it was released now). Returns 0, EINVAL / ENOENT for a bad or stale
 * handle, EBADF when already closed, EBUSY while it is bound to any thread (nothing changes). */
int lethe_arena_destroy(lethe_arena_t arena, uint64_t* bytes_left) LETHE_NOEXCEPT;

/* ---- out of memory ----------------------------------------------------------------------- */
/* Called on the allocating thread, with no allocator lock held, when the OS refuses memory.
 * `request_bytes` is the size that failed. The callback may free memory (and may allocate, though
 * a nested failure does not call it again). It should free what it can synchronously and post any
 * heavier work elsewhere. Pass NULL to remove. */
typedef void (*lethe_low_memory_callback_t)(size_t request_bytes, void* context);
void lethe_set_low_memory_callback(lethe_low_memory_callback_t callback,
                                   void* context) LETHE_NOEXCEPT;

/* Test hook: the n-th following lethe_* allocation (n >= 1) fails with ENOMEM, once; n <= 0
 * disarms. It fails as a refusal by the OS does: the low-memory callback runs first, on the
 * allocating thread (with whatever locks it holds), then the allocation fails. Lets the layers
 * above test their out-of-memory paths and their callbacks. Process-wide. */
void lethe_fail_after(long n) LETHE_NOEXCEPT;

#ifdef __cplusplus
}  /* extern "C" */

namespace lethe {
/* Binds an arena to the calling thread for a C++ scope, then restores the previous binding.
 * ok() is false when the bind failed (error() says why); nothing is restored then. */
class ArenaScope {
 public:
  explicit ArenaScope(lethe_arena_t arena) noexcept : error_(lethe_arena_bind(arena, &previous_)) {}
  ~ArenaScope() {
    if (error_ == 0) lethe_arena_bind(previous_, nullptr);
  }
  ArenaScope(const ArenaScope&) = delete;
  ArenaScope& operator=(const ArenaScope&) = delete;
  bool ok() const noexcept { return error_ == 0; }
  int error() const noexcept { return error_; }
  lethe_arena_t previous() const noexcept { return previous_; }

 private:
  lethe_arena_t previous_ = LETHE_ARENA_NONE;
  int error_;
};
}  /* namespace lethe */
#endif

#endif /* LETHE_ALLOC_H_ */
