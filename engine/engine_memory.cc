// The EngineImpl's memory side: the one cache-maintenance timer, pressure handling, the memory
// report and snapshot, the control socket's stats, and the memory trace.
#include <algorithm>
#include <array>
#include <iterator>

#include "engine_impl.h"
#include "lethe/alloc.h"
#include "lethe/sqlite_allocator.h"

namespace lethe::internal {

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
    const Document* document = window->document();
    if (document == nullptr) continue;
    if (document->html() == nullptr) {
      documents += document->MemoryBytes();
      continue;
    }
    // The page's arena, by the phase of the build that allocated it (HtmlPage::DomParts): read
    // once, and taken out of the document's bytes, which include it.
    const HtmlPage::ArenaParts parts = document->html()->DomParts();
    documents += document->MemoryBytes() - (parts.dom + parts.style + parts.layout);
    const std::string page = "window(" + EscapePathSegment(document->url()) + ")/";
    collector.HeapBytes(page + "dom", parts.dom,
                        "The page's DOM: litehtml's elements, attributes and text, as parsing made "
                        "them, counted by the page's own allocator arena.");
    collector.HeapBytes(page + "style", parts.style,
                        "What applying the page's stylesheets added to its arena: declarations "
                        "and computed styles.");
    collector.HeapBytes(page + "layout", parts.layout,
                        "The rest of the page's arena: the boxes of its layout, and what the page "
                        "allocated since it was built.");
  }
  collector.HeapBytes("engine/documents", documents,
                      "The documents the windows show: layout, URLs and text; an HTML page's DOM "
                      "is under window(url) (the documents left behind are under bfcache).");
  const std::vector<HtmlServices::Ghost>& ghosts = html_.Ghosts();
  for (const HtmlServices::Ghost& ghost : ghosts) {
    collector.HeapBytes("ghost-windows/window(" + EscapePathSegment(ghost.url) + ")/dom",
                        ghost.bytes,
                        "A closed page whose arena still holds bytes after the engine let go of "
                        "it: something keeps its DOM alive.");
  }
  collector.Add({"ghost-windows", ReportKind::kOther, ReportUnits::kCount,
                 static_cast<int64_t>(ghosts.size()),
                 "Closed pages whose arenas still hold bytes (see explicit/ghost-windows)."});
  collector.HeapBytes("engine/trace", trace_ != nullptr ? trace_->MemoryBytes() : 0,
                      "The memory trace's events, held until it is written (bounded by "
                      "trace_max_events).");
  collector.HeapBytes("engine/image-store", store_.MemoryBytes(),
                      "One record per image URL the documents use: the URL and frame delays.");
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
  collector.Counter("fonts/glyph-rasterizations", glyphs_.rasterize_count,
                    "Glyphs rasterized by FreeType (misses of the glyph tables).");
  collector.Counter("fonts/glyph-table-clears", glyphs_.clear_count,
                    "Glyph tables emptied because a new glyph would pass their cap.");
  // The figures the report does not carry yet (the rest are the caches' and the reporter's own).
  const MemorySnapshot memory = CacheFigures();
  for (const MemoryFigure& figure : kMemoryFigures) {
    if (!figure.engine_reports) continue;
    collector.Add({std::string(figure.report_path), ReportKind::kOther,
                   figure.is_count ? ReportUnits::kCount : ReportUnits::kBytes,
                   static_cast<int64_t>(figure.value(memory)), std::string(figure.description)});
  }
}

MemorySnapshot EngineImpl::Memory() const {
  MemorySnapshot snapshot = CacheFigures();
  lethe_stats_t stats;
  lethe_stats(&stats);
  snapshot.heap_allocated_bytes = stats.allocated_bytes;
  snapshot.resident_bytes = ReadResidentMemory().resident_bytes;
  snapshot.sqlite_bytes = cache::SqliteMemoryInUse().in_use_bytes;
  return snapshot;
}

MemorySnapshot EngineImpl::CacheFigures() const {
  MemorySnapshot snapshot;
  snapshot.surfaces_bytes = surfaces_.used_bytes();
  snapshot.locked_surfaces_bytes = surfaces_.locked_bytes();
  snapshot.images_bytes = images_.used_bytes();
  snapshot.bfcache_bytes = bfcache_.used_bytes();
  snapshot.fonts_bytes = fonts_.used_bytes();
  snapshot.glyph_bytes = glyphs_.bytes;
  snapshot.glyph_count = glyphs_.glyph_count;
  snapshot.shaped_words_bytes = words_.used_bytes();
  snapshot.framebuffer_bytes = framebuffer_.MemoryBytes();
  snapshot.surface_count = surfaces_.surface_count();
  snapshot.image_count = images_.entry_count();
  snapshot.bfcache_document_count = bfcache_.document_count();
  snapshot.window_count = windows_.size();
  // Each cache says what a critical event would free: the engine does not re-derive their policies.
  snapshot.discardable_bytes = surfaces_.discardable_bytes() + images_.discardable_bytes() +
                               bfcache_.discardable_bytes() + fonts_.discardable_bytes() +
                               words_.discardable_bytes();
  return snapshot;
}

EngineStats EngineImpl::stats() const {
  EngineStats stats = stats_;
  stats.glyph_rasterize_count = glyphs_.rasterize_count;
  return stats;
}

ControlReply EngineImpl::ControlStats() const {
  MemorySnapshot memory = Memory();
  ControlReply reply;
  for (const MemoryFigure& figure : kMemoryFigures) {
    reply.AddNumber(std::string(figure.stats_key), static_cast<int64_t>(figure.value(memory)));
  }
  reply.AddNumber("pressure_events", static_cast<int64_t>(stats_.pressure_event_count));
  reply.AddNumber("decodes", static_cast<int64_t>(stats_.decode_count));
  return reply;
}

// ---- traces -----------------------------------------------------------------------------------

namespace {

// The trace's counter events: each distinct trace_counter of the figure list, in the order of its
// first figure. Grouped once, at compile time, so that a sample does no searching.
constexpr size_t CountTraceCounters() {
  size_t count = 0;
  for (size_t i = 0; i < std::size(kMemoryFigures); ++i) {
    bool first = true;
    for (size_t j = 0; j < i; ++j) {
      first = first && kMemoryFigures[j].trace_counter != kMemoryFigures[i].trace_counter;
    }
    count += first ? 1 : 0;
  }
  return count;
}

constexpr auto kTraceCounters = [] {
  std::array<std::string_view, CountTraceCounters()> names{};
  size_t count = 0;
  for (const MemoryFigure& figure : kMemoryFigures) {
    auto end = names.begin() + count;
    if (std::find(names.begin(), end, figure.trace_counter) == end) names[count++] = figure.trace_counter;
  }
  return names;
}();

}  // namespace

void EngineImpl::SampleTrace() {
  if (trace_ == nullptr) return;
  auto now = std::chrono::duration_cast<TraceRecorder::Micros>(clock_.Now().time_since_epoch());
  const MemorySnapshot memory = Memory();
  std::vector<std::pair<std::string, int64_t>> args;
  for (std::string_view counter : kTraceCounters) {
    args.clear();
    for (const MemoryFigure& figure : kMemoryFigures) {
      if (figure.trace_counter != counter) continue;
      args.emplace_back(std::string(figure.trace_arg), static_cast<int64_t>(figure.value(memory)));
    }
    trace_->Counter(std::string(counter), now, args);
  }
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

}  // namespace lethe::internal
