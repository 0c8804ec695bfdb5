// tools/stress/stress_samples.h — one run's memory over time, as lethe-stress records it, and its
// CSV form (what a child writes for the parent, and the combined file the tool leaves behind).
//
// A sample is taken after every page load, once right after all windows but one are closed, and
// periodically while the engine idles. Columns, in order (kCsvColumns):
//   run, phase (load|close|idle), load, cycle, time_s, windows, rss_bytes, resident_unique_bytes,
//   heap_allocated_bytes, then one column per cache (kCacheNames, "<name>_bytes"), then the
//   regret so far (kRegretNames: discards undone within 5 s, per cache and in total; cumulative).
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

// Cumulative regret (discards undone), per cache and in total, so that the expiry times can be
// tuned against it: the surface cache's re-decodes within 5 s of their discard, their bytes and the
// decode time they took (lethe/surface_cache.h); the image cache's compressed bytes stored again
// within 5 s of their drop (lethe/image_cache.h: read again, nothing decoded); then the sums over
// both caches. The decode time is the surface cache's alone (the image cache decodes nothing), so
// it has no total column.
inline constexpr std::array<const char*, 7> kRegretNames = {
    "surface_regret_count", "surface_regret_bytes", "surface_regret_decode_ns",
    "image_regret_count",   "image_regret_bytes",   "regret_count",
    "regret_bytes"};
enum RegretField : size_t {
  kSurfaceRegretCount,
  kSurfaceRegretBytes,
  kSurfaceRegretDecodeNs,
  kImageRegretCount,
  kImageRegretBytes,
  kTotalRegretCount,
  kTotalRegretBytes,
};
using RegretCounts = std::array<uint64_t, kRegretNames.size()>;

// Both caches' figures with their totals filled in.
RegretCounts MakeRegretCounts(uint64_t surface_count, uint64_t surface_bytes,
                              uint64_t surface_decode_ns, uint64_t image_count, uint64_t image_bytes);

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
// Reads a file WriteCsvFile wrote (appends to *samples). Returns "" or an error naming the line
// (also when a regret total is not the sum of the two caches' figures).
std::string ReadCsvFile(const std::string& path, std::vector<StressSample>* samples);

}  // namespace lethe::stress

#endif  // LETHE_TOOLS_STRESS_STRESS_SAMPLES_H_
