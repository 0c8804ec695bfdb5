// tools/stress/stress_chart.h — the SVG chart lethe-stress writes: memory against page loads for
// both runs (like the classic browser memory-over-a-session charts), the moment all windows but
// one were closed marked, then the idle stretch after it.
//
// X axis: page loads (0..load_count), cycle boundaries ticked; the idle after the close is drawn in
// an extra stretch on the right, 20% of the axis wide, labelled with its duration. Y axis: MiB.
// Lines: each run's RSS (solid) and heap allocated (dashed). Pure function; any thread.
#ifndef LETHE_TOOLS_STRESS_STRESS_CHART_H_
#define LETHE_TOOLS_STRESS_STRESS_CHART_H_

#include <string>
#include <vector>

#include "stress_samples.h"

namespace lethe::stress {

struct ChartInput {
  std::string title;
  int load_count = 0;
  int pages_per_cycle = 0;
  std::vector<StressSample> baseline;
  std::vector<StressSample> lethe;
};

// The SVG document.
std::string RenderStressChart(const ChartInput& input);
// Writes it to `path`; returns "" or an error naming the file.
std::string WriteStressChart(const std::string& path, const ChartInput& input);

}  // namespace lethe::stress

#endif  // LETHE_TOOLS_STRESS_STRESS_CHART_H_
