// One configuration's run, in a process of its own (see stress_run.h): the workload and the
// sampling. Also the --serve mode, which shares the page loading.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdio>
#include <deque>
#include <iostream>

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

int RunStressChild(const StressOptions& options, const BinaryInfo& binary) {
  std::vector<std::string> pages;
  if (std::string error = ResolvePages(options, &pages); !error.empty()) {
    std::cerr << "lethe-stress: " << error << "\n";
    return 2;
  }
  const bool lethe = options.child_run == "lethe";
  TargetOptions target_options;
  target_options.expiration_enabled = lethe;
  target_options.simulated_time = !options.real_time;
  if (!options.trace_path.empty()) target_options.trace_path = EngineTracePath(options.trace_path);
  std::string error;
  std::unique_ptr<StressTarget> target = CreateStressTarget(target_options, &error);
  if (target == nullptr) {
    std::cerr << "lethe-stress (" << options.child_run << "): " << error << "\n";
    return 1;
  }
  Sampler sampler(*target, options.child_run, DetectHeapSource(binary.malloc_replaced));
  const int page_count = static_cast<int>(pages.size());
  const int window_limit = options.window_count * options.scale;
  const int load_count = page_count * TotalCycles(options);
  std::deque<int> windows;
  sampler.Take("load", 0, 0, 0);
  for (int load = 0; load < load_count; ++load) {
    int id = 0;
    const std::string& page = pages[static_cast<size_t>(load % page_count)];
    if (std::string failure = LoadPage(*target, page, target_options.viewport_height, Pace::kTimed, &id);
        !failure.empty()) {
      std::cerr << "lethe-stress (" << options.child_run << "): " << failure << "\n";
      return 2;
    }
    windows.push_back(id);
    sampler.Event("window open", page);
    if (static_cast<int>(windows.size()) > window_limit) {
      target->CloseWindow(windows.front());
      windows.pop_front();
      sampler.Event("window close");
    }
    sampler.Take("load", load + 1, (load + 1) / page_count, static_cast<int>(windows.size()));
    ReportProgress(options.progress_fd);
  }
  while (windows.size() > 1) {
    target->CloseWindow(windows.front());
    windows.pop_front();
  }
  sampler.Event("all windows but one closed");
  target->RunFor(std::chrono::milliseconds(0));
  sampler.Take("close", load_count, load_count / page_count, 1);
  const auto idle = std::chrono::duration_cast<Clock::Duration>(
      std::chrono::duration<double>(options.idle_seconds));
  for (Clock::Duration idled{0}; idled < idle;) {
    const Clock::Duration step = std::min<Clock::Duration>(kIdleSamplePeriod, idle - idled);
    target->RunFor(step);
    idled += step;
    sampler.Take("idle", load_count, load_count / page_count, 1);
  }
  if (std::string failure = WriteCsvFile(options.result_path, sampler.samples()); !failure.empty()) {
    std::cerr << "lethe-stress (" << options.child_run << "): " << failure << "\n";
    return 1;
  }
  if (!options.trace_path.empty() && !sampler.trace().Write(options.trace_path, &error)) {
    std::cerr << "lethe-stress (" << options.child_run << "): " << error << "\n";
    return 1;
  }
  // The parent prints what ran where: the target and the allocator of each configuration.
  std::cout << options.child_run << ": " << target->Description() << "; heap from "
            << HeapSourceName(DetectHeapSource(binary.malloc_replaced)) << ", lethe_* on "
            << lethe_allocator_name() << ", malloc " << (binary.malloc_replaced ? "Lethe's" : "the system's")
            << "\n";
  return 0;
}

int RunStressServe(const StressOptions& options, const BinaryInfo& binary) {
  (void)binary;
  std::vector<std::string> pages;
  if (std::string error = ResolvePages(options, &pages); !error.empty()) {
    std::cerr << "lethe-stress: " << error << "\n";
    return 2;
  }
  // Block the stop signals before any thread starts, so that only the signalfd sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  const int stop_fd = signalfd(-1, &stop_signals, SFD_CLOEXEC | SFD_NONBLOCK);
  if (stop_fd < 0) {
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
    close(stop_fd);
    return 2;
  }
  // Every page once, through at most --windows windows, without the pauses of a timed run.
  std::deque<int> windows;
  for (const std::string& page : pages) {
    int id = 0;
    if (std::string failure = LoadPage(*target, page, target_options.viewport_height, Pace::kAtOnce, &id);
        !failure.empty()) {
      std::cerr << "lethe-stress: " << failure << "\n";
      close(stop_fd);
      return 2;
    }
    windows.push_back(id);
    if (static_cast<int>(windows.size()) > options.window_count) {
      target->CloseWindow(windows.front());
      windows.pop_front();
    }
  }
  EventLoop& loop = target->Loop();
  bool stop = false;
  EventLoop::WatchId watch = loop.WatchFd(stop_fd, POLLIN, [&loop, &stop](short) {
    stop = true;
    loop.Quit();
  });
  // The first line on stdout says the engine is ready (tests block on it instead of sleeping).
  std::cout << "serving " << options.serve_socket << " (pid " << getpid() << ", "
            << windows.size() << " windows, " << (options.serve_baseline ? "baseline" : "lethe")
            << ")" << std::endl;
  // --churn-ms: keep browsing while serving: every N ms, one burst that loads every page again
  // (new windows, the oldest closed), then quiet until the next burst. The caches fill up again
  // between the pressure events of repeated trials, and lethe-pressure measures in the quiet.
  // The bursts run between RunFor calls, never inside a loop callback (the engine runs its loop
  // while it waits for decodes, and a loop does not nest).
  std::string churn_error;
  if (options.churn_ms <= 0) loop.Run();
  while (options.churn_ms > 0 && !stop) {
    target->RunFor(std::chrono::milliseconds(options.churn_ms));
    for (size_t i = 0; i < pages.size() && !stop && churn_error.empty(); ++i) {
      int id = 0;
      churn_error = LoadPage(*target, pages[i], target_options.viewport_height, Pace::kAtOnce, &id);
      windows.push_back(id);
      if (static_cast<int>(windows.size()) > options.window_count) {
        target->CloseWindow(windows.front());
        windows.pop_front();
      }
    }
    if (!churn_error.empty()) break;
  }
  loop.UnwatchFd(watch);
  close(stop_fd);
  if (!churn_error.empty()) {
    std::cerr << "lethe-stress: " << churn_error << "\n";
    return 1;
  }
  return 0;
}

}  // namespace lethe::stress
