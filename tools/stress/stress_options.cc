// lethe-stress's command line (see stress_options.h).
#include "stress_options.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#ifndef LETHE_SAMPLE_SITE_DIR
#define LETHE_SAMPLE_SITE_DIR ""
#endif

namespace lethe::stress {

namespace {

bool ParseInt(const std::string& text, int min, int max, int* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || value < min || value > max) return false;
  *out = static_cast<int>(value);
  return true;
}

bool ParseSeconds(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (*end != '\0' || !(value >= 0) || value > 1e7) return false;
  *out = value;
  return true;
}

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

std::string UsageText() {
  return "usage: lethe-stress [--pages DIR] [--page-count N] [--windows N] [--cycles N] [--scale K]\n"
         "                    [--idle SECONDS] [--real-time] [--out DIR] [--no-progress]\n"
         "                    [--require-heap-targets]\n"
         "       lethe-stress --serve SOCKET [--baseline] [--churn-ms N | --browse]\n"
         "                    [--pressure-ongoing-ms N]\n"
         "                    [--pages DIR] [--page-count N] [--windows N]\n"
         "Runs the page-cycling memory test twice, each in a child process (the baseline: no\n"
         "discarding, no expiry, no pressure response, the system allocator; then Lethe's), and\n"
         "writes stress.csv, stress.svg and trace-*.json to --out. Defaults: every page of the\n"
         "sample site (29), 30 windows, 11 cycles, 300 simulated seconds of idle at the end.\n"
         "The figures are printed on RSS and on heap bytes (deterministic on simulated time);\n"
         "--require-heap-targets exits 1 when a heap figure misses its target (what CI checks).\n"
         "--serve loads the pages once (no idle), then answers on the control socket SOCKET\n"
         "(pressure, report, stats) until SIGTERM or SIGINT; --churn-ms N loads every page again every\n"
         "N ms meanwhile (a burst, then quiet), so that the caches refill between pressure events;\n"
         "--browse instead browses as the measured run does, in real time: one page after another\n"
         "(a new window, scrolled, a pause), the oldest window closed beyond --windows, the caches\n"
         "expiring meanwhile: the state of the stress run, for lethe-pressure to measure;\n"
         "--pressure-ongoing-ms N shortens the engine's ongoing-pressure window (default 10 s: a\n"
         "repeat at the same level within it only flushes, without purging the allocator).\n";
}

std::string ParseStressArgs(const std::vector<std::string>& args, StressOptions* options) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    auto value = [&](std::string* out) -> std::string {
      if (i + 1 >= args.size()) return flag + " needs a value";
      *out = args[++i];
      return "";
    };
    auto int_value = [&](int min, int max, int* out) -> std::string {
      std::string text;
      if (std::string missing = value(&text); !missing.empty()) return missing;
      if (!ParseInt(text, min, max, out)) {
        return flag + " needs a whole number in " + std::to_string(min) + ".." +
               std::to_string(max) + ", not '" + text + "'";
      }
      return "";
    };
    std::string error;
    if (flag == "-h" || flag == "--help") options->help = true;
    else if (flag == "--pages") error = value(&options->pages_dir);
    else if (flag == "--page-count") error = int_value(1, 100000, &options->page_count);
    else if (flag == "--windows") error = int_value(1, 10000, &options->window_count);
    else if (flag == "--cycles") error = int_value(1, 100000, &options->cycle_count);
    else if (flag == "--scale") error = int_value(1, 1000, &options->scale);
    else if (flag == "--idle") {
      std::string text;
      error = value(&text);
      if (error.empty() && !ParseSeconds(text, &options->idle_seconds)) {
        error = "--idle needs a number of seconds >= 0, not '" + text + "'";
      }
    } else if (flag == "--real-time") options->real_time = true;
    else if (flag == "--out") error = value(&options->out_dir);
    else if (flag == "--no-progress") options->progress = false;
    else if (flag == "--require-heap-targets") options->require_heap_targets = true;
    else if (flag == "--serve") error = value(&options->serve_socket);
    else if (flag == "--baseline") options->serve_baseline = true;
    else if (flag == "--churn-ms") error = int_value(1, 3600000, &options->churn_ms);
    else if (flag == "--browse") options->serve_browse = true;
    else if (flag == "--pressure-ongoing-ms") error = int_value(1, 3600000, &options->pressure_ongoing_ms);
    else if (flag == "--child") {
      error = value(&options->child_run);
      if (error.empty() && options->child_run != "baseline" && options->child_run != "lethe") {
        error = "--child needs 'baseline' or 'lethe', not '" + options->child_run + "'";
      }
    } else if (flag == "--result") error = value(&options->result_path);
    else if (flag == "--trace") error = value(&options->trace_path);
    else if (flag == "--progress-fd") error = int_value(0, 65535, &options->progress_fd);
    else error = "unknown flag '" + flag + "'";
    if (!error.empty()) return error;
  }
  if ((options->churn_ms > 0 || options->pressure_ongoing_ms > 0) && options->serve_socket.empty()) {
    return "--churn-ms and --pressure-ongoing-ms go with --serve";
  }
  if (options->serve_browse && options->serve_socket.empty()) return "--browse goes with --serve";
  if (options->serve_browse && options->churn_ms > 0) return "--browse and --churn-ms exclude each other";
  if (options->serve_baseline && options->serve_socket.empty()) {
    return "--baseline goes with --serve (a normal run always runs both configurations)";
  }
  if (!options->child_run.empty() && options->result_path.empty()) {
    return "--child needs --result FILE";
  }
  if (options->require_heap_targets && (options->real_time || !options->serve_socket.empty())) {
    return "--require-heap-targets goes with a simulated-time run (not --real-time or --serve)";
  }
  if (options->out_dir.empty()) return "--out needs a directory";
  return "";
}

std::vector<std::string> WorkloadArgs(const StressOptions& options) {
  std::vector<std::string> args = {"--windows", std::to_string(options.window_count),
                                   "--cycles",  std::to_string(options.cycle_count),
                                   "--scale",   std::to_string(options.scale),
                                   "--idle",    std::to_string(options.idle_seconds)};
  if (!options.pages_dir.empty()) args.insert(args.end(), {"--pages", options.pages_dir});
  if (options.page_count > 0) {
    args.insert(args.end(), {"--page-count", std::to_string(options.page_count)});
  }
  if (options.real_time) args.push_back("--real-time");
  return args;
}

std::string ListPages(const std::string& directory, int page_count, int scale,
                      std::vector<std::string>* pages) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(directory, error)) return "--pages: " + directory + " is not a directory";
  auto collect = [&](const fs::path& dir, const std::vector<std::string>& extensions) {
    std::vector<std::string> found;
    std::error_code ignored;
    for (const auto& entry : fs::directory_iterator(dir, ignored)) {
      if (!entry.is_regular_file(ignored)) continue;
      const std::string extension = Lower(entry.path().extension().string());
      if (std::find(extensions.begin(), extensions.end(), extension) != extensions.end()) {
        found.push_back(entry.path().string());
      }
    }
    std::sort(found.begin(), found.end());
    return found;
  };
  // HTML pages first; page descriptions where a folder has no HTML; images last. The generated
  // site keeps index.json beside pages/: prefer the pages.
  const fs::path pages_dir = fs::is_directory(fs::path(directory) / "pages", error)
                                 ? fs::path(directory) / "pages"
                                 : fs::path(directory);
  std::vector<std::string> found = collect(pages_dir, {".html", ".htm"});
  if (found.empty()) found = collect(pages_dir, {".json"});
  if (found.empty()) found = collect(directory, {".png", ".jpg", ".jpeg", ".gif"});
  if (found.empty()) {
    return "--pages: no pages (*.html, *.json) or images (*.png, *.jpg, *.gif) in " + directory;
  }
  std::vector<std::string> chosen = found;
  if (page_count > 0) {
    chosen.clear();
    for (int i = 0; i < page_count; ++i) chosen.push_back(found[static_cast<size_t>(i) % found.size()]);
  }
  pages->clear();
  for (int k = 0; k < scale; ++k) pages->insert(pages->end(), chosen.begin(), chosen.end());
  return "";
}

std::string ResolvePages(const StressOptions& options, std::vector<std::string>* pages) {
  const std::string directory = options.pages_dir.empty() ? LETHE_SAMPLE_SITE_DIR : options.pages_dir;
  if (directory.empty()) return "no --pages given and this build knows no sample site";
  return ListPages(directory, options.page_count, options.scale, pages);
}

}  // namespace lethe::stress
