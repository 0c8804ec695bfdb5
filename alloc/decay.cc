// Decay purging and the background purge thread (see decay.h).
#include "decay.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <atomic>

#include "arena.h"
#include "compiler.h"
#include "huge_region.h"
#include "mutex.h"
#include "options.h"
#include "os.h"
#include "thread_cache.h"

namespace lethe::internal {
namespace {

enum PurgerState : int { kNotStarted = 0, kStarting = 1, kRunning = 2, kOff = 3 };

constinit std::atomic<bool> g_manual_clock{false};
constinit std::atomic<uint64_t> g_manual_now_ns{0};
constinit std::atomic<int> g_purger_state{kNotStarted};
constinit std::atomic<bool> g_purger_idle{false};   // scanning or asleep without a deadline
constinit std::atomic<bool> g_attention{false};     // a release wants the thread started/woken
constinit std::atomic<bool> g_excess_pending{false};  // an arena passed its dirty limit
// When the thread will next pass over the arenas: its wait's deadline, UINT64_MAX while it passes
// or waits without one.
constinit std::atomic<uint64_t> g_purger_wake_ns{UINT64_MAX};
constinit Mutex g_purger_lock;
constinit bool g_wake_pending = false;              // guarded by g_purger_lock
constinit bool g_cond_ready = false;
pthread_cond_t g_purger_cond;

uint64_t DecayNs() { return DecayMsOption() * 1000000u; }
// The excess grace of the thread on the real clock (decay.h); also how long releases go on
// before the thread starts (PurgerDue).
uint64_t GraceSpanNs() { return DecayNs() / 16; }
// The thread purges, on the real clock: the freeing threads leave decay and excess to it.
bool PurgerOnRealClock() {
  return g_purger_state.load(std::memory_order_relaxed) == kRunning &&
         !g_manual_clock.load(std::memory_order_relaxed);
}
// The coarse clock lags CLOCK_MONOTONIC by up to a tick (4 ms at HZ=250).
constexpr uint64_t kClockSlackNs = 5000000;

// Decays one arena (and purges what exceeds its dirty limit); returns when it next has work
// (UINT64_MAX: none). Automatic arenas purge without their lock held (ArenaPurgeUnlocked).
uint64_t PurgeArena(Arena* arena, uint64_t now_ns, uint64_t base_decay_ns) {
  if (!arena->caller) return ArenaPurgeUnlocked(arena, now_ns, base_decay_ns, ExcessGraceNs());
  ArenaLock lock(arena);
  ArenaPurgeExcess(arena);
  uint64_t decay_ns = ArenaDecayLocked(arena, now_ns, base_decay_ns);
  uint64_t oldest = ArenaFinishDecayPass(&arena->heap, now_ns, decay_ns);
  return oldest == UINT64_MAX ? UINT64_MAX : oldest + decay_ns;
}

// One pass over the arenas; returns the next deadline (UINT64_MAX: nothing dirty).
uint64_t PurgePass() {
  uint64_t decay_ns = DecayNs();
  uint64_t next = UINT64_MAX;
  g_excess_pending.store(false, std::memory_order_relaxed);
  ForEachArena([&](Arena& arena) {
    uint64_t deadline = PurgeArena(&arena, DecayNowNs(), decay_ns);
    if (deadline < next) next = deadline;
  });
  uint64_t huge_next = HugeRegionPurge(DecayNowNs(), decay_ns, ExcessGraceNs());
  return huge_next < next ? huge_next : next;
}

void* PurgerMain(void*) {
  g_purger_lock.Lock();
  while (true) {
    g_purger_idle.store(true);
    g_purger_wake_ns.store(UINT64_MAX, std::memory_order_relaxed);
    g_purger_lock.Unlock();
    uint64_t deadline = g_manual_clock.load() ? UINT64_MAX : PurgePass();
    g_purger_lock.Lock();
    if (deadline != UINT64_MAX) g_purger_idle.store(false);
    if (g_wake_pending) {
      g_wake_pending = false;
      continue;
    }
    if (deadline == UINT64_MAX) {
      pthread_cond_wait(&g_purger_cond, g_purger_lock.native());
    } else {
      g_purger_wake_ns.store(deadline, std::memory_order_relaxed);
      deadline += kClockSlackNs;  // timestamps come from the coarse clock
      timespec until{static_cast<time_t>(deadline / 1000000000u),
                     static_cast<long>(deadline % 1000000000u)};
      pthread_cond_timedwait(&g_purger_cond, g_purger_lock.native(), &until);
    }
    g_wake_pending = false;
  }
  return nullptr;
}

void StartPurger() {
  int expected = kNotStarted;
  if (!g_purger_state.compare_exchange_strong(expected, kStarting)) return;
  if (!g_options.decay_thread || g_manual_clock.load()) {
    g_purger_state.store(kOff);
    return;
  }
  if (!g_cond_ready) {
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(&g_purger_cond, &attributes);
    pthread_condattr_destroy(&attributes);
    g_cond_ready = true;
  }
  // The thread must not take the process's signals.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pthread_t thread;
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attributes, 64 * 1024);
  bool started;
  {
    AutomaticArenaScope unbound;  // the thread's stack bookkeeping lives as long as the process
    started = pthread_create(&thread, &attributes, PurgerMain, nullptr) == 0;
  }
  pthread_attr_destroy(&attributes);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  g_purger_state.store(started ? kRunning : kOff);
}

constinit std::atomic<uint64_t> g_first_release_ns{0};
constinit std::atomic<uint64_t> g_start_delay_for_testing{UINT64_MAX};

// Whether the thread should start: once releases have gone on for the excess grace (decay_ms /
// 16) since the first. Until then nothing is due that the thread would do (decay deadlines are
// decay_ms away; the excess waits out the grace), and the releasing threads decay and purge the
// excess themselves, as without the thread. So a program that ends sooner (a compiler pass, a
// shell command) does not create a thread it would never use. The cost: a process that releases
// only within that span and then makes no allocator call keeps the dirty pages under its limits
// until its next call; kPurgerEagerBytes bounds what it keeps so.
bool PurgerDue() {
  uint64_t delay = g_start_delay_for_testing.load(std::memory_order_relaxed);
  if (delay == UINT64_MAX) delay = GraceSpanNs();
  uint64_t now = OsNowNs();
  uint64_t first = g_first_release_ns.load(std::memory_order_relaxed);
  // A failed exchange leaves in `first` the time another thread's first release stored.
  if (first == 0 &&
      g_first_release_ns.compare_exchange_strong(first, now, std::memory_order_relaxed)) {
    first = now;
  }
  return now - first >= delay;
}

// Dirty bytes (of one arena, or of the huge regions) from which a release starts the thread
// before PurgerDue says so. Below, a process that goes idle at once keeps at most about this
// much, where the thread would cost a stack and two context switches; above, it kept all of it
// (a script that built and dropped a few MiB of buffers in its first milliseconds, then waited).
constexpr uint64_t kPurgerEagerBytes = uint64_t{1} << 20;

bool PurgerNotStarted() {
  return g_purger_state.load(std::memory_order_relaxed) == kNotStarted;
}

// There is work for the purge thread: asks it to start, or to wake if it sleeps without a
// deadline (PurgerAfterUnlock acts on the request). `dirty_bytes`: what the caller's release left
// dirty where it released (an arena, or the huge regions). True when the thread runs on the real
// clock, so that the caller leaves the work to it; false: the caller does it (no thread yet, or
// ticks).
bool AskPurger(uint64_t dirty_bytes) {
  if (PurgerOnRealClock()) {
    if (g_purger_idle.load()) g_attention.store(true, std::memory_order_relaxed);
    return true;
  }
  if (PurgerNotStarted() && g_options.decay_thread &&
      (dirty_bytes >= kPurgerEagerBytes || PurgerDue())) {
    g_attention.store(true, std::memory_order_relaxed);
  }
  return false;
}

}  // namespace

uint64_t DecayNowNs() {
  if (LETHE_UNLIKELY(g_manual_clock.load(std::memory_order_relaxed))) {
    return g_manual_now_ns.load(std::memory_order_relaxed);
  }
  return OsNowNs();
}

void DecayAfterRelease(Arena* arena) {
  if (AskPurger(uint64_t{arena->heap.dirty_pages()} << kLgPageBytes)) return;
  // No thread (yet): decay here, at most every decay/8.
  uint64_t now = DecayNowNs();
  uint64_t decay_ns = DecayNs();
  if (now - arena->last_decay_ns >= decay_ns / 8) {
    arena->last_decay_ns = now;
    ArenaTrimTransfer(arena, now, false);
    arena->heap.UnmapIdleChunks(now, ArenaDecayLocked(arena, now, decay_ns));
  }
}

void DecayAfterPark() { AskPurger(0); }  // at most two flush batches a class: never eager

uint64_t ExcessGraceNs() { return PurgerOnRealClock() ? GraceSpanNs() : 0; }

bool DeferExcessPurge(bool own) {
  if (!PurgerOnRealClock()) return false;
  if (own && HasCache(t_cache) && LiveThreadCaches() == 1) return false;
  // The thread looks again soon enough: the excess waits out its grace anyway. Without this, each
  // free past the limit during the grace woke it for a pass that purged nothing.
  if (g_purger_wake_ns.load(std::memory_order_relaxed) <= DecayNowNs() + ExcessGraceNs()) {
    return true;
  }
  // One wake-up per pass: the pass clears the flag before it visits the arenas.
  if (!g_excess_pending.exchange(true, std::memory_order_relaxed)) {
    g_attention.store(true, std::memory_order_relaxed);
  }
  return true;
}

void DecayAfterHugeFree() {
  // The regions' count is read under their lock: only until the thread has started.
  uint64_t dirty = PurgerNotStarted() ? GetHugeRegionStats().dirty_bytes : 0;
  if (!AskPurger(dirty)) HugeRegionPurge(DecayNowNs(), DecayNs());
  PurgerAfterUnlock();
}

void PurgerAfterUnlock() {
  if (LETHE_LIKELY(!g_attention.load(std::memory_order_relaxed))) return;
  g_attention.store(false, std::memory_order_relaxed);
  int state = g_purger_state.load();
  if (state == kNotStarted) {
    StartPurger();
  } else if (state == kRunning) {
    MutexLock lock(&g_purger_lock);
    g_wake_pending = true;
    pthread_cond_signal(&g_purger_cond);
  }
}

void DecayTick(uint64_t now_ns) {
  g_manual_now_ns.store(now_ns);
  g_manual_clock.store(true);
  uint64_t decay_ns = DecayNs();
  ForEachArena([&](Arena& arena) { PurgeArena(&arena, now_ns, decay_ns); });
  HugeRegionPurge(now_ns, decay_ns);
}

void PurgeAllArenas() {
  ForEachArena([](Arena& arena) {
    ArenaLock lock(&arena);
    ArenaTrimTransfer(&arena, DecayNowNs(), true);
    arena.heap.PurgeAll();
  });
  HugeRegionPurge(UINT64_MAX, 0);
}

bool PurgerRunning() { return g_purger_state.load() == kRunning; }

void SetPurgerStartDelayForTesting(uint64_t delay_ns) {
  g_start_delay_for_testing.store(delay_ns, std::memory_order_relaxed);
  g_first_release_ns.store(0, std::memory_order_relaxed);
}

void PurgerLockForFork() { g_purger_lock.Lock(); }

void PurgerUnlockAfterFork(bool child) {
  if (!child) {
    g_purger_lock.Unlock();
    return;
  }
  g_purger_lock.ResetAfterFork();
  g_cond_ready = false;  // the condition variable may have had the parent's waiter
  g_wake_pending = false;
  g_purger_idle.store(false);
  g_purger_wake_ns.store(UINT64_MAX);
  g_attention.store(false);
  if (g_purger_state.load() != kOff || g_options.decay_thread) g_purger_state.store(kNotStarted);
}

}  // namespace lethe::internal
