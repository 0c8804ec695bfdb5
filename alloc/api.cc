// The lethe_* C API (lethe/alloc.h) served by the bundled allocator (LETHE_REPLACE_MALLOC=ON).
#include <errno.h>

#include "allocator.h"
#include "compiler.h"
#include "decay.h"
#include "lethe/alloc.h"
#include "stats.h"

using namespace lethe::internal;

extern "C" {

LETHE_EXPORT void* lethe_malloc(size_t size) noexcept { return Allocate(size); }

LETHE_EXPORT void* lethe_calloc(size_t count, size_t size) noexcept { return AllocateZeroed(count, size); }

LETHE_EXPORT void* lethe_realloc(void* pointer, size_t size) noexcept { return Reallocate(pointer, size); }

LETHE_EXPORT void* lethe_aligned_alloc(size_t alignment, size_t size) noexcept {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    errno = EINVAL;
    return nullptr;
  }
  return AllocateAligned(alignment, size);
}

LETHE_EXPORT void lethe_free(void* pointer) noexcept { Free(pointer); }

LETHE_EXPORT size_t lethe_usable_size(const void* pointer) noexcept { return UsableSize(pointer); }

LETHE_EXPORT size_t lethe_good_size(size_t size) noexcept { return GoodSize(size); }

LETHE_EXPORT void lethe_purge(void) noexcept {
  EnsureInit();
  ThreadCacheRequestFlushAll();
  if (HasCache(t_cache)) ThreadCacheFlushAfterPurge(t_cache);
  PurgeAllArenas();
}

LETHE_EXPORT void lethe_decay_tick(uint64_t now_ns) noexcept {
  EnsureInit();
  DecayTick(now_ns);
}

LETHE_EXPORT void lethe_stats(lethe_stats_t* out) noexcept {
  if (out == nullptr) return;
  EnsureInit();
  CollectStats(out, nullptr);
}

LETHE_EXPORT void lethe_stats_reset_peak(void) noexcept {
  EnsureInit();
  ResetPeakHeldBytes();
}

LETHE_EXPORT void lethe_stats_print(FILE* out) noexcept {
  EnsureInit();
  PrintStats(out != nullptr ? out : stderr);
}

LETHE_EXPORT const char* lethe_allocator_name(void) noexcept { return "lethe"; }

LETHE_EXPORT void lethe_set_low_memory_callback(lethe_low_memory_callback_t callback, void* context) noexcept {
  SetLowMemoryCallback(callback, context);
}

LETHE_EXPORT void lethe_fail_after(long n) noexcept { SetFailAfter(n); }

}  // extern "C"

namespace {

// LETHE_OPTIONS=stats_print:1: the report at exit, after the program's own output.
__attribute__((destructor)) void PrintStatsAtExit() {
  if (g_options.stats_print) PrintStats(stderr);
}

}  // namespace
