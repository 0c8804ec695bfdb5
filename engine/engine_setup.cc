// The EngineImpl's construction and teardown: the caches wired to the pressure dispatcher and the
// memory reporter, and the parts that can fail when the engine starts (font, disk cache, control
// socket, pressure sources, trace timer).
#include <algorithm>
#include <limits>

#include "engine_impl.h"
#include "lethe/check.h"
#include "lethe/sqlite_allocator.h"

namespace lethe::internal {

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
      html_(store_, text_, options_.html, options_.viewport_width, options_.viewport_height, log_),
      bfcache_(clock_, BfOptionsFor(options_)) {
  store_.set_max_data_url_bytes(options_.html.max_data_url_bytes);
  if (!options_.trace_path.empty()) {
    trace_ = std::make_unique<TraceRecorder>(options_.process_name, TraceRecorder::kThisProcess,
                                            options_.trace_max_events);
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
  // SQLite's memory, process-wide: heap on Lethe's allocator, nonheap on SQLite's own.
  registrations_.push_back(cache::RegisterSqliteReporter(reporter_));
}

EngineImpl::~EngineImpl() {
  LETHE_CHECK(retained_token_.use_count() == 1,
              "a RetainedDocument outlived its Engine (drop it first: its DOM uses the engine)");
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
      // Runs on the allocating thread, which may hold a cache's lock (an insert that allocates):
      // it only try-locks, frees what it reaches, and leaves the rest to the critical dispatch the
      // allocator source posts to the loop thread.
      monitor_options.allocator_flush = [this](size_t) {
        (void)surfaces_.TryDiscardUnlocked();
        (void)images_.TryDropUnreferenced();
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
    trace_->NameThread("loop");  // Start runs on the loop thread
    SampleTrace();
    trace_timer_ = ScopedTimer(loop_, loop_.StartRepeatingTimer(options_.trace_sample_period,
                                                                [this] { SampleTrace(); }));
  }
  return "";
}

}  // namespace lethe::internal
