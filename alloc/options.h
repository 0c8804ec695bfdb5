// options.h — the allocator's run-time options, read once from LETHE_OPTIONS at initialisation
// ("decay_ms:1000,decay_thread:1,...") without allocating (the parser reads environ in place).
//
//   decay_ms:N        dirty pages older than N ms are purged (default 1000; 0 = purge at once;
//                     at most 2^32); up to 8N where purged pages come back (decay_adaptation.h)
//   decay_thread:0|1  background purge thread (default 1)
//   dirty_percent:N   dirty pages above N% of active pages are purged at once (default 6)
//   oom_reserve_kb:N  address space kept mapped for the last step of out-of-memory (default 0)
//   huge_cache_kb:N   pages of freed huge blocks kept resident for reuse, at most N KiB (default
//                     131072; huge_region.h)
//   tcache:0|1        per-thread caches (default 1)
//   arenas:N          number of arenas (default: one per CPU, at most kMaxArenas)
//   stats_print:0|1   print statistics to stderr at exit (default 0)
//   slop:0|1          count requested vs usable bytes (default 0)
// Unknown keys and bad values are reported on stderr (once, with write(2)) and ignored.
#ifndef LETHE_ALLOC_OPTIONS_H_
#define LETHE_ALLOC_OPTIONS_H_

#include <cstddef>
#include <cstdint>

#include "compiler.h"

namespace lethe::internal {

inline constexpr unsigned kMaxArenas = 64;

struct Options {
  uint64_t decay_ms = 1000;
  bool decay_thread = true;
  // 6, not jemalloc 3's 1/8: with large runs taking clean pages first (page_heap.h step 3), a
  // lower limit lowers the peak, for some more time in page faults.
  uint32_t dirty_percent = 6;
  uint64_t oom_reserve_kb = 0;
  uint64_t huge_cache_kb = 128 * 1024;
  bool tcache = true;
  unsigned arenas = 0;  // 0: one per CPU
  bool stats_print = false;
  bool slop = false;
};

extern LETHE_HIDDEN constinit Options g_options;

// The tunables that the purge thread reads (the decay, the dirty limit, the huge cache) are read
// with relaxed atomic loads, and tests that change them while it runs store them with
// SetOptionForTesting: the same moves on x86, and no data race for ThreadSanitizer (tsan-alloc
// preset). Everywhere else the options are set once, before a second thread exists.
inline uint64_t DecayMsOption() { return __atomic_load_n(&g_options.decay_ms, __ATOMIC_RELAXED); }
inline uint32_t DirtyPercentOption() {
  return __atomic_load_n(&g_options.dirty_percent, __ATOMIC_RELAXED);
}
inline uint64_t HugeCacheKbOption() {
  return __atomic_load_n(&g_options.huge_cache_kb, __ATOMIC_RELAXED);
}
template <typename T>
void SetOptionForTesting(T* field, T value) {
  __atomic_store_n(field, value, __ATOMIC_RELAXED);
}

// Parses `text` (may be nullptr) into *options. Returns false if anything was rejected.
bool ParseOptions(const char* text, Options* options);
// Reads LETHE_OPTIONS from the environment into g_options.
void LoadOptionsFromEnvironment();

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_OPTIONS_H_
