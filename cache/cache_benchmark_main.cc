// The cache benchmarks' main: runs them as usual, then prints, per benchmark family, the ratio of
// its CPU time per operation at the largest size to that at the smallest (1.0 = flat), measured
// side by side in this one run.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace {

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred || run.run_type != Run::RT_Iteration) continue;
      std::string name = run.benchmark_name();
      size_t slash = name.find('/');
      // Only families over entry counts (…/1000, …/1000000), not fixed-iteration runs.
      if (slash == std::string::npos || name.find("iterations") != std::string::npos) continue;
      double per_item = run.GetAdjustedCPUTime();
      auto items = run.counters.find("items_per_second");
      if (items != run.counters.end() && items->second.value > 0) per_item = 1e9 / items->second.value;
      families_[name.substr(0, slash)].push_back({name.substr(slash + 1), per_item});
    }
  }

  void PrintRatios() const {
    std::printf("\nlargest / smallest size, CPU ns per item (1.0 = flat):\n");
    for (const auto& [family, sizes] : families_) {
      if (sizes.size() < 2 || sizes.front().second <= 0) continue;
      std::printf("  %-44s %s -> %s: %6.2f ns -> %6.2f ns  ratio %.2f\n", family.c_str(),
                  sizes.front().first.c_str(), sizes.back().first.c_str(), sizes.front().second,
                  sizes.back().second, sizes.back().second / sizes.front().second);
    }
  }

 private:
  std::map<std::string, std::vector<std::pair<std::string, double>>> families_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.PrintRatios();
  benchmark::Shutdown();
  return 0;
}
