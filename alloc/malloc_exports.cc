// malloc_exports.cc — the malloc family and every C++ operator new/delete, served by Lethe's
// allocator. Compiled into liblethe-malloc.so (LD_PRELOAD=liblethe-malloc.so runs a whole process
// on Lethe) and into lethe_malloc_static (Lethe's own tools link it when LETHE_REPLACE_MALLOC is
// on). Never part of lethe::alloc itself: linking the library does not replace a program's malloc.
//
// Early calls: initialisation needs no allocation (mmap only, options read in place), so a call
// from the dynamic loader, from dlsym or from pthread before main is served like any other, and
// free(NULL) before anything else is a no-op. Thread-locals are initial-exec. Fork: the handlers
// registered at initialisation take every allocator lock around fork().
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>

#include <climits>
#include <new>

#include "allocator.h"
#include "lethe/alloc.h"
#include "lethe/check.h"
#include "stats.h"

using namespace lethe::internal;

namespace {

bool IsPowerOfTwo(size_t value) { return value != 0 && (value & (value - 1)) == 0; }

// libstdc++'s std::get_new_handler and std::__throw_bad_alloc, bound weakly: liblethe-malloc.so
// does not need libstdc++, so a C program preloading it (python3, git) does not map libstdc++
// and libm for nothing (~0.9 MiB resident at exit; issue 15 item 5). Any program that calls
// operator new has libstdc++ loaded, and the dynamic loader binds these to it.
extern "C" std::new_handler _ZSt15get_new_handlerv() __attribute__((weak));
extern "C" [[noreturn]] void _ZSt17__throw_bad_allocv() __attribute__((weak));

// The new-handler, or nullptr when there is none (or no libstdc++ to ask).
std::new_handler NewHandler() {
  return _ZSt15get_new_handlerv != nullptr ? _ZSt15get_new_handlerv() : nullptr;
}

void* AllocateForNew(size_t size, size_t alignment) {
  return alignment == 0 ? Allocate(size) : AllocateAligned(alignment, size);
}

// operator new after an allocation failed: retries through the new-handler, then throws
// std::bad_alloc. Out of line, so that operator new's fast path needs no stack frame.
LETHE_NOINLINE void* NewAfterFailure(size_t size, size_t alignment) {
  while (true) {
    std::new_handler handler = NewHandler();
    if (handler == nullptr) {
      if (_ZSt17__throw_bad_allocv != nullptr) _ZSt17__throw_bad_allocv();
      lethe_fatal_pointer("operator new: out of memory for ", reinterpret_cast<void*>(size),
                          " bytes, and no libstdc++ to throw std::bad_alloc");
    }
    handler();
    void* block = AllocateForNew(size, alignment);
    if (block != nullptr) return block;
  }
}

// operator new past the thread cache (a tail call: operator new's fast path keeps no frame).
LETHE_NOINLINE void* NewSlow(size_t size, size_t alignment) {
  void* block = AllocateForNew(size, alignment);
  if (LETHE_LIKELY(block != nullptr)) return block;
  return NewAfterFailure(size, alignment);
}

// operator new: malloc's fast path, else NewSlow; throws std::bad_alloc when memory cannot be had.
LETHE_ALWAYS_INLINE void* NewOrThrow(size_t size, size_t alignment) {
  if (alignment == 0) {
    if (void* block = AllocateCached(size)) return block;
  }
  return NewSlow(size, alignment);
}

// The nothrow forms: nullptr where operator new would throw. A new-handler that throws is let
// through (catching it would need libstdc++'s personality routine in this library).
void* NewNoThrow(size_t size, size_t alignment) noexcept {
  while (true) {
    void* block = AllocateForNew(size, alignment);
    if (LETHE_LIKELY(block != nullptr)) return block;
    std::new_handler handler = NewHandler();
    if (handler == nullptr) return nullptr;
    handler();
  }
}

}  // namespace

extern "C" {

void* malloc(size_t size) noexcept { return Allocate(size); }

void free(void* pointer) noexcept { Free(pointer); }

void* calloc(size_t count, size_t size) noexcept { return AllocateZeroed(count, size); }

// realloc(p, 0) frees p and returns NULL, as glibc does.
void* realloc(void* pointer, size_t size) noexcept {
  if (pointer != nullptr && size == 0) {
    Free(pointer);
    return nullptr;
  }
  return Reallocate(pointer, size);
}

void* reallocarray(void* pointer, size_t count, size_t size) noexcept {
  size_t total = 0;
  if (__builtin_mul_overflow(count, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(pointer, total);
}

int posix_memalign(void** out, size_t alignment, size_t size) noexcept {
  if (!IsPowerOfTwo(alignment) || alignment % sizeof(void*) != 0) return EINVAL;
  int saved_errno = errno;
  void* block = AllocateAligned(alignment, size);
  errno = saved_errno;
  if (block == nullptr) return ENOMEM;
  *out = block;
  return 0;
}

void* aligned_alloc(size_t alignment, size_t size) noexcept {
  if (!IsPowerOfTwo(alignment)) {
    errno = EINVAL;
    return nullptr;
  }
  return AllocateAligned(alignment, size);
}

// glibc rounds an alignment that is not a power of two up to the next one.
void* memalign(size_t alignment, size_t size) noexcept {
  if (alignment > SIZE_MAX / 2 + 1) {
    errno = EINVAL;
    return nullptr;
  }
  size_t rounded = 1;
  while (rounded < alignment) rounded <<= 1;
  return AllocateAligned(rounded, size);
}

void* valloc(size_t size) noexcept { return AllocateAligned(kPageBytes, size); }

void* pvalloc(size_t size) noexcept {
  if (size > SIZE_MAX - kPageBytes) {
    errno = ENOMEM;
    return nullptr;
  }
  size_t rounded = size == 0 ? kPageBytes : PagesFor(size) << kLgPageBytes;
  return AllocateAligned(kPageBytes, rounded);
}

size_t malloc_usable_size(void* pointer) noexcept { return UsableSize(pointer); }

int malloc_trim(size_t) noexcept {
  lethe_purge();
  return 1;
}

struct mallinfo2 mallinfo2() noexcept {
  lethe_stats_t stats;
  lethe_stats(&stats);
  struct mallinfo2 info = {};
  info.arena = stats.mapped_bytes - stats.huge_bytes;
  info.hblks = stats.huge_count;
  info.hblkhd = stats.huge_bytes;
  info.uordblks = stats.allocated_bytes;
  info.fordblks = stats.active_bytes + stats.dirty_bytes - stats.allocated_bytes;
  info.fsmblks = stats.bin_unused_bytes + stats.thread_cache_bytes + stats.transfer_cache_bytes;
  info.keepcost = stats.dirty_bytes;
  return info;
}

struct mallinfo mallinfo() noexcept {
  struct mallinfo2 wide = mallinfo2();
  auto clamp = [](size_t value) { return value > INT_MAX ? INT_MAX : static_cast<int>(value); };
  struct mallinfo info = {};
  info.arena = clamp(wide.arena);
  info.hblks = clamp(wide.hblks);
  info.hblkhd = clamp(wide.hblkhd);
  info.uordblks = clamp(wide.uordblks);
  info.fordblks = clamp(wide.fordblks);
  info.fsmblks = clamp(wide.fsmblks);
  info.keepcost = clamp(wide.keepcost);
  return info;
}

void malloc_stats() noexcept { lethe_stats_print(stderr); }

}  // extern "C"

void* operator new(size_t size) { return NewOrThrow(size, 0); }
void* operator new[](size_t size) { return NewOrThrow(size, 0); }
void* operator new(size_t size, const std::nothrow_t&) noexcept { return NewNoThrow(size, 0); }
void* operator new[](size_t size, const std::nothrow_t&) noexcept { return NewNoThrow(size, 0); }
void* operator new(size_t size, std::align_val_t alignment) {
  return NewOrThrow(size, static_cast<size_t>(alignment));
}
void* operator new[](size_t size, std::align_val_t alignment) {
  return NewOrThrow(size, static_cast<size_t>(alignment));
}
void* operator new(size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return NewNoThrow(size, static_cast<size_t>(alignment));
}
void* operator new[](size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return NewNoThrow(size, static_cast<size_t>(alignment));
}

void operator delete(void* pointer) noexcept { Free(pointer); }
void operator delete[](void* pointer) noexcept { Free(pointer); }
void operator delete(void* pointer, const std::nothrow_t&) noexcept { Free(pointer); }
void operator delete[](void* pointer, const std::nothrow_t&) noexcept { Free(pointer); }
void operator delete(void* pointer, size_t) noexcept { Free(pointer); }
void operator delete[](void* pointer, size_t) noexcept { Free(pointer); }
void operator delete(void* pointer, std::align_val_t) noexcept { Free(pointer); }
void operator delete[](void* pointer, std::align_val_t) noexcept { Free(pointer); }
void operator delete(void* pointer, size_t, std::align_val_t) noexcept { Free(pointer); }
void operator delete[](void* pointer, size_t, std::align_val_t) noexcept { Free(pointer); }
void operator delete(void* pointer, std::align_val_t, const std::nothrow_t&) noexcept {
  Free(pointer);
}
void operator delete[](void* pointer, std::align_val_t, const std::nothrow_t&) noexcept {
  Free(pointer);
}
