// Caller-created arenas (see caller_arenas.h) and their C API.
#include "caller_arenas.h"

#include <errno.h>

#include <cstring>
#include <new>

#include "allocator.h"
#include "base.h"
#include "compiler.h"
#include "decay.h"
#include "lethe/alloc.h"
#include "thread_cache.h"

namespace lethe::internal {
namespace {

void UnboundAtExit() {
  t_bound_arena = nullptr;
  ThreadCacheResume();
}

// Under g_arena_handles_lock, with no block of the arena left: unmaps its chunks, resets it for
// the next arena of its slot and makes its handle stale.
void ReleaseLocked(Arena* arena) {
  {
    MutexLock lock(&arena->lock);
    arena->heap.ReleaseAll();
    for (Bin& bin : arena->bins) {
      LETHE_CHECK(bin.run_count == 0 && bin.regions_out == 0, "released arena with small runs");
      bin = Bin{};
    }
    arena->closed = false;
    arena->huge_bytes = 0;
    arena->huge_count = 0;
    arena->allocations = 0;
    arena->frees = 0;
  }
  ArenaSlotRelease(arena->slot);
}

uint64_t AllocatedBytes(const Arena& arena) {
  uint64_t bytes = arena.large_bytes_out + arena.huge_bytes;
  for (uint32_t klass = 0; klass < kSmallClassCount; ++klass) {
    bytes += arena.bins[klass].regions_out * kSmallSizes[klass];
  }
  return bytes;
}

// Under g_arena_handles_lock: a new arena for `slot`, or the one a released arena left there.
Arena* ArenaForSlot(uint32_t slot) {
  if (g_caller_arenas[slot] != nullptr) return g_caller_arenas[slot];
  void* memory = BaseAllocate(sizeof(Arena));
  if (memory == nullptr) return nullptr;
  auto* arena = new (memory) Arena;
  arena->slot = slot;
  arena->caller = true;
  arena->heap.Init(kMapNoCache);
  g_caller_arenas[slot] = arena;
  if (g_caller_arena_slots.load(std::memory_order_relaxed) <= slot) {
    g_caller_arena_slots.store(slot + 1, std::memory_order_release);
  }
  return arena;
}

}  // namespace

void CallerArenasInit() { ArenaHandlesSetExitHook(UnboundAtExit); }

void ArenaRelease(Arena* arena) {
  MutexLock lock(&g_arena_handles_lock);
  ReleaseLocked(arena);
}

void ArenaAddHuge(Arena* arena, uint64_t bytes) {
  MutexLock lock(&arena->lock);
  arena->huge_bytes += bytes;
  ++arena->huge_count;
  ++arena->allocations;
}

void ArenaRemoveHuge(Arena* arena, uint64_t bytes) {
  bool release;
  {
    MutexLock lock(&arena->lock);
    arena->huge_bytes -= bytes;
    --arena->huge_count;
    ++arena->frees;
    release = ArenaMustRelease(arena);
    if (release) arena->closed = false;  // claimed (see ClaimRelease in arena.cc)
  }
  if (release) ArenaRelease(arena);
}

void ArenaResizeHuge(Arena* arena, uint64_t old_bytes, uint64_t new_bytes) {
  MutexLock lock(&arena->lock);
  arena->huge_bytes += new_bytes - old_bytes;  // modulo 2^64: a shrink subtracts
}

}  // namespace lethe::internal

using namespace lethe::internal;

extern "C" {

LETHE_EXPORT lethe_arena_t lethe_arena_create(void) noexcept {
  EnsureInit();
  MutexLock lock(&g_arena_handles_lock);
  uint32_t slot = 0;
  int error = ArenaSlotCreate(&slot);
  if (error == 0 && ArenaForSlot(slot) == nullptr) {
    ArenaSlotRelease(slot);
    error = ENOMEM;
  }
  if (error != 0) {
    errno = error;
    return LETHE_ARENA_NONE;
  }
  return ArenaSlotHandle(slot);
}

LETHE_EXPORT int lethe_arena_bind(lethe_arena_t arena, lethe_arena_t* previous) noexcept {
  EnsureInit();
  uint32_t slot = 0;
  int error;
  {
    // Its pthread_setspecific may allocate, once per thread and for the thread's life: not from
    // the caller arena the thread may still be bound to.
    AutomaticArenaScope unbound;
    error = ArenaBindThread(arena, previous, &slot);
  }
  if (error != 0) return error;
  if (slot == UINT32_MAX) {
    t_bound_arena = nullptr;
    ThreadCacheResume();
  } else {
    t_bound_arena = g_caller_arenas[slot];
    ThreadCacheSuspend();
  }
  return 0;
}

LETHE_EXPORT lethe_arena_t lethe_arena_bound(void) noexcept { return ThreadBoundArena(); }

LETHE_EXPORT int lethe_arena_stats(lethe_arena_t handle, lethe_arena_stats_t* out) noexcept {
  if (out == nullptr) return EINVAL;
  EnsureInit();
  MutexLock handles(&g_arena_handles_lock);
  uint32_t slot = 0;
  if (int error = ArenaSlotFind(handle, &slot); error != 0) return error;
  std::memset(out, 0, sizeof(*out));
  const ArenaSlot& entry = ArenaSlotAt(slot);
  out->flags = entry.state == ArenaSlotState::kClosed ? LETHE_ARENA_CLOSED : 0;
  out->bound_threads = entry.bound_threads;
  Arena& arena = *g_caller_arenas[slot];
  MutexLock lock(&arena.lock);
  out->allocated_bytes = AllocatedBytes(arena);
  out->huge_bytes = arena.huge_bytes;
  out->active_bytes = uint64_t{arena.heap.active_pages()} * kPageBytes + arena.huge_bytes;
  out->mapped_bytes = uint64_t{arena.heap.chunk_count()} * kChunkBytes + arena.huge_bytes;
  out->dirty_bytes = uint64_t{arena.heap.unreturned_pages()} * kPageBytes;
  out->allocation_count = arena.allocations;
  out->free_count = arena.frees;
  return 0;
}

LETHE_EXPORT int lethe_arena_destroy(lethe_arena_t handle, uint64_t* bytes_left) noexcept {
  EnsureInit();
  MutexLock handles(&g_arena_handles_lock);
  uint32_t slot = 0;
  if (int error = ArenaSlotFind(handle, &slot); error != 0) return error;
  ArenaSlot& entry = ArenaSlotAt(slot);
  if (entry.state == ArenaSlotState::kClosed) return EBADF;
  if (entry.bound_threads > 0) return EBUSY;
  Arena* arena = g_caller_arenas[slot];
  uint64_t left;
  {
    MutexLock lock(&arena->lock);
    left = AllocatedBytes(*arena);
    // Dirty pages of a ghost would wait for decay: its free runs go back now.
    if (left != 0) {
      arena->closed = true;
      arena->heap.PurgeAll();
    }
  }
  if (bytes_left != nullptr) *bytes_left = left;
  if (left == 0) {
    ReleaseLocked(arena);
  } else {
    entry.state = ArenaSlotState::kClosed;
  }
  PurgerAfterUnlock();
  return 0;
}

}  // extern "C"
