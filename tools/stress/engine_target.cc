// The StressTarget on lethe::Engine: what lethe-stress drives once the Engine facade exists. Every
// page load, scroll and draw goes through the embedder API; the child waits for the decode pool
// after each draw, as a user waits for the images to appear, so that each sample sees the
// surfaces of what was shown.
#include "lethe/engine.h"
#include "lethe/window.h"
#include "lethe/document.h"
#include "stress_target.h"

namespace lethe::stress {

namespace {

class EngineTarget final : public StressTarget {
 public:
  explicit EngineTarget(std::unique_ptr<Engine> engine)
      : engine_(std::move(engine)), start_(engine_->clock().Now()) {}

  int OpenWindow() override {
    const WindowId id = engine_->OpenWindow();
    engine_->SetForegroundWindow(id);
    return static_cast<int>(id);
  }
  void CloseWindow(int id) override { engine_->CloseWindow(static_cast<WindowId>(id)); }
  std::string Navigate(int id, const std::string& path) override {
    Status status = engine_->Navigate(static_cast<WindowId>(id), path);
    return status.ok() ? "" : status.message();
  }
  int PageHeight(int id) override {
    const Window* window = engine_->window(static_cast<WindowId>(id));
    return window != nullptr && window->document() != nullptr ? window->document()->height() : 0;
  }
  void ScrollTo(int id, int y) override { engine_->ScrollTo(static_cast<WindowId>(id), y); }
  void RunFor(Clock::Duration duration) override { engine_->RunFor(duration); }
  void DrawFrame() override {
    engine_->DrawFrame();
    engine_->WaitForDecodes();
  }
  CacheBytes Caches() override {
    const MemorySnapshot memory = engine_->Memory();
    return {memory.surfaces_bytes, memory.images_bytes, memory.bfcache_bytes, memory.fonts_bytes,
            memory.shaped_words_bytes};
  }
  RegretCounts Regret() override {
    const SurfaceCacheStats surfaces = engine_->surface_cache().stats();
    const ImageCacheStats images = engine_->image_cache().stats();
    return MakeRegretCounts(surfaces.regret_count, surfaces.regret_bytes, surfaces.regret_time_ns,
                            images.regret_count, images.regret_bytes);
  }
  double NowSeconds() override {
    return std::chrono::duration<double>(engine_->clock().Now() - start_).count();
  }
  std::string ReportMemory(const std::string& path) override {
    Status status = engine_->ReportMemory(path);
    return status.ok() ? "" : status.message();
  }
  EventLoop& Loop() override { return engine_->loop(); }
  const char* Description() const override { return "lethe::Engine"; }

 private:
  std::unique_ptr<Engine> engine_;
  Clock::TimePoint start_;
};

}  // namespace

std::unique_ptr<StressTarget> CreateStressTarget(const TargetOptions& options, std::string* error) {
  EngineOptions engine_options;
  engine_options.simulated_time = options.simulated_time;
  engine_options.expiration_enabled = options.expiration_enabled;
  engine_options.viewport_width = options.viewport_width;
  engine_options.viewport_height = options.viewport_height;
  engine_options.control_socket_path = options.control_socket_path;
  engine_options.trace_path = options.trace_path;
  if (options.pressure_ongoing_window > Clock::Duration(0)) {
    engine_options.pressure.ongoing_window = options.pressure_ongoing_window;
  }
  engine_options.process_name = options.expiration_enabled ? "lethe-stress" : "lethe-stress-baseline";
  std::unique_ptr<Engine> engine = Engine::Create(engine_options, error);
  if (engine == nullptr) return nullptr;
  return std::make_unique<EngineTarget>(std::move(engine));
}

}  // namespace lethe::stress
