// lethe/engine.h — the facade an embedder links against: windows (tabs) showing pages, a decode
// pool, drawing, every cache with its timers, memory pressure from every source, reports, traces.
//
//   lethe::EngineOptions options;                  // defaults: real time, 2 decode threads
//   std::string error;
//   auto engine = lethe::Engine::Create(options, &error);
//   lethe::WindowId tab = engine->OpenWindow();
//   engine->Navigate(tab, "site/pages/page-01.html");
//   engine->ScrollBy(tab, 600);
//   engine->DrawFrame();                            // the foreground window's viewport, BGRA
//   engine->Screenshot("shot.png");
//   engine->RunFor(std::chrono::seconds(30));       // timers: cache expiry, animations, sampling
//   engine->ReportMemory("memory-report.json");     // about:memory JSON
//
// The model: a Window holds a SessionHistory and the live Document of its current entry; documents
// left behind go to the BfCache. Only the foreground window is visible: the images of its viewport
// are locked in the SurfaceCache (never discarded while shown), its animated GIFs advance; every
// other window locks nothing and its animations stand still. A draw that misses the SurfaceCache
// asks the DecodePool for the surface and shows the image's placeholder (kept in its ImageCache
// entry) until the decoded surface arrives; images within decode_ahead_px below or above the
// viewport are decoded ahead.
//
// Time: EngineOptions::clock (a ManualClock with simulated_time = true for tests and simulations;
// the loop then jumps from timer to timer and drives the allocator's decay with lethe_decay_tick).
// Baseline mode (expiration_enabled = false) keeps everything: no expiry timers, no cap evictions
// that can be avoided, no pressure response — the configuration lethe-stress compares against.
//
// Threads: create, use and destroy an Engine on one thread (the loop thread). Decode workers run
// inside; their results reach the loop thread as posted tasks. OnMemoryPressure/ReportMemory are
// also reachable from the control socket and the OS pressure sources, always on the loop thread.
// Ownership: the engine owns its windows, documents, caches, loop (unless the clock is the
// embedder's, which must outlive the engine) and framebuffer.
#ifndef LETHE_ENGINE_H_
#define LETHE_ENGINE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lethe/bf_cache.h"
#include "lethe/clock.h"
#include "lethe/disk_cache.h"
#include "lethe/event_loop.h"
#include "lethe/font_cache.h"
#include "lethe/font_face.h"
#include "lethe/html_limits.h"
#include "lethe/image_cache.h"
#include "lethe/memory_pressure.h"
#include "lethe/memory_pressure_level.h"
#include "lethe/memory_figures.h"
#include "lethe/memory_reporter.h"
#include "lethe/page_description.h"
#include "lethe/pressure_monitor.h"
#include "lethe/shaped_word_cache.h"
#include "lethe/surface.h"
#include "lethe/surface_cache.h"
#include "lethe/trace_recorder.h"

namespace lethe {

class Window;
class Document;
using WindowId = uint64_t;  // 0 is never a valid id

// What DrawFrame produces: premultiplied BGRA8, viewport_width x viewport_height.
using Framebuffer = Surface;

inline constexpr char kDefaultFontPath[] = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

struct EngineOptions {
  // nullptr: the steady clock, or (simulated_time) a ManualClock the engine owns. Not owned.
  Clock* clock = nullptr;
  // The loop jumps from timer to timer instead of sleeping; requires a ManualClock (or nullptr).
  bool simulated_time = false;
  // Worker threads decoding off the loop thread; 0 decodes on the loop thread, inside DrawFrame
  // (deterministic: what most tests use).
  int decode_threads = 2;
  // false = baseline: nothing expires, nothing is discarded for the cap, pressure is ignored.
  bool expiration_enabled = true;

  SurfaceCacheOptions surfaces;
  ImageCacheOptions images;
  BfCacheOptions bfcache;
  FontCacheOptions fonts;
  ShapedWordCacheOptions shaped_words;
  MemoryPressureOptions pressure;

  // What one HTML page may cost (nesting, words, stylesheets, images); see lethe/html_limits.h.
  HtmlLimits html;

  int viewport_width = 1024;
  int viewport_height = 768;
  // Images this far above or below the viewport are decoded before they scroll into view.
  int decode_ahead_px = 384;
  std::string font_path = kDefaultFontPath;  // regular sans-serif; must open, or Create fails
  FontFiles font_files;
  // Cap of each face's glyph-bitmap table (faces are per pixel size); a table about to pass it is
  // emptied and refilled. The tables age and go with their faces in the FontCache.
  uint64_t glyph_table_max_bytes = 512 * 1024;

  // Empty: no disk cache. Otherwise the compressed bytes of every image read (the file at its URL
  // stands for the network) are stored in a DiskCache (SQLite) at this path, and an image whose
  // bytes expired from the ImageCache, or that another session read, comes back from it. A file
  // that is not a usable cache is moved aside and a new one created (logged); a path that cannot be
  // opened (no directory, no permission, locked by another process) makes Create fail.
  std::string disk_cache_path;
  cache::DiskCacheOptions disk_cache;

  // Empty: off. The control socket answers pressure/report/stats (lethe/control_server.h).
  std::string control_socket_path;
  // Empty: no trace. Otherwise memory counters every trace_sample_period and instant events
  // (discards, pressure, window open/close) are recorded and written at destruction and WriteTrace.
  std::string trace_path;
  Clock::Duration trace_sample_period = std::chrono::seconds(1);
  // Events the trace holds in memory at most: past it, counter samples are thinned (every other
  // one kept), so a long session's trace stays bounded and still spans the whole session.
  size_t trace_max_events = TraceRecorder::kDefaultMaxEvents;
  // The OS pressure sources (PSI, cgroup memory.events, systemd, allocator callback). The API
  // source (OnMemoryPressure) is always on.
  bool pressure_sources = true;
  PressureMonitorOptions pressure_source_options;
  // One line per message (a source that cannot open, a decode failure); nullptr: stderr.
  LogFunction log;
  std::string process_name = "lethe";
};

// A result with a reason a person can read.
class [[nodiscard]] Status {
 public:
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(std::move(message)); }
  bool ok() const { return message_.empty(); }
  const std::string& message() const { return message_; }

 private:
  Status() = default;
  explicit Status(std::string message) : message_(std::move(message)) {
    if (message_.empty()) message_ = "error";
  }
  std::string message_;
};

struct PressureOutcome {
  MemoryPressureLevel level = MemoryPressureLevel::kNone;
  std::string source;          // "api", "psi", "cgroup", "systemd", "allocator", "control"
  bool ignored = false;        // baseline mode: nothing was done
  uint64_t freed_bytes = 0;    // what the caches released (the allocator purge not included)
  uint64_t purged_bytes = 0;   // what lethe_purge returned to the OS afterwards
  Clock::Duration elapsed{};   // real time from dispatch to the last listener's return
  MemoryPressureDispatchResult dispatch;  // per cache
};

// MemorySnapshot (what the engine holds now, cheap) is generated from the list of figures in
// lethe/memory_figures.h.

struct EngineStats {
  uint64_t decode_count = 0;          // surfaces decoded (any thread)
  Clock::Duration decode_time{};      // real time spent decoding them, summed over threads
  uint64_t decode_failure_count = 0;
  uint64_t decode_ahead_count = 0;    // decodes asked for images not yet visible
  uint64_t placeholder_draw_count = 0;  // image draws that showed the placeholder
  uint64_t blank_draw_count = 0;      // image draws with neither surface nor placeholder
  uint64_t surface_draw_count = 0;
  uint64_t bfcache_restore_count = 0;
  uint64_t page_load_count = 0;
  uint64_t frame_count = 0;
  uint64_t glyph_rasterize_count = 0;  // glyphs rasterized by FreeType (glyph-table misses)
  uint64_t pressure_event_count = 0;   // pressure events handled (any source; not in baseline)
};

namespace internal {
class EngineImpl;
}

// An embedder's reference to a document, as a script context or an extension holding its DOM
// would be: while one lives, the document's DOM, style and layout stay allocated (in its arena),
// even after its window closed or the BfCache let it go; such a closed document is reported as a
// ghost (ghost-windows, and its bytes under explicit/ghost-windows/window(url)/dom) until the last
// reference is dropped, which frees it and clears the report. Copies are more references. Drop
// every one before the Engine (checked: the DOM's container uses the engine's image store).
class RetainedDocument {
 public:
  RetainedDocument() = default;
  explicit operator bool() const { return dom_ != nullptr; }
  const std::string& url() const { return url_; }
  void reset() {
    dom_.reset();  // first: the DOM may be the last thing that needs the engine
    engine_.reset();
    url_.clear();
  }

 private:
  friend class internal::EngineImpl;
  std::shared_ptr<const void> dom_;
  std::shared_ptr<const void> engine_;  // the engine counts these to check none outlives it
  std::string url_;
};

class Engine {
 public:
  // nullptr with *error set when the options are inconsistent (simulated time on a real clock, a
  // viewport out of range), the font cannot be opened, or the control socket cannot be bound.
  static std::unique_ptr<Engine> Create(EngineOptions options, std::string* error);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // ---- windows ------------------------------------------------------------------------------
  // A new, empty window. The first window opened becomes the foreground one.
  WindowId OpenWindow();
  // Drops the window, its document and its history's documents in the BfCache. Another window
  // (the most recently opened) becomes foreground if this one was. Unknown ids are ignored.
  void CloseWindow(WindowId id);
  void SetForegroundWindow(WindowId id);
  WindowId foreground_window() const;
  std::vector<WindowId> windows() const;
  // nullptr for an unknown id. For inspection (tests, tools); valid until the window closes.
  const Window* window(WindowId id) const;
  // A reference that keeps the window's current document alive past its window (see
  // RetainedDocument). Empty for an unknown window, an empty one, or a document without a DOM
  // (a bare image, a page description).
  RetainedDocument RetainDocument(WindowId id);

  // ---- navigation ---------------------------------------------------------------------------
  // Loads an HTML page (.html, .htm: laid out by litehtml at the viewport width), a page
  // description (.json) or a single image file (PNG/JPEG/GIF) into the window, as a new history
  // entry. An error names the file and the problem; the window then keeps its page. Malformed
  // HTML or CSS is not an error: what can be rendered is.
  Status Navigate(WindowId id, const std::string& path);
  // Shows a page made in memory (`url` names it in the history). Going back to it after the
  // BfCache dropped it loads `url` again, so give a loadable path when that matters.
  Status Load(WindowId id, const PageDescription& page, const std::string& url);
  // Back/forward: the document comes from the BfCache when it is still there (else it is loaded
  // again). False at either end of the history or for an unknown window.
  bool GoBack(WindowId id);
  bool GoForward(WindowId id);
  // Vertical scroll in page pixels, clamped to the page.
  void ScrollTo(WindowId id, int y);
  void ScrollBy(WindowId id, int dy);

  // ---- time ---------------------------------------------------------------------------------
  void RunFor(Clock::Duration duration);
  void RunUntilIdle();
  // Blocks until the decode pool has nothing queued or running, then delivers the results.
  void WaitForDecodes();

  // ---- drawing ------------------------------------------------------------------------------
  // Composites the foreground window's viewport (background colour, images scaled to their
  // layout size, text). Without a window: a white frame.
  const Framebuffer& DrawFrame();
  // Draws a frame and writes it as an 8-bit RGBA PNG.
  Status Screenshot(const std::string& path);

  // ---- memory -------------------------------------------------------------------------------
  // Dispatches `level` to every cache now (source "api" unless named), then purges the allocator
  // on critical. In baseline mode: ignored.
  PressureOutcome OnMemoryPressure(MemoryPressureLevel level, const std::string& source = "api");
  // The about:memory JSON (gzip'd when the name ends in .gz).
  Status ReportMemory(const std::string& path);
  MemoryReport CollectMemoryReport() const;
  MemorySnapshot Memory() const;
  // Writes the trace so far (also written at destruction when trace_path is set).
  Status WriteTrace(const std::string& path);
  EngineStats stats() const;
  // The last pressure event handled (from any source); level kNone before the first.
  const PressureOutcome& last_pressure() const;

  EventLoop& loop();
  Clock& clock();
  const EngineOptions& options() const;
  // For tests and tools that look inside.
  SurfaceCache& surface_cache();
  ImageCache& image_cache();
  BfCache& bfcache();
  PressureMonitor* pressure_monitor();

 private:
  explicit Engine(std::unique_ptr<internal::EngineImpl> impl);
  std::unique_ptr<internal::EngineImpl> impl_;
};

}  // namespace lethe

#endif  // LETHE_ENGINE_H_
