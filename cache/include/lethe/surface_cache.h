// lethe/surface_cache.h — decoded surfaces and animations, with locks, expiry, a byte cap and
// memory-pressure discarding.
//
// Usage protocol (the engine):
//   - Draw: Lookup(key). On a miss, decode (on a decode thread), then Insert(key, surface, measured
//     decode time). kOverBudget means "draw it uncached": the cache cannot hold it without
//     discarding locked surfaces.
//   - Visible images are locked: LockImage(id) when an image becomes visible, UnlockImage(id) when it
//     stops (counted: n locks need n unlocks). A locked image's surfaces are never discarded, by
//     expiry, cap or pressure. When the last lock goes, its surfaces start expiring from that time.
//   - Before an image is destroyed: RemoveImage(id) (drops its surfaces, locked or not, its locks
//     and its re-decode history).
//   - The engine's timer calls Tick() at NextExpiryTime(). SubscribeTo(pressure) and
//     RegisterReporter(reporter) wire the cache to pressure events and memory reports.
//
// Lifetimes: an unlocked surface not looked up since t is discarded in (t + (K-1)P, t + KP]; by
// default K = 2, P = 10 s (10..20 s). A lookup restarts the window.
//
// Cap: the sum of costs (MemoryBytes at insert) never exceeds max_bytes (default min(RAM/4, 1 GiB)).
// An insert that would exceed it first discards unlocked surfaces, cheapest to recreate per byte
// first: ascending decode_time / cost (ns per byte), ties broken by larger cost first, then older
// insert first. So a big surface that decoded fast goes before a small one that was slow (a
// progressive JPEG, a large GIF). An insert that cannot fit even after discarding every unlocked
// surface (cost > max_bytes - locked bytes) is refused with kOverBudget and discards nothing.
//
// Pressure: moderate ages the cache one generation (ongoing: nothing); critical discards every
// unlocked surface.
//
// Re-decodes: each image remembers its last 16 discarded keys until RemoveImage, so that an insert
// of one of them counts as a re-decode.
//
// Threads: every method may be called from any thread (one mutex): decode threads Insert while the
// main thread looks up, locks and ticks. Surfaces are released outside the mutex: the cache moves
// discarded references to a list that the calling method drops after unlocking, so a surface's
// destructor never runs under the cache's lock.
// Ownership: the cache holds one shared reference per surface; a drawer may hold others.
#ifndef LETHE_SURFACE_CACHE_H_
#define LETHE_SURFACE_CACHE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include "lethe/cached_surface.h"
#include "lethe/clock.h"
#include "lethe/expiration_tracker.h"
#include "lethe/memory_pressure.h"
#include "lethe/memory_reporter.h"

namespace lethe {

// min(physical RAM / 4, 1 GiB); 1 GiB when RAM is unknown.
uint64_t DefaultSurfaceCacheMaxBytes();

struct SurfaceCacheOptions {
  uint32_t generation_count = 2;
  Clock::Duration generation_period = std::chrono::seconds(10);
  uint64_t max_bytes = DefaultSurfaceCacheMaxBytes();
};

enum class SurfaceInsertOutcome {
  kInserted,
  kAlreadyPresent,  // the key is cached already; the new surface was not kept
  kOverBudget,      // cannot fit without discarding locked surfaces; draw uncached
  kInvalid,         // null surface or zero cost
};
const char* SurfaceInsertOutcomeName(SurfaceInsertOutcome outcome);

struct SurfaceCacheStats {
  uint64_t hit_count = 0;
  uint64_t miss_count = 0;
  uint64_t insert_count = 0;
  uint64_t redecode_count = 0;  // inserts of a key this cache had discarded before
  uint64_t expired_count = 0;
  uint64_t evicted_for_cap_count = 0;
  uint64_t discarded_by_pressure_count = 0;
  uint64_t over_budget_count = 0;
  uint64_t freed_by_pressure_bytes = 0;
};

class SurfaceCache {
 public:
  explicit SurfaceCache(const Clock& clock, SurfaceCacheOptions options = SurfaceCacheOptions{});
  SurfaceCache(const SurfaceCache&) = delete;
  SurfaceCache& operator=(const SurfaceCache&) = delete;
  ~SurfaceCache();

  [[nodiscard]] SurfaceInsertOutcome Insert(const SurfaceKey& key,
                                            std::shared_ptr<CachedSurface> surface,
                                            Clock::Duration decode_time);
  // nullptr on a miss. A hit on an unlocked surface restarts its expiry window.
  std::shared_ptr<CachedSurface> Lookup(const SurfaceKey& key);

  void LockImage(uint64_t image_id);
  void UnlockImage(uint64_t image_id);  // more unlocks than locks is a caller bug (checked)
  bool IsImageLocked(uint64_t image_id) const;
  // Returns the bytes released.
  uint64_t RemoveImage(uint64_t image_id);

  // Runs due expiry; returns the bytes released.
  uint64_t Tick();
  Clock::TimePoint NextExpiryTime() const;
  uint64_t DiscardUnlocked();
  uint64_t OnMemoryPressure(const MemoryPressureEvent& event);

  [[nodiscard]] MemoryPressure::Subscription SubscribeTo(MemoryPressure& pressure);
  [[nodiscard]] MemoryReporter::Registration RegisterReporter(MemoryReporter& reporter);

  uint64_t used_bytes() const;
  uint64_t locked_bytes() const;
  uint64_t max_bytes() const { return options_.max_bytes; }
  size_t surface_count() const;
  SurfaceCacheStats stats() const;

 private:
  struct Entry;
  struct ImageRecord {
    uint32_t lock_count = 0;
    std::vector<Entry*> surfaces;             // each entry stores its index here
    std::vector<SurfaceKey> discarded_keys;   // recent discards, to count re-decodes (bounded)
  };
  // Eviction order over unlocked entries (see the top of this file).
  struct EvictionRank {
    double ns_per_byte;
    uint64_t cost_bytes;
    uint64_t sequence;
    bool operator<(const EvictionRank& other) const;
  };
  using EvictionOrder = std::set<std::pair<EvictionRank, Entry*>>;
  using DiscardList = std::vector<std::shared_ptr<CachedSurface>>;
  enum class DiscardReason { kExpired, kCap, kPressure, kRemoved };

  // All below: caller holds mutex_.
  ImageRecord& Image(uint64_t image_id);
  void MakeDiscardable(Entry* entry);
  void MakeUndiscardable(Entry* entry);
  void Discard(Entry* entry, DiscardReason reason);
  uint64_t DiscardAllUnlockedLocked(DiscardReason reason);
  void MaybeForgetImage(uint64_t image_id);
  bool TakeDiscardedKey(const SurfaceKey& key);
  void Report(MemoryReportCollector& collector) const;

  const Clock& clock_;
  const SurfaceCacheOptions options_;
  mutable std::mutex mutex_;
  std::unordered_map<SurfaceKey, std::unique_ptr<Entry>, SurfaceKeyHash> entries_;
  std::unordered_map<uint64_t, ImageRecord> images_;
  EvictionOrder eviction_order_;
  ExpirationTracker<Entry> tracker_;
  DiscardList discarded_;  // released by the public method, after unlocking
  DiscardReason aging_reason_ = DiscardReason::kExpired;  // what the tracker's expiry counts as
  uint64_t used_bytes_ = 0;
  uint64_t locked_bytes_ = 0;
  uint64_t next_sequence_ = 0;
  SurfaceCacheStats stats_;
};

}  // namespace lethe

#endif  // LETHE_SURFACE_CACHE_H_
