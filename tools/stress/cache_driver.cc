// The interim StressTarget: a thin driver of Lethe's caches (SurfaceCache, ImageCache, the pressure
// dispatcher, the control server), used until the Engine facade is merged. It models what matters
// for memory: windows hold documents; a document's images are decoded (lethe::Decode, at their
// layout size) when they first scroll into the foreground window's viewport; Lethe's configuration
// keeps decoded surfaces in the SurfaceCache (visible ones locked, the rest expiring, pressure
// discarding) while the baseline keeps each decoded image in its document until the window closes.
// Not modelled: fonts and text (FontCache and ShapedWordCache report 0), the bfcache (every load
// opens a new window, so no document is left behind by navigation), decode threads, drawing pixels.
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <variant>

#include "lethe/control_server.h"
#include "lethe/decode.h"
#include "lethe/event_loop.h"
#include "lethe/image_cache.h"
#include "lethe/memory_pressure.h"
#include "lethe/memory_reporter.h"
#include "lethe/page_description.h"
#include "lethe/surface_cache.h"
#include "stress_target.h"

namespace lethe::stress {

namespace {

// A decoded image as the SurfaceCache sees it.
class DecodedSurface final : public CachedSurface {
 public:
  explicit DecodedSurface(DecodedImage image) : image_(std::move(image)) {}
  size_t MemoryBytes() const override {
    if (const auto* still = std::get_if<Surface>(&image_)) return still->MemoryBytes();
    const AnimationMemory memory = std::get<AnimatedImage>(image_).Memory();
    return memory.bytes_frames + memory.bytes_canvas + memory.bytes_compressed;
  }
  bool IsAnimated() const override { return std::holds_alternative<AnimatedImage>(image_); }

 private:
  DecodedImage image_;
};

struct PlacedImage {
  uint64_t id = 0;
  std::string url;
  LayoutRect rect;
  bool visible = false;                   // in the foreground viewport, locked (Lethe's)
  std::shared_ptr<CachedSurface> held;    // the baseline's: kept until the window closes
};

struct Window {
  std::vector<PlacedImage> images;
  int height = 0;
  int scroll_y = 0;
};

bool ReadBytes(const std::string& path, std::vector<uint8_t>* bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  bytes->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

class CacheDriver final : public StressTarget {
 public:
  explicit CacheDriver(const TargetOptions& options)
      : options_(options),
        clock_(options.simulated_time ? static_cast<Clock&>(manual_clock_) : Clock::Steady()),
        start_(clock_.Now()),
        loop_(clock_),
        pressure_(clock_, PressureOptions(options)),
        surfaces_(clock_),
        images_(clock_, ImageOptions(options.expiration_enabled)) {
    if (options_.expiration_enabled) {
      subscriptions_.push_back(surfaces_.SubscribeTo(pressure_));
      subscriptions_.push_back(images_.SubscribeTo(pressure_));
      tick_ = ScopedTimer(loop_, loop_.StartRepeatingTimer(std::chrono::seconds(1), [this] {
        surfaces_.Tick();
        images_.Tick();
      }));
    }
    registrations_.push_back(surfaces_.RegisterReporter(reporter_));
    registrations_.push_back(images_.RegisterReporter(reporter_));
  }

  ~CacheDriver() override {
    while (!windows_.empty()) CloseWindow(windows_.begin()->first);
  }

  bool StartControl(std::string* error) {
    if (options_.control_socket_path.empty()) return true;
    ControlHandlers handlers;
    handlers.pressure = [this](MemoryPressureLevel level) {
      MemoryPressureDispatchResult result = pressure_.Dispatch(level);
      return ControlReply().SetFreedBytes(result.total_freed_bytes);
    };
    handlers.report = [this](const std::string& path) {
      std::string failure = WriteMemoryReport(reporter_.Collect(), path);
      return failure.empty() ? ControlReply() : ControlReply::Error(failure);
    };
    handlers.stats = [this] { return StatsReply(); };
    control_ = std::make_unique<ControlServer>(
        loop_, options_.control_socket_path, handlers,
        [this](std::string_view line) { control_log_ = line; });
    if (!control_->Start()) {
      *error = control_log_;
      return false;
    }
    return true;
  }

  int OpenWindow() override {
    const int id = next_window_id_++;
    windows_[id];
    SetForeground(id);
    return id;
  }

  void CloseWindow(int id) override {
    auto found = windows_.find(id);
    if (found == windows_.end()) return;
    for (PlacedImage& image : found->second.images) {
      if (image.visible && options_.expiration_enabled) surfaces_.UnlockImage(image.id);
      surfaces_.RemoveImage(image.id);
      images_.RemoveReference(image.url);
    }
    windows_.erase(found);
    if (foreground_ == id) SetForeground(windows_.empty() ? 0 : windows_.rbegin()->first);
  }

  std::string Navigate(int id, const std::string& path) override {
    auto found = windows_.find(id);
    if (found == windows_.end()) return "no window " + std::to_string(id);
    PageDescription page;
    if (path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0) {
      auto loaded = LoadPageDescription(path);
      if (auto* failure = std::get_if<PageError>(&loaded)) return failure->message;
      page = std::move(std::get<PageDescription>(loaded));
    } else {
      std::string error;
      auto size = ImageSize(path, &error);
      if (!error.empty()) return error;
      page = PageFromImages({path}, {size}, options_.viewport_width);
    }
    Window fresh;
    fresh.height = page.height;
    for (const PageItem& item : page.items) {
      const auto* image = std::get_if<PageImageItem>(&item);
      if (image == nullptr) continue;
      std::string error;
      if (!EnsureEncoded(image->src, &error)) return error;
      images_.AddReference(image->src);
      fresh.images.push_back(PlacedImage{next_image_id_++, image->src, image->rect, false, nullptr});
    }
    // The old document goes (its images unlocked and removed), the new one takes the window.
    Window& window = found->second;
    for (PlacedImage& image : window.images) {
      if (image.visible && options_.expiration_enabled) surfaces_.UnlockImage(image.id);
      surfaces_.RemoveImage(image.id);
      images_.RemoveReference(image.url);
    }
    window = std::move(fresh);
    if (id == foreground_) UpdateVisibility(window, true);
    return "";
  }

  int PageHeight(int id) override {
    auto found = windows_.find(id);
    return found == windows_.end() ? 0 : found->second.height;
  }

  void ScrollTo(int id, int y) override {
    auto found = windows_.find(id);
    if (found == windows_.end()) return;
    found->second.scroll_y = std::max(0, y);
    if (id == foreground_) UpdateVisibility(found->second, true);
  }

  void RunFor(Clock::Duration duration) override { loop_.RunFor(duration); }

  void DrawFrame() override {
    auto found = windows_.find(foreground_);
    if (found == windows_.end()) return;
    for (PlacedImage& image : found->second.images) {
      if (image.visible) EnsureDecoded(image);
    }
  }

  CacheBytes Caches() override {
    CacheBytes bytes{};
    bytes[0] = options_.expiration_enabled ? surfaces_.used_bytes() : HeldBytes();
    bytes[1] = images_.used_bytes();
    return bytes;
  }

  double NowSeconds() override {
    return std::chrono::duration<double>(clock_.Now() - start_).count();
  }

  const char* Description() const override {
    return "interim cache driver (SurfaceCache + ImageCache + lethe::Decode; no fonts, no "
           "bfcache, decodes on the main thread)";
  }

  EventLoop& Loop() override { return loop_; }

 private:
  static MemoryPressureOptions PressureOptions(const TargetOptions& options) {
    MemoryPressureOptions pressure_options;
    if (options.pressure_ongoing_window > Clock::Duration(0)) {
      pressure_options.ongoing_window = options.pressure_ongoing_window;
    }
    return pressure_options;
  }

  static ImageCacheOptions ImageOptions(bool expiration_enabled) {
    ImageCacheOptions image_options;
    if (!expiration_enabled) image_options.generation_period = std::chrono::hours(24 * 365);
    return image_options;
  }

  uint64_t HeldBytes() const {
    uint64_t total = 0;
    for (const auto& [id, window] : windows_) {
      for (const PlacedImage& image : window.images) {
        if (image.held) total += image.held->MemoryBytes();
      }
    }
    return total;
  }

  ControlReply StatsReply() {
    const uint64_t surface_bytes = options_.expiration_enabled ? surfaces_.used_bytes() : HeldBytes();
    const uint64_t surface_locked = options_.expiration_enabled ? surfaces_.locked_bytes() : surface_bytes;
    const uint64_t image_bytes = images_.used_bytes();
    const uint64_t image_referenced = images_.referenced_bytes();
    ControlReply reply;
    reply.AddNumber("surface_cache_bytes", static_cast<int64_t>(surface_bytes))
        .AddNumber("surface_cache_locked_bytes", static_cast<int64_t>(surface_locked))
        .AddNumber("image_cache_bytes", static_cast<int64_t>(image_bytes))
        .AddNumber("image_cache_referenced_bytes", static_cast<int64_t>(image_referenced))
        .AddNumber("unlocked_bytes", static_cast<int64_t>((surface_bytes - surface_locked) +
                                                          (image_bytes - image_referenced)))
        .AddNumber("window_count", static_cast<int64_t>(windows_.size()))
        .AddNumber("pressure_event_count", static_cast<int64_t>(pressure_.dispatch_count()))
        .AddString("expiration", options_.expiration_enabled ? "on" : "off");
    return reply;
  }

  static std::pair<int, int> ImageSize(const std::string& path, std::string* error) {
    std::vector<uint8_t> bytes;
    if (!ReadBytes(path, &bytes)) {
      *error = "cannot read " + path;
      return {0, 0};
    }
    auto info = Probe(bytes);
    if (!info) {
      *error = path + ": " + info.error().reason;
      return {0, 0};
    }
    return {static_cast<int>(info->OrientedWidth()), static_cast<int>(info->OrientedHeight())};
  }

  bool EnsureEncoded(const std::string& url, std::string* error) {
    if (images_.Get(url) != nullptr) return true;
    std::vector<uint8_t> bytes;
    if (!ReadBytes(url, &bytes)) {
      *error = "cannot read image " + url;
      return false;
    }
    auto info = Probe(bytes);
    if (!info) {
      *error = url + ": " + info.error().reason;
      return false;
    }
    ImageHeaderInfo header{info->format, info->OrientedWidth(), info->OrientedHeight(),
                           info->frame_count};
    ImageCacheOutcome outcome = images_.Put(url, bytes, header);
    if (outcome != ImageCacheOutcome::kStored) {
      *error = url + ": the image cache refused it (" + ImageCacheOutcomeName(outcome) + ")";
      return false;
    }
    return true;
  }

  void SetForeground(int id) {
    if (foreground_ != 0 && foreground_ != id) {
      auto old = windows_.find(foreground_);
      if (old != windows_.end()) UpdateVisibility(old->second, false);
    }
    foreground_ = id;
    auto found = windows_.find(id);
    if (found != windows_.end()) UpdateVisibility(found->second, true);
  }

  // Locks the images in the viewport (and half a screen below: decode-ahead), unlocks the rest.
  void UpdateVisibility(Window& window, bool foreground) {
    const LayoutRect viewport{0, window.scroll_y, options_.viewport_width,
                              options_.viewport_height * 3 / 2};
    for (PlacedImage& image : window.images) {
      const bool visible = foreground && image.rect.Intersects(viewport);
      if (visible == image.visible) continue;
      image.visible = visible;
      if (!options_.expiration_enabled) continue;
      if (visible) surfaces_.LockImage(image.id);
      else surfaces_.UnlockImage(image.id);
    }
  }

  void EnsureDecoded(PlacedImage& image) {
    const SurfaceKey key{image.id, static_cast<uint32_t>(image.rect.width),
                         static_cast<uint32_t>(image.rect.height), 0};
    if (image.held != nullptr) return;
    if (options_.expiration_enabled && surfaces_.Lookup(key) != nullptr) return;
    std::shared_ptr<const EncodedImage> encoded = images_.Get(image.url);
    if (encoded == nullptr) return;  // dropped under pressure; a real engine would refetch
    DecodeOptions decode_options;
    decode_options.target_width = key.width;
    decode_options.target_height = key.height;
    const Clock::TimePoint started = Clock::Steady().Now();
    auto decoded = Decode(encoded->bytes(), decode_options);
    if (!decoded) return;  // the page draws without it, as a browser shows a broken image
    auto surface = std::make_shared<DecodedSurface>(std::move(*decoded));
    if (!options_.expiration_enabled) {
      image.held = std::move(surface);
      return;
    }
    (void)surfaces_.Insert(key, std::move(surface), Clock::Steady().Now() - started);
  }

  TargetOptions options_;
  ManualClock manual_clock_;
  Clock& clock_;
  Clock::TimePoint start_;
  EventLoop loop_;
  MemoryPressure pressure_;
  MemoryReporter reporter_;
  SurfaceCache surfaces_;
  ImageCache images_;
  std::vector<MemoryPressure::Subscription> subscriptions_;
  std::vector<MemoryReporter::Registration> registrations_;
  ScopedTimer tick_;
  std::unique_ptr<ControlServer> control_;
  std::string control_log_;  // the control server's last log line (why Start failed)
  std::map<int, Window> windows_;
  int foreground_ = 0;
  int next_window_id_ = 1;
  uint64_t next_image_id_ = 1;
};

}  // namespace

std::unique_ptr<StressTarget> CreateStressTarget(const TargetOptions& options, std::string* error) {
  auto driver = std::make_unique<CacheDriver>(options);
  if (!driver->StartControl(error)) return nullptr;
  return driver;
}

}  // namespace lethe::stress
