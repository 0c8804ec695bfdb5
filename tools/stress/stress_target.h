// tools/stress/stress_target.h — what lethe-stress drives: a browser-like engine seen through the
// few calls a page-cycling session needs. The workload (stress_workload.h) is written against this
// interface so that it does not care which engine implementation runs under it.
//
// Configurations (TargetOptions::expiration_enabled):
//   true   Lethe's: caches expire unlocked entries, pressure events discard, the allocator decays;
//   false  the baseline: no discarding, no expiry, no pressure response (documents keep every
//          decoded image until they are closed).
// Threads: one (the child's main thread). Ownership: the target owns its windows and documents.
#ifndef LETHE_TOOLS_STRESS_STRESS_TARGET_H_
#define LETHE_TOOLS_STRESS_STRESS_TARGET_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "lethe/clock.h"
#include "lethe/event_loop.h"
#include "stress_samples.h"

namespace lethe::stress {

struct TargetOptions {
  bool expiration_enabled = true;
  bool simulated_time = true;
  std::string control_socket_path;  // empty: no control channel
  std::string trace_path;           // empty: no engine trace (the Engine's own Trace Event file)
  // A pressure event at the same level within this window of the last is "ongoing" (cheap
  // flushing, no allocator purge). Zero: the cache layer's default (10 s).
  Clock::Duration pressure_ongoing_window{0};
  int viewport_width = 1024;
  int viewport_height = 768;
};

using CacheBytes = std::array<uint64_t, kCacheNames.size()>;

class StressTarget {
 public:
  virtual ~StressTarget() = default;
  // Opens a window and makes it the foreground one. Returns its id (> 0).
  virtual int OpenWindow() = 0;
  virtual void CloseWindow(int id) = 0;
  // Loads an HTML page (.html), a page description (.json) or an image into window `id`. Returns "" or why it failed.
  virtual std::string Navigate(int id, const std::string& path) = 0;
  // The document height of window `id`'s page, in layout pixels.
  virtual int PageHeight(int id) = 0;
  virtual void ScrollTo(int id, int y) = 0;
  // Runs the engine's loop for `duration` of its clock (simulated: no real waiting).
  virtual void RunFor(Clock::Duration duration) = 0;
  virtual void DrawFrame() = 0;
  // Each cache's bytes, in kCacheNames order.
  virtual CacheBytes Caches() = 0;
  // The regret so far (the surface cache's, the image cache's, the totals), in kRegretNames order.
  virtual RegretCounts Regret() = 0;
  // Seconds of the engine's clock since the target was created.
  virtual double NowSeconds() = 0;
  // Writes the engine's memory report (about:memory JSON, gzip'd for a .gz path). "" or why not.
  virtual std::string ReportMemory(const std::string& path) = 0;
  // The engine's loop (lethe-stress --serve runs it until told to stop).
  virtual EventLoop& Loop() = 0;
  // What the target is ("Engine", or the interim cache driver), for the output.
  virtual const char* Description() const = 0;
};

// Creates the target this build uses. Returns nullptr with *error when it cannot start (e.g. the
// control socket path is taken).
std::unique_ptr<StressTarget> CreateStressTarget(const TargetOptions& options, std::string* error);

}  // namespace lethe::stress

#endif  // LETHE_TOOLS_STRESS_STRESS_TARGET_H_
