// disk_cache_crash_common.h — what the crash-safety test and its child agree on: URLs, payloads
// and cache options.
#ifndef LETHE_TESTS_CACHE_DISK_CACHE_CRASH_COMMON_H_
#define LETHE_TESTS_CACHE_DISK_CACHE_CRASH_COMMON_H_

#include <string>
#include <vector>

#include "disk_cache_test_util.h"
#include "lethe/disk_cache.h"

namespace lethe::cache::testing {

inline constexpr int kCrashPutsPerRun = 400;

inline std::string CrashUrl(int run, int i) {
  return "https://crash.test/" + std::to_string(run) + "/" + std::to_string(i);
}

// Mostly small bodies, every fifth one large enough for incremental blob I/O and overflow pages.
inline std::vector<std::uint8_t> CrashPayload(int run, int i) {
  std::size_t size = i % 5 == 4 ? 70'000 + static_cast<std::size_t>((run * 7919 + i * 104729) % 60'000)
                                : 200 + static_cast<std::size_t>((run * 31 + i * 977) % 12'000);
  return Payload(static_cast<std::uint64_t>(run) * 100'000 + static_cast<std::uint64_t>(i), size);
}

inline DiskCacheOptions CrashOptions() {
  DiskCacheOptions options;
  options.capacity_bytes = std::uint64_t{1} << 30;  // no eviction: every acknowledged entry stays
  options.wal_checkpoint_bytes = 512 * 1024;          // checkpoints happen while being killed
  options.max_pending_touches = 4;                    // so do batches of LRU touches
  options.page_cache_kib = 256;                       // and page-cache spills inside a Put
  options.log = [](std::string_view) {};
  return options;
}

}  // namespace lethe::cache::testing

#endif  // LETHE_TESTS_CACHE_DISK_CACHE_CRASH_COMMON_H_
