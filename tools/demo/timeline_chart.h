// tools/demo/timeline_chart.h — a small SVG line chart of a few series over time (the demo's
// memory over simulated time), with vertical markers for events.
#ifndef LETHE_TOOLS_DEMO_TIMELINE_CHART_H_
#define LETHE_TOOLS_DEMO_TIMELINE_CHART_H_

#include <string>
#include <utility>
#include <vector>

namespace lethe::demo {

class TimelineChart {
 public:
  explicit TimelineChart(std::vector<std::string> series_names) : names_(std::move(series_names)) {}
  // One sample: x (seconds) and one value per series.
  void Add(double x, std::vector<double> values) { samples_.push_back({x, std::move(values)}); }
  void Mark(double x, std::string label) { marks_.push_back({x, std::move(label)}); }
  // Writes the SVG; returns "" or an error.
  std::string Write(const std::string& path, const std::string& title) const;

 private:
  std::vector<std::string> names_;
  std::vector<std::pair<double, std::vector<double>>> samples_;
  std::vector<std::pair<double, std::string>> marks_;
};

}  // namespace lethe::demo

#endif  // LETHE_TOOLS_DEMO_TIMELINE_CHART_H_
