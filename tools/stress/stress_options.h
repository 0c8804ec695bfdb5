// tools/stress/stress_options.h — lethe-stress's command line, parsed into one struct, and the
// page list it resolves to. Separate from main() so that tests can check every error message.
//
//   lethe-stress [--pages DIR] [--page-count N] [--windows N] [--cycles N] [--scale K]
//                [--idle SECONDS] [--real-time] [--out DIR] [--no-progress] [--require-heap-targets]
//   lethe-stress --serve SOCKET [--baseline] [--churn-ms N] [--pressure-ongoing-ms N] [...]   load pages, then
//                serve the control socket until SIGTERM/SIGINT (what lethe-pressure talks to),
//                loading every page again every N ms when --churn-ms is given
//   lethe-stress --child baseline|lethe --result FILE [--progress-fd N] [workload flags]
//                (internal: one configuration's run, started by the parent)
// Plain functions; any thread.
#ifndef LETHE_TOOLS_STRESS_STRESS_OPTIONS_H_
#define LETHE_TOOLS_STRESS_STRESS_OPTIONS_H_

#include <string>
#include <vector>

namespace lethe::stress {

struct StressOptions {
  std::string pages_dir;  // empty: the sample site the build generated
  int page_count = 0;     // 0: every page found (29 on the sample site)
  int window_count = 30;
  int cycle_count = 11;
  int scale = 1;
  double idle_seconds = 300;
  bool real_time = false;
  std::string out_dir = "lethe-stress-out";
  bool progress = true;
  bool require_heap_targets = false;  // exit 1 when a heap figure misses its target
  bool help = false;
  // --serve
  std::string serve_socket;
  bool serve_baseline = false;
  int pressure_ongoing_ms = 0;  // --pressure-ongoing-ms: serve mode's ongoing window (0: default)
  int churn_ms = 0;  // --churn-ms: serve mode reloads every page every N ms (0: off)
  bool serve_browse = false;  // --browse: serve mode browses page after page, as the measured run
  // --child (internal)
  std::string child_run;  // "baseline" or "lethe"
  std::string result_path;
  std::string trace_path;
  int progress_fd = -1;
};

// Returns "" or a message for a person ("--windows needs a whole number >= 1, not 'x'").
std::string ParseStressArgs(const std::vector<std::string>& args, StressOptions* options);

// The flags a child needs to repeat the parent's workload (pages, counts, times).
std::vector<std::string> WorkloadArgs(const StressOptions& options);

// The page files to cycle: HTML pages (*.html, sorted) in DIR or DIR/pages, else page descriptions
// (*.json), else the images (*.png, *.jpg, *.jpeg, *.gif, sorted) in DIR, each one page. page_count > 0 takes the first N
// (repeating the list when it is shorter); the list is then repeated `scale` times.
// Returns "" or why no pages were found.
std::string ListPages(const std::string& directory, int page_count, int scale,
                      std::vector<std::string>* pages);

// ListPages on --pages, or on the sample site the build generated when it is not given.
std::string ResolvePages(const StressOptions& options, std::vector<std::string>* pages);

// Cycles and loads of a run after --scale: cycles x K over (pages x K).
inline int TotalCycles(const StressOptions& options) { return options.cycle_count * options.scale; }

std::string UsageText();

}  // namespace lethe::stress

#endif  // LETHE_TOOLS_STRESS_STRESS_OPTIONS_H_
