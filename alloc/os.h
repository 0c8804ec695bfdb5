// os.h — every call Lethe's allocator makes to the kernel for memory: mmap, munmap, mremap,
// madvise, and the monotonic clock. Nothing else in alloc/ calls them, which makes this file the
// seam for fault injection (OsFailMapsForTesting) and the place to port to another OS.
//
// Thread-safe; never allocates; failures return nullptr/false and leave errno as the kernel set it.
#ifndef LETHE_ALLOC_OS_H_
#define LETHE_ALLOC_OS_H_

#include <cstddef>
#include <cstdint>

namespace lethe::internal {

// Maps `bytes` (a page multiple) of zeroed, private, read-write memory aligned to `alignment`
// (a power of two >= a page). nullptr when the kernel refuses or a failure is injected.
void* OsMap(size_t bytes, size_t alignment);
void OsUnmap(void* address, size_t bytes);
// Returns the pages to the kernel; they read as zero afterwards (MADV_DONTNEED on private memory).
void OsPurge(void* address, size_t bytes);
// Resizes a mapping made by OsMap (page multiples), moving it if needed. nullptr on failure, the
// old mapping then intact.
void* OsRemap(void* address, size_t old_bytes, size_t new_bytes);
// Monotonic nanoseconds at tick resolution (CLOCK_MONOTONIC_COARSE through the vDSO: a few ns,
// no system call, no allocation; decay needs milliseconds, not nanoseconds).
uint64_t OsNowNs();
// Number of CPUs this process may run on (sched_getaffinity), at least 1.
unsigned OsCpuCount();

// Test hook: the next `count` calls of OsMap/OsRemap that grow fail as if the kernel refused.
void OsFailMapsForTesting(long count);
// Cumulative counts of system calls made, for tests and statistics.
uint64_t OsMapCallCount();

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_OS_H_
