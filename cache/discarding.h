// cache/discarding.h — what the two thread-safe discarding caches (ImageCache, SurfaceCache) share:
// the rule that what they discard is freed after their lock, and their answer to memory pressure.
//
// Why payloads are freed after the lock: destroying a surface frees megabytes (the munmap of a huge
// block, pages the allocator then purges). Under the cache's mutex that would stall every decode
// thread's lookup meanwhile. So a cache moves what it discards into a list while it holds the lock,
// and the list is destroyed once the lock is released.
//
// Internal to lethe::cache; included by image_cache.cc and surface_cache.cc only.
#ifndef LETHE_CACHE_DISCARDING_H_
#define LETHE_CACHE_DISCARDING_H_

#include <cstdint>
#include <mutex>
#include <new>
#include <utility>

#include "lethe/memory_pressure.h"

namespace lethe::internal {

// Runs `work()` with `mutex` held. What `work` moved into `discarded` is destroyed after `mutex`
// is released. Returns how far `used_bytes` fell during `work`, also added to `*freed_sum` (under
// the lock) when given.
template <typename Mutex, typename DiscardList, typename Work>
uint64_t DiscardUnderLock(Mutex& mutex, DiscardList& discarded, const uint64_t& used_bytes,
                          Work&& work, uint64_t* freed_sum = nullptr) {
  DiscardList doomed;  // declared before the lock, so destroyed after it is released
  std::lock_guard<Mutex> lock(mutex);
  const uint64_t before = used_bytes;
  work();
  const uint64_t freed = before - used_bytes;
  if (freed_sum != nullptr) *freed_sum += freed;
  doomed.swap(discarded);
  return freed;
}

// Moves `payload` into `discarded`, to be released after the lock; when the list cannot grow (out
// of memory), releases it at once, under the lock: slower for the other threads, never wrong, and
// discarding never fails for want of memory.
template <typename DiscardList, typename Payload>
void DeferRelease(DiscardList& discarded, Payload&& payload) {
  try {
    discarded.push_back(std::move(payload));  // strong guarantee: `payload` kept if this throws
  } catch (const std::bad_alloc&) {
    payload = nullptr;
  }
}

// The pressure policy of both caches (Firefox's surface cache answers the same way):
//   critical: drop every entry not in use now (unlocked surfaces, unreferenced compressed bytes);
//   moderate, the first event of an episode: age everything one generation, so that what was not
//     drawn lately goes first and what is in use survives;
//   moderate, ongoing (the source repeating while pressure lasts): nothing more, or a PSI trigger
//     firing every 2 s would empty the cache by aging it.
// Runs drop_all_unused() or age_one_generation() accordingly (the caller holds its lock).
template <typename DropAllUnused, typename AgeOneGeneration>
void RespondToPressure(const MemoryPressureEvent& event, DropAllUnused&& drop_all_unused,
                       AgeOneGeneration&& age_one_generation) {
  if (event.level == MemoryPressureLevel::kCritical) {
    drop_all_unused();
  } else if (event.level == MemoryPressureLevel::kModerate && !event.ongoing) {
    age_one_generation();
  }
}

}  // namespace lethe::internal

#endif  // LETHE_CACHE_DISCARDING_H_
