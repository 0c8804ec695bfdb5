// What the allocator benchmark reads of its own process: /proc/self/status lines, minor faults,
// a monotonic clock. Header-only: lethe-alloc-workload links no library of its own.
#ifndef LETHE_TOOLS_BENCH_ALLOC_PROC_FIGURES_H_
#define LETHE_TOOLS_BENCH_ALLOC_PROC_FIGURES_H_

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace lethe::bench {

inline double NowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The value of a "Key:   N kB" line of /proc/self/status, or -1.
inline long StatusKb(const char* key) {
  FILE* file = std::fopen("/proc/self/status", "r");
  if (file == nullptr) return -1;
  char line[256];
  long value = -1;
  size_t key_length = std::strlen(key);
  while (std::fgets(line, sizeof(line), file) != nullptr) {
    if (std::strncmp(line, key, key_length) == 0 && line[key_length] == ':') {
      value = std::strtol(line + key_length + 1, nullptr, 10);
    }
  }
  std::fclose(file);
  return value;
}
inline long RssKb() { return StatusKb("VmRSS"); }
inline long AnonRssKb() { return StatusKb("RssAnon"); }
inline long PeakRssKb() { return StatusKb("VmHWM"); }
inline long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

}  // namespace lethe::bench

#endif  // LETHE_TOOLS_BENCH_ALLOC_PROC_FIGURES_H_
