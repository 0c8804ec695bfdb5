// os.h — every call Lethe's allocator makes to the kernel for memory: mmap, munmap, mremap,
// madvise, and the monotonic clock. Nothing else in alloc/ calls them, which makes this file the
// seam for fault injection (OsFailMapsForTesting) and the place to port to another OS.
//
// Thread-safe; never allocates; failures return nullptr/false and leave errno as the kernel set it.
#ifndef LETHE_ALLOC_OS_H_
#define LETHE_ALLOC_OS_H_

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>

namespace lethe::internal {

// Maps `bytes` (a page multiple) of zeroed, private, read-write memory aligned to `alignment`
// (a power of two >= a page). nullptr when the kernel refuses or a failure is injected.
void* OsMap(size_t bytes, size_t alignment);
void OsUnmap(void* address, size_t bytes);
// Returns ranges of pages to the kernel; they read as zero afterwards (MADV_DONTNEED on private
// memory). Ranges are collected and purged by Flush() (or the destructor) with as few system calls
// as the kernel allows: process_madvise on the calling process takes up to kMaxRanges ranges in one
// call and flushes the TLB once for all of them, where one madvise per range sends one round of
// TLB-shootdown interrupts per range to every other CPU running the process. Kernels or
// sandboxes that refuse it (kernels
// without PIDFD_SELF or without MADV_DONTNEED in process_madvise, such as Debian 12's 6.1; a
// seccomp filter) get one madvise per range, decided at the first batch of the process.
// Until Flush() returns the ranges keep their contents: the caller flushes before another thread
// may reuse them (before its lock is released) and before it unmaps any of them.
class OsPurgeBatch {
 public:
  static constexpr size_t kMaxRanges = 64;
  OsPurgeBatch() = default;
  OsPurgeBatch(const OsPurgeBatch&) = delete;
  OsPurgeBatch& operator=(const OsPurgeBatch&) = delete;
  ~OsPurgeBatch() { Flush(); }
  void Add(void* address, size_t bytes) {
    if (count_ == kMaxRanges) Flush();
    ranges_[count_++] = iovec{address, bytes};
  }
  // Keeps errno (free() must).
  void Flush();

 private:
  iovec ranges_[kMaxRanges];
  size_t count_ = 0;
};
// True once a batch went through process_madvise (false before the first batch, and for good
// once the kernel refused one).
bool OsPurgeIsBatched();
// System calls made to purge so far (process_madvise or madvise), for tests and figures.
uint64_t OsPurgeCallCount();
// Test hook: true makes every batch use one madvise per range, as on a kernel without
// process_madvise; false restores the detection.
void OsPurgeWithMadviseOnlyForTesting(bool on);
// How many of the `pages` pages from `address` (page-aligned, mapped) are resident (mincore).
// All of them when the kernel refuses: the caller then treats them as costing memory.
size_t OsResidentPages(const void* address, size_t pages);
// Faults in the pages of [address, address + bytes) (page-aligned, mapped, read-write) for writing
// in one system call (MADV_POPULATE_WRITE, Linux 5.14), for pages about to be written: a fault
// per page costs an exception each, which one call for many pages saves (the figures, which
// vary by machine: tools/bench/alloc/README.md). Pages already resident are left as they are.
// A range shorter than kPopulateMinPages makes no call and is left to fault in when written.
// Keeps errno; false when the kernel refused (a kernel without it: every later call returns
// false at once).
bool OsPopulate(void* address, size_t bytes);
// The fewest pages worth one call: on shorter ranges the call costs more than the faults it saves
// (lethe-alloc-workload faultcost on this project's VMs: a page populated alone 1.4-1.5x a fault,
// two 0.9-1.2x, four 0.8-1.1x, eight 0.7-1.0x).
inline constexpr size_t kPopulateMinPages = 4;
// Calls of OsPopulate that reached the kernel, for tests and figures.
uint64_t OsPopulateCallCount();
// Test hook: true makes OsPopulate act as on a kernel without MADV_POPULATE_WRITE; false
// restores the detection.
void OsPopulateUnsupportedForTesting(bool on);
// Resizes a mapping made by OsMap (page multiples), moving it if needed. nullptr on failure, the
// old mapping then intact.
void* OsRemap(void* address, size_t old_bytes, size_t new_bytes);
// Reserves `bytes` (a page multiple) of zeroed, private, read-write address space with
// MAP_NORESERVE: pages cost memory when first written, and no commit charge is taken for the
// rest (except under overcommit_memory=2). nullptr when refused; OsFailMapsForTesting applies.
// `alignment` (a power of two, a page or more) aligns its start: over a page, the reservation is
// mapped with that much room and trimmed at both ends.
void* OsReserve(size_t bytes, size_t alignment);
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
