// decay.h — when dirty pages go back to the OS.
//
// A dirty run is purged (madvise) once it has been dirty for its arena's decay time:
// LETHE_OPTIONS=decay_ms (default 1000 ms), doubled up to 8x while the pages decay purges are
// taken back soon after (decay_adaptation.h; the huge regions adapt the same way). Three drivers,
// so that an idle process returns memory too:
//  - the background purge thread (default; LETHE_OPTIONS=decay_thread:0 turns it off): started at
//    the first release once releases have gone on for decay_ms / 16 (before, nothing is due that
//    it would do: see PurgerDue in decay.cc), or sooner by a release that leaves 1 MiB dirty in
//    an arena or in the huge regions (kPurgerEagerBytes); sleeps until the oldest dirty run's
//    deadline, or indefinitely when nothing is dirty (woken by the next release). Recreated
//    lazily in a forked child.
//  - opportunistically on the free path (under the arena's lock) when there is no thread;
//  - lethe_decay_tick(now_ns): switches the clock to the caller's (simulated) time for good; the
//    thread then stays asleep and decay happens on the ticks only.
// Independently, dirty pages over a limit (an arena's dirty_percent of its active pages, the huge
// regions' huge_cache_kb) are purged, oldest first, once they have been dirty for the excess
// grace (ExcessGraceNs: decay_ms / 16), by the thread. Why the grace: a thread that frees a batch
// of buffers allocates the next batch within milliseconds, on the same pages, which purged at
// once would each be faulted in again. The cost: up to a grace's worth
// of freed pages over the limits. Without the thread (or on lethe_decay_tick's clock) there is no
// grace: the freeing thread purges the excess at once; so does a process's only thread with a
// cache, for an arena's pages it freed itself (DeferExcessPurge).
#ifndef LETHE_ALLOC_DECAY_H_
#define LETHE_ALLOC_DECAY_H_

#include <cstdint>

namespace lethe::internal {

struct Arena;

// The allocator's clock: monotonic ns, or the last lethe_decay_tick value once ticks are used.
uint64_t DecayNowNs();
// Under the arena's lock after pages became dirty: decays without a thread, notes the purger.
void DecayAfterRelease(Arena* arena);
// How long pages over a dirty limit stay before they are purged: decay_ms / 16 while the purge
// thread runs on the real clock, else 0 (the caller purges the excess itself).
uint64_t ExcessGraceNs();
// When dirty pages passed a limit (under an arena's lock, or none): true when the purge thread
// will enforce it (it is running on the real clock; unless it already means to look within the
// grace, it is woken at the next PurgerAfterUnlock), so that no purge runs on the freeing
// thread's path; false: the caller purges now. Also false for pages the caller freed itself
// (`own`) when it is the process's only thread with a cache: the grace is for pipelines, where
// one thread frees what another takes back within milliseconds; a lone thread that frees past
// the limit is as likely to be ending as starting again (a program freeing its data at exit).
bool DeferExcessPurge(bool own = false);
// After regions were parked in an arena's transfer cache (under its lock): starts the purge
// thread, or wakes it if it sleeps without a deadline, so that it comes back to trim them
// (transfer_cache.h); PurgerAfterUnlock acts on it.
void DecayAfterPark();
// After a huge block was freed (no lock held): wakes the thread, or decays the huge regions here.
void DecayAfterHugeFree();
// After every allocator lock is released: starts or wakes the purge thread if a release asked.
void PurgerAfterUnlock();
// lethe_decay_tick.
void DecayTick(uint64_t now_ns);
// Purges every dirty page of every arena and unmaps retained chunks (lethe_purge, OOM).
void PurgeAllArenas();
bool PurgerRunning();
// Tests: how long releases go on before the thread starts (UINT64_MAX: decay_ms / 16), counted
// from the next release.
void SetPurgerStartDelayForTesting(uint64_t delay_ns);

void PurgerLockForFork();
void PurgerUnlockAfterFork(bool child);

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_DECAY_H_
