// arena_handles.h — the handles of the arenas a caller creates (lethe_arena_*, lethe/alloc.h) and
// each thread's binding: shared by the bundled allocator (caller_arenas.cc, which adds the arena
// behind each slot) and the system-malloc forwarding (system_forward.cc), so that both accept and
// refuse the same handles with the same errors.
//
// A handle is (generation << 32) | (slot + 1): 0 is never a handle, and a slot released and
// reused gets a new generation, so that an old handle reads as stale (ENOENT), not as the new
// arena. Everything here is guarded by g_arena_handles_lock except the calling thread's binding.
#ifndef LETHE_ALLOC_ARENA_HANDLES_H_
#define LETHE_ALLOC_ARENA_HANDLES_H_

#include <cstdint>

#include "compiler.h"
#include "lethe/alloc.h"
#include "mutex.h"

namespace lethe::internal {

inline constexpr uint32_t kMaxCallerArenas = LETHE_ARENA_MAX;

enum class ArenaSlotState : uint8_t { kFree = 0, kOpen, kClosed };

struct ArenaSlot {
  uint32_t generation;  // of the current or, when free, the last arena of this slot (0: unused)
  ArenaSlotState state;
  uint32_t bound_threads;
};

extern LETHE_HIDDEN constinit Mutex g_arena_handles_lock;

// Under the lock. A free slot with a new generation (open, unbound), or EAGAIN at the limit.
int ArenaSlotCreate(uint32_t* slot);
// Under the lock. The live (open or closed) slot of `handle`: 0, EINVAL or ENOENT.
int ArenaSlotFind(lethe_arena_t handle, uint32_t* slot);
ArenaSlot& ArenaSlotAt(uint32_t slot);
lethe_arena_t ArenaSlotHandle(uint32_t slot);
// Under the lock: frees the slot; its handle becomes stale.
void ArenaSlotRelease(uint32_t slot);

// The calling thread's binding (LETHE_ARENA_NONE when unbound).
lethe_arena_t ThreadBoundArena();
// Binds the calling thread to `handle` (0: unbinds) after checking it (0, EINVAL, ENOENT, EBADF
// for a closed arena), counting bound threads per slot; *slot gets the new binding's slot
// (UINT32_MAX when unbound). A thread that exits bound is unbound by a pthread key destructor,
// which then calls `on_exit_unbind` (may be null).
int ArenaBindThread(lethe_arena_t handle, lethe_arena_t* previous, uint32_t* slot);
void ArenaHandlesSetExitHook(void (*on_exit_unbind)());

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_ARENA_HANDLES_H_
