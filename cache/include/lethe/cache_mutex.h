// lethe/cache_mutex.h — the mutex of the thread-safe caches (SurfaceCache, ImageCache): a
// std::mutex that knows which thread holds it, so that the allocator's low-memory callback can ask
// for it without ever waiting.
//
// Why: the low-memory callback runs on the allocating thread, which may be inside a cache's locked
// section (an insert that allocates). Waiting for that lock would deadlock on itself; waiting for
// another cache's lock could deadlock with a thread doing the same the other way round. So the
// callback only try-locks. std::mutex::try_lock by the owner is undefined behaviour; TryLock here
// answers false for the owner without calling it.
//
// Invariant: owner_ == the id of the thread holding mutex_, or a default id while none does. Only
// the holder writes it, so a thread reading its own id there is the holder.
// Internal to the caches (namespace internal); any thread.
#ifndef LETHE_CACHE_MUTEX_H_
#define LETHE_CACHE_MUTEX_H_

#include <atomic>
#include <mutex>
#include <thread>

namespace lethe::internal {

class CacheMutex {
 public:
  void lock() {
    mutex_.lock();
    owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  }
  void unlock() {
    owner_.store(std::thread::id(), std::memory_order_relaxed);
    mutex_.unlock();
  }
  // False, without waiting, when any thread (this one included) holds the lock.
  bool try_lock() {
    if (HeldByThisThread()) return false;
    if (!mutex_.try_lock()) return false;
    owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    return true;
  }
  bool HeldByThisThread() const {
    return owner_.load(std::memory_order_relaxed) == std::this_thread::get_id();
  }

 private:
  std::mutex mutex_;
  std::atomic<std::thread::id> owner_{};
};

}  // namespace lethe::internal

#endif  // LETHE_CACHE_MUTEX_H_
