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
// Re-decodes and regret: each image remembers its last 16 discarded keys (with when and why) until
// RemoveImage, so that an insert of one of them counts as a re-decode, and as a regret when it comes
// within regret_window (5 s) of the discard: a discard that was undone almost at once, whose bytes
// and decode time the counters add up per discard reason, to tune the expiry times against.
//
// Out of memory: every method either completes or, when an allocation fails, changes nothing:
// Insert returns kOutOfMemory, LockImage throws std::bad_alloc. Discarding never allocates (a
// surface whose release cannot be deferred is released under the lock instead).
// TryDiscardUnlocked is for the allocator's low-memory callback: it never waits for the lock.
//
// Threads: every method may be called from any thread (one lethe::internal::CacheMutex): decode threads Insert while the
// main thread looks up, locks and ticks. Surfaces are released outside the mutex: the cache moves
// discarded references to a list that the calling method drops after unlocking, so a surface's
// destructor never runs under the cache's lock.
// Ownership: the cache holds one shared reference per surface; a drawer may hold others.
#ifndef LETHE_SURFACE_CACHE_H_
#define LETHE_SURFACE_CACHE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "lethe/cached_surface.h"
#include "lethe/clock.h"
#include "lethe/memory_pressure.h"
#include "lethe/memory_reporter.h"

namespace lethe {

// min(physical RAM / 4, 1 GiB); 1 GiB when RAM is unknown.
uint64_t DefaultSurfaceCacheMaxBytes();

struct SurfaceCacheOptions {
  uint32_t generation_count = 2;
  Clock::Duration generation_period = std::chrono::seconds(10);
  uint64_t max_bytes = DefaultSurfaceCacheMaxBytes();
  // A re-decode within this time of the discard counts as a regret.
  Clock::Duration regret_window = std::chrono::seconds(5);
};

enum class SurfaceInsertOutcome {
  kInserted,
  kAlreadyPresent,  // the key is cached already; the new surface was not kept
  kOverBudget,      // cannot fit without discarding locked surfaces; draw uncached
  kInvalid,         // null surface or zero cost
  kOutOfMemory,     // the cache's bookkeeping could not allocate; nothing changed; draw uncached
};
const char* SurfaceInsertOutcomeName(SurfaceInsertOutcome outcome);

// The counters of a SurfaceCache, as one list: the struct fields, ForEachCounter and the memory
// report (lethe-counters/images/surface-cache/<report name>) are generated from it.
// X(field, report name, description). All cumulative.
#define LETHE_SURFACE_CACHE_COUNTERS(X)                                                            \
  X(hit_count, "hits", "Lookups that found a decoded surface.")                                    \
  X(miss_count, "misses", "Lookups that found none (a decode follows).")                           \
  X(insert_count, "inserts", "Surfaces inserted.")                                                 \
  X(redecode_count, "redecodes", "Inserts of a surface this cache had discarded.")                 \
  X(redecode_time_ns, "redecode-time-ns", "Decode time spent on those re-decodes, in ns.")         \
  X(regret_count, "regrets",                                                                       \
    "Discards undone: re-decodes within the regret window (5 s) of the discard.")                  \
  X(regret_bytes, "regret-bytes", "Bytes of the surfaces decoded again as regrets (a byte count).") \
  X(regret_time_ns, "regret-decode-time-ns", "Decode time spent on regretted re-decodes, in ns.")  \
  X(regret_after_expiry_count, "regrets-after-expiry", "Regrets of surfaces that had expired.")    \
  X(regret_after_cap_count, "regrets-after-cap", "Regrets of surfaces evicted for the cap.")       \
  X(regret_after_pressure_count, "regrets-after-pressure",                                         \
    "Regrets of surfaces discarded by memory pressure.")                                           \
  X(expired_count, "expired", "Surfaces discarded by expiry.")                                     \
  X(evicted_for_cap_count, "evicted-for-cap", "Surfaces discarded to stay under the cap.")         \
  X(discarded_by_pressure_count, "discarded-by-pressure", "Surfaces discarded by memory pressure.") \
  X(over_budget_count, "over-budget", "Inserts refused: no room without locked surfaces.")         \
  X(out_of_memory_count, "out-of-memory", "Inserts refused: the bookkeeping could not allocate.")   \
  X(low_memory_busy_count, "low-memory-busy",                                                      \
    "Low-memory callbacks that found the cache locked and left it to the loop thread.")           \
  X(freed_by_pressure_bytes, "freed-by-pressure-bytes",                                            \
    "Bytes released by memory-pressure events (a byte count, cumulative).")

struct SurfaceCacheStats {
#define LETHE_SURFACE_CACHE_COUNTER_FIELD_(field, name, description) uint64_t field = 0;
  LETHE_SURFACE_CACHE_COUNTERS(LETHE_SURFACE_CACHE_COUNTER_FIELD_)
#undef LETHE_SURFACE_CACHE_COUNTER_FIELD_

  // Calls visit(report name, description, value) for each counter, in list order.
  template <typename Visit>
  void ForEachCounter(Visit&& visit) const {
#define LETHE_SURFACE_CACHE_COUNTER_VISIT_(field, name, description) visit(name, description, field);
    LETHE_SURFACE_CACHE_COUNTERS(LETHE_SURFACE_CACHE_COUNTER_VISIT_)
#undef LETHE_SURFACE_CACHE_COUNTER_VISIT_
  }
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

  void LockImage(uint64_t image_id);    // throws std::bad_alloc, changing nothing, when out of memory
  void UnlockImage(uint64_t image_id);  // more unlocks than locks is a caller bug (checked)
  bool IsImageLocked(uint64_t image_id) const;
  // Returns the bytes released.
  uint64_t RemoveImage(uint64_t image_id);

  // Runs due expiry; returns the bytes released.
  uint64_t Tick();
  Clock::TimePoint NextExpiryTime() const;
  uint64_t DiscardUnlocked();
  // DiscardUnlocked for the allocator's low-memory callback: never waits. nullopt when the cache is
  // locked (by this thread, inside Insert, or by another): nothing was freed, and the caller leaves
  // the flush to a thread that may wait (the loop's critical dispatch).
  std::optional<uint64_t> TryDiscardUnlocked();
  uint64_t OnMemoryPressure(const MemoryPressureEvent& event);

  [[nodiscard]] MemoryPressure::Subscription SubscribeTo(MemoryPressure& pressure);
  [[nodiscard]] MemoryReporter::Registration RegisterReporter(MemoryReporter& reporter);

  uint64_t used_bytes() const;
  uint64_t locked_bytes() const;
  // What a critical pressure event would free now: the unlocked surfaces (one lock, one read).
  uint64_t discardable_bytes() const;
  uint64_t max_bytes() const { return options_.max_bytes; }
  size_t surface_count() const;
  SurfaceCacheStats stats() const;

  // Walks every entry and checks the invariants of surface_cache.cc: "" when they hold, else the
  // first broken one. Also run after every change when LETHE_DEBUG_LEVEL >= 2 (a broken one is a
  // LETHE_CHECK failure there). O(surfaces).
  std::string Validate() const;
  // Skews the used-bytes total, so that tests can see Validate() catch a drift.
  void SkewUsedBytesForTesting(int64_t delta);

  struct Impl;

 private:
  const SurfaceCacheOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lethe

#endif  // LETHE_SURFACE_CACHE_H_
