// The parent of a lethe-stress run (see stress_run.h): one child process per configuration, so
// that each starts from a fresh address space and its RSS is its own; results come back as files.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "progress_bar.h"
#include "stress_chart.h"
#include "stress_figures.h"
#include "stress_run.h"

namespace lethe::stress {

namespace {

struct ChildRun {
  std::string name;    // "baseline" or "lethe"
  std::string binary;  // which executable runs it
};

// Starts `argv` with a pipe on which the child writes one byte per load; draws the progress bar
// from it; returns the child's exit code (or 1 when it could not start or died of a signal).
int RunChildProcess(const std::vector<std::string>& argv, const std::string& label, int load_count,
                    bool progress) {
  int progress_pipe[2];
  if (pipe2(progress_pipe, O_CLOEXEC) != 0) {
    std::cerr << "lethe-stress: pipe: " << std::strerror(errno) << "\n";
    return 1;
  }
  std::vector<std::string> args = argv;
  args.insert(args.end(), {"--progress-fd", std::to_string(progress_pipe[1])});
  std::vector<char*> c_args;
  for (std::string& arg : args) c_args.push_back(arg.data());
  c_args.push_back(nullptr);
  std::cout.flush();
  const pid_t pid = fork();
  if (pid < 0) {
    std::cerr << "lethe-stress: fork: " << std::strerror(errno) << "\n";
    close(progress_pipe[0]);
    close(progress_pipe[1]);
    return 1;
  }
  if (pid == 0) {
    fcntl(progress_pipe[1], F_SETFD, 0);  // the write end survives exec
    execv(c_args[0], c_args.data());
    const char message[] = "lethe-stress: cannot start the child binary\n";
    ssize_t ignored = write(STDERR_FILENO, message, sizeof(message) - 1);
    (void)ignored;
    _exit(127);
  }
  close(progress_pipe[1]);
  ProgressBar bar(label, load_count, progress);
  int done = 0;
  char buffer[256];
  while (true) {
    ssize_t got = read(progress_pipe[0], buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += static_cast<int>(got);
    bar.Update(done);
  }
  bar.Finish();
  close(progress_pipe[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  std::cerr << "lethe-stress: the " << label << " child died of signal " << WTERMSIG(status) << "\n";
  return 1;
}

}  // namespace

namespace {

// Writes stress.csv and stress.svg and prints the figures. Returns the exit code.
int WriteResults(const StressOptions& options, int page_count, const std::vector<StressSample>& baseline,
                 const std::vector<StressSample>& lethe) {
  namespace fs = std::filesystem;
  const int cycle_count = TotalCycles(options);
  std::vector<StressSample> all = baseline;
  all.insert(all.end(), lethe.begin(), lethe.end());
  const std::string csv_path = (fs::path(options.out_dir) / "stress.csv").string();
  const std::string svg_path = (fs::path(options.out_dir) / "stress.svg").string();
  ChartInput chart;
  chart.title = "lethe-stress: RSS and heap over " + std::to_string(page_count * cycle_count) +
                " page loads, " + std::to_string(options.window_count * options.scale) + " windows";
  chart.load_count = page_count * cycle_count;
  chart.pages_per_cycle = page_count;
  chart.baseline = baseline;
  chart.lethe = lethe;
  StressFigures figures;
  StressFigures heap;
  std::string error = WriteCsvFile(csv_path, all);
  if (error.empty()) error = WriteStressChart(svg_path, chart);
  if (error.empty()) error = ComputeFigures(baseline, lethe, cycle_count, &figures);
  if (!error.empty()) {
    std::cerr << "lethe-stress: " << error << "\n";
    return 1;
  }
  // The heap figures need a heap statistic; a sanitizer's malloc reports none (mallinfo2 is 0),
  // which is a build that cannot measure them, not a failed run.
  const std::string heap_error =
      ComputeFigures(baseline, lethe, cycle_count, &heap, Metric::kHeap);
  PrintFigures(std::cout, figures);
  std::cout << "targets: " << (TargetsMet(figures) ? "all met" : "NOT all met") << "\n";
  const bool heap_met = heap_error.empty() && TargetsMet(heap);
  if (heap_error.empty()) {
    PrintHeapFigures(std::cout, heap);
    std::cout << "heap targets: " << (heap_met ? "all met" : "NOT all met") << "\n";
  } else {
    std::cout << "heap: not measured in this build (" << heap_error << ")\n";
    std::cout << "heap targets: not checked\n";
  }
  PrintRegret(std::cout, figures.lethe);
  std::cout << "wrote " << csv_path << ", " << svg_path
            << ", trace-{baseline,lethe}.json (samples) and trace-{baseline,lethe}.engine.json (the "
               "engine's own: discards, pressure, windows) in "
            << options.out_dir << "\n";
  if (options.require_heap_targets && !heap_met) {
    std::cerr << "lethe-stress: --require-heap-targets: a heap target is not met\n";
    return 1;
  }
  return 0;
}

}  // namespace

int RunStressParent(const StressOptions& options, const BinaryInfo& binary) {
  namespace fs = std::filesystem;
  std::vector<std::string> pages;
  // Validate the pages here so that a bad --pages is one message, not one per child.
  if (std::string error = ResolvePages(options, &pages); !error.empty()) {
    std::cerr << "lethe-stress: " << error << "\n";
    return 2;
  }
  std::error_code fs_error;
  fs::create_directories(options.out_dir, fs_error);
  if (!fs::is_directory(options.out_dir, fs_error)) {
    std::cerr << "lethe-stress: --out: cannot create " << options.out_dir << "\n";
    return 2;
  }
  const fs::path self_dir = fs::path(binary.self_path).parent_path();
  const ChildRun runs[] = {{"baseline", (self_dir / "lethe-stress-baseline").string()},
                           {"lethe", binary.self_path}};
  for (const ChildRun& run : runs) {
    if (access(run.binary.c_str(), X_OK) != 0) {
      std::cerr << "lethe-stress: cannot run the " << run.name << " binary " << run.binary
                << " (it is built beside lethe-stress)\n";
      return 2;
    }
  }
  const int page_count = static_cast<int>(pages.size());
  const int load_count = page_count * TotalCycles(options);
  std::cout << "lethe-stress: " << page_count << " pages x " << TotalCycles(options) << " cycles = "
            << load_count << " loads through " << options.window_count * options.scale
            << " windows, then all but one closed and " << options.idle_seconds << " s of "
            << (options.real_time ? "real" : "simulated") << " idle\n";

  std::vector<StressSample> samples[2];
  for (size_t i = 0; i < 2; ++i) {
    const ChildRun& run = runs[i];
    const std::string result = (fs::path(options.out_dir) / ("samples-" + run.name + ".csv")).string();
    const std::string trace = (fs::path(options.out_dir) / ("trace-" + run.name + ".json")).string();
    std::vector<std::string> argv = {run.binary, "--child", run.name, "--result", result,
                                     "--trace", trace};
    for (const std::string& arg : WorkloadArgs(options)) argv.push_back(arg);
    const int status = RunChildProcess(argv, run.name, load_count, options.progress);
    if (status != 0) {
      std::cerr << "lethe-stress: the " << run.name << " run failed (exit " << status << ")\n";
      return status == 2 ? 2 : 1;
    }
    if (std::string error = ReadCsvFile(result, &samples[i]); !error.empty()) {
      std::cerr << "lethe-stress: " << error << "\n";
      return 1;
    }
  }
  return WriteResults(options, page_count, samples[0], samples[1]);
}

int StressMain(int argc, char** argv, bool malloc_replaced) {
  StressOptions options;
  std::string error = ParseStressArgs(std::vector<std::string>(argv + 1, argv + argc), &options);
  if (!error.empty()) {
    std::cerr << "lethe-stress: " << error << "\n" << UsageText();
    return 2;
  }
  if (options.help) {
    std::cout << UsageText();
    return 0;
  }
  BinaryInfo binary;
  binary.malloc_replaced = malloc_replaced;
  std::error_code fs_error;
  binary.self_path = std::filesystem::read_symlink("/proc/self/exe", fs_error).string();
  if (!options.child_run.empty()) return RunStressChild(options, binary);
  if (!options.serve_socket.empty()) return RunStressServe(options, binary);
  return RunStressParent(options, binary);
}

}  // namespace lethe::stress
