// Caller arena handles and thread bindings (see arena_handles.h).
#include "arena_handles.h"

#include <errno.h>
#include <pthread.h>

#include "compiler.h"

namespace lethe::internal {

constinit Mutex g_arena_handles_lock;

namespace {

LETHE_TABLE constinit ArenaSlot g_slots[kMaxCallerArenas] = {};
LETHE_TABLE constinit uint32_t g_free_slots[kMaxCallerArenas] = {};  // stack of released slots
constinit uint32_t g_free_count = 0;
constinit uint32_t g_slots_used = 0;  // slots ever handed out: [0, g_slots_used)
constinit pthread_key_t g_bind_key = 0;
constinit bool g_bind_key_ready = false;
using ExitHook = void (*)();
constinit ExitHook g_on_exit_unbind = nullptr;
LETHE_TLS lethe_arena_t t_bound = LETHE_ARENA_NONE;

// Under the lock: moves the count of bound threads from `from` to `to` (either may be 0).
void MoveBinding(lethe_arena_t from, lethe_arena_t to) {
  uint32_t slot = 0;
  if (from != LETHE_ARENA_NONE && ArenaSlotFind(from, &slot) == 0) --g_slots[slot].bound_threads;
  if (to != LETHE_ARENA_NONE && ArenaSlotFind(to, &slot) == 0) ++g_slots[slot].bound_threads;
}

// pthread key destructor: the thread exits bound to the handle stored as the key's value.
void UnbindAtExit(void* value) {
  {
    MutexLock lock(&g_arena_handles_lock);
    MoveBinding(static_cast<lethe_arena_t>(reinterpret_cast<uintptr_t>(value)), LETHE_ARENA_NONE);
  }
  t_bound = LETHE_ARENA_NONE;
  if (g_on_exit_unbind != nullptr) g_on_exit_unbind();
}

}  // namespace

int ArenaSlotCreate(uint32_t* slot) {
  if (g_free_count > 0) {
    *slot = g_free_slots[--g_free_count];
  } else if (g_slots_used < kMaxCallerArenas) {
    *slot = g_slots_used++;
  } else {
    return EAGAIN;
  }
  ArenaSlot& entry = g_slots[*slot];
  ++entry.generation;
  entry.state = ArenaSlotState::kOpen;
  entry.bound_threads = 0;
  if (!g_bind_key_ready && pthread_key_create(&g_bind_key, UnbindAtExit) == 0) {
    g_bind_key_ready = true;
  }
  return 0;
}

int ArenaSlotFind(lethe_arena_t handle, uint32_t* slot) {
  uint64_t index = (handle & 0xffffffffu);
  auto generation = static_cast<uint32_t>(handle >> 32);
  if (index == 0 || index > g_slots_used || generation == 0) return EINVAL;
  const ArenaSlot& entry = g_slots[index - 1];
  if (generation > entry.generation) return EINVAL;
  if (generation < entry.generation || entry.state == ArenaSlotState::kFree) return ENOENT;
  *slot = static_cast<uint32_t>(index - 1);
  return 0;
}

ArenaSlot& ArenaSlotAt(uint32_t slot) { return g_slots[slot]; }

lethe_arena_t ArenaSlotHandle(uint32_t slot) {
  return (uint64_t{g_slots[slot].generation} << 32) | (slot + 1);
}

void ArenaSlotRelease(uint32_t slot) {
  g_slots[slot].state = ArenaSlotState::kFree;
  g_slots[slot].bound_threads = 0;
  g_free_slots[g_free_count++] = slot;
}

lethe_arena_t ThreadBoundArena() { return t_bound; }

int ArenaBindThread(lethe_arena_t handle, lethe_arena_t* previous, uint32_t* slot) {
  *slot = UINT32_MAX;
  {
    MutexLock lock(&g_arena_handles_lock);
    if (handle != LETHE_ARENA_NONE) {
      int error = ArenaSlotFind(handle, slot);
      if (error != 0) return error;
      if (g_slots[*slot].state != ArenaSlotState::kOpen) return EBADF;
    }
    MoveBinding(t_bound, handle);
  }
  if (previous != nullptr) *previous = t_bound;
  t_bound = handle;
  // Outside the lock: pthread_setspecific may allocate (a key past the first 32).
  if (g_bind_key_ready) pthread_setspecific(g_bind_key, reinterpret_cast<void*>(handle));
  return 0;
}

void ArenaHandlesSetExitHook(void (*on_exit_unbind)()) { g_on_exit_unbind = on_exit_unbind; }

}  // namespace lethe::internal
