// lethe-browse — the example app an embedder reads first: an Engine with tabs, pages, scrolling,
// back/forward and screenshots, driven by a script of actions on the command line, run in order.
//
//   lethe-browse [OPTIONS] ACTION...
//   options:  --viewport WxH  --threads N  --simulated  --baseline  --trace PATH  --control PATH
//             --disk-cache PATH  --quiet
//   actions:  --open  --load PAGE|IMAGE  --tab N  --close  --scroll-to Y  --scroll-by DY  --back
//             --forward  --run SECONDS  --wait-decodes  --draw  --screenshot PATH  --report PATH
//             --pressure moderate|critical  --stats  --serve  --time-pages DIR
//
// Example (the sample site the build generates):
//   lethe-browse --simulated --load site/pages/page-01.html --scroll-by 1200 --screenshot a.png
//       --open --load site/pages/page-02.html --tab 1 --run 30 --stats --report memory.json
//
// --time-pages loads every HTML page of DIR (or DIR/pages) in turn in the current window and prints
// per page the real time of the load (parse, styles, layout, images found) and of the first paint,
// the document's bytes, then the median and the worst of each.
// --wait-decodes draws a frame (drawing asks for the visible images) and waits for the decode
// pool, so that a following --screenshot shows decoded images rather than placeholders.
// --load opens a window when none is open; --tab N brings the N-th open window to the foreground
// (and later actions apply to it); --serve runs the loop until SIGINT/SIGTERM, for lethe-pressure
// through --control. Every action prints one line; the exit status is 0, 1 when an action failed,
// 2 for a bad command line.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "lethe/engine.h"
#include "lethe/window.h"

namespace {

struct Action {
  std::string name;
  std::string value;
};

struct Arguments {
  lethe::EngineOptions options;
  std::vector<Action> actions;
  bool quiet = false;
};

constexpr const char* kUsage =
    "usage: lethe-browse [--viewport WxH] [--threads N] [--simulated] [--baseline] [--trace PATH]\n"
    "                    [--control PATH] [--disk-cache PATH] [--quiet] ACTION...\n"
    "actions: --open --load PATH --tab N --close --scroll-to Y --scroll-by DY --back --forward\n"
    "         --run SECONDS --wait-decodes --draw --screenshot PATH --report PATH\n"
    "         --pressure moderate|critical --stats --serve --time-pages DIR\n";

bool ParseInt(const std::string& text, long low, long high, long* out) {
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < low || value > high) return false;
  *out = value;
  return true;
}

// Returns "" or the problem.
std::string Parse(int argc, char** argv, Arguments* args) {
  static const std::vector<std::string> kNoValue = {"--open",  "--close", "--back", "--forward",
                                                    "--draw",  "--stats", "--serve", "--wait-decodes"};
  static const std::vector<std::string> kValue = {"--load",   "--tab",        "--scroll-to",
                                                  "--scroll-by", "--run",     "--screenshot",
                                                  "--report", "--pressure", "--time-pages"};
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string text;
    long number = 0;
    if (flag == "--simulated") {
      args->options.simulated_time = true;
    } else if (flag == "--baseline") {
      args->options.expiration_enabled = false;
    } else if (flag == "--quiet") {
      args->quiet = true;
    } else if (flag == "--trace" || flag == "--control" || flag == "--disk-cache") {
      if (!value(&text)) return flag + " needs a path";
      std::string& path = flag == "--trace"     ? args->options.trace_path
                          : flag == "--control" ? args->options.control_socket_path
                                                : args->options.disk_cache_path;
      path = text;
    } else if (flag == "--threads") {
      if (!value(&text) || !ParseInt(text, 0, 64, &number)) return "--threads needs 0..64";
      args->options.decode_threads = static_cast<int>(number);
    } else if (flag == "--viewport") {
      long width = 0, height = 0;
      size_t x = 0;
      if (!value(&text) || (x = text.find('x')) == std::string::npos ||
          !ParseInt(text.substr(0, x), 1, 16384, &width) ||
          !ParseInt(text.substr(x + 1), 1, 16384, &height)) {
        return "--viewport needs WIDTHxHEIGHT (1..16384 each)";
      }
      args->options.viewport_width = static_cast<int>(width);
      args->options.viewport_height = static_cast<int>(height);
    } else if (std::find(kNoValue.begin(), kNoValue.end(), flag) != kNoValue.end()) {
      args->actions.push_back({flag, ""});
    } else if (std::find(kValue.begin(), kValue.end(), flag) != kValue.end()) {
      if (!value(&text)) return flag + " needs a value";
      bool number_flag = flag == "--tab" || flag == "--scroll-to" || flag == "--scroll-by";
      if (number_flag && !ParseInt(text, -1000000, 1000000, &number)) return flag + ": not a number: " + text;
      if (flag == "--run" && (std::atof(text.c_str()) < 0 || text.empty())) return "--run needs seconds";
      if (flag == "--pressure" && text != "moderate" && text != "critical") {
        return "--pressure needs moderate or critical";
      }
      args->actions.push_back({flag, text});
    } else {
      return "unknown flag '" + flag + "'";
    }
  }
  if (args->actions.empty()) return "nothing to do: give at least one action";
  for (const Action& action : args->actions) {
    // Simulated time never waits: a served loop would spin instead of listening.
    if (action.name == "--serve" && args->options.simulated_time) return "--serve needs real time";
  }
  return "";
}

volatile std::sig_atomic_t g_stop = 0;
extern "C" void OnSignal(int) { g_stop = 1; }

double Mb(uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

class Browser {
 public:
  Browser(lethe::Engine& engine, bool quiet) : engine_(engine), quiet_(quiet) {}

  // False when the action failed (the script goes on; the exit status says so).
  bool Run(const Action& action) {
    const std::string& name = action.name;
    if (name == "--open") return Open();
    if (name == "--load") return Load(action.value);
    if (name == "--tab") return Tab(std::atol(action.value.c_str()));
    if (name == "--close") return Close();
    if (name == "--scroll-to" || name == "--scroll-by") return Scroll(name, std::atoi(action.value.c_str()));
    if (name == "--back" || name == "--forward") return History(name == "--back");
    if (name == "--run") return RunFor(std::atof(action.value.c_str()));
    if (name == "--wait-decodes") {
      engine_.DrawFrame();  // a draw is what asks for the visible images' decodes
      engine_.WaitForDecodes();
      return Say("decodes finished");
    }
    if (name == "--draw") {
      engine_.DrawFrame();
      return Say("drew a frame");
    }
    if (name == "--screenshot") return Check(engine_.Screenshot(action.value), "screenshot " + action.value);
    if (name == "--report") return Check(engine_.ReportMemory(action.value), "memory report " + action.value);
    if (name == "--pressure") return Pressure(action.value);
    if (name == "--stats") return Stats();
    if (name == "--serve") return Serve();
    if (name == "--time-pages") return TimePages(action.value);
    return false;
  }

 private:
  bool Say(const std::string& line) {
    if (!quiet_) std::printf("%s\n", line.c_str());
    return true;
  }
  bool Fail(const std::string& line) {
    std::fprintf(stderr, "lethe-browse: %s\n", line.c_str());
    return false;
  }
  bool Check(const lethe::Status& status, const std::string& what) {
    return status.ok() ? Say(what) : Fail(status.message());
  }
  lethe::WindowId Current() {
    if (engine_.window(current_) == nullptr) current_ = engine_.foreground_window();
    return current_;
  }

  bool Open() {
    current_ = engine_.OpenWindow();
    return Say("opened window " + std::to_string(engine_.windows().size()));
  }
  bool Load(const std::string& path) {
    if (Current() == 0) Open();
    lethe::Status status = engine_.Navigate(current_, path);
    if (!status.ok()) return Fail(status.message());
    const lethe::Document* document = engine_.window(current_)->document();
    return Say("loaded " + path + " (" + std::to_string(document->images().size()) + " images, " +
               std::to_string(document->broken_images().size()) + " broken)");
  }
  bool Tab(long n) {
    std::vector<lethe::WindowId> windows = engine_.windows();
    if (n < 1 || static_cast<size_t>(n) > windows.size()) {
      return Fail("--tab " + std::to_string(n) + ": " + std::to_string(windows.size()) + " windows open");
    }
    current_ = windows[static_cast<size_t>(n - 1)];
    engine_.SetForegroundWindow(current_);
    return Say("tab " + std::to_string(n) + " in the foreground");
  }
  bool Close() {
    if (Current() == 0) return Fail("--close: no window open");
    engine_.CloseWindow(current_);
    current_ = engine_.foreground_window();
    return Say("closed a window; " + std::to_string(engine_.windows().size()) + " left");
  }
  bool Scroll(const std::string& how, int y) {
    if (Current() == 0) return Fail(how + ": no window open");
    if (how == "--scroll-to") {
      engine_.ScrollTo(current_, y);
    } else {
      engine_.ScrollBy(current_, y);
    }
    return Say("scrolled to " + std::to_string(engine_.window(current_)->scroll_y()));
  }
  bool History(bool back) {
    if (Current() == 0) return Fail("no window open");
    bool moved = back ? engine_.GoBack(current_) : engine_.GoForward(current_);
    if (!moved) return Fail(std::string("cannot go ") + (back ? "back" : "forward"));
    return Say(std::string(back ? "back to " : "forward to ") +
               engine_.window(current_)->history().current()->url);
  }
  bool RunFor(double seconds) {
    engine_.RunFor(std::chrono::duration_cast<lethe::Clock::Duration>(
        std::chrono::duration<double>(seconds)));
    return Say("ran " + std::to_string(seconds) + " s");
  }
  bool Pressure(const std::string& level) {
    lethe::PressureOutcome outcome = engine_.OnMemoryPressure(
        level == "critical" ? lethe::MemoryPressureLevel::kCritical : lethe::MemoryPressureLevel::kModerate);
    char line[160];
    std::snprintf(line, sizeof(line), "pressure %s: freed %.2f MB in %.3f ms%s", level.c_str(),
                  Mb(outcome.freed_bytes),
                  std::chrono::duration<double, std::milli>(outcome.elapsed).count(),
                  outcome.ignored ? " (baseline: ignored)" : "");
    return Say(line);
  }
  bool Stats() {
    lethe::MemorySnapshot m = engine_.Memory();
    char line[320];
    std::snprintf(line, sizeof(line),
                  "memory: decoded %.2f MB (locked %.2f), compressed %.2f MB, bfcache %.2f MB (%zu), "
                  "fonts %.2f MB, words %.2f MB, heap %.2f MB, rss %.2f MB, windows %zu",
                  Mb(m.surfaces_bytes), Mb(m.locked_surfaces_bytes), Mb(m.images_bytes),
                  Mb(m.bfcache_bytes), m.bfcache_document_count, Mb(m.fonts_bytes),
                  Mb(m.shaped_words_bytes), Mb(m.heap_allocated_bytes), Mb(m.resident_bytes),
                  m.window_count);
    return Say(line);
  }
  static std::string Figures(std::vector<double> ms) {
    std::sort(ms.begin(), ms.end());
    char text[64];
    std::snprintf(text, sizeof(text), "median %.2f ms, worst %.2f ms", ms[ms.size() / 2], ms.back());
    return text;
  }
  bool TimePages(const std::string& directory) {
    namespace fs = std::filesystem;
    std::error_code error;
    fs::path dir = fs::is_directory(fs::path(directory) / "pages", error) ? fs::path(directory) / "pages"
                                                                         : fs::path(directory);
    std::vector<std::string> pages;
    for (const auto& entry : fs::directory_iterator(dir, error)) {
      if (entry.path().extension() == ".html") pages.push_back(entry.path().string());
    }
    std::sort(pages.begin(), pages.end());
    if (pages.empty()) return Fail("--time-pages: no *.html in " + dir.string());
    if (Current() == 0) Open();
    std::vector<double> load_ms, paint_ms, total_ms;
    for (const std::string& page : pages) {
      auto start = std::chrono::steady_clock::now();
      lethe::Status status = engine_.Navigate(current_, page);
      auto loaded = std::chrono::steady_clock::now();
      if (!status.ok()) return Fail(status.message());
      engine_.DrawFrame();
      auto painted = std::chrono::steady_clock::now();
      load_ms.push_back(std::chrono::duration<double, std::milli>(loaded - start).count());
      paint_ms.push_back(std::chrono::duration<double, std::milli>(painted - loaded).count());
      total_ms.push_back(load_ms.back() + paint_ms.back());
      char line[256];
      std::snprintf(line, sizeof(line), "%s: load %.2f ms, first paint %.2f ms, document %zu bytes",
                    fs::path(page).filename().c_str(), load_ms.back(), paint_ms.back(),
                    engine_.window(current_)->document()->MemoryBytes());
      Say(line);
    }
    Say(std::to_string(pages.size()) + " pages: load (parse + layout) " + Figures(load_ms) +
        "; first paint " + Figures(paint_ms) + "; both " + Figures(total_ms));
    return true;
  }
  bool Serve() {
    std::signal(SIGINT, OnSignal);
    std::signal(SIGTERM, OnSignal);
    Say("serving until SIGINT/SIGTERM");
    while (!g_stop) engine_.RunFor(std::chrono::milliseconds(200));
    return Say("stopped");
  }

  lethe::Engine& engine_;
  bool quiet_;
  lethe::WindowId current_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Arguments args;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    }
  }
  std::string problem = Parse(argc, argv, &args);
  if (!problem.empty()) {
    std::fprintf(stderr, "lethe-browse: %s\n%s", problem.c_str(), kUsage);
    return 2;
  }
  std::string error;
  std::unique_ptr<lethe::Engine> engine = lethe::Engine::Create(args.options, &error);
  if (engine == nullptr) {
    std::fprintf(stderr, "lethe-browse: %s\n", error.c_str());
    return 1;
  }
  Browser browser(*engine, args.quiet);
  bool ok = true;
  for (const Action& action : args.actions) ok = browser.Run(action) && ok;
  return ok ? 0 : 1;
}
