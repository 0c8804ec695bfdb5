// cache_capacity.h — how many regions of a small class a cache may hold: a thread cache's bin
// (thread_cache.h: its capacity adapts between the floor and the ceiling) and an arena's transfer
// cache (transfer_cache.h: the ceiling, two flush batches of a bin at its ceiling).
//
// Ceilings: 32 KiB of regions up to 1024 B, within [64, 512] regions (512 up to 64 B, 128 at
// 256 B, 64 from 512 B), 16 regions above. Floors: 8 up to 1024 B, 2 above. Why 16 up to 14 KiB:
// with 4 above 4096 B, a stream of 4-8 KiB buffers flushed or refilled 2 regions per lock.
#ifndef LETHE_ALLOC_CACHE_CAPACITY_H_
#define LETHE_ALLOC_CACHE_CAPACITY_H_

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

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_CACHE_CAPACITY_H_
