// disk_cache_crash_child — the process that the crash-safety test kills with SIGKILL.
//
// Usage: disk_cache_crash_child <cache path> <run> <seed>
// Puts entries "https://crash.test/<run>/<i>" whose bytes are CrashPayload(run, i) and, after each
// Put returned success, writes "<i>\n" to stdout (a pipe to the test) with one write(2): the test
// then knows exactly which Puts were acknowledged. It also reads earlier entries back, so that
// batches of LRU touches and WAL checkpoints are in flight when the kill lands.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "disk_cache_crash_common.h"
#include "lethe/disk_cache.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <cache path> <run> <seed>\n", argv[0]);
    return 2;
  }
  const int run = std::atoi(argv[2]);
  unsigned seed = static_cast<unsigned>(std::strtoul(argv[3], nullptr, 10));
  auto opened = lethe::cache::DiskCache::Open(argv[1], lethe::cache::testing::CrashOptions());
  if (!opened.ok()) {
    std::fprintf(stderr, "crash child: %s\n", opened.status().ToString().c_str());
    return 1;
  }
  lethe::cache::DiskCache& cache = *opened.value();
  for (int i = 0; i < lethe::cache::testing::kCrashPutsPerRun; ++i) {
    std::string url = lethe::cache::testing::CrashUrl(run, i);
    lethe::cache::DiskCacheStatus status =
        cache.Put(url, lethe::cache::testing::CrashPayload(run, i), {"image/png", "\"e\"", ""});
    if (!status.ok()) {
      std::fprintf(stderr, "crash child: %s\n", status.ToString().c_str());
      return 1;
    }
    std::string ack = std::to_string(i) + "\n";
    if (::write(STDOUT_FILENO, ack.data(), ack.size()) != static_cast<ssize_t>(ack.size())) return 1;
    seed = seed * 1103515245u + 12345u;
    (void)cache.Get(lethe::cache::testing::CrashUrl(run, static_cast<int>(seed % (i + 1))));
  }
  return 0;
}
