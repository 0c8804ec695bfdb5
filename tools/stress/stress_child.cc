// One configuration's run, in a process of its own (see stress_run.h): the workload and the
// sampling. Also the --serve mode, which shares the page loading.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdio>
#include <deque>
#include <filesystem>
#include <iostream>
#include <limits>

#include "lethe/trace_recorder.h"
#include "process_memory.h"
#include "stress_run.h"
#include "stress_target.h"

namespace lethe::stress {

namespace {

using std::chrono::milliseconds;

// Engine time spent per step of a load. On simulated time these cost nothing real; they set how
// quickly background windows age relative to loads (about 3 simulated seconds per load).
constexpr milliseconds kLoadTime{300};
constexpr milliseconds kScrollStepTime{200};
constexpr milliseconds kDwellTime{1000};
constexpr milliseconds kIdleSamplePeriod{10000};

class Sampler {
 public:
  Sampler(StressTarget& target, std::string run, HeapSource heap_source)
      : target_(target), run_(std::move(run)), heap_source_(heap_source), trace_("lethe-stress " + run_) {}

  void Take(const char* phase, int load, int cycle, int windows) {
    StressSample sample;
    sample.run = run_;
    sample.phase = phase;
    sample.load = load;
    sample.cycle = cycle;
    sample.windows = windows;
    sample.time_s = target_.NowSeconds();
    ProcessMemory memory;
    std::string ignored;
    if (ReadProcessMemory(0, &memory, &ignored)) {
      sample.rss_bytes = memory.rss_bytes;
      sample.resident_unique_bytes = memory.resident_unique_bytes;
    }
    sample.heap_allocated_bytes = HeapAllocatedBytes(heap_source_);
    sample.cache_bytes = target_.Caches();
    sample.regret = target_.Regret();
    const auto at = Now();
    trace_.Counter("memory", at,
                   {{"rss_bytes", static_cast<int64_t>(sample.rss_bytes)},
                    {"heap_allocated_bytes", static_cast<int64_t>(sample.heap_allocated_bytes)}});
    std::vector<std::pair<std::string, int64_t>> caches;
    for (size_t i = 0; i < kCacheNames.size(); ++i) {
      caches.emplace_back(std::string(kCacheNames[i]) + "_bytes",
                          static_cast<int64_t>(sample.cache_bytes[i]));
    }
    trace_.Counter("caches", at, caches);
    samples_.push_back(std::move(sample));
  }

  void Event(const std::string& name, const std::string& detail = "") {
    trace_.Instant(name, Now(), detail.empty() ? std::vector<std::pair<std::string, std::string>>{}
                                               : std::vector<std::pair<std::string, std::string>>{{"detail", detail}});
  }

  const std::vector<StressSample>& samples() const { return samples_; }
  const TraceRecorder& trace() const { return trace_; }

 private:
  TraceRecorder::Micros Now() const {
    return std::chrono::duration_cast<TraceRecorder::Micros>(
        std::chrono::duration<double>(target_.NowSeconds()));
  }

  StressTarget& target_;
  std::string run_;
  HeapSource heap_source_;
  TraceRecorder trace_;
  std::vector<StressSample> samples_;
};

void ReportProgress(int fd) {
  if (fd < 0) return;
  const char tick = '.';
  ssize_t ignored = write(fd, &tick, 1);
  (void)ignored;
}

// One load: a new window, the page, scrolling it top to bottom, a pause. Returns "" or an error.
// How LoadPage lets engine time pass between its steps.
enum class Pace {
  kTimed,   // the workload's pauses (the measured runs)
  kAtOnce,  // no pauses; the loop only runs what is ready (serve mode, on real time)
};

std::string LoadPage(StressTarget& target, const std::string& page, int viewport_height, Pace pace,
                     int* window_id) {
  auto run_for = [&](Clock::Duration duration) {
    target.RunFor(pace == Pace::kTimed ? duration : Clock::Duration(0));
  };
  *window_id = target.OpenWindow();
  if (std::string error = target.Navigate(*window_id, page); !error.empty()) return error;
  run_for(kLoadTime);
  target.DrawFrame();
  const int step = viewport_height * 3 / 4;
  const int bottom = target.PageHeight(*window_id) - viewport_height;
  for (int y = step; y < bottom + step; y += step) {
    target.ScrollTo(*window_id, std::min(y, std::max(0, bottom)));
    run_for(kScrollStepTime);
    target.DrawFrame();
  }
  run_for(kDwellTime);
  return "";
}

}  // namespace

std::string EngineTracePath(const std::string& trace_path) {
  const std::string suffix = ".json";
  std::string base = trace_path;
  if (base.size() > suffix.size() && base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0) {
    base.resize(base.size() - suffix.size());
  }
  return base + ".engine.json";
}

std::string TerminalReportPath(const StressOptions& options) {
  const std::filesystem::path result(options.result_path);
  return (result.parent_path() / ("memory-report-" + options.child_run + ".json.gz")).string();
}

namespace {

// The cycling: a new window per load, the oldest closed beyond the limit, a sample after each load.
// Returns "" or why a page failed to load.
std::string RunCycling(StressTarget& target, Sampler& sampler, const std::vector<std::string>& pages,
                       const StressOptions& options, std::deque<int>* windows) {
  const int page_count = static_cast<int>(pages.size());
  const int window_limit = options.window_count * options.scale;
  const int load_count = page_count * TotalCycles(options);
  const int viewport_height = TargetOptions{}.viewport_height;
  sampler.Take("load", 0, 0, 0);
  for (int load = 0; load < load_count; ++load) {
    int id = 0;
    const std::string& page = pages[static_cast<size_t>(load % page_count)];
    if (std::string failure = LoadPage(target, page, viewport_height, Pace::kTimed, &id); !failure.empty()) {
      return failure;
    }
    windows->push_back(id);
    sampler.Event("window open", page);
    if (static_cast<int>(windows->size()) > window_limit) {
      target.CloseWindow(windows->front());
      windows->pop_front();
      sampler.Event("window close");
    }
    sampler.Take("load", load + 1, (load + 1) / page_count, static_cast<int>(windows->size()));
    ReportProgress(options.progress_fd);
  }
  return "";
}

// All windows but the newest closed, then the idle, sampled every kIdleSamplePeriod.
void CloseAllButOneAndIdle(StressTarget& target, Sampler& sampler, int load_count, int cycle_count,
                           double idle_seconds, std::deque<int>* windows) {
  while (windows->size() > 1) {
    target.CloseWindow(windows->front());
    windows->pop_front();
  }
  sampler.Event("all windows but one closed");
  target.RunFor(Clock::Duration(0));
  sampler.Take("close", load_count, cycle_count, 1);
  const auto idle = std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(idle_seconds));
  for (Clock::Duration idled{0}; idled < idle;) {
    const Clock::Duration step = std::min<Clock::Duration>(kIdleSamplePeriod, idle - idled);
    target.RunFor(step);
    idled += step;
    sampler.Take("idle", load_count, cycle_count, 1);
  }
}

}  // namespace

int RunStressChild(const StressOptions& options, const BinaryInfo& binary) {
  const std::string prefix = "lethe-stress (" + options.child_run + "): ";
  std::vector<std::string> pages;
  if (std::string error = ResolvePages(options, &pages); !error.empty()) {
    std::cerr << "lethe-stress: " << error << "\n";
    return 2;
  }
  TargetOptions target_options;
  target_options.expiration_enabled = options.child_run == "lethe";
  target_options.simulated_time = !options.real_time;
  if (!options.trace_path.empty()) target_options.trace_path = EngineTracePath(options.trace_path);
  std::string error;
  std::unique_ptr<StressTarget> target = CreateStressTarget(target_options, &error);
  if (target == nullptr) {
    std::cerr << prefix << error << "\n";
    return 1;
  }
  const HeapSource heap_source = DetectHeapSource(binary.malloc_replaced);
  Sampler sampler(*target, options.child_run, heap_source);
  std::deque<int> windows;
  if (std::string failure = RunCycling(*target, sampler, pages, options, &windows); !failure.empty()) {
    std::cerr << prefix << failure << "\n";
    return 2;
  }
  CloseAllButOneAndIdle(*target, sampler, static_cast<int>(pages.size()) * TotalCycles(options),
                        TotalCycles(options), options.idle_seconds, &windows);
  // What holds the heap at the end: the engine's own report, beside the samples.
  if (std::string failure = target->ReportMemory(TerminalReportPath(options)); !failure.empty()) {
    std::cerr << prefix << failure << "\n";
    return 1;
  }
  if (std::string failure = WriteCsvFile(options.result_path, sampler.samples()); !failure.empty()) {
    std::cerr << prefix << failure << "\n";
    return 1;
  }
  if (!options.trace_path.empty() && !sampler.trace().Write(options.trace_path, &error)) {
    std::cerr << prefix << error << "\n";
    return 1;
  }
  // The parent prints what ran where: the target and the allocator of each configuration.
  std::cout << options.child_run << ": " << target->Description() << "; heap from "
            << HeapSourceName(heap_source) << ", lethe_* on " << lethe_allocator_name() << ", malloc "
            << (binary.malloc_replaced ? "Lethe's" : "the system's") << "\n";
  return 0;
}

namespace {

// SIGTERM and SIGINT as a readable fd: blocked first (before any engine thread starts, so that
// threads inherit the mask), then read through a signalfd the loop watches.
class StopSignals {
 public:
  StopSignals() {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGTERM);
    sigaddset(&signals_, SIGINT);
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
    fd_ = signalfd(-1, &signals_, SFD_CLOEXEC | SFD_NONBLOCK);
  }
  ~StopSignals() {
    if (fd_ >= 0) close(fd_);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  int fd() const { return fd_; }

 private:
  sigset_t signals_;
  int fd_ = -1;
};

// Loads pages[first], pages[first + 1], ... (wrapping) into new windows at `pace`, closing the
// oldest beyond `window_limit`, `count` loads or until *stop. Returns "" or why a page failed.
std::string LoadInNewWindows(StressTarget& target, const std::vector<std::string>& pages,
                             size_t count, Pace pace, int window_limit, const bool* stop,
                             std::deque<int>* windows) {
  for (size_t load = 0; load < count && !*stop; ++load) {
    int id = 0;
    std::string failure = LoadPage(target, pages[load % pages.size()],
                                   TargetOptions{}.viewport_height, pace, &id);
    if (!failure.empty()) return failure;
    windows->push_back(id);
    if (static_cast<int>(windows->size()) > window_limit) {
      target.CloseWindow(windows->front());
      windows->pop_front();
    }
  }
  return "";
}

// Every page once at full speed (the loop only runs what is ready).
std::string LoadAll(StressTarget& target, const std::vector<std::string>& pages, int window_limit,
                    const bool* stop, std::deque<int>* windows) {
  return LoadInNewWindows(target, pages, pages.size(), Pace::kAtOnce, window_limit, stop, windows);
}

// --browse: the measured run's cycling on real time (LoadPage's pauses run the loop, which answers
// the control socket), until a stop signal.
std::string Browse(StressTarget& target, const std::vector<std::string>& pages, int window_limit,
                   const bool* stop, std::deque<int>* windows) {
  return LoadInNewWindows(target, pages, std::numeric_limits<size_t>::max(), Pace::kTimed,
                          window_limit, stop, windows);
}

}  // namespace

int RunStressServe(const StressOptions& options, const BinaryInfo& /*binary*/) {
  std::vector<std::string> pages;
  if (std::string error = ResolvePages(options, &pages); !error.empty()) {
    std::cerr << "lethe-stress: " << error << "\n";
    return 2;
  }
  StopSignals stop_signals;
  if (stop_signals.fd() < 0) {
    std::perror("lethe-stress: signalfd");
    return 1;
  }
  TargetOptions target_options;
  target_options.expiration_enabled = !options.serve_baseline;
  target_options.simulated_time = false;  // a server answers in real time
  target_options.control_socket_path = options.serve_socket;
  target_options.pressure_ongoing_window = std::chrono::milliseconds(options.pressure_ongoing_ms);
  std::string error;
  std::unique_ptr<StressTarget> target = CreateStressTarget(target_options, &error);
  if (target == nullptr) {
    std::cerr << "lethe-stress: " << error << "\n";
    return 2;
  }
  bool stop = false;
  std::deque<int> windows;
  // --browse starts from nothing and browses; the other modes start with every page loaded.
  if (std::string failure =
          options.serve_browse ? "" : LoadAll(*target, pages, options.window_count, &stop, &windows);
      !failure.empty()) {
    std::cerr << "lethe-stress: " << failure << "\n";
    return 2;
  }
  EventLoop& loop = target->Loop();
  const EventLoop::WatchId watch = loop.WatchFd(stop_signals.fd(), POLLIN, [&loop, &stop](short) {
    stop = true;
    loop.Quit();
  });
  // The first line on stdout says the engine is ready (tests block on it instead of sleeping).
  std::cout << "serving " << options.serve_socket << " (pid " << getpid() << ", "
            << windows.size() << " windows, " << (options.serve_baseline ? "baseline" : "lethe")
            << ")" << std::endl;
  // --churn-ms: keep browsing while serving: every N ms, one burst that loads every page again,
  // then quiet until the next burst, so that the caches fill up again between the pressure events
  // of repeated trials and lethe-pressure measures in the quiet. The bursts run between RunFor
  // calls, never inside a loop callback (the engine runs its loop while it waits for decodes, and
  // a loop does not nest).
  std::string churn_error;
  if (options.serve_browse) churn_error = Browse(*target, pages, options.window_count, &stop, &windows);
  if (options.churn_ms <= 0 && !options.serve_browse) loop.Run();
  while (options.churn_ms > 0 && !stop && churn_error.empty()) {
    target->RunFor(std::chrono::milliseconds(options.churn_ms));
    churn_error = LoadAll(*target, pages, options.window_count, &stop, &windows);
  }
  loop.UnwatchFd(watch);
  if (!churn_error.empty()) {
    std::cerr << "lethe-stress: " << churn_error << "\n";
    return 1;
  }
  return 0;
}

}  // namespace lethe::stress
