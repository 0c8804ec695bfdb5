// lethe/bf_cache.h — documents kept for back/forward navigation.
//
// Usage protocol (the engine, main thread):
//   - Navigating away from history entry i of session s: Store({s, i}, document), then
//     SetCurrentIndex(s, new index). Going back/forward to a stored entry: Take(id) gives the
//     document back (and removes it); nullptr means "load it again".
//   - A closed tab: RemoveSession(s). The engine's timer calls Tick(); SubscribeTo(pressure),
//     RegisterReporter(reporter).
//
// Lifetimes: a document stored at time t expires in (t + T, t + 1.1 T], T = time_to_live (30 min by
// default): an ExpirationTracker of K = 11 generations of P = T / 10, whose guarantee
// (t + (K-1)P, t + KP] is exactly that window. Stored documents are never touched, so the window
// runs from the Store.
// Count cap: at most max_document_count (8) documents. A Store beyond it evicts the document
// farthest from its session's current index (|index - current|; a session with no current index
// counts as farthest); ties go to the earliest stored. The document just stored may be the one
// evicted (Store then says kEvicted).
// Pressure: moderate ages one generation (ongoing: nothing); critical drops every document.
//
// Threads: main thread only (documents belong to it). Not thread-safe.
// Ownership: the cache owns stored documents; Take hands ownership back.
#ifndef LETHE_BF_CACHE_H_
#define LETHE_BF_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "lethe/clock.h"
#include "lethe/expiration_tracker.h"
#include "lethe/memory_pressure.h"
#include "lethe/memory_reporter.h"

namespace lethe {

// A frozen document as the cache sees it. MemoryBytes(): the sum of lethe_usable_size() of what it
// owns, read once at Store (a frozen document does not grow).
class CachedDocument {
 public:
  virtual ~CachedDocument() = default;
  virtual size_t MemoryBytes() const = 0;
};

struct HistoryEntryId {
  uint64_t session_id = 0;
  int32_t index = 0;
  bool operator==(const HistoryEntryId&) const = default;
};

struct BfCacheOptions {
  Clock::Duration time_to_live = std::chrono::minutes(30);
  size_t max_document_count = 8;
};

enum class BfCacheStoreOutcome { kStored, kEvicted, kInvalid };

struct BfCacheStats {
  uint64_t stored_count = 0;
  uint64_t restored_count = 0;
  uint64_t expired_count = 0;
  uint64_t evicted_for_count_count = 0;
  uint64_t discarded_by_pressure_count = 0;
  uint64_t freed_by_pressure_bytes = 0;
};

class BfCache {
 public:
  explicit BfCache(const Clock& clock, BfCacheOptions options = BfCacheOptions{});
  BfCache(const BfCache&) = delete;
  BfCache& operator=(const BfCache&) = delete;
  ~BfCache();

  // Replaces a document already stored under `id`.
  [[nodiscard]] BfCacheStoreOutcome Store(const HistoryEntryId& id,
                                          std::unique_ptr<CachedDocument> document);
  std::unique_ptr<CachedDocument> Take(const HistoryEntryId& id);
  bool Contains(const HistoryEntryId& id) const;
  void SetCurrentIndex(uint64_t session_id, int32_t index);
  uint64_t RemoveSession(uint64_t session_id);  // bytes released
  uint64_t Clear();

  uint64_t Tick();
  Clock::TimePoint NextExpiryTime() const { return tracker_.NextAgeTime(); }
  uint64_t OnMemoryPressure(const MemoryPressureEvent& event);
  [[nodiscard]] MemoryPressure::Subscription SubscribeTo(MemoryPressure& pressure);
  [[nodiscard]] MemoryReporter::Registration RegisterReporter(MemoryReporter& reporter);

  size_t document_count() const { return entries_.size(); }
  uint64_t used_bytes() const { return used_bytes_; }
  // What a critical pressure event would free now: every document.
  uint64_t discardable_bytes() const { return used_bytes_; }
  const BfCacheStats& stats() const { return stats_; }

 private:
  struct Entry {
    HistoryEntryId id;
    std::unique_ptr<CachedDocument> document;
    uint64_t cost_bytes = 0;
    uint64_t sequence = 0;
    ExpirationState expiration;
    ExpirationState& GetExpirationState() { return expiration; }
  };
  enum class DiscardReason { kExpired, kCount, kPressure, kRemoved };

  std::vector<std::unique_ptr<Entry>>::iterator Find(const HistoryEntryId& id);
  uint64_t Distance(const Entry& entry) const;
  void Discard(Entry* entry, DiscardReason reason);
  uint64_t DiscardIf(bool (*predicate)(const Entry&, uint64_t), uint64_t argument,
                     DiscardReason reason);

  const Clock& clock_;
  const BfCacheOptions options_;
  std::vector<std::unique_ptr<Entry>> entries_;  // few (max_document_count): linear scans
  std::unordered_map<uint64_t, int32_t> current_index_;
  ExpirationTracker<Entry> tracker_;
  DiscardReason aging_reason_ = DiscardReason::kExpired;
  uint64_t used_bytes_ = 0;
  uint64_t next_sequence_ = 0;
  BfCacheStats stats_;
};

}  // namespace lethe

#endif  // LETHE_BF_CACHE_H_
