#include "lethe/memory_pressure.h"

#include <algorithm>
#include <utility>

#include "lethe/alloc.h"
#include "lethe/check.h"

namespace lethe {

MemoryPressure::Subscription::Subscription(Subscription&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)), id_(other.id_) {}

MemoryPressure::Subscription& MemoryPressure::Subscription::operator=(
    Subscription&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = std::exchange(other.owner_, nullptr);
    id_ = other.id_;
  }
  return *this;
}

MemoryPressure::Subscription::~Subscription() { reset(); }

void MemoryPressure::Subscription::reset() {
  if (owner_ != nullptr) std::exchange(owner_, nullptr)->Unsubscribe(id_);
}

MemoryPressure::MemoryPressure(const Clock& clock, Options options, const Clock& stopwatch)
    : clock_(clock), stopwatch_(stopwatch), options_(options) {}

MemoryPressure::~MemoryPressure() {
  LETHE_CHECK(listener_count() == 0, "a MemoryPressure::Subscription outlived its MemoryPressure");
}

MemoryPressure::Subscription MemoryPressure::Subscribe(std::string name, Listener listener) {
  LETHE_CHECK(static_cast<bool>(listener), "MemoryPressure::Subscribe needs a listener");
  uint64_t id = next_id_++;
  entries_.push_back(Entry{id, std::move(name), std::move(listener)});
  return Subscription(this, id);
}

void MemoryPressure::Unsubscribe(uint64_t id) {
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [id](const Entry& entry) { return entry.id == id; });
  if (it == entries_.end()) return;
  if (dispatching_) {
    it->listener = nullptr;  // erased after the dispatch; indices stay valid meanwhile
  } else {
    entries_.erase(it);
  }
}

size_t MemoryPressure::listener_count() const {
  return static_cast<size_t>(std::count_if(entries_.begin(), entries_.end(),
                                           [](const Entry& entry) { return entry.listener; }));
}

// Ongoing: within the window of the last event of this episode, at the same or a lower level.
MemoryPressureEvent MemoryPressure::Classify(MemoryPressureLevel level) {
  Clock::TimePoint now = clock_.Now();
  bool in_window = episode_level_ != MemoryPressureLevel::kNone &&
                   now - episode_last_time_ < options_.ongoing_window;
  MemoryPressureEvent event{level, in_window && level <= episode_level_};
  episode_level_ = in_window ? std::max(level, episode_level_) : level;
  episode_last_time_ = now;
  return event;
}

MemoryPressureListenerResult MemoryPressure::PurgeAllocator() {
  lethe_stats_t before;
  lethe_stats(&before);
  Clock::TimePoint start = stopwatch_.Now();
  lethe_purge();
  Clock::Duration elapsed = stopwatch_.Now() - start;
  lethe_stats_t after;
  lethe_stats(&after);
  uint64_t purged = after.purged_bytes >= before.purged_bytes
                        ? after.purged_bytes - before.purged_bytes
                        : 0;
  return MemoryPressureListenerResult{"allocator-purge", purged, elapsed};
}

MemoryPressureDispatchResult MemoryPressure::Dispatch(MemoryPressureLevel level) {
  LETHE_CHECK(!dispatching_, "MemoryPressure::Dispatch called from a listener");
  MemoryPressureDispatchResult result;
  if (level == MemoryPressureLevel::kNone) {
    episode_level_ = MemoryPressureLevel::kNone;  // pressure stopped: the next event is fresh
    return result;
  }
  result.event = Classify(level);
  ++dispatch_count_;
  dispatching_ = true;
  Clock::TimePoint start = stopwatch_.Now();
  // By index: a listener may unsubscribe (tombstone) or subscribe (appended, not called now).
  const size_t count = entries_.size();
  for (size_t i = 0; i < count; ++i) {
    if (!entries_[i].listener) continue;
    Clock::TimePoint listener_start = stopwatch_.Now();
    uint64_t freed = entries_[i].listener(result.event);
    result.listeners.push_back(
        MemoryPressureListenerResult{entries_[i].name, freed, stopwatch_.Now() - listener_start});
  }
  dispatching_ = false;
  std::erase_if(entries_, [](const Entry& entry) { return !entry.listener; });
  if (level == MemoryPressureLevel::kCritical && !result.event.ongoing &&
      options_.purge_allocator_on_critical) {
    result.purged = true;
    result.purge = PurgeAllocator();
  }
  result.total_elapsed = stopwatch_.Now() - start;
  for (const MemoryPressureListenerResult& listener : result.listeners) {
    result.total_freed_bytes += listener.freed_bytes;
  }
  total_freed_bytes_ += result.total_freed_bytes;
  return result;
}

}  // namespace lethe
