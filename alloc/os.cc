// The kernel primitives of the allocator (see os.h). Linux only.
#include "os.h"

#include <errno.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>

#include <atomic>
#include <cstdint>

namespace lethe::internal {
namespace {

constinit std::atomic<long> g_fail_maps{0};
constinit std::atomic<uint64_t> g_map_calls{0};

bool InjectFailure() {
  long remaining = g_fail_maps.load(std::memory_order_relaxed);
  while (remaining > 0) {
    if (g_fail_maps.compare_exchange_weak(remaining, remaining - 1)) {
      errno = ENOMEM;
      return true;
    }
  }
  return false;
}

void* MapRaw(size_t bytes) {
  g_map_calls.fetch_add(1, std::memory_order_relaxed);
  void* address = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return address == MAP_FAILED ? nullptr : address;
}

}  // namespace

void* OsMap(size_t bytes, size_t alignment) {
  if (InjectFailure()) return nullptr;
  void* address = MapRaw(bytes);
  if (address == nullptr) return nullptr;
  auto start = reinterpret_cast<uintptr_t>(address);
  if ((start & (alignment - 1)) == 0) return address;
  // Misaligned: map enough to contain an aligned range and trim both ends.
  munmap(address, bytes);
  if (bytes + alignment < bytes) return nullptr;
  address = MapRaw(bytes + alignment);
  if (address == nullptr) return nullptr;
  start = reinterpret_cast<uintptr_t>(address);
  uintptr_t aligned = (start + alignment - 1) & ~(uintptr_t{alignment} - 1);
  if (aligned > start) munmap(address, aligned - start);
  uintptr_t end = start + bytes + alignment;
  if (end > aligned + bytes) munmap(reinterpret_cast<void*>(aligned + bytes), end - aligned - bytes);
  return reinterpret_cast<void*>(aligned);
}

void OsUnmap(void* address, size_t bytes) { munmap(address, bytes); }

void OsPurge(void* address, size_t bytes) { madvise(address, bytes, MADV_DONTNEED); }

void* OsRemap(void* address, size_t old_bytes, size_t new_bytes) {
  if (new_bytes > old_bytes && InjectFailure()) return nullptr;
  void* moved = mremap(address, old_bytes, new_bytes, MREMAP_MAYMOVE);
  return moved == MAP_FAILED ? nullptr : moved;
}

uint64_t OsNowNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

unsigned OsCpuCount() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  int count = CPU_COUNT(&set);
  return count > 0 ? static_cast<unsigned>(count) : 1u;
}

void OsFailMapsForTesting(long count) { g_fail_maps.store(count > 0 ? count : 0); }

uint64_t OsMapCallCount() { return g_map_calls.load(std::memory_order_relaxed); }

}  // namespace lethe::internal
