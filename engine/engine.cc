// The Engine facade: option checks in Create, then every public method forwarded to EngineImpl.
// Construction is in engine_setup.cc, memory/pressure/trace in engine_memory.cc, windows and
// navigation in engine_navigation.cc, decoding and drawing in engine_drawing.cc.
#include "lethe/engine.h"

#include "engine_impl.h"

namespace lethe {

std::unique_ptr<Engine> Engine::Create(EngineOptions options, std::string* error) {
  std::string ignored;
  if (error == nullptr) error = &ignored;
  if (options.viewport_width < 1 || options.viewport_width > 16384 || options.viewport_height < 1 ||
      options.viewport_height > 16384) {
    *error = "viewport must be 1..16384 pixels on each side";
    return nullptr;
  }
  if (options.decode_threads < 0 || options.decode_threads > 64) {
    *error = "decode_threads must be 0..64";
    return nullptr;
  }
  std::unique_ptr<ManualClock> owned_clock;
  Clock* clock = options.clock;
  if (options.simulated_time) {
    if (clock == nullptr) {
      owned_clock = std::make_unique<ManualClock>();
      clock = owned_clock.get();
    } else if (dynamic_cast<ManualClock*>(clock) == nullptr) {
      *error = "simulated_time needs a ManualClock (or no clock)";
      return nullptr;
    }
  } else if (clock == nullptr) {
    clock = &Clock::Steady();
  } else if (dynamic_cast<ManualClock*>(clock) != nullptr) {
    *error = "a ManualClock needs simulated_time = true";
    return nullptr;
  }
  auto impl = std::make_unique<internal::EngineImpl>(std::move(options), *clock,
                                                     std::move(owned_clock));
  std::string start_error = impl->Start();
  if (!start_error.empty()) {
    *error = start_error;
    return nullptr;
  }
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

Engine::Engine(std::unique_ptr<internal::EngineImpl> impl) : impl_(std::move(impl)) {}
Engine::~Engine() = default;

WindowId Engine::OpenWindow() { return impl_->OpenWindow(); }
void Engine::CloseWindow(WindowId id) { impl_->CloseWindow(id); }
void Engine::SetForegroundWindow(WindowId id) { impl_->SetForegroundWindow(id); }
WindowId Engine::foreground_window() const { return impl_->foreground(); }
std::vector<WindowId> Engine::windows() const {
  std::vector<WindowId> ids;
  for (const auto& [id, window] : impl_->windows()) ids.push_back(id);
  return ids;
}
const Window* Engine::window(WindowId id) const { return impl_->FindWindow(id); }
RetainedDocument Engine::RetainDocument(WindowId id) { return impl_->RetainDocument(id); }
Status Engine::Navigate(WindowId id, const std::string& path) { return impl_->Navigate(id, path); }
Status Engine::Load(WindowId id, const PageDescription& page, const std::string& url) {
  return impl_->Load(id, page, url);
}
bool Engine::GoBack(WindowId id) { return impl_->GoBack(id); }
bool Engine::GoForward(WindowId id) { return impl_->GoForward(id); }
void Engine::ScrollTo(WindowId id, int y) { impl_->ScrollTo(id, y); }
void Engine::ScrollBy(WindowId id, int dy) {
  if (const Window* window = impl_->FindWindow(id)) impl_->ScrollTo(id, window->scroll_y() + dy);
}
void Engine::RunFor(Clock::Duration duration) {
  impl_->ArmTicks();
  impl_->loop().RunFor(duration);
}
void Engine::RunUntilIdle() {
  impl_->loop().RunUntilIdle();
  impl_->ArmTicks();
}
void Engine::WaitForDecodes() { impl_->WaitForDecodes(); }
const Framebuffer& Engine::DrawFrame() { return impl_->DrawFrame(); }
Status Engine::Screenshot(const std::string& path) { return impl_->Screenshot(path); }
PressureOutcome Engine::OnMemoryPressure(MemoryPressureLevel level, const std::string& source) {
  return impl_->HandlePressure(level, source);
}
Status Engine::ReportMemory(const std::string& path) { return impl_->ReportMemory(path); }
MemoryReport Engine::CollectMemoryReport() const { return impl_->CollectMemoryReport(); }
MemorySnapshot Engine::Memory() const { return impl_->Memory(); }
Status Engine::WriteTrace(const std::string& path) { return impl_->WriteTrace(path); }
EngineStats Engine::stats() const { return impl_->stats(); }
const PressureOutcome& Engine::last_pressure() const { return impl_->last_pressure(); }
EventLoop& Engine::loop() { return impl_->loop(); }
Clock& Engine::clock() { return impl_->clock(); }
const EngineOptions& Engine::options() const { return impl_->options(); }
SurfaceCache& Engine::surface_cache() { return impl_->surfaces(); }
ImageCache& Engine::image_cache() { return impl_->images(); }
BfCache& Engine::bfcache() { return impl_->bfcache(); }
PressureMonitor* Engine::pressure_monitor() { return impl_->monitor(); }

}  // namespace lethe
