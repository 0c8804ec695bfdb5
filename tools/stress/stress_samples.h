// tools/stress/stress_samples.h — one run's memory over time, as lethe-stress records it, and its
// CSV form (what a child writes for the parent, and the combined file the tool leaves behind).
//
// A sample is taken after every page load, once right after all windows but one are closed, and
// periodically while the engine idles. Columns, in order (kCsvColumns):
//   run, phase (load|close|idle), load, cycle, time_s, windows, rss_bytes, resident_unique_bytes,
//   heap_allocated_bytes, then one column per cache (kCacheNames, "<name>_bytes"), then the
//   surface cache's regret so far (kRegretNames: discards undone within 5 s; cumulative).
// Plain data and pure functions; any thread.
#ifndef LETHE_TOOLS_STRESS_STRESS_SAMPLES_H_
#define LETHE_TOOLS_STRESS_STRESS_SAMPLES_H_

#include <array>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace lethe::stress {

inline constexpr std::array<const char*, 5> kCacheNames = {
    "surface_cache", "image_cache", "bf_cache", "font_cache", "shaped_word_cache"};

// Cumulative regret of the surface cache: re-decodes within 5 s of their discard, their bytes and
// the decode time they took (lethe/surface_cache.h).
inline constexpr std::array<const char*, 3> kRegretNames = {"regret_count", "regret_bytes",
                                                            "regret_decode_ns"};
using RegretCounts = std::array<uint64_t, kRegretNames.size()>;

struct StressSample {
  std::string run;    // "baseline" or "lethe"
  std::string phase;  // "load", "close", "idle"
  int load = 0;       // page loads done so far
  int cycle = 0;      // cycles completed so far (a cycle is one pass over the pages)
  double time_s = 0;  // engine time since the run started (simulated or real)
  int windows = 0;
  uint64_t rss_bytes = 0;
  uint64_t resident_unique_bytes = 0;
  uint64_t heap_allocated_bytes = 0;
  std::array<uint64_t, kCacheNames.size()> cache_bytes{};
  RegretCounts regret{};
};

// The header line (without newline).
std::string CsvHeader();
void WriteCsvRow(std::ostream& out, const StressSample& sample);
// Writes header + rows to `path`; returns "" or an error naming the file.
std::string WriteCsvFile(const std::string& path, const std::vector<StressSample>& samples);
// Reads a file WriteCsvFile wrote (appends to *samples). Returns "" or an error naming the line.
std::string ReadCsvFile(const std::string& path, std::vector<StressSample>* samples);

}  // namespace lethe::stress

#endif  // LETHE_TOOLS_STRESS_STRESS_SAMPLES_H_
