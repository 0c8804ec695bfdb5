// caller_arenas.h — the arenas a caller creates (lethe_arena_*, lethe/alloc.h states the
// contract): created on demand (their Arena mapped once, recycled after release), bound to a
// thread by setting t_bound_arena and setting the thread's cache aside, closed by destroy and
// released (chunks unmapped) when closed and empty.
//
// Locking: g_arena_handles_lock, then the arena's lock (never the other way round). The free path
// holds only the arena's lock when it sees a closed arena empty; it releases it after unlocking.
#ifndef LETHE_ALLOC_CALLER_ARENAS_H_
#define LETHE_ALLOC_CALLER_ARENAS_H_

#include <cstdint>

#include "arena.h"

namespace lethe::internal {

// At initialisation: installs the thread-exit unbinding hook.
void CallerArenasInit();
// A huge block of `bytes` now counts to `arena` (bound when it was allocated).
void ArenaAddHuge(Arena* arena, uint64_t bytes);
// A huge block of `arena` was freed (`freed`) or resized from old_bytes to new_bytes.
void ArenaRemoveHuge(Arena* arena, uint64_t bytes);
void ArenaResizeHuge(Arena* arena, uint64_t old_bytes, uint64_t new_bytes);

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_CALLER_ARENAS_H_
