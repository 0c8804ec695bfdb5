// The lethe_* API forwarded to the system malloc (LETHE_REPLACE_MALLOC=OFF, the sanitizer presets).
//
// Why it exists: under ASan/LSan the sanitizer must own every buffer so that it sees overflows and
// leaks in the layers above; the bundled allocator would hide them. This file keeps the contract of
// lethe/alloc.h (statistics of what went through lethe_*, the fail-after hook, the low-memory
// callback) so the layers above behave and are tested the same way in both builds.
#include <errno.h>
#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "arena_handles.h"
#include "lethe/alloc.h"

namespace {

std::atomic<uint64_t> g_allocated_bytes{0};
std::atomic<uint64_t> g_peak_allocated_bytes{0};
std::atomic<uint64_t> g_allocation_count{0};
std::atomic<uint64_t> g_free_count{0};
std::atomic<uint64_t> g_low_memory_callbacks{0};
std::atomic<long> g_fail_countdown{0};
std::atomic<lethe_low_memory_callback_t> g_low_memory_callback{nullptr};
std::atomic<void*> g_low_memory_context{nullptr};
thread_local bool t_in_low_memory_callback = false;

// True when the fail-after hook says this allocation must fail.
bool ShouldInjectFailure() {
  long remaining = g_fail_countdown.load(std::memory_order_relaxed);
  while (remaining > 0) {
    if (g_fail_countdown.compare_exchange_weak(remaining, remaining - 1)) return remaining == 1;
  }
  return false;
}

void RunLowMemoryCallback(size_t request_bytes) {
  lethe_low_memory_callback_t callback = g_low_memory_callback.load();
  if (callback == nullptr || t_in_low_memory_callback) return;
  t_in_low_memory_callback = true;
  g_low_memory_callbacks.fetch_add(1, std::memory_order_relaxed);
  callback(request_bytes, g_low_memory_context.load());
  t_in_low_memory_callback = false;
}

// Adds to the live bytes and raises the peak to the value this very addition produced, so the
// peak is exact whatever the threads' interleaving.
void AddAllocatedBytes(uint64_t bytes) {
  uint64_t now = g_allocated_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  uint64_t peak = g_peak_allocated_bytes.load(std::memory_order_relaxed);
  while (now > peak &&
         !g_peak_allocated_bytes.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

void* Account(void* block) {
  if (block != nullptr) {
    AddAllocatedBytes(malloc_usable_size(block));
    g_allocation_count.fetch_add(1, std::memory_order_relaxed);
  }
  return block;
}

// Allocates with `allocate`, running the low-memory callback and retrying once on failure.
template <typename Allocate>
void* AllocateWithRetry(size_t request_bytes, Allocate allocate) {
  if (ShouldInjectFailure()) {
    RunLowMemoryCallback(request_bytes);  // as on a real refusal
    errno = ENOMEM;
    return nullptr;
  }
  void* block = allocate();
  if (block == nullptr && request_bytes != 0) {
    RunLowMemoryCallback(request_bytes);
    block = allocate();
  }
  if (block == nullptr) errno = ENOMEM;
  return Account(block);
}

}  // namespace

extern "C" {

void* lethe_malloc(size_t size) noexcept {
  return AllocateWithRetry(size, [size] { return std::malloc(size == 0 ? 1 : size); });
}

void* lethe_calloc(size_t count, size_t size) noexcept {
  size_t total = 0;
  if (__builtin_mul_overflow(count, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  return AllocateWithRetry(total, [total] { return std::calloc(1, total == 0 ? 1 : total); });
}

void* lethe_aligned_alloc(size_t alignment, size_t size) noexcept {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    errno = EINVAL;
    return nullptr;
  }
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  return AllocateWithRetry(size, [alignment, size] {
    void* block = nullptr;
    return posix_memalign(&block, alignment, size == 0 ? 1 : size) == 0 ? block : nullptr;
  });
}

void lethe_free(void* pointer) noexcept {
  if (pointer == nullptr) return;
  int saved_errno = errno;
  g_allocated_bytes.fetch_sub(malloc_usable_size(pointer), std::memory_order_relaxed);
  g_free_count.fetch_add(1, std::memory_order_relaxed);
  std::free(pointer);
  errno = saved_errno;
}

void* lethe_realloc(void* pointer, size_t size) noexcept {
  if (pointer == nullptr) return lethe_malloc(size);
  if (ShouldInjectFailure()) {
    RunLowMemoryCallback(size);
    errno = ENOMEM;
    return nullptr;
  }
  size_t old_usable = malloc_usable_size(pointer);
  void* block = std::realloc(pointer, size == 0 ? 1 : size);
  if (block == nullptr) {
    RunLowMemoryCallback(size);
    block = std::realloc(pointer, size == 0 ? 1 : size);
  }
  if (block == nullptr) {
    errno = ENOMEM;
    return nullptr;  // The old block stays valid and accounted.
  }
  // Net change only: the system realloc's copy moment (old and new both live) is not seen.
  g_allocated_bytes.fetch_sub(old_usable, std::memory_order_relaxed);
  AddAllocatedBytes(malloc_usable_size(block));
  return block;
}

size_t lethe_usable_size(const void* pointer) noexcept {
  return pointer == nullptr ? 0 : malloc_usable_size(const_cast<void*>(pointer));
}

// The system allocator publishes no class table; a request gets what it asks for.
size_t lethe_good_size(size_t size) noexcept { return size == 0 ? 1 : size; }

void lethe_purge(void) noexcept { malloc_trim(0); }

void lethe_decay_tick(uint64_t) noexcept {}

void lethe_stats(lethe_stats_t* out) noexcept {
  if (out == nullptr) return;
  std::memset(out, 0, sizeof(*out));
  out->allocated_bytes = g_allocated_bytes.load(std::memory_order_relaxed);
  out->active_bytes = out->allocated_bytes;
  out->allocation_count = g_allocation_count.load(std::memory_order_relaxed);
  out->free_count = g_free_count.load(std::memory_order_relaxed);
  out->low_memory_callbacks = g_low_memory_callbacks.load(std::memory_order_relaxed);
  out->peak_allocated_bytes = g_peak_allocated_bytes.load(std::memory_order_relaxed);
}

void lethe_stats_reset_peak(void) noexcept {
  g_peak_allocated_bytes.store(g_allocated_bytes.load(std::memory_order_relaxed),
                               std::memory_order_relaxed);
}

void lethe_stats_print(FILE* out) noexcept {
  lethe_stats_t stats;
  lethe_stats(&stats);
  std::fprintf(out != nullptr ? out : stderr,
               "lethe allocator: system (forwarding)\n"
               "  allocated through lethe_*: %llu bytes\n"
               "  peak: %llu bytes  allocations: %llu  frees: %llu\n",
               static_cast<unsigned long long>(stats.allocated_bytes),
               static_cast<unsigned long long>(stats.peak_allocated_bytes),
               static_cast<unsigned long long>(stats.allocation_count),
               static_cast<unsigned long long>(stats.free_count));
}

const char* lethe_allocator_name(void) noexcept { return "system"; }

void lethe_set_low_memory_callback(lethe_low_memory_callback_t callback, void* context) noexcept {
  g_low_memory_context.store(context);
  g_low_memory_callback.store(callback);
}

void lethe_fail_after(long n) noexcept { g_fail_countdown.store(n > 0 ? n : 0); }

// Caller arenas: the handles, limits, bindings and errors of the bundled allocator
// (arena_handles.h), with no memory behind them: blocks come from the system malloc whatever is
// bound, so the statistics are zeros flagged LETHE_ARENA_UNTRACKED and a destroyed arena holds
// nothing (no ghosts).
lethe_arena_t lethe_arena_create(void) noexcept {
  using namespace lethe::internal;
  lethe::internal::MutexLock lock(&g_arena_handles_lock);
  uint32_t slot = 0;
  if (int error = ArenaSlotCreate(&slot); error != 0) {
    errno = error;
    return LETHE_ARENA_NONE;
  }
  return ArenaSlotHandle(slot);
}

int lethe_arena_bind(lethe_arena_t arena, lethe_arena_t* previous) noexcept {
  uint32_t slot = 0;
  return lethe::internal::ArenaBindThread(arena, previous, &slot);
}

lethe_arena_t lethe_arena_bound(void) noexcept { return lethe::internal::ThreadBoundArena(); }

int lethe_arena_stats(lethe_arena_t arena, lethe_arena_stats_t* out) noexcept {
  using namespace lethe::internal;
  if (out == nullptr) return EINVAL;
  MutexLock lock(&g_arena_handles_lock);
  uint32_t slot = 0;
  if (int error = ArenaSlotFind(arena, &slot); error != 0) return error;
  std::memset(out, 0, sizeof(*out));
  out->flags = LETHE_ARENA_UNTRACKED;
  out->bound_threads = ArenaSlotAt(slot).bound_threads;
  return 0;
}

int lethe_arena_destroy(lethe_arena_t arena, uint64_t* bytes_left) noexcept {
  using namespace lethe::internal;
  MutexLock lock(&g_arena_handles_lock);
  uint32_t slot = 0;
  if (int error = ArenaSlotFind(arena, &slot); error != 0) return error;
  if (ArenaSlotAt(slot).bound_threads > 0) return EBUSY;
  if (bytes_left != nullptr) *bytes_left = 0;
  ArenaSlotRelease(slot);
  return 0;
}

}  // extern "C"
