// lethe/shaped_word_cache.h — text-shaping results per (font, word), kept about a minute.
//
// Usage protocol (the engine's text layout, main thread): Lookup(font, word) before shaping a word;
// on a miss, shape it and Insert(font, word, glyphs, cost). The engine's timer calls Tick();
// SubscribeTo(pressure), RegisterReporter(reporter).
//
// Rules (Firefox's gfxFont word cache is the model):
//   - words longer than max_word_length (32 characters, counted in Char units) are not cached:
//     Insert says kTooLong (long words rarely repeat; caching them would only churn);
//   - at most max_word_count (10,000) words: an Insert at the cap first evicts a word of the
//     oldest generation;
//   - a word not looked up since t expires in (t + (K-1)P, t + KP]; by default K = 3, P = 20 s:
//     40..60 s;
//   - any pressure event (moderate, critical, ongoing or not) empties the cache: shaping again is
//     cheap and the words are many small blocks.
// Cost: the embedder's, given at Insert: the sum of lethe_usable_size() of what the value owns.
//
// Threads: main thread only. Not thread-safe. Lookup's pointer is valid until the next call that
// inserts, ticks or flushes.
#ifndef LETHE_SHAPED_WORD_CACHE_H_
#define LETHE_SHAPED_WORD_CACHE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "lethe/clock.h"
#include "lethe/expiration_tracker.h"
#include "lethe/memory_pressure.h"
#include "lethe/memory_reporter.h"

namespace lethe {

struct ShapedWordCacheOptions {
  uint32_t generation_count = 3;
  Clock::Duration generation_period = std::chrono::seconds(20);
  size_t max_word_count = 10000;
  size_t max_word_length = 32;
};

enum class ShapedWordInsertOutcome { kInserted, kAlreadyPresent, kTooLong, kEmpty };

struct ShapedWordCacheStats {
  uint64_t hit_count = 0;
  uint64_t miss_count = 0;
  uint64_t too_long_count = 0;
  uint64_t expired_count = 0;
  uint64_t evicted_for_count_count = 0;
  uint64_t flushed_count = 0;
};

template <typename Value, typename Char = char16_t>
class ShapedWordCache {
  using Word = std::basic_string<Char>;
  using WordView = std::basic_string_view<Char>;
  struct Key {
    uint64_t font_key;
    Word word;
  };
  struct KeyView {
    uint64_t font_key;
    WordView word;
  };
  // Transparent hash and equality: lookups by KeyView allocate nothing.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(const KeyView& key) const {
      return std::hash<WordView>{}(key.word) ^ (key.font_key * 0x9E3779B97F4A7C15ull);
    }
    size_t operator()(const Key& key) const { return (*this)(KeyView{key.font_key, key.word}); }
  };
  struct KeyEqual {
    using is_transparent = void;
    static KeyView View(const Key& key) { return KeyView{key.font_key, key.word}; }
    static KeyView View(const KeyView& key) { return key; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return View(a).font_key == View(b).font_key && View(a).word == View(b).word;
    }
  };
  struct Entry {
    const Key* key = nullptr;  // the map node's key (stable)
    Value value;
    uint64_t cost_bytes = 0;
    ExpirationState expiration;
    ExpirationState& GetExpirationState() { return expiration; }
  };

 public:
  explicit ShapedWordCache(const Clock& clock,
                           ShapedWordCacheOptions options = ShapedWordCacheOptions{})
      : clock_(clock),
        options_(options),
        tracker_(options.generation_count, options.generation_period, clock.Now(),
                 [this](Entry* entry) { Erase(entry); }) {}
  ShapedWordCache(const ShapedWordCache&) = delete;
  ShapedWordCache& operator=(const ShapedWordCache&) = delete;
  ~ShapedWordCache() {
    for (auto& [key, entry] : entries_) tracker_.Remove(&entry);
  }

  ShapedWordInsertOutcome Insert(uint64_t font_key, WordView word, Value value, uint64_t cost_bytes) {
    if (word.empty()) return ShapedWordInsertOutcome::kEmpty;
    if (word.size() > options_.max_word_length) {
      ++stats_.too_long_count;
      return ShapedWordInsertOutcome::kTooLong;
    }
    if (entries_.find(KeyView{font_key, word}) != entries_.end()) {
      return ShapedWordInsertOutcome::kAlreadyPresent;
    }
    while (entries_.size() >= options_.max_word_count) {
      ++stats_.evicted_for_count_count;
      Erase(tracker_.PeekOldest());
    }
    auto it = entries_.try_emplace(Key{font_key, Word(word)},
                                   Entry{nullptr, std::move(value), cost_bytes, {}})
                  .first;
    Entry& entry = it->second;
    entry.key = &it->first;
    used_bytes_ += cost_bytes;
    tracker_.Add(&entry);
    return ShapedWordInsertOutcome::kInserted;
  }

  // nullptr on a miss; a hit restarts the word's window.
  const Value* Lookup(uint64_t font_key, WordView word) {
    auto it = entries_.find(KeyView{font_key, word});
    if (it == entries_.end()) {
      ++stats_.miss_count;
      return nullptr;
    }
    ++stats_.hit_count;
    tracker_.Touch(&it->second);
    return &it->second.value;
  }

  uint64_t Tick() {
    uint64_t before = used_bytes_;
    uint64_t expired = tracker_.AgeIfDue(clock_.Now());
    stats_.expired_count += expired;
    return before - used_bytes_;
  }
  Clock::TimePoint NextExpiryTime() const { return tracker_.NextAgeTime(); }

  uint64_t Clear() {
    uint64_t before = used_bytes_;
    stats_.flushed_count += entries_.size();
    for (auto& [key, entry] : entries_) tracker_.Remove(&entry);
    entries_.clear();
    used_bytes_ = 0;
    return before;
  }

  // Every level empties the cache (cheap flushing, so ongoing events too).
  uint64_t OnMemoryPressure(const MemoryPressureEvent& event) {
    return event.level == MemoryPressureLevel::kNone ? 0 : Clear();
  }

  [[nodiscard]] MemoryPressure::Subscription SubscribeTo(MemoryPressure& pressure) {
    return pressure.Subscribe("shaped-words",
                              [this](const MemoryPressureEvent& e) { return OnMemoryPressure(e); });
  }

  [[nodiscard]] MemoryReporter::Registration RegisterReporter(MemoryReporter& reporter) {
    return reporter.Register("shaped-words", [this](MemoryReportCollector& collector) {
      collector.HeapBytes("shaped-words", used_bytes_, "Shaped glyph runs of recently drawn words.");
      collector.Counter("shaped-words/hits", stats_.hit_count, "Words found shaped.");
      collector.Counter("shaped-words/misses", stats_.miss_count, "Words shaped again.");
      collector.Counter("shaped-words/too-long", stats_.too_long_count,
                        "Words over the length limit, never cached.");
      collector.Counter("shaped-words/expired", stats_.expired_count, "Words that expired.");
      collector.Counter("shaped-words/evicted-for-count", stats_.evicted_for_count_count,
                        "Words evicted at the word-count cap.");
      collector.Counter("shaped-words/flushed", stats_.flushed_count,
                        "Words dropped by memory pressure or Clear().");
    });
  }

  size_t word_count() const { return entries_.size(); }
  uint64_t used_bytes() const { return used_bytes_; }
  // What a pressure event would free now: every word (any level flushes).
  uint64_t discardable_bytes() const { return used_bytes_; }
  const ShapedWordCacheStats& stats() const { return stats_; }

 private:
  void Erase(Entry* entry) {
    tracker_.Remove(entry);
    used_bytes_ -= entry->cost_bytes;
    entries_.erase(entries_.find(KeyView{entry->key->font_key, entry->key->word}));
  }

  const Clock& clock_;
  const ShapedWordCacheOptions options_;
  std::unordered_map<Key, Entry, KeyHash, KeyEqual> entries_;
  ExpirationTracker<Entry> tracker_;
  uint64_t used_bytes_ = 0;
  ShapedWordCacheStats stats_;
};

}  // namespace lethe

#endif  // LETHE_SHAPED_WORD_CACHE_H_
