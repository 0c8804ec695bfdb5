// cache_capacity.h — how many regions of a small class a cache may hold: a thread cache's bin
// (thread_cache.h: its capacity adapts between the floor and the ceiling) and an arena's transfer
// cache (transfer_cache.h: the ceiling, two flush batches of a bin at its ceiling).
//
// Ceilings: 32 KiB of regions up to 1024 B, within [64, 512] regions (512 up to 64 B, 128 at
// 256 B, 64 from 512 B), 16 regions above. Floors: 8 up to 1024 B, 2 above. Why 16 up to 14 KiB:
// with 4 above 4096 B, a stream of 4-8 KiB buffers flushed or refilled 2 regions per lock.
#ifndef LETHE_ALLOC_CACHE_CAPACITY_H_
#define LETHE_ALLOC_CACHE_CAPACITY_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "size_classes.h"

namespace lethe::internal {

constexpr uint32_t CacheMaxCapacity(uint32_t size) {
  if (size > 1024) return 16;
  uint32_t regions = 32768 / size;
  return regions > 512 ? 512 : regions < 64 ? 64 : regions;
}
constexpr uint32_t CacheMinCapacity(uint32_t size) { return size <= 1024 ? 8 : 2; }
// The ceilings of every class, summed: the slots one full cache needs.
constexpr size_t TotalCacheSlots() {
  size_t total = 0;
  for (uint32_t size : kSmallSizes) total += CacheMaxCapacity(size);
  return total;
}

// A thread cache's bin keeps its first kPackedCacheSlots slots in one array packed with every
// other bin's (ThreadCache::packed), and moves to its own array of CacheMaxCapacity slots
// (ThreadCache::spread) only when it grows past them. Why: the bins' own arrays lie over 50 KiB,
// and a thread whose bins stay small (a short program, a worker that allocates a little) wrote a
// page of that for nearly every class it used; packed, all its slots lie on two pages.
inline constexpr uint32_t kPackedCacheSlots = 16;
static_assert(CacheMinCapacity(8) <= kPackedCacheSlots && CacheMinCapacity(4096) <= kPackedCacheSlots,
              "a bin starts at its floor in the packed array");

// Where each class's own array begins in ThreadCache::spread (only classes whose ceiling is over
// kPackedCacheSlots have one), and the slots of all of them: [kSmallClassCount].
inline constexpr auto kSpreadCacheOffsets = [] {
  std::array<uint32_t, kSmallClassCount + 1> offsets{};
  for (uint32_t k = 0; k < kSmallClassCount; ++k) {
    uint32_t ceiling = CacheMaxCapacity(kSmallSizes[k]);
    offsets[k + 1] = offsets[k] + (ceiling > kPackedCacheSlots ? ceiling : 0);
  }
  return offsets;
}();

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_CACHE_CAPACITY_H_
