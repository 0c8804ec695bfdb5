// The kernel primitives of the allocator (see os.h). Linux only.
#include "os.h"

#include <errno.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "size_classes.h"

namespace lethe::internal {
namespace {

constinit std::atomic<long> g_fail_maps{0};
constinit std::atomic<uint64_t> g_map_calls{0};
constinit std::atomic<uint64_t> g_purge_calls{0};
// process_madvise on this process: 0 not tried yet, 1 works, 2 refused (madvise per range).
constinit std::atomic<int> g_batched_purge{0};
constinit std::atomic<bool> g_madvise_only{false};
// PIDFD_SELF_THREAD (linux/pidfd.h): "the calling thread", whose memory is the process's. Not a
// pidfd_open() descriptor, which a forked child would inherit still naming its parent.
constexpr int kPidfdSelf = -10000;

// One process_madvise for every range; false (nothing assumed done) when the kernel refuses or
// does part of it.
bool PurgeBatched(const iovec* ranges, size_t count) {
  if (g_madvise_only.load(std::memory_order_relaxed) ||
      g_batched_purge.load(std::memory_order_relaxed) == 2) {
    return false;
  }
  size_t total = 0;
  for (size_t i = 0; i < count; ++i) total += ranges[i].iov_len;
  long done = syscall(SYS_process_madvise, kPidfdSelf, ranges, count, MADV_DONTNEED, 0u);
  g_purge_calls.fetch_add(1, std::memory_order_relaxed);
  if (done >= 0 && static_cast<size_t>(done) == total) {
    g_batched_purge.store(1, std::memory_order_relaxed);
    return true;
  }
  // Refused (ENOSYS, EINVAL, EBADF, EPERM) or partial: never again in this process; the ranges
  // are purged one by one (purging a range twice is harmless).
  g_batched_purge.store(2, std::memory_order_relaxed);
  return false;
}

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

void* MapRaw(size_t bytes, int flags = 0, uintptr_t hint = 0) {
  g_map_calls.fetch_add(1, std::memory_order_relaxed);
  void* address = mmap(reinterpret_cast<void*>(hint), bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
  return address == MAP_FAILED ? nullptr : address;
}

// Where the next aligned mapping (a chunk) is asked for first: just below the last one, a hint
// the kernel takes when that range is free. Why: the kernel places a mapping in the highest gap
// that holds it, and the trims of a misaligned try leave gaps under 1 MiB above each chunk, so
// the next try landed in a misaligned gap again and every chunk cost a map, an unmap, a map of
// twice the size and two trims, each taking the address space's lock that other threads' page
// faults wait for. Below an aligned mapping, the kernel's top-down layout usually leaves free
// room, aligned as well.
constinit std::atomic<uintptr_t> g_aligned_hint{0};

uintptr_t Below(uintptr_t start, size_t bytes, size_t alignment) {
  return start > bytes ? (start - bytes) & ~(alignment - 1) : 0;
}

// Takes the hint for one mapping of `bytes`, leaving the range below it to a concurrent caller
// (two threads that tried the same hint: one got it, the other a misaligned gap).
uintptr_t ClaimAlignedHint(size_t bytes, size_t alignment) {
  uintptr_t hint = g_aligned_hint.load(std::memory_order_relaxed);
  while (hint != 0 &&
         !g_aligned_hint.compare_exchange_weak(hint, Below(hint, bytes, alignment),
                                               std::memory_order_relaxed)) {
  }
  return hint;
}

void NoteAlignedMapping(uintptr_t start, size_t bytes, size_t alignment) {
  g_aligned_hint.store(Below(start, bytes, alignment), std::memory_order_relaxed);
}

// The aligned `bytes` within a mapping of bytes + alignment at `address`: both ends unmapped.
void* TrimToAligned(void* address, size_t bytes, size_t alignment) {
  auto start = reinterpret_cast<uintptr_t>(address);
  uintptr_t aligned = AlignUp(start, alignment);
  if (aligned > start) munmap(address, aligned - start);
  uintptr_t end = start + bytes + alignment;
  if (end > aligned + bytes) {
    munmap(reinterpret_cast<void*>(aligned + bytes), end - aligned - bytes);
  }
  return reinterpret_cast<void*>(aligned);
}

}  // namespace

void* OsMap(size_t bytes, size_t alignment) {
  if (InjectFailure()) return nullptr;
  const bool aligned_map = alignment > kPageBytes;
  void* address =
      MapRaw(bytes, 0, aligned_map ? ClaimAlignedHint(bytes, alignment) : 0);
  if (address == nullptr) return nullptr;
  auto start = reinterpret_cast<uintptr_t>(address);
  if ((start & (alignment - 1)) == 0) {
    if (aligned_map) NoteAlignedMapping(start, bytes, alignment);
    return address;
  }
  // Misaligned: map enough to contain an aligned range and trim both ends.
  munmap(address, bytes);
  if (bytes + alignment < bytes) return nullptr;
  address = MapRaw(bytes + alignment);
  if (address == nullptr) return nullptr;
  void* aligned = TrimToAligned(address, bytes, alignment);
  NoteAlignedMapping(reinterpret_cast<uintptr_t>(aligned), bytes, alignment);
  return aligned;
}

void OsUnmap(void* address, size_t bytes) { munmap(address, bytes); }

namespace {
#ifndef MADV_POPULATE_WRITE
constexpr int MADV_POPULATE_WRITE = 23;  // Linux 5.14; older headers lack the name
#endif
constinit std::atomic<bool> g_populate_unsupported{false};
constinit std::atomic<uint64_t> g_populate_calls{0};
}  // namespace

bool OsPopulate(void* address, size_t bytes) {
  if (bytes < kPopulateMinPages * kPageBytes) return true;  // left to fault in
  if (g_populate_unsupported.load(std::memory_order_relaxed)) return false;
  int saved_errno = errno;
  g_populate_calls.fetch_add(1, std::memory_order_relaxed);
  bool done = madvise(address, bytes, MADV_POPULATE_WRITE) == 0;
  // EINVAL: the kernel does not know the advice (the range is always valid here); EPERM or
  // ENOSYS: a seccomp filter refuses it. Other errors (ENOMEM, EINTR from a signal, EFAULT)
  // leave the pages to fault in one by one, as they would have, and the next call tries again.
  if (!done && (errno == EINVAL || errno == EPERM || errno == ENOSYS)) {
    g_populate_unsupported.store(true, std::memory_order_relaxed);
  }
  errno = saved_errno;
  return done;
}

uint64_t OsPopulateCallCount() { return g_populate_calls.load(std::memory_order_relaxed); }

void OsPopulateUnsupportedForTesting(bool on) {
  g_populate_unsupported.store(on, std::memory_order_relaxed);
}

void OsPurgeBatch::Flush() {
  if (count_ == 0) return;
  int saved_errno = errno;
  if (count_ == 1 || !PurgeBatched(ranges_, count_)) {
    for (size_t i = 0; i < count_; ++i) {
      madvise(ranges_[i].iov_base, ranges_[i].iov_len, MADV_DONTNEED);
    }
    g_purge_calls.fetch_add(count_, std::memory_order_relaxed);
  }
  count_ = 0;
  errno = saved_errno;
}

bool OsPurgeIsBatched() { return g_batched_purge.load(std::memory_order_relaxed) == 1; }

uint64_t OsPurgeCallCount() { return g_purge_calls.load(std::memory_order_relaxed); }

void OsPurgeWithMadviseOnlyForTesting(bool on) { g_madvise_only.store(on); }

void* OsRemap(void* address, size_t old_bytes, size_t new_bytes) {
  if (new_bytes > old_bytes && InjectFailure()) return nullptr;
  void* moved = mremap(address, old_bytes, new_bytes, MREMAP_MAYMOVE);
  return moved == MAP_FAILED ? nullptr : moved;
}

void* OsReserve(size_t bytes, size_t alignment) {
  if (InjectFailure()) return nullptr;
  if (alignment <= kPageBytes) return MapRaw(bytes, MAP_NORESERVE);
  // No first try at `bytes`: a reservation is rare and far larger than the pages around it, so
  // the kernel's placement almost never meets the alignment.
  if (bytes + alignment < bytes) return nullptr;
  void* address = MapRaw(bytes + alignment, MAP_NORESERVE);
  return address == nullptr ? nullptr : TrimToAligned(address, bytes, alignment);
}

uint64_t OsNowNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

size_t OsResidentPages(const void* address, size_t pages) {
  constexpr size_t kStep = 256;  // pages per mincore call: a vector on the stack
  unsigned char vector[kStep];
  size_t resident = 0;
  for (size_t done = 0; done < pages; done += kStep) {
    size_t count = pages - done < kStep ? pages - done : kStep;
    const char* start = static_cast<const char*>(address) + (done << kLgPageBytes);
    int saved = errno;
    if (mincore(const_cast<char*>(start), count << kLgPageBytes, vector) != 0) {
      errno = saved;
      return pages;
    }
    for (size_t i = 0; i < count; ++i) resident += vector[i] & 1;
  }
  return resident;
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
