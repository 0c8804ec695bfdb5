// tools/stress/stress_run.h — the two halves of lethe-stress:
//   RunStressParent  parses nothing: given options, starts one child process per configuration
//                    (the baseline binary, then this one), shows progress, reads their samples
//                    back from files, writes the CSV, the SVG chart, and prints the figures;
//   RunStressChild   one configuration in this process: the page-cycling workload on a target,
//                    sampling memory after every load and through the idle, results to a file;
//   RunStressServe   loads the pages once, then serves the control socket until SIGTERM/SIGINT.
// Each returns the process exit code (0 ok, 1 the run failed, 2 bad input).
// Threads: the calling (main) thread only.
#ifndef LETHE_TOOLS_STRESS_STRESS_RUN_H_
#define LETHE_TOOLS_STRESS_STRESS_RUN_H_

#include <string>

#include "stress_options.h"

namespace lethe::stress {

// How this binary was linked: whether malloc itself is Lethe's (lethe-stress) or glibc's
// (lethe-stress-baseline), so that heap figures are read from the allocator that serves them.
struct BinaryInfo {
  bool malloc_replaced = false;
  std::string self_path;  // /proc/self/exe, to find the sibling binaries
};

int RunStressParent(const StressOptions& options, const BinaryInfo& binary);
int RunStressChild(const StressOptions& options, const BinaryInfo& binary);
int RunStressServe(const StressOptions& options, const BinaryInfo& binary);

// Where the Engine writes its own trace beside the sampler's: "x/trace-lethe.json" ->
// "x/trace-lethe.engine.json".
std::string EngineTracePath(const std::string& trace_path);

// Where a child writes the engine's memory report at the end of its idle (beside its samples):
// "out/memory-report-lethe.json.gz".
std::string TerminalReportPath(const StressOptions& options);

// The shared main of lethe-stress and lethe-stress-baseline.
int StressMain(int argc, char** argv, bool malloc_replaced);

}  // namespace lethe::stress

#endif  // LETHE_TOOLS_STRESS_STRESS_RUN_H_
