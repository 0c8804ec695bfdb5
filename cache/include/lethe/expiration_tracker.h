// lethe/expiration_tracker.h — timer-driven aging of cache entries in K generations of period P.
//
// What it is: every cache (surfaces, images, back/forward documents, fonts, shaped words) keeps the
// entries it may discard in one ExpirationTracker. An entry that is used is Touch()ed: it moves to
// the newest generation. Every period P the owner's timer calls AgeIfDue(now) (or Age()), which
// expires the whole oldest generation, calling the owner's callback for each entry, and makes that
// (now empty) generation the newest.
//
// Algorithm: K generations in a ring, each an array of T*. Every tracked entry stores its own
// (generation, index) in its ExpirationState, so Add, Touch and Remove are O(1): Remove swaps the
// entry with the last of its generation and pops. Age() is O(size of the oldest generation).
//
// Timing guarantee: generations turn over at origin + n*P (origin = construction time). An entry
// last added or touched at time t expires at the first turnover that finds it in the oldest
// generation, which is strictly after t + (K-1)P and no later than t + KP:
//     t + (K-1)P  <  expiry  <=  t + KP      (plus however late the owner calls AgeIfDue)
// e.g. K=2, P=10 s: an untouched surface lives 10..20 s; K=11, P=T/10: a document lives T..1.1T.
//
// Threads: not thread-safe. The owner calls every method under its own lock (or on one thread).
// Ownership: the tracker never owns entries. The entry must be Remove()d before it is destroyed.
// The callback receives an entry already removed from the tracker; it may destroy it, Remove()
// others (even ones of the generation being expired) or Add() it back (it then goes to the newest
// generation and is not expired again in this Age()).
//
// T must have a member function `ExpirationState& GetExpirationState()`.
#ifndef LETHE_EXPIRATION_TRACKER_H_
#define LETHE_EXPIRATION_TRACKER_H_

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "lethe/check.h"
#include "lethe/clock.h"

namespace lethe {

// Stored inside each tracked entry: where it sits in its tracker. Invariant for a tracked entry e
// of tracker r: r.generations_[e.generation][e.index] == &e.
struct ExpirationState {
  static constexpr uint32_t kNotTracked = UINT32_MAX;
  uint32_t generation = kNotTracked;
  uint32_t index = 0;
  bool IsTracked() const { return generation != kNotTracked; }
};

template <typename T>
class ExpirationTracker {
 public:
  static constexpr uint32_t kMaxGenerations = 64;
  using ExpireCallback = std::function<void(T*)>;

  // generation_count (K) >= 2, period (P) > 0. `now` is the origin of the turnover schedule.
  ExpirationTracker(uint32_t generation_count, Clock::Duration period, Clock::TimePoint now,
                    ExpireCallback on_expire)
      : generations_(generation_count),
        period_(period),
        next_age_time_(now + period),
        on_expire_(std::move(on_expire)) {
    LETHE_CHECK(generation_count >= 2 && generation_count <= kMaxGenerations,
                "ExpirationTracker needs 2..64 generations");
    LETHE_CHECK(period.count() > 0, "ExpirationTracker needs a positive period");
  }
  ExpirationTracker(const ExpirationTracker&) = delete;
  ExpirationTracker& operator=(const ExpirationTracker&) = delete;

  // Starts tracking `entry` (which must not be tracked) in the newest generation. O(1) amortized.
  void Add(T* entry) {
    ExpirationState& state = entry->GetExpirationState();
    LETHE_CHECK(!state.IsTracked(), "ExpirationTracker::Add of an entry already tracked");
    std::vector<T*>& newest = generations_[newest_];
    state.generation = newest_;
    state.index = static_cast<uint32_t>(newest.size());
    newest.push_back(entry);
    ++size_;
  }

  // Makes room for `count` tracked entries in every generation, so that Add, Touch and the aging
  // never allocate while at most `count` entries are tracked (capacity is never given back). Throws
  // std::bad_alloc, tracking nothing differently, when the memory is refused.
  void Reserve(size_t count) {
    for (std::vector<T*>& generation : generations_) {
      if (generation.capacity() < count) generation.reserve(std::max(count, 2 * generation.capacity()));
    }
  }

  // Stops tracking `entry`; a no-op when it is not tracked. O(1).
  void Remove(T* entry) {
    ExpirationState& state = entry->GetExpirationState();
    if (!state.IsTracked()) return;
    std::vector<T*>& generation = generations_[state.generation];
    LETHE_DCHECK(state.index < generation.size() && generation[state.index] == entry,
                 "ExpirationState does not match its tracker");
    T* last = generation.back();
    generation[state.index] = last;
    last->GetExpirationState().index = state.index;
    generation.pop_back();
    state = ExpirationState{};
    --size_;
  }

  // Marks `entry` as just used: it moves to the newest generation (is added if untracked). O(1).
  void Touch(T* entry) {
    ExpirationState& state = entry->GetExpirationState();
    if (state.IsTracked() && state.generation == newest_) return;
    Remove(entry);
    Add(entry);
  }

  // Expires the oldest generation now, whatever the time; returns how many entries expired.
  // The turnover schedule is unchanged (pressure uses this to age one step early).
  size_t Age() {
    uint32_t oldest = OldestGeneration();
    std::vector<T*>& generation = generations_[oldest];
    size_t expired_count = 0;
    // One at a time from the back, so that the callback may Remove() entries still waiting here.
    while (!generation.empty()) {
      T* entry = generation.back();
      generation.pop_back();
      entry->GetExpirationState() = ExpirationState{};
      --size_;
      ++expired_count;
      on_expire_(entry);
    }
    newest_ = oldest;
    return expired_count;
  }

  // Expires every entry (critical pressure). Returns how many expired.
  size_t AgeAll() {
    size_t expired_count = 0;
    for (size_t i = 0; i < generations_.size(); ++i) expired_count += Age();
    return expired_count;
  }

  // Runs every turnover due at `now` (one per elapsed period since the last). Returns how many
  // entries expired. After an idle gap of K periods or more, everything has expired; the schedule
  // then restarts on the period grid.
  size_t AgeIfDue(Clock::TimePoint now) {
    size_t expired_count = 0;
    uint32_t turnovers = 0;
    while (now >= next_age_time_) {
      if (turnovers < generations_.size()) expired_count += Age();
      ++turnovers;
      next_age_time_ += period_;
      if (turnovers >= generations_.size() && now >= next_age_time_) {
        // Skip the remaining empty turnovers in one step.
        auto periods_behind = (now - next_age_time_) / period_ + 1;
        next_age_time_ += periods_behind * period_;
      }
    }
    return expired_count;
  }

  // An entry of the oldest non-empty generation (the best eviction candidate when a cache is over
  // its cap), or nullptr when empty. O(K).
  T* PeekOldest() const {
    uint32_t generation = OldestGeneration();
    for (size_t i = 0; i < generations_.size(); ++i) {
      if (!generations_[generation].empty()) return generations_[generation].back();
      generation = (generation + 1) % static_cast<uint32_t>(generations_.size());
    }
    return nullptr;
  }

  // When the owner's timer should next call AgeIfDue.
  Clock::TimePoint NextAgeTime() const { return next_age_time_; }
  Clock::Duration period() const { return period_; }
  uint32_t generation_count() const { return static_cast<uint32_t>(generations_.size()); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Walks the invariant: every entry's state points at its own slot, and size_ is their count.
  bool Validate() {
    size_t count = 0;
    for (uint32_t g = 0; g < generations_.size(); ++g) {
      for (uint32_t i = 0; i < generations_[g].size(); ++i) {
        const ExpirationState& state = generations_[g][i]->GetExpirationState();
        if (state.generation != g || state.index != i) return false;
        ++count;
      }
    }
    return count == size_;
  }

 private:
  uint32_t OldestGeneration() const {
    return (newest_ + 1) % static_cast<uint32_t>(generations_.size());
  }

  std::vector<std::vector<T*>> generations_;
  uint32_t newest_ = 0;
  size_t size_ = 0;
  Clock::Duration period_;
  Clock::TimePoint next_age_time_;
  ExpireCallback on_expire_;
};

}  // namespace lethe

#endif  // LETHE_EXPIRATION_TRACKER_H_
