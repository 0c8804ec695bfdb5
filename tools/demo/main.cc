// lethe-demo — the standalone image-cache demo, on lethe::Engine.
//
//   lethe-demo [DIR] [--out DIR] [--cap-mb N]
//
// By default runs on the project's sample site (the build generates it with tools/sample_site):
// first the decoded bytes of each of its HTML pages (every image at the size drawn, the page
// scrolled top to bottom), then one tab browses its first 3 HTML pages, scrolling each down over a
// simulated minute on the engine's ManualClock: the engine locks the visible images, surfaces that
// scroll away expire (2 x 10 s) and are decoded again when they scroll back, frames are really
// drawn (BGRA, fonts, litehtml layout); then the last page is read and scrolled back up, a critical
// memory-pressure event comes, and the tab goes to the background while the engine idles. Given a
// DIR of images instead, it lays them out as one long page and scrolls that. Prints a progress
// line, then a summary; writes memory-report.json.gz (about:memory; taken just before the pressure
// event, page on screen) and memory-over-time.svg into the output directory (default: the current
// directory).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <variant>
#include <vector>

#include "lethe/alloc.h"
#include "lethe/clock.h"
#include "lethe/decode.h"
#include "lethe/engine.h"
#include "lethe/image_format.h"
#include "lethe/memory_pressure.h"
#include "lethe/memory_reporter.h"
#include "lethe/surface_cache.h"
#include "lethe/window.h"
#include "lethe/document.h"
#include "sample_site.h"
#include "timeline_chart.h"

namespace lethe::demo {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr uint32_t kViewportWidth = 1024;
constexpr uint32_t kViewportHeight = 900;
constexpr uint32_t kGap = 16;
constexpr Clock::Duration kStep = milliseconds(100);
constexpr int kStepsPerDraw = 5;  // a frame every 500 ms of simulated time
// On a generated site the demo browses its first pages (about 40 pictures of every kind, the
// shared ones included); the whole site is lethe-stress's workload.
constexpr int kSitePageCount = 3;
// The figure for a sample page: about 7.5 MB decoded (sample_site.h).
constexpr double kTargetDecodedMbPerPage = 7.5;

struct PageImage {
  std::string path;
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t top = 0;  // page coordinates
  bool animated = false;
  uint64_t full_canvas_bgra_bytes = 0;  // every frame as a 32-bit canvas
  uint64_t decoded_bytes = 0;           // what lethe::decoders holds for it (paletted frames)
};

struct Options {
  std::string directory = LETHE_SAMPLE_SITE_DIR;
  std::string out = ".";
  uint64_t cap_bytes = DefaultSurfaceCacheMaxBytes();
  bool sample_site = true;
};

double Mb(uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

bool ReadFile(const std::filesystem::path& path, std::vector<uint8_t>* bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  bytes->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

EngineOptions MakeEngineOptions(const Options& options) {
  EngineOptions engine;
  engine.simulated_time = true;
  engine.decode_threads = 0;  // deterministic figures: decodes run inside the draw
  engine.pressure_sources = false;  // the demo's one pressure event is its own
  engine.viewport_width = kViewportWidth;
  engine.viewport_height = kViewportHeight;
  engine.surfaces.max_bytes = options.cap_bytes;
  engine.process_name = "lethe-demo";
  engine.log = [](std::string_view line) {
    std::fprintf(stderr, "\nlethe-demo: %.*s\n", static_cast<int>(line.size()), line.data());
  };
  return engine;
}

class Demo {
 public:
  explicit Demo(const Options& options) : options_(options) {}

  int Run() {
    std::error_code site_error;
    // A generated site's root (index.json, images/, pages/): its HTML pages, and the images of its
    // first pages checked one by one (bad files reported, animations measured).
    if (std::filesystem::is_regular_file(options_.directory + "/index.json", site_error) &&
        std::filesystem::is_directory(options_.directory + "/images", site_error)) {
      std::string error;
      if (!sample_site::ImagesOfFirstPages(options_.directory, kSitePageCount, &site_files_, &error)) {
        std::fprintf(stderr, "lethe-demo: %s\n", error.c_str());
        return 1;
      }
      site_pages_ = HtmlPages(options_.directory + "/pages");
      options_.directory += "/images";
    }
    const bool html = !site_pages_.empty();
    std::printf("lethe-demo: %s from %s\ndecoder: %s\n", html ? "HTML pages" : "images",
                html ? std::filesystem::path(site_pages_.front()).parent_path().c_str()
                     : options_.directory.c_str(),
                "lethe::decoders, drawn by lethe::Engine");
    if (html && !MeasurePages()) return 1;
    std::string error;
    engine_ = Engine::Create(MakeEngineOptions(options_), &error);
    if (engine_ == nullptr) {
      std::fprintf(stderr, "lethe-demo: %s\n", error.c_str());
      return 1;
    }
    if (!Load()) return 1;
    start_ = engine_->clock().Now();
    if (html) {
      // One tab browses the first pages, each scrolled down over a minute.
      for (size_t i = 0; i < site_pages_.size() && i < kSitePageCount; ++i) {
        if (!Open(site_pages_[i])) return 1;
        Scroll(std::filesystem::path(site_pages_[i]).stem().c_str(), 0, Bottom(),
               std::chrono::minutes(1));
      }
    } else {
      Scroll("scroll down", 0, Bottom(), std::chrono::minutes(3));
    }
    Scroll("read", scroll_, scroll_, std::chrono::minutes(1));
    Scroll("scroll up", scroll_, 0, std::chrono::minutes(1));
    Pressure();
    Idle(std::chrono::minutes(2));
    std::fprintf(stderr, "\n");
    return Summarize();
  }

 private:
  // The *.html files of `directory`, sorted.
  static std::vector<std::string> HtmlPages(const std::string& directory) {
    std::vector<std::string> pages;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
      if (entry.path().extension() == ".html") pages.push_back(entry.path().string());
    }
    std::sort(pages.begin(), pages.end());
    return pages;
  }

  uint32_t Bottom() const { return page_height_ > kViewportHeight ? page_height_ - kViewportHeight : 0; }

  // Navigates the tab to an HTML page; its height sets the scrolling.
  bool Open(const std::string& page) {
    Status status = engine_->Navigate(tab_, page);
    if (!status.ok()) {
      std::fprintf(stderr, "lethe-demo: %s\n", status.message().c_str());
      return false;
    }
    const Window* window = engine_->window(tab_);
    page_height_ = static_cast<uint32_t>(std::max(0, window->document()->height()));
    scroll_ = 0;
    return true;
  }

  // The decoded bytes of each HTML page: every image at the size drawn, once the page has been
  // scrolled top to bottom, in an engine that discards nothing (the baseline configuration), one
  // window per page, closed after (which drops its surfaces).
  bool MeasurePages() {
    EngineOptions options = MakeEngineOptions(options_);
    options.expiration_enabled = false;
    options.process_name = "lethe-demo-pages";
    std::string error;
    std::unique_ptr<Engine> engine = Engine::Create(options, &error);
    if (engine == nullptr) {
      std::fprintf(stderr, "lethe-demo: %s\n", error.c_str());
      return false;
    }
    std::printf("\nDecoded bytes per HTML page (every image at the size drawn, the page scrolled top "
                "to bottom), MB:\n");
    double sum = 0, least = 0, most = 0;
    for (size_t i = 0; i < site_pages_.size(); ++i) {
      const WindowId id = engine->OpenWindow();
      const uint64_t before = engine->Memory().surfaces_bytes;
      Status status = engine->Navigate(id, site_pages_[i]);
      if (!status.ok()) {
        std::fprintf(stderr, "lethe-demo: %s\n", status.message().c_str());
        return false;
      }
      const int bottom = engine->window(id)->document()->height();
      for (int y = 0;; y += static_cast<int>(kViewportHeight)) {
        engine->ScrollTo(id, y);
        engine->DrawFrame();
        if (y >= bottom) break;
      }
      const double mb = Mb(engine->Memory().surfaces_bytes - before);
      engine->CloseWindow(id);
      sum += mb;
      least = i == 0 ? mb : std::min(least, mb);
      most = std::max(most, mb);
      std::printf("  %s %5.2f%s", std::filesystem::path(site_pages_[i]).stem().c_str(), mb,
                  i % 6 == 5 || i + 1 == site_pages_.size() ? "\n" : "");
    }
    std::printf("  mean %.2f MB over %zu pages (least %.2f, most %.2f; the sample site aims at about "
                "%.1f MB a page)\n",
                sum / static_cast<double>(site_pages_.size()), site_pages_.size(), least, most,
                kTargetDecodedMbPerPage);
    return true;
  }

  bool Load() {
    std::error_code error;
    if (!std::filesystem::is_directory(options_.directory, error)) {
      std::fprintf(stderr, "lethe-demo: %s is not a readable directory\n", options_.directory.c_str());
      return false;
    }
    std::vector<std::filesystem::path> files(site_files_.begin(), site_files_.end());
    for (const auto& entry : std::filesystem::directory_iterator(options_.directory, error)) {
      if (site_files_.empty() && entry.is_regular_file()) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& path : files) LoadOne(path);
    tab_ = engine_->OpenWindow();
    if (!site_pages_.empty()) {
      std::printf("\nchecked the %zu images of the first %d pages (%zu animated), %zu skipped\n",
                  page_.size(), kSitePageCount, animated_count_, skipped_count_);
      return true;
    }
    std::printf("loaded %zu images (%zu animated), %zu skipped; page %u px high\n", page_.size(),
                animated_count_, skipped_count_, page_height_);
    if (page_.empty()) {
      std::fprintf(stderr, "lethe-demo: no image to show\n");
      return false;
    }
    PageDescription page;
    page.title = "lethe-demo";
    page.width = static_cast<int>(kViewportWidth);
    page.height = static_cast<int>(std::max(page_height_, kViewportHeight));
    for (const PageImage& image : page_) {
      page.items.push_back(PageImageItem{image.path, {0, static_cast<int>(image.top),
                                                      static_cast<int>(image.width),
                                                      static_cast<int>(image.height)}});
    }
    Status status = engine_->Load(tab_, page, options_.directory);
    if (!status.ok()) std::fprintf(stderr, "lethe-demo: %s\n", status.message().c_str());
    return status.ok();
  }

  // A first decode validates the file (a truncated or damaged image is reported, never drawn as
  // whole) and measures what an animation costs paletted against 32 bits per pixel.
  void LoadOne(const std::filesystem::path& path) {
    std::vector<uint8_t> bytes;
    std::string name = path.filename().string();
    if (!ReadFile(path, &bytes)) return Skip(name, "unreadable");
    if (bytes.empty()) return Skip(name, "empty file");
    if (DetectImageFormat(bytes) == ImageFormat::kUnknown) return Skip(name, "not a PNG, JPEG or GIF");
    DecodeResult<DecodedImage> decoded = Decode(bytes);
    if (!decoded) {
      return Skip(name, std::string(DecodeErrorCodeName(decoded.error().code)) + ": " +
                            decoded.error().reason);
    }
    if (!IsComplete(*decoded)) return Skip(name, "truncated or damaged: not drawn as whole");
    PageImage image;
    image.path = std::filesystem::absolute(path).lexically_normal().string();
    image.top = page_height_;
    if (auto* still = std::get_if<Surface>(&*decoded)) {
      image.width = still->width();
      image.height = still->height();
      image.decoded_bytes = still->MemoryBytes();
    } else {
      AnimatedImage& animation = std::get<AnimatedImage>(*decoded);
      image.width = animation.width();
      image.height = animation.height();
      image.animated = animation.FrameCount() > 1;
      (void)animation.Compose(0);
      AnimationMemory memory = animation.Memory();
      image.decoded_bytes = memory.bytes_frames + memory.bytes_canvas + memory.bytes_compressed;
      image.full_canvas_bgra_bytes = memory.bytes_32bpp;
    }
    animated_count_ += image.animated ? 1 : 0;
    page_height_ += image.height + kGap;
    page_.push_back(std::move(image));
  }

  void Skip(const std::string& name, const std::string& why) {
    ++skipped_count_;
    std::printf("  skipped %s: %s\n", name.c_str(), why.c_str());
  }

  void Step(const char* phase) {
    engine_->ScrollTo(tab_, static_cast<int>(scroll_));
    engine_->RunFor(kStep);
    if (++step_count_ % kStepsPerDraw == 0) engine_->DrawFrame();
    auto t = std::chrono::duration_cast<milliseconds>(engine_->clock().Now() - start_).count();
    if (t % 1000 == 0) Sample(phase, static_cast<double>(t) / 1000.0);
  }

  void Sample(const char* phase, double t) {
    MemorySnapshot memory = engine_->Memory();
    chart_.Add(t, {Mb(memory.surfaces_bytes), Mb(memory.locked_surfaces_bytes),
                   Mb(memory.images_bytes), Mb(memory.heap_allocated_bytes)});
    peak_decoded_bytes_ = std::max(peak_decoded_bytes_, memory.surfaces_bytes);
    SurfaceCacheStats s = engine_->surface_cache().stats();
    std::fprintf(stderr,
                 "\r%-11s t=%4.0fs  decoded %7.2f MB (locked %6.2f)  encoded %6.2f MB  decodes %4llu"
                 "  re-decodes %4llu  expired %4llu ",
                 phase, t, Mb(memory.surfaces_bytes), Mb(memory.locked_surfaces_bytes),
                 Mb(memory.images_bytes),
                 static_cast<unsigned long long>(engine_->stats().decode_count),
                 static_cast<unsigned long long>(s.redecode_count),
                 static_cast<unsigned long long>(s.expired_count));
    std::fflush(stderr);
  }

  void Scroll(const char* phase, uint32_t from, uint32_t to, Clock::Duration duration) {
    const int64_t steps = duration / kStep;
    for (int64_t i = 1; i <= steps; ++i) {
      double f = static_cast<double>(i) / static_cast<double>(steps);
      scroll_ = static_cast<uint32_t>(from + (static_cast<double>(to) - from) * f);
      Step(phase);
    }
    phase_ends_.push_back(
        {phase, std::chrono::duration<double>(engine_->clock().Now() - start_).count()});
    decoded_at_phase_end_.push_back(engine_->Memory().surfaces_bytes);
  }

  // The memory report is taken here, with the page still on screen, so that it shows every kind of
  // entry; then the critical event.
  void Pressure() {
    engine_->DrawFrame();
    report_ = engine_->CollectMemoryReport();
    pressure_result_ = engine_->OnMemoryPressure(MemoryPressureLevel::kCritical).dispatch;
    pressure_time_ = std::chrono::duration<double>(engine_->clock().Now() - start_).count();
    chart_.Mark(pressure_time_, "critical pressure");
  }

  // The tab goes to the background (another, empty tab comes to the front): nothing is visible,
  // nothing locked; the caches age.
  void Idle(Clock::Duration duration) {
    engine_->SetForegroundWindow(engine_->OpenWindow());
    const int64_t steps = duration / kStep;
    for (int64_t i = 0; i < steps; ++i) {
      engine_->RunFor(kStep);
      auto t = std::chrono::duration_cast<milliseconds>(engine_->clock().Now() - start_).count();
      if (t % 1000 == 0) Sample("idle", static_cast<double>(t) / 1000.0);
    }
    lethe_purge();
  }

  int Summarize();

  Options options_;
  std::vector<std::string> site_files_;  // on a generated site: the images of its first pages
  std::vector<std::string> site_pages_;  // on a generated site: its HTML pages (the demo browses
                                         // the first kSitePageCount)
  std::unique_ptr<Engine> engine_;
  WindowId tab_ = 0;
  std::vector<PageImage> page_;
  size_t animated_count_ = 0;
  size_t skipped_count_ = 0;
  uint32_t page_height_ = 0;
  uint32_t scroll_ = 0;
  int64_t step_count_ = 0;
  Clock::TimePoint start_;
  TimelineChart chart_{{"decoded surfaces", "locked (visible)", "compressed bytes", "heap allocated"}};
  std::vector<std::pair<std::string, double>> phase_ends_;
  std::vector<uint64_t> decoded_at_phase_end_;
  uint64_t peak_decoded_bytes_ = 0;
  MemoryReport report_;
  double pressure_time_ = 0;
  MemoryPressureDispatchResult pressure_result_;
};

int Demo::Summarize() {
  SurfaceCacheStats s = engine_->surface_cache().stats();
  EngineStats engine_stats = engine_->stats();
  double decode_seconds = std::chrono::duration<double>(engine_stats.decode_time).count();
  std::printf("\nDecoded bytes over time (simulated)\n");
  std::printf("  peak                         %8.2f MB\n", Mb(peak_decoded_bytes_));
  for (size_t i = 0; i < phase_ends_.size(); ++i) {
    std::printf("  end of %-12s (t=%4.0fs)  %8.2f MB\n", phase_ends_[i].first.c_str(),
                phase_ends_[i].second, Mb(decoded_at_phase_end_[i]));
  }
  std::printf("  after idling (t=%4.0fs)      %8.2f MB\n",
              std::chrono::duration<double>(engine_->clock().Now() - start_).count(),
              Mb(engine_->Memory().surfaces_bytes));
  std::printf("\nSurface cache (cap %.0f MB)\n", Mb(engine_->surface_cache().max_bytes()));
  std::printf("  decodes %llu (%.3f s of real decoding), of which re-decodes after a discard %llu\n",
              static_cast<unsigned long long>(engine_stats.decode_count), decode_seconds,
              static_cast<unsigned long long>(s.redecode_count));
  std::printf("  discards: expired %llu, for the cap %llu, by pressure %llu; drawn uncached %llu; "
              "decode failures %llu\n",
              static_cast<unsigned long long>(s.expired_count),
              static_cast<unsigned long long>(s.evicted_for_cap_count),
              static_cast<unsigned long long>(s.discarded_by_pressure_count),
              static_cast<unsigned long long>(s.over_budget_count),
              static_cast<unsigned long long>(engine_stats.decode_failure_count));
  std::printf("  regret (re-decoded within %.0f s of the discard): %llu surfaces, %.2f MB, %.3f ms of "
              "decoding (after expiry %llu, the cap %llu, pressure %llu); all re-decodes: %.3f ms\n",
              std::chrono::duration<double>(SurfaceCacheOptions{}.regret_window).count(),
              static_cast<unsigned long long>(s.regret_count), Mb(s.regret_bytes),
              static_cast<double>(s.regret_time_ns) / 1e6,
              static_cast<unsigned long long>(s.regret_after_expiry_count),
              static_cast<unsigned long long>(s.regret_after_cap_count),
              static_cast<unsigned long long>(s.regret_after_pressure_count),
              static_cast<double>(s.redecode_time_ns) / 1e6);
  ImageCacheStats images = engine_->image_cache().stats();
  std::printf("\nImage cache regret (compressed bytes stored again within %.0f s of their drop): "
              "%llu images, %.2f MB\n",
              std::chrono::duration<double>(ImageCacheOptions{}.regret_window).count(),
              static_cast<unsigned long long>(images.regret_count), Mb(images.regret_bytes));
  std::printf("Regret in total (discards undone, both caches): %llu, %.2f MB\n",
              static_cast<unsigned long long>(s.regret_count + images.regret_count),
              Mb(s.regret_bytes + images.regret_bytes));
  std::printf("\nCritical pressure at t=%.0fs (real time to respond: %.3f ms)\n", pressure_time_,
              std::chrono::duration<double, std::milli>(pressure_result_.total_elapsed).count());
  for (const MemoryPressureListenerResult& listener : pressure_result_.listeners) {
    std::printf("  %-14s freed %8.2f MB in %.3f ms\n", listener.name.c_str(), Mb(listener.freed_bytes),
                std::chrono::duration<double, std::milli>(listener.elapsed).count());
  }
  if (pressure_result_.purged) {
    std::printf("  allocator purge returned %.2f MB to the OS in %.3f ms (allocator: %s)\n",
                Mb(pressure_result_.purge.freed_bytes),
                std::chrono::duration<double, std::milli>(pressure_result_.purge.elapsed).count(),
                lethe_allocator_name());
  }
  uint64_t paletted = 0, full = 0;
  for (const PageImage& image : page_) {
    if (!image.animated) continue;
    paletted += image.decoded_bytes;
    full += image.full_canvas_bgra_bytes;
  }
  if (full > 0) {
    std::printf("\nAnimations: %zu, all frames paletted %.2f MB vs 32 bpp full canvas %.2f MB "
                "(%.1fx smaller)\n",
                animated_count_, Mb(paletted), Mb(full),
                static_cast<double>(full) / static_cast<double>(paletted));
  }
  const MemoryReport& report = report_;
  std::string report_path = options_.out + "/memory-report.json.gz";
  std::string chart_path = options_.out + "/memory-over-time.svg";
  std::string error = WriteMemoryReport(report, report_path);
  if (!error.empty()) std::fprintf(stderr, "lethe-demo: %s\n", error.c_str());
  std::string chart_error = chart_.Write(chart_path, "lethe-demo: memory over simulated time (MB)");
  if (!chart_error.empty()) std::fprintf(stderr, "lethe-demo: %s\n", chart_error.c_str());
  int64_t classified = 0;
  for (const MemoryReportEntry& entry : report.entries) {
    if (entry.kind == ReportKind::kHeap && entry.path.rfind("explicit/", 0) == 0) classified += entry.amount;
  }
  std::printf("\nmemory report (t=%.0fs, before the pressure event): heap-allocated %.2f MB, "
              "heap-unclassified %.2f MB\n",
              pressure_time_,
              Mb(static_cast<uint64_t>(report.Amount("heap-allocated"))),
              static_cast<double>(report.Amount("heap-allocated") - classified) / (1024.0 * 1024.0));
  std::printf("wrote %s and %s\n", error.empty() ? report_path.c_str() : "(no report)",
              chart_error.empty() ? chart_path.c_str() : "(no chart)");
  return error.empty() && chart_error.empty() ? 0 : 1;
}

bool ParseArguments(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    if ((argument == "--out" || argument == "--cap-mb") && i + 1 < argc) {
      std::string value = argv[++i];
      if (argument == "--out") {
        options->out = value;
      } else {
        char* end = nullptr;
        unsigned long long mb = std::strtoull(value.c_str(), &end, 10);
        if (end == value.c_str() || *end != '\0' || mb == 0) return false;
        options->cap_bytes = mb << 20;
      }
    } else if (argument.empty() || argument[0] == '-') {
      return false;
    } else {
      options->directory = argument;
      options->sample_site = false;
    }
  }
  return true;
}

}  // namespace
}  // namespace lethe::demo

constexpr const char* kUsage =
    "usage: lethe-demo [DIR] [--out DIR] [--cap-mb N]\n"
    "  Default: the sample site's HTML pages: prints each page's decoded bytes, then browses its\n"
    "  first 3 pages in one tab over simulated minutes. DIR: a directory of your own images, shown\n"
    "  as one long page. Then memory pressure, then idle; prints a summary and writes\n"
    "  memory-report.json.gz and memory-over-time.svg into --out (default: the current directory).\n"
    "  --cap-mb N   the decoded-surface cache's cap in MiB\n";

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    }
  }
  lethe::demo::Options options;
  if (!lethe::demo::ParseArguments(argc, argv, &options)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  // The build generates the sample site; an installed demo, or a deleted build folder, has none yet.
  if (options.sample_site && !std::filesystem::is_directory(options.directory)) {
    lethe::sample_site::Site site;
    std::string error;
    std::printf("lethe-demo: generating the sample site in %s\n", options.directory.c_str());
    if (!lethe::sample_site::GenerateSite(options.directory, {}, &site, &error)) {
      std::fprintf(stderr, "lethe-demo: cannot generate the sample site: %s\n", error.c_str());
      return 1;
    }
  }
  std::error_code error;
  std::filesystem::create_directories(options.out, error);
  return lethe::demo::Demo(options).Run();
}
