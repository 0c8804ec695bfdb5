// The lethe-stress figures (see stress_figures.h).
#include "stress_figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

namespace lethe::stress {

namespace {

uint64_t Value(const StressSample& sample, Metric metric) {
  return metric == Metric::kRss ? sample.rss_bytes : sample.heap_allocated_bytes;
}

RunFigures Summarize(const std::vector<StressSample>& samples, Metric metric) {
  RunFigures figures;
  for (const StressSample& sample : samples) {
    figures.peak_rss_bytes = std::max(figures.peak_rss_bytes, Value(sample, metric));
  }
  figures.terminal_rss_bytes = Value(samples.back(), metric);
  figures.regret = samples.back().regret;
  figures.terminal_heap_allocated_bytes = samples.back().heap_allocated_bytes;
  figures.terminal_resident_unique_bytes = samples.back().resident_unique_bytes;
  return figures;
}

const char* Verdict(bool met) { return met ? "met" : "NOT MET"; }

}  // namespace

std::string FormatMiB(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

namespace {

// Loads per cycle: a load sample counts the cycles completed (load / loads per cycle), so the
// first sample that counts one cycle is the cycle's last load. 0 when no cycle completed.
int LoadsPerCycle(const std::vector<StressSample>& samples) {
  for (const StressSample& sample : samples) {
    if (sample.phase == "load" && sample.cycle >= 1) return sample.load / sample.cycle;
  }
  return 0;
}

}  // namespace

double MeanLoadRssOfCycle(const std::vector<StressSample>& samples, int cycle, Metric metric) {
  const int per_cycle = LoadsPerCycle(samples);
  if (per_cycle <= 0) return 0;
  double sum = 0;
  int count = 0;
  for (const StressSample& sample : samples) {
    if (sample.phase != "load" || sample.load <= (cycle - 1) * per_cycle || sample.load > cycle * per_cycle) continue;
    sum += static_cast<double>(Value(sample, metric));
    ++count;
  }
  return count > 0 ? sum / count : 0;
}

int SlopeFirstCycle(int cycle_count) {
  return std::max(1, static_cast<int>(std::lround(cycle_count * 6.0 / 11.0)));
}

double LeastSquaresSlope(const std::vector<double>& xs, const std::vector<double>& values) {
  const size_t n = std::min(xs.size(), values.size());
  if (n < 2) return 0;
  double mean_x = 0, mean_y = 0;
  for (size_t i = 0; i < n; ++i) {
    mean_x += xs[i];
    mean_y += values[i];
  }
  mean_x /= static_cast<double>(n);
  mean_y /= static_cast<double>(n);
  double covariance = 0, variance = 0;
  for (size_t i = 0; i < n; ++i) {
    covariance += (xs[i] - mean_x) * (values[i] - mean_y);
    variance += (xs[i] - mean_x) * (xs[i] - mean_x);
  }
  return variance == 0 ? 0 : covariance / variance;
}

std::string ComputeFigures(const std::vector<StressSample>& baseline,
                           const std::vector<StressSample>& lethe, int cycle_count,
                           StressFigures* out, Metric metric) {
  *out = StressFigures{};
  out->metric = metric;
  if (baseline.empty()) return "the baseline run produced no samples";
  if (lethe.empty()) return "Lethe's run produced no samples";
  out->baseline = Summarize(baseline, metric);
  out->lethe = Summarize(lethe, metric);
  if (out->baseline.terminal_rss_bytes == 0) {
    return metric == Metric::kRss ? "the baseline's terminal RSS is 0"
                                  : "the baseline's terminal heap is 0";
  }
  const double baseline_terminal = static_cast<double>(out->baseline.terminal_rss_bytes);
  out->terminal_reduction = 1.0 - static_cast<double>(out->lethe.terminal_rss_bytes) / baseline_terminal;
  out->peak_vs_baseline_terminal = static_cast<double>(out->lethe.peak_rss_bytes) / baseline_terminal;
  out->peak_vs_baseline_peak = static_cast<double>(out->lethe.peak_rss_bytes) /
                               static_cast<double>(std::max<uint64_t>(1, out->baseline.peak_rss_bytes));
  if (out->baseline.terminal_resident_unique_bytes > 0) {
    out->terminal_unique_reduction =
        1.0 - static_cast<double>(out->lethe.terminal_resident_unique_bytes) /
                  static_cast<double>(out->baseline.terminal_resident_unique_bytes);
  }

  // Lethe's mean RSS over each cycle. One sample per cycle (say, when it completes) would measure
  // where the expiry timer's sawtooth is at that moment rather than any growth: seen on the
  // sample site, +2.6%/cycle from the samples at each cycle's end, on a run whose cycle means
  // stayed within 1 MiB of each other.
  out->slope_first_cycle = SlopeFirstCycle(cycle_count);
  out->slope_last_cycle = cycle_count;
  std::vector<double> cycles, rss;
  for (int cycle = out->slope_first_cycle; cycle <= cycle_count; ++cycle) {
    if (const double mean = MeanLoadRssOfCycle(lethe, cycle, metric); mean > 0) {
      cycles.push_back(cycle);
      rss.push_back(mean);
    }
  }
  if (cycles.size() >= 2) {
    double mean = 0;
    for (double value : rss) mean += value;
    mean /= static_cast<double>(rss.size());
    out->has_slope = mean > 0;
    if (out->has_slope) out->slope_percent_per_cycle = 100.0 * LeastSquaresSlope(cycles, rss) / mean;
  }
  return "";
}

namespace {

bool PeakTargetMet(const StressFigures& figures) {
  return figures.metric == Metric::kRss
             ? figures.peak_vs_baseline_terminal < kTargetPeakVsBaselineTerminal
             : figures.peak_vs_baseline_peak < kTargetPeakVsBaselinePeak;
}

}  // namespace

bool TargetsMet(const StressFigures& figures) {
  return figures.terminal_reduction >= kTargetTerminalReduction && PeakTargetMet(figures) &&
         figures.has_slope && figures.slope_percent_per_cycle < kTargetSlopePercentPerCycle;
}

namespace {

// The three figures beside their targets, each line starting with `prefix`; `metric` names what
// they are computed on ("RSS", "heap").
void PrintTargets(std::ostream& out, const StressFigures& figures, const char* prefix,
                  const char* metric) {
  char line[512];
  std::snprintf(line, sizeof(line), "%sterminal reduction: %.0f%%   (target >= %.0f%%: %s)\n",
                prefix, 100.0 * figures.terminal_reduction, 100.0 * kTargetTerminalReduction,
                Verdict(figures.terminal_reduction >= kTargetTerminalReduction));
  out << line;
  if (figures.metric == Metric::kRss) {
    std::snprintf(line, sizeof(line), "%speak vs baseline terminal: %.2fx   (target < %.0fx: %s)\n",
                  prefix, figures.peak_vs_baseline_terminal, kTargetPeakVsBaselineTerminal,
                  Verdict(PeakTargetMet(figures)));
  } else {
    std::snprintf(line, sizeof(line),
                  "%speak vs baseline terminal: %.2fx   (no target on heap: at its peak Lethe has "
                  "every window open, the baseline's terminal one; the target is RSS's)\n"
                  "%speak vs baseline peak: %.2fx   (target < %.0fx: %s)\n",
                  prefix, figures.peak_vs_baseline_terminal, prefix, figures.peak_vs_baseline_peak,
                  kTargetPeakVsBaselinePeak, Verdict(PeakTargetMet(figures)));
  }
  out << line;
  if (figures.has_slope) {
    std::snprintf(line, sizeof(line),
                  "%sslope of lethe's %s over cycles %d to %d: %+.2f%% per cycle   (target < %.0f%%: %s)\n",
                  prefix, metric, figures.slope_first_cycle, figures.slope_last_cycle,
                  figures.slope_percent_per_cycle, kTargetSlopePercentPerCycle,
                  Verdict(figures.slope_percent_per_cycle < kTargetSlopePercentPerCycle));
  } else {
    std::snprintf(line, sizeof(line),
                  "%sslope of lethe's %s: n/a (needs at least two cycles to fit)   (target < %.0f%%: NOT MET)\n",
                  prefix, metric, kTargetSlopePercentPerCycle);
  }
  out << line;
}

}  // namespace

void PrintFigures(std::ostream& out, const StressFigures& figures) {
  char line[256];
  std::snprintf(line, sizeof(line), "baseline: peak RSS %s, terminal RSS %s\n",
                FormatMiB(figures.baseline.peak_rss_bytes).c_str(),
                FormatMiB(figures.baseline.terminal_rss_bytes).c_str());
  out << line;
  std::snprintf(line, sizeof(line), "lethe:    peak RSS %s, terminal RSS %s\n",
                FormatMiB(figures.lethe.peak_rss_bytes).c_str(),
                FormatMiB(figures.lethe.terminal_rss_bytes).c_str());
  out << line;
  PrintTargets(out, figures, "", "RSS");
  if (figures.baseline.terminal_resident_unique_bytes > 0) {
    std::snprintf(line, sizeof(line),
                  "terminal resident-unique: baseline %s, lethe %s (reduction %.0f%%; shared "
                  "library pages left out; no target)\n",
                  FormatMiB(figures.baseline.terminal_resident_unique_bytes).c_str(),
                  FormatMiB(figures.lethe.terminal_resident_unique_bytes).c_str(),
                  100.0 * figures.terminal_unique_reduction);
    out << line;
  }
}

void PrintHeapFigures(std::ostream& out, const StressFigures& heap) {
  char line[256];
  std::snprintf(line, sizeof(line),
                "heap: baseline peak %s, terminal %s; lethe peak %s, terminal %s\n",
                FormatMiB(heap.baseline.peak_rss_bytes).c_str(),
                FormatMiB(heap.baseline.terminal_rss_bytes).c_str(),
                FormatMiB(heap.lethe.peak_rss_bytes).c_str(),
                FormatMiB(heap.lethe.terminal_rss_bytes).c_str());
  out << line;
  PrintTargets(out, heap, "heap: ", "heap");
}

void PrintRegret(std::ostream& out, const RunFigures& lethe) {
  const RegretCounts& r = lethe.regret;
  const double decode_ms = static_cast<double>(r[kSurfaceRegretDecodeNs]) / 1e6;
  char line[256];
  std::snprintf(line, sizeof(line),
                "regret: surface cache: %llu surfaces decoded again within 5 s of their discard, %s, "
                "%.1f ms of decoding\n",
                static_cast<unsigned long long>(r[kSurfaceRegretCount]),
                FormatMiB(r[kSurfaceRegretBytes]).c_str(), decode_ms);
  out << line;
  std::snprintf(line, sizeof(line),
                "regret: image cache: %llu images' compressed bytes stored again within 5 s of their "
                "drop, %s\n",
                static_cast<unsigned long long>(r[kImageRegretCount]),
                FormatMiB(r[kImageRegretBytes]).c_str());
  out << line;
  std::snprintf(line, sizeof(line),
                "regret: total over both caches: %llu discards undone, %s, %.1f ms of re-decoding "
                "(no target: tune the expiry times against it)\n",
                static_cast<unsigned long long>(r[kTotalRegretCount]),
                FormatMiB(r[kTotalRegretBytes]).c_str(), decode_ms);
  out << line;
}

}  // namespace lethe::stress
