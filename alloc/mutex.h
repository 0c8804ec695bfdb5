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

namespace lethe::internal {

class Mutex {
 public:
  constexpr Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() { pthread_mutex_lock(&mutex_); }
  void Unlock() { pthread_mutex_unlock(&mutex_); }
  // In the child after fork: the parent's holders do not exist here.
  void ResetAfterFork() { pthread_mutex_init(&mutex_, nullptr); }
  pthread_mutex_t* native() { return &mutex_; }

 private:
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
