// decay.h — when dirty pages go back to the OS.
//
// A dirty run is purged (madvise) once it has been dirty for LETHE_OPTIONS=decay_ms (default
// 1000 ms). Three drivers, so that an idle process returns memory too:
//  - the background purge thread (default; LETHE_OPTIONS=decay_thread:0 turns it off): started on
//    the first dirty page, sleeps until the oldest dirty run's deadline, or indefinitely when
//    nothing is dirty (woken by the next release). Recreated lazily in a forked child.
//  - opportunistically on the free path (under the arena's lock) when there is no thread;
//  - lethe_decay_tick(now_ns): switches the clock to the caller's (simulated) time for good; the
//    thread then stays asleep and decay happens on the ticks only.
// Independently, arena.cc purges at once whatever exceeds dirty_percent of the active pages.
#ifndef LETHE_ALLOC_DECAY_H_
#define LETHE_ALLOC_DECAY_H_

#include <cstdint>

namespace lethe::internal {

struct Arena;

// The allocator's clock: monotonic ns, or the last lethe_decay_tick value once ticks are used.
uint64_t DecayNowNs();
// Under the arena's lock after pages became dirty: decays without a thread, notes the purger.
void DecayAfterRelease(Arena* arena);
// Under an arena's lock when its dirty pages passed the limit: true when the purge thread will
// enforce it (it is running on the real clock; it is woken at the next PurgerAfterUnlock), so
// that no purge runs on the freeing thread's path; false: the caller purges now.
bool DeferExcessPurge();
// After a huge block was freed (no lock held): wakes the thread, or decays the huge regions here.
void DecayAfterHugeFree();
// After every allocator lock is released: starts or wakes the purge thread if a release asked.
void PurgerAfterUnlock();
// lethe_decay_tick.
void DecayTick(uint64_t now_ns);
// Purges every dirty page of every arena and unmaps retained chunks (lethe_purge, OOM).
void PurgeAllArenas();
bool PurgerRunning();

void PurgerLockForFork();
void PurgerUnlockAfterFork(bool child);

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_DECAY_H_
