// engine/engine_impl.h — the Engine's state and its wiring (see lethe/engine.h for the contract).
//
// Member order is destruction order, reversed, and it matters: the control server and the
// pressure sources go first (they call in), then the decode pool (its workers insert into the
// SurfaceCache), the windows and the BfCache (their documents release images from the store and the
// ImageCache), the store, the caches, and last the loop and the clock.
// Loop thread only, except where a method says otherwise. The methods live in files named for what
// they hold: engine_setup.cc (construction, Start), engine_memory.cc (ticks, pressure, reports,
// traces), engine_navigation.cc (windows, history, visibility), engine_drawing.cc (decodes, frames).
#ifndef LETHE_ENGINE_ENGINE_IMPL_H_
#define LETHE_ENGINE_ENGINE_IMPL_H_

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "display_surface.h"
#include "html_page.h"
#include "image_store.h"
#include "lethe/control_server.h"
#include "lethe/decode_pool.h"
#include "lethe/engine.h"
#include "lethe/trace_recorder.h"
#include "lethe/window.h"
#include "text_painter.h"

namespace lethe::internal {

inline double Microseconds(Clock::Duration duration) {
  return std::chrono::duration<double, std::micro>(duration).count();
}

class EngineImpl final : private HtmlImagePainter {
 public:
  explicit EngineImpl(EngineOptions options, Clock& clock, std::unique_ptr<ManualClock> owned_clock);
  ~EngineImpl();
  // The parts that can fail: font, control socket, pressure sources. "" or why.
  std::string Start();
  // Opens options_.disk_cache_path and hands it to the ImageStore. "" or why.
  std::string OpenDiskCache();

  WindowId OpenWindow();
  void CloseWindow(WindowId id);
  void SetForegroundWindow(WindowId id);
  Status Navigate(WindowId id, const std::string& path);
  Status Load(WindowId id, const PageDescription& page, const std::string& url);
  bool GoBack(WindowId id);
  bool GoForward(WindowId id);
  void ScrollTo(WindowId id, int y);
  const Framebuffer& DrawFrame();
  Status Screenshot(const std::string& path);
  PressureOutcome HandlePressure(MemoryPressureLevel level, const std::string& source);
  Status ReportMemory(const std::string& path);
  MemoryReport CollectMemoryReport() const { return reporter_.Collect(); }
  MemorySnapshot Memory() const;
  // Memory() without the process-wide figures (heap, RSS, SQLite), which cost a system read each:
  // what the engine's own structures hold.
  MemorySnapshot CacheFigures() const;
  Status WriteTrace(const std::string& path);
  void WaitForDecodes();
  // Re-arms the one cache-maintenance timer at the earliest due expiry.
  void ArmTicks();

  Window* FindWindow(WindowId id) const;
  RetainedDocument RetainDocument(WindowId id);

  // For the facade's getters.
  WindowId foreground() const { return foreground_; }
  const std::map<WindowId, std::unique_ptr<Window>>& windows() const { return windows_; }
  EventLoop& loop() { return loop_; }
  Clock& clock() { return clock_; }
  const EngineOptions& options() const { return options_; }
  // The counters, with the glyph tables' rasterizations filled in.
  EngineStats stats() const;
  const PressureOutcome& last_pressure() const { return last_pressure_; }
  SurfaceCache& surfaces() { return surfaces_; }
  ImageCache& images() { return images_; }
  BfCache& bfcache() { return bfcache_; }
  PressureMonitor* monitor() { return monitor_.get(); }
  HtmlServices& html() { return html_; }

 private:
  EngineOptions options_;
  std::unique_ptr<ManualClock> owned_clock_;
  Clock& clock_;
  EventLoop loop_;
  LogFunction log_;
  MemoryReporter reporter_;
  MemoryPressure pressure_;
  SurfaceCache surfaces_;
  ImageCache images_;
  GlyphTotals glyphs_;  // before fonts_: the faces' glyph tables update it as they go
  EngineFontCache fonts_;
  EngineWordCache words_;
  // Before store_, subscriptions_ and registrations_, which use it.
  std::unique_ptr<cache::DiskCache> disk_;
  ImageStore store_;
  TextPainter text_;
  HtmlServices html_;  // after store_ and text_, which it uses
  std::unique_ptr<TraceRecorder> trace_;
  BfCache bfcache_;
  std::map<WindowId, std::unique_ptr<Window>> windows_;
  WindowId foreground_ = 0;
  WindowId next_window_id_ = 1;
  Framebuffer framebuffer_;
  // Surfaces decoded but refused by the cache (over budget): drawn once, then dropped.
  std::unordered_map<SurfaceKey, std::shared_ptr<CachedSurface>, SurfaceKeyHash> uncached_;
  // Keys whose decode failed: not tried again (a broken file stays broken; logged once).
  std::unordered_set<SurfaceKey, SurfaceKeyHash> failed_;
  std::unique_ptr<DecodePool> pool_;
  std::vector<MemoryPressure::Subscription> subscriptions_;
  std::vector<MemoryReporter::Registration> registrations_;
  ScopedTimer tick_timer_;
  Clock::TimePoint tick_due_{};
  ScopedTimer trace_timer_;
  EngineStats stats_;
  PressureOutcome last_pressure_;
  std::unique_ptr<PressureMonitor> monitor_;
  std::unique_ptr<ControlServer> control_;
  // Shared with every RetainedDocument: more than one owner at destruction is one outliving us.
  std::shared_ptr<const char> retained_token_ = std::make_shared<const char>('\0');

  std::unique_ptr<Document> LoadDocument(const std::string& path, std::string* error);
  std::unique_ptr<Document> MakeDocument(const PageDescription& page, const std::string& url);
  // Makes `document` the window's new history entry (the old one frozen in the BfCache).
  void Show(Window& window, std::unique_ptr<Document> document, const std::string& url);
  // After any change of scroll, document or foreground: locks, animations, decode-ahead.
  void UpdateDisplay(Window& window);
  void StopAnimations(Window& window);
  void ScheduleFrame(Window& window, size_t index);
  void OnFrameTimer(WindowId id, size_t index);
  // Moves the window's document into the BfCache under its current history index.
  void FreezeCurrent(Window& window);
  // Brings the current history entry's document back (BfCache or reload).
  void RestoreCurrent(Window& window);
  bool Traverse(WindowId id, bool back);

  SurfaceKey KeyFor(const DocumentImage& image) const;
  // Submits a decode of `image` unless its surface is cached or pending.
  void RequestDecode(const DocumentImage& image, bool urgent);
  void OnDecoded(DecodeOutcome outcome);
  // Draws `image` (one tile of it) at `target_rect`, only inside `clip`; in target coordinates.
  void DrawImage(DocumentImage& image, const LayoutRect& target_rect, const LayoutRect& clip);
  void PaintImage(DocumentImage& image, const LayoutRect& tile, const LayoutRect& clip) override {
    DrawImage(image, tile, clip);
  }
  void Tick();
  void SampleTrace();
  void TraceInstant(const std::string& name,
                    const std::vector<std::pair<std::string, std::string>>& args = {});
  void ReportEngine(MemoryReportCollector& collector) const;
  ControlReply ControlStats() const;
};

}  // namespace lethe::internal

#endif  // LETHE_ENGINE_ENGINE_IMPL_H_
