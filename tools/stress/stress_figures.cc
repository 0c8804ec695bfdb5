// The lethe-stress figures (see stress_figures.h).
#include "stress_figures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

namespace lethe::stress {

namespace {

RunFigures Summarize(const std::vector<StressSample>& samples) {
  RunFigures figures;
  for (const StressSample& sample : samples) {
    figures.peak_rss_bytes = std::max(figures.peak_rss_bytes, sample.rss_bytes);
  }
  figures.terminal_rss_bytes = samples.back().rss_bytes;
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

double MeanLoadRssOfCycle(const std::vector<StressSample>& samples, int cycle) {
  const int per_cycle = LoadsPerCycle(samples);
  if (per_cycle <= 0) return 0;
  double sum = 0;
  int count = 0;
  for (const StressSample& sample : samples) {
    if (sample.phase != "load" || sample.load <= (cycle - 1) * per_cycle || sample.load > cycle * per_cycle) continue;
    sum += static_cast<double>(sample.rss_bytes);
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
                           StressFigures* out) {
  *out = StressFigures{};
  if (baseline.empty()) return "the baseline run produced no samples";
  if (lethe.empty()) return "Lethe's run produced no samples";
  out->baseline = Summarize(baseline);
  out->lethe = Summarize(lethe);
  if (out->baseline.terminal_rss_bytes == 0) return "the baseline's terminal RSS is 0";
  const double baseline_terminal = static_cast<double>(out->baseline.terminal_rss_bytes);
  out->terminal_reduction = 1.0 - static_cast<double>(out->lethe.terminal_rss_bytes) / baseline_terminal;
  out->peak_vs_baseline_terminal = static_cast<double>(out->lethe.peak_rss_bytes) / baseline_terminal;
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
    if (const double mean = MeanLoadRssOfCycle(lethe, cycle); mean > 0) {
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

bool TargetsMet(const StressFigures& figures) {
  return figures.terminal_reduction >= kTargetTerminalReduction &&
         figures.peak_vs_baseline_terminal < kTargetPeakVsBaselineTerminal && figures.has_slope &&
         figures.slope_percent_per_cycle < kTargetSlopePercentPerCycle;
}

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
  std::snprintf(line, sizeof(line), "terminal reduction: %.0f%%   (target >= %.0f%%: %s)\n",
                100.0 * figures.terminal_reduction, 100.0 * kTargetTerminalReduction,
                Verdict(figures.terminal_reduction >= kTargetTerminalReduction));
  out << line;
  if (figures.baseline.terminal_resident_unique_bytes > 0) {
    std::snprintf(line, sizeof(line),
                  "terminal resident-unique: baseline %s, lethe %s (reduction %.0f%%; shared "
                  "library pages left out; no target)\n",
                  FormatMiB(figures.baseline.terminal_resident_unique_bytes).c_str(),
                  FormatMiB(figures.lethe.terminal_resident_unique_bytes).c_str(),
                  100.0 * figures.terminal_unique_reduction);
    out << line;
  }
  std::snprintf(line, sizeof(line), "peak vs baseline terminal: %.2fx   (target < %.0fx: %s)\n",
                figures.peak_vs_baseline_terminal, kTargetPeakVsBaselineTerminal,
                Verdict(figures.peak_vs_baseline_terminal < kTargetPeakVsBaselineTerminal));
  out << line;
  if (figures.has_slope) {
    std::snprintf(line, sizeof(line),
                  "slope of lethe's RSS over cycles %d to %d: %+.2f%% per cycle   (target < %.0f%%: %s)\n",
                  figures.slope_first_cycle, figures.slope_last_cycle,
                  figures.slope_percent_per_cycle, kTargetSlopePercentPerCycle,
                  Verdict(figures.slope_percent_per_cycle < kTargetSlopePercentPerCycle));
  } else {
    std::snprintf(line, sizeof(line),
                  "slope of lethe's RSS: n/a (needs at least two cycles to fit)   (target < %.0f%%: NOT MET)\n",
                  kTargetSlopePercentPerCycle);
  }
  out << line;
}

}  // namespace lethe::stress
