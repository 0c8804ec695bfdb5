#include "timeline_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace lethe::demo {
namespace {

constexpr double kWidth = 960, kHeight = 420, kLeft = 60, kRight = 20, kTop = 40, kBottom = 60;
const char* const kColors[] = {"#d62728", "#ff7f0e", "#1f77b4", "#2ca02c", "#9467bd"};

}  // namespace

std::string TimelineChart::Write(const std::string& path, const std::string& title) const {
  if (samples_.empty()) return "no samples to chart";
  double max_x = samples_.back().first, max_y = 1e-9;
  for (const auto& [x, values] : samples_) {
    for (double v : values) max_y = std::max(max_y, v);
  }
  max_y *= 1.1;
  auto px = [&](double x) { return kLeft + x / std::max(max_x, 1e-9) * (kWidth - kLeft - kRight); };
  auto py = [&](double y) { return kHeight - kBottom - y / max_y * (kHeight - kTop - kBottom); };
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) return "cannot write " + path;
  std::fprintf(out,
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" "
               "fill=\"white\"/>\n<text x=\"%.0f\" y=\"22\" font-size=\"15\">%s</text>\n",
               kWidth, kHeight, kLeft, title.c_str());
  for (int i = 0; i <= 4; ++i) {  // horizontal grid with MB labels
    double y = max_y * i / 4;
    std::fprintf(out,
                 "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                 "<text x=\"4\" y=\"%.1f\">%.1f</text>\n",
                 kLeft, kWidth - kRight, py(y), py(y), py(y) + 4, y);
  }
  std::fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">%.0f s</text>\n", kWidth - kRight - 40,
               kHeight - kBottom + 18, max_x);
  for (const auto& [x, label] : marks_) {
    std::fprintf(out,
                 "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"black\" "
                 "stroke-dasharray=\"4 3\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                 px(x), px(x), kTop, kHeight - kBottom, px(x) + 4, kTop + 12, label.c_str());
  }
  for (size_t s = 0; s < names_.size(); ++s) {
    const char* color = kColors[s % std::size(kColors)];
    std::fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", color);
    for (const auto& [x, values] : samples_) {
      if (s < values.size()) std::fprintf(out, "%.1f,%.1f ", px(x), py(values[s]));
    }
    std::fprintf(out, "\"/>\n<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                 "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
                 kLeft + 190.0 * static_cast<double>(s), kHeight - 30, color,
                 kLeft + 190.0 * static_cast<double>(s) + 16, kHeight - 20, names_[s].c_str());
  }
  std::fprintf(out, "</svg>\n");
  return std::fclose(out) == 0 ? "" : "write failed: " + path;
}

}  // namespace lethe::demo
