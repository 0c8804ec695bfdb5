// lethe/font_cache.h — fonts (faces, their tables, glyph caches: whatever the embedder keeps per
// font) kept while referenced and for 20–30 s after the last reference goes.
//
// Usage protocol (the engine, main thread): Lookup(key) on a text run; on a miss, load the font and
// Insert(key, font, cost). Both return a Handle, an RAII reference: while any Handle to a font lives,
// the font stays. When the last Handle goes, the font starts aging. The engine's timer calls Tick();
// SubscribeTo(pressure), RegisterReporter(reporter).
//
// Lifetimes: an unreferenced font released (or last looked up) at t goes in (t + (K-1)P, t + KP];
// by default K = 3, P = 10 s: 20..30 s (Firefox's gfxFontCache keeps fonts the same 20–30 s).
// Pressure: moderate ages one generation (ongoing: nothing); critical drops every unreferenced font.
// Cost: the embedder's, given at Insert: the sum of lethe_usable_size() of what the font owns.
// A font that grows while referenced (a glyph table filled as text is drawn) says so with SetCost.
//
// Threads: main thread only. Not thread-safe.
// Ownership: the cache owns the fonts (unique_ptr); a Handle must not outlive the cache (checked).
#ifndef LETHE_FONT_CACHE_H_
#define LETHE_FONT_CACHE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include "lethe/check.h"
#include "lethe/clock.h"
#include "lethe/expiration_tracker.h"
#include "lethe/memory_pressure.h"
#include "lethe/memory_reporter.h"

namespace lethe {

struct FontCacheOptions {
  uint32_t generation_count = 3;
  Clock::Duration generation_period = std::chrono::seconds(10);
};

struct FontCacheStats {
  uint64_t hit_count = 0;
  uint64_t miss_count = 0;
  uint64_t expired_count = 0;
  uint64_t discarded_by_pressure_count = 0;
  uint64_t freed_by_pressure_bytes = 0;
};

template <typename Key, typename Value, typename Hash = std::hash<Key>>
class FontCache {
  struct Entry {
    const Key* key = nullptr;  // the map node's key (stable)
    std::unique_ptr<Value> value;
    uint64_t cost_bytes = 0;
    uint32_t reference_count = 0;
    ExpirationState expiration;
    ExpirationState& GetExpirationState() { return expiration; }
  };

 public:
  // An RAII reference to a cached font. Move-only.
  class Handle {
   public:
    Handle() = default;
    Handle(Handle&& other) noexcept
        : cache_(std::exchange(other.cache_, nullptr)), entry_(std::exchange(other.entry_, nullptr)) {}
    Handle& operator=(Handle&& other) noexcept {
      if (this != &other) {
        reset();
        cache_ = std::exchange(other.cache_, nullptr);
        entry_ = std::exchange(other.entry_, nullptr);
      }
      return *this;
    }
    ~Handle() { reset(); }
    void reset() {
      if (entry_ != nullptr) std::exchange(cache_, nullptr)->Release(std::exchange(entry_, nullptr));
    }
    Value* get() const { return entry_ != nullptr ? entry_->value.get() : nullptr; }
    Value& operator*() const { return *get(); }
    Value* operator->() const { return get(); }
    explicit operator bool() const { return entry_ != nullptr; }

   private:
    friend class FontCache;
    Handle(FontCache* cache, Entry* entry) : cache_(cache), entry_(entry) {
      cache_->Acquire(entry_);
    }
    FontCache* cache_ = nullptr;
    Entry* entry_ = nullptr;
  };

  explicit FontCache(const Clock& clock, FontCacheOptions options = FontCacheOptions{})
      : clock_(clock),
        tracker_(options.generation_count, options.generation_period, clock.Now(),
                 [this](Entry* entry) { Discard(entry, aging_reason_); }) {}
  FontCache(const FontCache&) = delete;
  FontCache& operator=(const FontCache&) = delete;
  ~FontCache() {
    LETHE_CHECK(referenced_count_ == 0, "a FontCache::Handle outlived its FontCache");
    for (auto& [key, entry] : entries_) tracker_.Remove(&entry);
  }

  // Stores `value`; if `key` is cached already, keeps the cached font and drops `value`.
  Handle Insert(const Key& key, std::unique_ptr<Value> value, uint64_t cost_bytes) {
    LETHE_CHECK(value != nullptr, "FontCache::Insert of a null font");
    auto [it, inserted] = entries_.try_emplace(key);
    Entry& entry = it->second;
    if (inserted) {
      entry.key = &it->first;
      entry.value = std::move(value);
      entry.cost_bytes = cost_bytes;
      used_bytes_ += cost_bytes;
    }
    return Handle(this, &entry);
  }

  // An empty Handle on a miss.
  Handle Lookup(const Key& key) {
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      ++stats_.miss_count;
      return Handle();
    }
    ++stats_.hit_count;
    return Handle(this, &it->second);
  }

  // Replaces the cost of the font `handle` references (it grew or shrank while the holder used it).
  void SetCost(const Handle& handle, uint64_t cost_bytes) {
    LETHE_CHECK(handle.cache_ == this && handle.entry_ != nullptr,
                "FontCache::SetCost with a handle of another cache or an empty one");
    used_bytes_ = used_bytes_ - handle.entry_->cost_bytes + cost_bytes;
    referenced_bytes_ = referenced_bytes_ - handle.entry_->cost_bytes + cost_bytes;  // held: referenced
    handle.entry_->cost_bytes = cost_bytes;
  }

  uint64_t Tick() {
    uint64_t before = used_bytes_;
    aging_reason_ = DiscardReason::kExpired;
    tracker_.AgeIfDue(clock_.Now());
    return before - used_bytes_;
  }
  Clock::TimePoint NextExpiryTime() const { return tracker_.NextAgeTime(); }

  uint64_t DropUnreferenced() {
    uint64_t before = used_bytes_;
    while (Entry* entry = tracker_.PeekOldest()) Discard(entry, DiscardReason::kPressure);
    return before - used_bytes_;
  }

  uint64_t OnMemoryPressure(const MemoryPressureEvent& event) {
    uint64_t before = used_bytes_;
    if (event.level == MemoryPressureLevel::kCritical) {
      DropUnreferenced();
    } else if (event.level == MemoryPressureLevel::kModerate && !event.ongoing) {
      aging_reason_ = DiscardReason::kPressure;
      tracker_.Age();
    }
    uint64_t freed = before - used_bytes_;
    stats_.freed_by_pressure_bytes += freed;
    return freed;
  }

  [[nodiscard]] MemoryPressure::Subscription SubscribeTo(MemoryPressure& pressure) {
    return pressure.Subscribe("fonts", [this](const MemoryPressureEvent& e) { return OnMemoryPressure(e); });
  }

  // Reports explicit/<path> and lethe-counters/<path>/...
  [[nodiscard]] MemoryReporter::Registration RegisterReporter(MemoryReporter& reporter,
                                                              std::string path = "fonts") {
    return reporter.Register(path, [this, path](MemoryReportCollector& collector) {
      collector.HeapBytes(path, used_bytes_, "Fonts in use and fonts unused for under 30 s.");
      collector.Counter(path + "/hits", stats_.hit_count, "Lookups that found the font.");
      collector.Counter(path + "/misses", stats_.miss_count, "Lookups that did not.");
      collector.Counter(path + "/expired", stats_.expired_count, "Unreferenced fonts that expired.");
      collector.Counter(path + "/discarded-by-pressure", stats_.discarded_by_pressure_count,
                        "Fonts dropped by memory pressure.");
      collector.Counter(path + "/freed-by-pressure-bytes", stats_.freed_by_pressure_bytes,
                        "Bytes released by memory-pressure events (a byte count, cumulative).");
    });
  }

  size_t font_count() const { return entries_.size(); }
  size_t referenced_font_count() const { return referenced_count_; }
  uint64_t used_bytes() const { return used_bytes_; }
  // What a critical pressure event would free now: the fonts no Handle references.
  uint64_t discardable_bytes() const { return used_bytes_ - referenced_bytes_; }
  const FontCacheStats& stats() const { return stats_; }

 private:
  enum class DiscardReason { kExpired, kPressure };

  void Acquire(Entry* entry) {
    if (entry->reference_count++ == 0) {
      tracker_.Remove(entry);
      ++referenced_count_;
      referenced_bytes_ += entry->cost_bytes;
    }
  }
  void Release(Entry* entry) {
    LETHE_DCHECK(entry->reference_count > 0, "FontCache reference count underflow");
    if (--entry->reference_count == 0) {
      --referenced_count_;
      referenced_bytes_ -= entry->cost_bytes;
      tracker_.Add(entry);  // aging starts at the last release
    }
  }
  void Discard(Entry* entry, DiscardReason reason) {
    tracker_.Remove(entry);
    used_bytes_ -= entry->cost_bytes;
    ++(reason == DiscardReason::kExpired ? stats_.expired_count : stats_.discarded_by_pressure_count);
    Key key = *entry->key;
    entries_.erase(key);
  }

  const Clock& clock_;
  std::unordered_map<Key, Entry, Hash> entries_;
  ExpirationTracker<Entry> tracker_;  // the unreferenced fonts
  DiscardReason aging_reason_ = DiscardReason::kExpired;
  uint64_t used_bytes_ = 0;
  uint64_t referenced_bytes_ = 0;  // of used_bytes_, the fonts a Handle holds
  size_t referenced_count_ = 0;
  FontCacheStats stats_;
};

}  // namespace lethe

#endif  // LETHE_FONT_CACHE_H_
