// mutex.h — the allocator's lock: a pthread mutex that is constant-initialised (usable before any
// constructor runs, since malloc may be called first) and can be reset in a forked child.
//
// Lock order (outer first): the global init/arena-table lock, an arena's lock, the huge table's
// lock, the huge regions' lock (never held with the table's: huge.cc calls the regions after
// releasing it), the purger's lock. No allocator lock is held while calling out (the low-memory callback,
// pthread_create, stdio).
#ifndef LETHE_ALLOC_MUTEX_H_
#define LETHE_ALLOC_MUTEX_H_

#include <pthread.h>

#include "compiler.h"

namespace lethe::internal {

class Mutex {
 public:
  constexpr Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  // Spins a little before sleeping: the allocator's critical sections are short (a batch of
  // regions, a run split), shorter than a futex sleep and wake-up, which on a busy machine also
  // costs the holder a context switch. The bound keeps a preempted holder from burning a CPU.
  void Lock() {
    if (LETHE_LIKELY(pthread_mutex_trylock(&mutex_) == 0)) return;
    LockSlow();
  }
  bool TryLock() { return pthread_mutex_trylock(&mutex_) == 0; }
  void Unlock() { pthread_mutex_unlock(&mutex_); }
  // In the child after fork: the parent's holders do not exist here.
  void ResetAfterFork() { pthread_mutex_init(&mutex_, nullptr); }
  pthread_mutex_t* native() { return &mutex_; }

 private:
  LETHE_NOINLINE void LockSlow() {
    for (int spin = 0; spin < kSpins; ++spin) {
      LETHE_CPU_RELAX();
      if (LooksFree() && pthread_mutex_trylock(&mutex_) == 0) return;
    }
    pthread_mutex_lock(&mutex_);
  }
  // Reads the lock word without writing it, so that spinners do not take the cache line from
  // the holder; without glibc's layout every step tries the lock.
  bool LooksFree() const {
#ifdef __GLIBC__
    return __atomic_load_n(&mutex_.__data.__lock, __ATOMIC_RELAXED) == 0;
#else
    return true;
#endif
  }
  // 100 pause steps, about 2 us: ten times as many did no better, none did worse (the figures:
  // tools/bench/alloc/README.md).
  static constexpr int kSpins = 100;
  pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
};

class MutexLock {
 public:
  explicit MutexLock(Mutex* mutex) : mutex_(mutex) { mutex_->Lock(); }
  ~MutexLock() { mutex_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* mutex_;
};

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_MUTEX_H_
