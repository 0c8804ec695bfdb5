// The lethe-stress SVG chart (see stress_chart.h).
#include "stress_chart.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace lethe::stress {

namespace {

constexpr double kWidth = 960, kHeight = 540;
constexpr double kLeft = 80, kRight = 30, kTop = 50, kBottom = 70;
constexpr double kIdleShare = 0.2;  // of the load axis, for the idle stretch
constexpr double kMiB = 1024.0 * 1024.0;

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

// A round step giving about `count` ticks over [0, max].
double NiceStep(double max, int count) {
  if (max <= 0) return 1;
  const double raw = max / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= factor * magnitude) return factor * magnitude;
  }
  return 10 * magnitude;
}

struct Frame {
  double x_max = 1;     // load units, idle stretch included
  double y_max = 1;     // MiB
  double load_count = 1;
  double idle_start_s = 0, idle_end_s = 0;
  double X(double x) const { return kLeft + x / x_max * (kWidth - kLeft - kRight); }
  double Y(double mib) const { return kHeight - kBottom - mib / y_max * (kHeight - kTop - kBottom); }
  // Where a sample goes on the x axis.
  double SampleX(const StressSample& sample) const {
    if (sample.phase == "load") return sample.load;
    if (idle_end_s <= idle_start_s) return load_count;
    const double share = (sample.time_s - idle_start_s) / (idle_end_s - idle_start_s);
    return load_count + std::clamp(share, 0.0, 1.0) * kIdleShare * load_count;
  }
};

void Polyline(std::ostringstream& svg, const Frame& frame, const std::vector<StressSample>& samples,
              bool heap, const char* color, const char* dash) {
  svg << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"" << (heap ? 1.5 : 2.5)
      << "\"" << (dash[0] ? " stroke-dasharray=\"" : "") << dash << (dash[0] ? "\"" : "")
      << " points=\"";
  for (const StressSample& sample : samples) {
    const double bytes = static_cast<double>(heap ? sample.heap_allocated_bytes : sample.rss_bytes);
    char point[64];
    std::snprintf(point, sizeof(point), "%.1f,%.1f ", frame.X(frame.SampleX(sample)),
                  frame.Y(bytes / kMiB));
    svg << point;
  }
  svg << "\"/>\n";
}

void Text(std::ostringstream& svg, double x, double y, const std::string& text,
          const char* anchor = "middle", const char* extra = "") {
  char head[160];
  std::snprintf(head, sizeof(head), "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s>", x, y,
                anchor, extra);
  svg << head << Escape(text) << "</text>\n";
}

}  // namespace

std::string RenderStressChart(const ChartInput& input) {
  Frame frame;
  frame.load_count = std::max(1, input.load_count);
  frame.x_max = frame.load_count * (1 + kIdleShare);
  double max_bytes = 1;
  bool has_idle = false;
  for (const auto* run : {&input.baseline, &input.lethe}) {
    for (const StressSample& sample : *run) {
      max_bytes = std::max({max_bytes, static_cast<double>(sample.rss_bytes),
                            static_cast<double>(sample.heap_allocated_bytes)});
      if (sample.phase == "close" || sample.phase == "idle") {
        if (!has_idle || sample.time_s < frame.idle_start_s) frame.idle_start_s = sample.time_s;
        frame.idle_end_s = std::max(frame.idle_end_s, sample.time_s);
        has_idle = true;
      }
    }
  }
  const double y_step = NiceStep(max_bytes / kMiB * 1.05, 6);
  frame.y_max = std::ceil(max_bytes / kMiB * 1.05 / y_step) * y_step;

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" viewBox=\"0 0 " << kWidth << ' ' << kHeight
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  Text(svg, kWidth / 2, 28, input.title, "middle", " font-size=\"16\" font-weight=\"bold\"");

  // Grid and y ticks.
  for (double mib = 0; mib <= frame.y_max + 1e-9; mib += y_step) {
    char line[160];
    std::snprintf(line, sizeof(line),
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n",
                  kLeft, frame.Y(mib), kWidth - kRight, frame.Y(mib));
    svg << line;
    char label[32];
    std::snprintf(label, sizeof(label), "%g", mib);
    Text(svg, kLeft - 8, frame.Y(mib) + 4, label, "end");
  }
  // X ticks at cycle boundaries (at most ~12 labels).
  const int per_cycle = std::max(1, input.pages_per_cycle);
  const int cycle_count = input.load_count / per_cycle;
  const int label_every = std::max(1, cycle_count / 12);
  for (int cycle = 0; cycle <= cycle_count; ++cycle) {
    const double x = frame.X(cycle * per_cycle);
    char tick[160];
    std::snprintf(tick, sizeof(tick),
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n", x,
                  kHeight - kBottom, x, kHeight - kBottom + 5);
    svg << tick;
    if (cycle % label_every == 0) {
      Text(svg, x, kHeight - kBottom + 18, std::to_string(cycle * per_cycle));
    }
  }
  // Axes and their labels.
  char axes[256];
  std::snprintf(axes, sizeof(axes),
                "<path d=\"M%.1f %.1f V%.1f H%.1f\" fill=\"none\" stroke=\"#333\"/>\n", kLeft,
                kTop, kHeight - kBottom, kWidth - kRight);
  svg << axes;
  Text(svg, (kLeft + frame.X(frame.load_count)) / 2, kHeight - 22,
       "page loads (" + std::to_string(per_cycle) + " pages per cycle)");
  Text(svg, 20, (kTop + kHeight - kBottom) / 2, "memory (MiB)", "middle",
       " transform=\"rotate(-90 20 270)\"");

  // The close-all-windows moment and the idle stretch.
  if (has_idle) {
    const double x = frame.X(frame.load_count);
    char mark[200];
    std::snprintf(mark, sizeof(mark),
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c03030\" "
                  "stroke-dasharray=\"6 4\"/>\n",
                  x, kTop, x, kHeight - kBottom);
    svg << mark;
    Text(svg, x - 4, kTop + 14, "all windows but one closed", "end", " fill=\"#c03030\"");
    char idle[64];
    std::snprintf(idle, sizeof(idle), "idle %.0f s", frame.idle_end_s - frame.idle_start_s);
    Text(svg, (x + frame.X(frame.x_max)) / 2, kHeight - kBottom + 18, idle);
  }

  Polyline(svg, frame, input.baseline, false, "#d07020", "");
  Polyline(svg, frame, input.baseline, true, "#d07020", "6 4");
  Polyline(svg, frame, input.lethe, false, "#2060c0", "");
  Polyline(svg, frame, input.lethe, true, "#2060c0", "6 4");

  // Legend.
  const struct { const char* color; const char* dash; const char* label; } kLegend[] = {
      {"#d07020", "", "baseline RSS"},
      {"#d07020", "6 4", "baseline heap allocated"},
      {"#2060c0", "", "Lethe RSS"},
      {"#2060c0", "6 4", "Lethe heap allocated"}};
  double legend_y = kTop + 36;
  char box[200];
  std::snprintf(box, sizeof(box),
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"200\" height=\"80\" fill=\"white\" "
                "fill-opacity=\"0.85\" stroke=\"#ccc\"/>\n",
                kLeft + 8, legend_y - 16);
  svg << box;
  for (const auto& entry : kLegend) {
    char line[200];
    std::snprintf(line, sizeof(line),
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                  "stroke-width=\"2\"%s%s%s/>\n",
                  kLeft + 16, legend_y - 4, kLeft + 46, legend_y - 4, entry.color,
                  entry.dash[0] ? " stroke-dasharray=\"" : "", entry.dash,
                  entry.dash[0] ? "\"" : "");
    svg << line;
    Text(svg, kLeft + 52, legend_y, entry.label, "start");
    legend_y += 18;
  }
  svg << "</svg>\n";
  return svg.str();
}

std::string WriteStressChart(const std::string& path, const ChartInput& input) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return "cannot write " + path + " (" + std::strerror(errno) + ")";
  out << RenderStressChart(input);
  out.close();
  if (!out) return "cannot write " + path;
  return "";
}

}  // namespace lethe::stress
