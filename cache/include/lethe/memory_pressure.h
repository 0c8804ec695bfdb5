// lethe/memory_pressure.h — memory-pressure dispatch to the caches, with what each freed and how fast.
//
// What it is: the engine's pressure sources (PSI, cgroup v2, the allocator's low-memory callback, the
// API) call Dispatch(level); every subscribed listener (each cache) frees what that level asks and
// returns the bytes it freed; Dispatch measures each listener and returns the lot.
//
// Graded response (what the caches in lethe/ do; see each cache's OnMemoryPressure):
//   kModerate  every cache ages by one generation (entries untouched for a while go now), and the
//              shaped-word cache is emptied (cheap to rebuild).
//   kCritical  drops every unlocked surface, every unreferenced image-cache entry, every
//              back/forward document and every unreferenced font, empties the shaped words; then
//              MemoryPressure calls lethe_purge() so the freed pages go back to the OS now (reported
//              apart, as `purge`: those pages are the ones the listeners freed, not more bytes).
//   ongoing    a dispatch at the same or a lower level than the last one, less than 10 s after it
//              (Firefox's "low-memory-ongoing"): listeners get `ongoing = true` and do only cheap
//              flushing — no aging (a repeat must not walk entries through their generations in
//              seconds), no allocator purge. Critical-ongoing still drops what became discardable.
//              A higher level than the last is never ongoing (escalation). kNone ends the episode:
//              the next event is fresh.
//
// Threads: Subscribe, Subscription destruction and Dispatch on one thread (the engine's main
// thread). A listener may destroy its own or another Subscription during a dispatch; a destroyed
// one is not called afterwards. Listeners must not call Dispatch.
// Ownership: a Subscription unsubscribes when destroyed; it must not outlive the MemoryPressure.
#ifndef LETHE_MEMORY_PRESSURE_H_
#define LETHE_MEMORY_PRESSURE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lethe/clock.h"
#include "lethe/memory_pressure_level.h"

namespace lethe {

struct MemoryPressureEvent {
  MemoryPressureLevel level = MemoryPressureLevel::kNone;
  bool ongoing = false;  // a repeat within the ongoing window: cheap flushing only
};

struct MemoryPressureListenerResult {
  std::string name;
  uint64_t freed_bytes = 0;
  Clock::Duration elapsed{};
};

struct MemoryPressureDispatchResult {
  MemoryPressureEvent event;
  std::vector<MemoryPressureListenerResult> listeners;  // in subscription order
  uint64_t total_freed_bytes = 0;                       // sum over listeners
  bool purged = false;                                  // lethe_purge() ran
  MemoryPressureListenerResult purge;                   // its purged-bytes delta and time
  Clock::Duration total_elapsed{};
};

struct MemoryPressureOptions {
  Clock::Duration ongoing_window = std::chrono::seconds(10);
  bool purge_allocator_on_critical = true;
};

class MemoryPressure {
 public:
  // Returns the bytes the listener freed for this event.
  using Listener = std::function<uint64_t(const MemoryPressureEvent&)>;
  using Options = MemoryPressureOptions;

  // RAII: listening stops when it is destroyed (or reset()). Move-only.
  class Subscription {
   public:
    Subscription() = default;
    Subscription(Subscription&& other) noexcept;
    Subscription& operator=(Subscription&& other) noexcept;
    ~Subscription();
    void reset();
    bool active() const { return owner_ != nullptr; }

   private:
    friend class MemoryPressure;
    Subscription(MemoryPressure* owner, uint64_t id) : owner_(owner), id_(id) {}
    MemoryPressure* owner_ = nullptr;
    uint64_t id_ = 0;
  };

  // `clock` times the ongoing window (a ManualClock in tests); `stopwatch` measures each listener.
  explicit MemoryPressure(const Clock& clock, Options options = Options{},
                          const Clock& stopwatch = Clock::Steady());
  MemoryPressure(const MemoryPressure&) = delete;
  MemoryPressure& operator=(const MemoryPressure&) = delete;
  ~MemoryPressure();

  [[nodiscard]] Subscription Subscribe(std::string name, Listener listener);

  // Delivers `level` to every listener. kNone ends the current episode and calls nobody.
  MemoryPressureDispatchResult Dispatch(MemoryPressureLevel level);

  // The same as Dispatch, for tests and tools (lethe-pressure): named so call sites say so.
  MemoryPressureDispatchResult SimulateForTesting(MemoryPressureLevel level) {
    return Dispatch(level);
  }

  size_t listener_count() const;
  uint64_t dispatch_count() const { return dispatch_count_; }
  uint64_t total_freed_bytes() const { return total_freed_bytes_; }  // cumulative

 private:
  struct Entry {
    uint64_t id;
    std::string name;
    Listener listener;  // empty once unsubscribed during a dispatch
  };
  void Unsubscribe(uint64_t id);
  MemoryPressureEvent Classify(MemoryPressureLevel level);
  MemoryPressureListenerResult PurgeAllocator();

  const Clock& clock_;
  const Clock& stopwatch_;
  Options options_;
  std::vector<Entry> entries_;
  uint64_t next_id_ = 1;
  bool dispatching_ = false;
  MemoryPressureLevel episode_level_ = MemoryPressureLevel::kNone;
  Clock::TimePoint episode_last_time_{};
  uint64_t dispatch_count_ = 0;
  uint64_t total_freed_bytes_ = 0;
};

}  // namespace lethe

#endif  // LETHE_MEMORY_PRESSURE_H_
