// oom.h — what happens when the kernel refuses memory, and the test hook that fakes it.
//
// Sequence (allocator.cc, AllocateSlow): purge every arena and unmap free chunks, retry; run the
// low-memory callback on the allocating thread with no allocator lock held (a thread-local guard
// stops a nested failure from calling it again), retry; allow the reserve (address space mapped
// at start-up, LETHE_OPTIONS=oom_reserve_kb:N) and retry; fail with ENOMEM.
//
// Thread-safety: every function may be called from any thread.
#ifndef LETHE_ALLOC_OOM_H_
#define LETHE_ALLOC_OOM_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "compiler.h"
#include "lethe/alloc.h"
#include "size_classes.h"

namespace lethe::internal {

// Maps the reserve (rounded up to whole chunks). Called once at initialisation.
void ReserveInit(size_t bytes);
// While true on this thread, chunk and huge mappings that the kernel refuses come from the reserve.
void ReserveAllow(bool allow);
// A chunk from the reserve, or nullptr (not allowed now, or used up).
void* ReserveTakeChunk();
// `bytes` (a chunk multiple) from the reserve, or nullptr.
void* ReserveTake(size_t bytes);
uint64_t ReserveUsedBytes();
uint64_t ReserveBytes();

// The fail-after hook. FailArmed() is the cheap test on the fast path; FailureInjected() counts
// down and is true for the one allocation that must fail.
extern LETHE_HIDDEN std::atomic<long> g_fail_countdown;
inline bool FailArmed() { return g_fail_countdown.load(std::memory_order_relaxed) != 0; }
// Nonzero while every allocation must take the slow path: one bit while the fail-after hook is
// armed (it may stay set a little after the countdown ends: harmless), one while slop is counted
// (LETHE_OPTIONS=slop:1). The fast path loads this one word instead of one per reason. The bits
// lie above every small size, so that malloc's fast path tests size and flags with one compare:
// (size | flags) <= kSmallMaxBytes (SmallAndFast).
inline constexpr size_t kSlowForFailAfter = size_t{1} << 32, kSlowForSlop = size_t{1} << 33;
extern LETHE_HIDDEN std::atomic<size_t> g_slow_allocations;
inline bool SlowAllocations() { return g_slow_allocations.load(std::memory_order_relaxed) != 0; }
// size <= kSmallMaxBytes and no reason for the slow path.
inline bool SmallAndFast(size_t size) {
  return (size | g_slow_allocations.load(std::memory_order_relaxed)) <= kSmallMaxBytes;
}
bool FailureInjected();
void SetFailAfter(long n);

void SetLowMemoryCallback(lethe_low_memory_callback_t callback, void* context);
// Runs the callback unless there is none or this thread is already inside it; true if it ran.
bool RunLowMemoryCallback(size_t request_bytes);
uint64_t LowMemoryCallbackCount();

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_OOM_H_
