// The Engine facade over EngineImpl: construction, the public methods, the wiring of pressure,
// reports, traces and the control socket. The model (navigation, visibility, drawing) is in
// engine_model.cc.
#include "lethe/engine.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "engine_impl.h"
#include "lethe/alloc.h"
#include "lethe/sqlite_allocator.h"
#include "png_writer.h"

namespace lethe {
namespace internal {

namespace {

SurfaceCacheOptions SurfaceOptionsFor(const EngineOptions& options) {
  SurfaceCacheOptions surfaces = options.surfaces;
  // Baseline: nothing is discarded to stay under a cap (what a cache without expiry does).
  if (!options.expiration_enabled) surfaces.max_bytes = std::numeric_limits<uint64_t>::max() / 4;
  return surfaces;
}

ImageCacheOptions ImageOptionsFor(const EngineOptions& options) {
  ImageCacheOptions images = options.images;
  if (!options.expiration_enabled) images.max_bytes = std::numeric_limits<uint64_t>::max() / 4;
  return images;
}

BfCacheOptions BfOptionsFor(const EngineOptions& options) {
  BfCacheOptions bfcache = options.bfcache;
  if (!options.expiration_enabled) bfcache.max_document_count = std::numeric_limits<size_t>::max();
  return bfcache;
}

double Microseconds(Clock::Duration duration) {
  return std::chrono::duration<double, std::micro>(duration).count();
}

}  // namespace

EngineImpl::EngineImpl(EngineOptions options, Clock& clock, std::unique_ptr<ManualClock> owned_clock)
    : options_(std::move(options)),
      owned_clock_(std::move(owned_clock)),
      clock_(clock),
      loop_(clock_),
      log_(options_.log ? options_.log : StderrLog()),
      reporter_(options_.process_name),
      pressure_(clock_, options_.pressure),
      surfaces_(clock_, SurfaceOptionsFor(options_)),
      images_(clock_, ImageOptionsFor(options_)),
      fonts_(clock_, options_.fonts),
      words_(clock_, options_.shaped_words),
      store_(images_, surfaces_),
      text_(fonts_, words_, glyphs_, options_.glyph_table_max_bytes, options_.font_path,
            options_.font_files, log_),
      bfcache_(clock_, BfOptionsFor(options_)) {
  if (!options_.trace_path.empty()) {
    trace_ = std::make_unique<TraceRecorder>(options_.process_name, 1, options_.trace_max_events);
  }
  pool_ = std::make_unique<DecodePool>(loop_, std::max(0, options_.decode_threads));
  if (options_.expiration_enabled) {
    subscriptions_.push_back(surfaces_.SubscribeTo(pressure_));
    subscriptions_.push_back(images_.SubscribeTo(pressure_));
    subscriptions_.push_back(bfcache_.SubscribeTo(pressure_));
    subscriptions_.push_back(fonts_.SubscribeTo(pressure_));
    subscriptions_.push_back(words_.SubscribeTo(pressure_));
  }
  registrations_.push_back(surfaces_.RegisterReporter(reporter_));
  registrations_.push_back(images_.RegisterReporter(reporter_));
  registrations_.push_back(bfcache_.RegisterReporter(reporter_));
  registrations_.push_back(fonts_.RegisterReporter(reporter_));
  registrations_.push_back(words_.RegisterReporter(reporter_));
  registrations_.push_back(reporter_.Register(
      "engine", [this](MemoryReportCollector& collector) { ReportEngine(collector); }));
}

EngineImpl::~EngineImpl() {
  control_.reset();
  monitor_.reset();
  pool_.reset();  // joins the workers: nothing inserts any more
  for (auto& [id, window] : windows_) {
    StopAnimations(*window);
    window->UnlockAll(surfaces_);
  }
  windows_.clear();
  bfcache_.Clear();
  if (trace_ != nullptr) {
    SampleTrace();
    std::string error;
    if (!trace_->Write(options_.trace_path, &error)) log_(error);
  }
}

std::string EngineImpl::OpenDiskCache() {
  cache::DiskCacheOptions disk_options = options_.disk_cache;
  if (!disk_options.log) disk_options.log = log_;
  auto opened = cache::DiskCache::Open(options_.disk_cache_path, std::move(disk_options));
  if (!opened.ok()) return "disk cache: " + opened.status().ToString();
  disk_ = std::move(opened.value());
  // A file moved aside on open was already logged by the DiskCache (through log_).
  store_.SetDiskCache(disk_.get());
  registrations_.push_back(disk_->RegisterReporter(reporter_));
  if (options_.expiration_enabled) subscriptions_.push_back(disk_->SubscribeTo(pressure_));
  return "";
}

std::string EngineImpl::Start() {
  std::string error;
  if (FontFace::Open(options_.font_path, 16, &error) == nullptr) return error;
  if (!options_.disk_cache_path.empty()) {
    error = OpenDiskCache();
    if (!error.empty()) return error;
  }
  if (!options_.control_socket_path.empty()) {
    ControlHandlers handlers;
    handlers.pressure = [this](MemoryPressureLevel level) {
      PressureOutcome outcome = HandlePressure(level, "control");
      ControlReply reply;
      reply.SetFreedBytes(outcome.freed_bytes);
      reply.AddNumber("purged_bytes", static_cast<int64_t>(outcome.purged_bytes));
      reply.AddNumber("dispatch_us", static_cast<int64_t>(Microseconds(outcome.elapsed)));
      if (outcome.ignored) reply.AddString("note", "baseline engine: pressure ignored");
      return reply;
    };
    handlers.report = [this](const std::string& path) {
      Status status = ReportMemory(path);
      if (!status.ok()) return ControlReply::Error(status.message());
      ControlReply reply;
      reply.AddString("path", path);
      return reply;
    };
    handlers.stats = [this] { return ControlStats(); };
    control_ = std::make_unique<ControlServer>(loop_, options_.control_socket_path,
                                               std::move(handlers), log_);
    if (!control_->Start()) return "cannot listen on " + options_.control_socket_path;
  }
  if (options_.pressure_sources) {
    PressureMonitorOptions monitor_options = options_.pressure_source_options;
    if (!monitor_options.allocator_flush) {
      // Runs on the allocating thread while it waits: only the thread-safe caches, cheapest first.
      monitor_options.allocator_flush = [this](size_t) {
        surfaces_.DiscardUnlocked();
        images_.DropUnreferenced();
      };
    }
    monitor_ = std::make_unique<PressureMonitor>(
        loop_,
        [this](MemoryPressureLevel level, std::string_view source) {
          HandlePressure(level, std::string(source));
        },
        log_, std::move(monitor_options));
    monitor_->Start();
  }
  if (trace_ != nullptr) {
    SampleTrace();
    trace_timer_ = ScopedTimer(loop_, loop_.StartRepeatingTimer(options_.trace_sample_period,
                                                                [this] { SampleTrace(); }));
  }
  return "";
}

// ---- time -------------------------------------------------------------------------------------

void EngineImpl::ArmTicks() {
  if (!options_.expiration_enabled) return;
  Clock::TimePoint due = Clock::TimePoint::max();
  if (surfaces_.used_bytes() > surfaces_.locked_bytes()) due = std::min(due, surfaces_.NextExpiryTime());
  if (images_.used_bytes() > images_.referenced_bytes()) due = std::min(due, images_.NextExpiryTime());
  if (bfcache_.document_count() > 0) due = std::min(due, bfcache_.NextExpiryTime());
  if (fonts_.font_count() > fonts_.referenced_font_count()) due = std::min(due, fonts_.NextExpiryTime());
  if (words_.word_count() > 0) due = std::min(due, words_.NextExpiryTime());
  if (due == Clock::TimePoint::max()) {
    tick_timer_.Cancel();
    return;
  }
  if (tick_timer_.id() != 0 && due == tick_due_) return;
  tick_due_ = due;
  tick_timer_ = ScopedTimer(loop_, loop_.StartTimer(due - clock_.Now(), [this] {
                              tick_timer_ = ScopedTimer();
                              Tick();
                            }));
}

void EngineImpl::Tick() {
  uint64_t surfaces_freed = surfaces_.Tick();
  uint64_t images_freed = images_.Tick();
  uint64_t documents_freed = bfcache_.Tick();
  uint64_t fonts_freed = fonts_.Tick();
  uint64_t words_freed = words_.Tick();
  uint64_t total = surfaces_freed + images_freed + documents_freed + fonts_freed + words_freed;
  if (total > 0) {
    TraceInstant("discard", {{"surfaces_bytes", std::to_string(surfaces_freed)},
                             {"images_bytes", std::to_string(images_freed)},
                             {"bfcache_bytes", std::to_string(documents_freed)},
                             {"fonts_bytes", std::to_string(fonts_freed)},
                             {"shaped_words_bytes", std::to_string(words_freed)}});
  }
  ArmTicks();
}

void EngineImpl::WaitForDecodes() {
  pool_->WaitIdle();
  loop_.RunUntilIdle();
  ArmTicks();
}

// ---- memory -----------------------------------------------------------------------------------

PressureOutcome EngineImpl::HandlePressure(MemoryPressureLevel level, const std::string& source) {
  PressureOutcome outcome;
  outcome.level = level;
  outcome.source = source;
  if (!options_.expiration_enabled) {
    outcome.ignored = true;
  } else {
    ++stats_.pressure_event_count;
    if (level == MemoryPressureLevel::kCritical) pool_->CancelAheadJobs();
    uncached_.clear();
    outcome.dispatch = pressure_.Dispatch(level);
    outcome.freed_bytes = outcome.dispatch.total_freed_bytes;
    outcome.purged_bytes = outcome.dispatch.purged ? outcome.dispatch.purge.freed_bytes : 0;
    outcome.elapsed = outcome.dispatch.total_elapsed;
  }
  TraceInstant("pressure", {{"level", std::string(MemoryPressureLevelName(level))},
                            {"source", source},
                            {"freed_bytes", std::to_string(outcome.freed_bytes)},
                            {"elapsed_us", std::to_string(Microseconds(outcome.elapsed))}});
  last_pressure_ = outcome;
  ArmTicks();
  return outcome;
}

Status EngineImpl::ReportMemory(const std::string& path) {
  std::string error = WriteMemoryReport(reporter_.Collect(), path);
  return error.empty() ? Status::Ok() : Status::Error(error);
}

void EngineImpl::ReportEngine(MemoryReportCollector& collector) const {
  collector.HeapBytes("engine/framebuffer", framebuffer_.MemoryBytes(),
                      "The BGRA framebuffer DrawFrame composites into.");
  uint64_t uncached = 0;
  for (const auto& [key, surface] : uncached_) uncached += surface->MemoryBytes();
  collector.HeapBytes("images/raster/uncached", uncached,
                      "Decoded surfaces the SurfaceCache refused (over its cap), drawn once.");
  uint64_t documents = 0;
  for (const auto& [id, window] : windows_) {
    if (window->document() != nullptr) documents += window->document()->MemoryBytes();
  }
  collector.HeapBytes("engine/documents", documents,
                      "The documents the windows show: layout, URLs and text (the documents left "
                      "behind are under bfcache).");
  collector.HeapBytes("engine/trace", trace_ != nullptr ? trace_->MemoryBytes() : 0,
                      "The memory trace's events, held until it is written (bounded by "
                      "trace_max_events).");
  collector.HeapBytes("engine/image-store", store_.MemoryBytes(),
                      "One record per image URL the documents use: the URL and frame delays.");
  cache::SqliteMemoryUsage sqlite = cache::SqliteMemoryInUse();
  collector.HeapBytes("storage/sqlite", sqlite.in_use_bytes,
                      std::string("SQLite's memory (allocator: ") +
                          cache::SqliteAllocatorKindName(sqlite.allocator) + ").");
  collector.Counter("engine/decodes", stats_.decode_count, "Surfaces decoded.");
  collector.Counter("engine/decode-failures", stats_.decode_failure_count, "Decodes that failed.");
  collector.Counter("engine/decode-ahead", stats_.decode_ahead_count,
                    "Decodes asked for images about to scroll into view.");
  collector.Counter("engine/placeholder-draws", stats_.placeholder_draw_count,
                    "Image draws that showed the placeholder while the surface decoded.");
  collector.Counter("engine/blank-draws", stats_.blank_draw_count,
                    "Image draws with neither a surface nor a placeholder.");
  collector.Counter("engine/image-file-reads", store_.file_read_count(),
                    "Image bytes read from the file at their URL (the network, in this model).");
  collector.Counter("engine/bfcache-restores", stats_.bfcache_restore_count,
                    "Back/forward navigations served from the BfCache.");
  collector.Counter("fonts/glyphs", glyphs_.glyph_count,
                    "Glyph bitmaps kept in the faces' glyph tables (counted in explicit/fonts).");
  collector.Counter("fonts/glyph-bytes", glyphs_.bytes,
                    "Bytes of those glyph tables, included in explicit/fonts (a byte count).");
  collector.Counter("fonts/glyph-rasterizations", glyphs_.rasterize_count,
                    "Glyphs rasterized by FreeType (misses of the glyph tables).");
  collector.Counter("fonts/glyph-table-clears", glyphs_.clear_count,
                    "Glyph tables emptied because a new glyph would pass their cap.");
  collector.Add({"engine/windows", ReportKind::kOther, ReportUnits::kCount,
                 static_cast<int64_t>(windows_.size()), "Open windows."});
}

MemorySnapshot EngineImpl::Memory() const {
  MemorySnapshot snapshot;
  snapshot.surfaces_bytes = surfaces_.used_bytes();
  snapshot.locked_surfaces_bytes = surfaces_.locked_bytes();
  snapshot.images_bytes = images_.used_bytes();
  snapshot.bfcache_bytes = bfcache_.used_bytes();
  snapshot.fonts_bytes = fonts_.used_bytes();
  snapshot.glyph_bytes = glyphs_.bytes;
  snapshot.glyph_count = glyphs_.glyph_count;
  snapshot.shaped_words_bytes = words_.used_bytes();
  snapshot.sqlite_bytes = cache::SqliteMemoryInUse().in_use_bytes;
  snapshot.framebuffer_bytes = framebuffer_.MemoryBytes();
  lethe_stats_t stats;
  lethe_stats(&stats);
  snapshot.heap_allocated_bytes = stats.allocated_bytes;
  snapshot.resident_bytes = ReadResidentMemory().resident_bytes;
  snapshot.surface_count = surfaces_.surface_count();
  snapshot.image_count = images_.entry_count();
  snapshot.bfcache_document_count = bfcache_.document_count();
  snapshot.window_count = windows_.size();
  snapshot.discardable_bytes = (snapshot.surfaces_bytes - snapshot.locked_surfaces_bytes) +
                               (snapshot.images_bytes - images_.referenced_bytes()) +
                               snapshot.bfcache_bytes +
                               (fonts_.referenced_font_count() == 0 ? snapshot.fonts_bytes : 0) +
                               snapshot.shaped_words_bytes;
  return snapshot;
}

ControlReply EngineImpl::ControlStats() const {
  MemorySnapshot memory = Memory();
  ControlReply reply;
  reply.AddNumber("surfaces_bytes", static_cast<int64_t>(memory.surfaces_bytes));
  reply.AddNumber("locked_surfaces_bytes", static_cast<int64_t>(memory.locked_surfaces_bytes));
  reply.AddNumber("images_bytes", static_cast<int64_t>(memory.images_bytes));
  reply.AddNumber("bfcache_bytes", static_cast<int64_t>(memory.bfcache_bytes));
  reply.AddNumber("fonts_bytes", static_cast<int64_t>(memory.fonts_bytes));
  reply.AddNumber("shaped_words_bytes", static_cast<int64_t>(memory.shaped_words_bytes));
  reply.AddNumber("heap_allocated_bytes", static_cast<int64_t>(memory.heap_allocated_bytes));
  reply.AddNumber("resident_bytes", static_cast<int64_t>(memory.resident_bytes));
  reply.AddNumber("discardable_bytes", static_cast<int64_t>(memory.discardable_bytes));
  reply.AddNumber("windows", static_cast<int64_t>(memory.window_count));
  reply.AddNumber("pressure_events", static_cast<int64_t>(stats_.pressure_event_count));
  reply.AddNumber("decodes", static_cast<int64_t>(stats_.decode_count));
  return reply;
}

// ---- traces -----------------------------------------------------------------------------------

void EngineImpl::SampleTrace() {
  if (trace_ == nullptr) return;
  auto now = std::chrono::duration_cast<TraceRecorder::Micros>(clock_.Now().time_since_epoch());
  MemorySnapshot memory = Memory();
  trace_->Counter("images", now,
                  {{"decoded", static_cast<int64_t>(memory.surfaces_bytes)},
                   {"compressed", static_cast<int64_t>(memory.images_bytes)}});
  trace_->Counter("documents", now, {{"bfcache", static_cast<int64_t>(memory.bfcache_bytes)}});
  trace_->Counter("text", now,
                  {{"fonts", static_cast<int64_t>(memory.fonts_bytes)},
                   {"shaped_words", static_cast<int64_t>(memory.shaped_words_bytes)}});
  trace_->Counter("heap", now, {{"allocated", static_cast<int64_t>(memory.heap_allocated_bytes)}});
  trace_->Counter("resident", now, {{"rss", static_cast<int64_t>(memory.resident_bytes)}});
}

void EngineImpl::TraceInstant(const std::string& name,
                              const std::vector<std::pair<std::string, std::string>>& args) {
  if (trace_ == nullptr) return;
  auto now = std::chrono::duration_cast<TraceRecorder::Micros>(clock_.Now().time_since_epoch());
  trace_->Instant(name, now, args);
  SampleTrace();  // a counter sample at each event shows the step it made
}

Status EngineImpl::WriteTrace(const std::string& path) {
  if (trace_ == nullptr) return Status::Error("no trace: the engine was created without trace_path");
  SampleTrace();
  std::string error;
  if (!trace_->Write(path, &error)) return Status::Error(error);
  return Status::Ok();
}

Status EngineImpl::Screenshot(const std::string& path) {
  const Framebuffer& frame = DrawFrame();
  std::string error = WritePng(frame, path);
  return error.empty() ? Status::Ok() : Status::Error(error);
}

}  // namespace internal

// ---- the facade -------------------------------------------------------------------------------

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
WindowId Engine::foreground_window() const { return impl_->foreground_; }
std::vector<WindowId> Engine::windows() const {
  std::vector<WindowId> ids;
  for (const auto& [id, window] : impl_->windows_) ids.push_back(id);
  return ids;
}
const Window* Engine::window(WindowId id) const { return impl_->FindWindow(id); }
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
  impl_->loop_.RunFor(duration);
}
void Engine::RunUntilIdle() {
  impl_->loop_.RunUntilIdle();
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
EngineStats Engine::stats() const {
  EngineStats stats = impl_->stats_;
  stats.glyph_rasterize_count = impl_->glyphs_.rasterize_count;
  return stats;
}
const PressureOutcome& Engine::last_pressure() const { return impl_->last_pressure_; }
EventLoop& Engine::loop() { return impl_->loop_; }
Clock& Engine::clock() { return impl_->clock_; }
const EngineOptions& Engine::options() const { return impl_->options_; }
SurfaceCache& Engine::surface_cache() { return impl_->surfaces_; }
ImageCache& Engine::image_cache() { return impl_->images_; }
BfCache& Engine::bfcache() { return impl_->bfcache_; }
PressureMonitor* Engine::pressure_monitor() { return impl_->monitor_.get(); }

}  // namespace lethe
