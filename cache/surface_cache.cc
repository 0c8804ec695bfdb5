// SurfaceCache: see lethe/surface_cache.h for the protocol, the eviction order and the threads.
//
// Invariants (mutex held; Validate() walks them, after every change when LETHE_DEBUG_LEVEL >= 2):
//   used_bytes    = sum of cost_bytes over entries
//   locked_bytes  = sum of cost_bytes over entries whose image has lock_count > 0
//   entry->locked == (its image's lock_count > 0)
//   an entry is in tracker and eviction_order  <=>  it is unlocked; a locked entry holds its
//     eviction-order node (rank_node), so that unlocking re-inserts it without allocating
//   images[id].surfaces[entry->image_index] == entry, and the records' surfaces cover entries
//   tracker has room for every entry (Reserve at insert), so touching and aging never allocate
//   used_bytes <= options.max_bytes
// Allocation happens only in the first step of Insert and LockImage, before anything changes; the
// steps after it, and every discard, allocate nothing (see "Out of memory" in the header).
#include "lethe/surface_cache.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <new>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "discarding.h"
#include "lethe/cache_mutex.h"
#include "lethe/check.h"
#include "lethe/expiration_tracker.h"

namespace lethe {

namespace {

constexpr uint64_t kOneGiB = uint64_t{1} << 30;
constexpr size_t kMaxDiscardedKeysPerImage = 16;

enum class DiscardReason { kExpired, kCap, kPressure, kRemoved };

// Eviction order over unlocked entries (see the top of the header).
struct EvictionRank {
  double ns_per_byte;
  uint64_t cost_bytes;
  uint64_t sequence;
  bool operator<(const EvictionRank& other) const {
    if (ns_per_byte != other.ns_per_byte) return ns_per_byte < other.ns_per_byte;
    if (cost_bytes != other.cost_bytes) return cost_bytes > other.cost_bytes;
    return sequence < other.sequence;
  }
};

struct Entry;
using EvictionOrder = std::set<std::pair<EvictionRank, Entry*>>;

struct Entry {
  SurfaceKey key;
  std::shared_ptr<CachedSurface> surface;
  uint64_t cost_bytes = 0;
  Clock::Duration decode_time{};
  uint64_t sequence = 0;
  bool locked = false;
  bool animated = false;
  uint32_t image_index = 0;          // position in ImageRecord::surfaces
  EvictionOrder::iterator rank;      // valid while unlocked
  EvictionOrder::node_type rank_node;  // held while locked
  ExpirationState expiration;
  ExpirationState& GetExpirationState() { return expiration; }
};

// A discard remembered for re-decode and regret counting.
struct DiscardedKey {
  SurfaceKey key;
  Clock::TimePoint when{};
  DiscardReason reason = DiscardReason::kExpired;
};

struct ImageRecord {
  uint32_t lock_count = 0;
  std::vector<Entry*> surfaces;  // each entry stores its index here
  // The most recent discards, oldest first; fixed storage, so that discarding never allocates.
  std::array<DiscardedKey, kMaxDiscardedKeysPerImage> discarded;
  size_t discarded_count = 0;

  bool Empty() const { return lock_count == 0 && surfaces.empty() && discarded_count == 0; }
  void Remember(const DiscardedKey& discard) {
    if (discarded_count == discarded.size()) {
      std::move(discarded.begin() + 1, discarded.end(), discarded.begin());
      --discarded_count;
    }
    discarded[discarded_count++] = discard;
  }
  // Takes the remembered discard of `key`, if any.
  std::optional<DiscardedKey> Take(const SurfaceKey& key) {
    auto end = discarded.begin() + static_cast<std::ptrdiff_t>(discarded_count);
    auto it = std::find_if(discarded.begin(), end,
                           [&](const DiscardedKey& discard) { return discard.key == key; });
    if (it == end) return std::nullopt;
    DiscardedKey found = *it;
    std::move(it + 1, end, it);
    --discarded_count;
    return found;
  }
};

}  // namespace

struct SurfaceCache::Impl {
  using DiscardList = std::vector<std::shared_ptr<CachedSurface>>;

  Impl(const Clock& clock_in, const SurfaceCacheOptions& options_in)
      : clock(clock_in),
        options(options_in),
        tracker(options.generation_count, options.generation_period, clock.Now(),
                [this](Entry* entry) { Discard(entry, aging_reason); }) {}

  ~Impl() {
    // Entries leave the tracker before they die (its contract); surfaces die with the entries.
    for (auto& [key, entry] : entries) tracker.Remove(entry.get());
  }

  const Clock& clock;
  const SurfaceCacheOptions options;
  mutable internal::CacheMutex mutex;
  std::unordered_map<SurfaceKey, std::unique_ptr<Entry>, SurfaceKeyHash> entries;
  std::unordered_map<uint64_t, ImageRecord> images;
  EvictionOrder eviction_order;
  ExpirationTracker<Entry> tracker;
  DiscardList discarded;  // released by the public method, after unlocking
  DiscardReason aging_reason = DiscardReason::kExpired;  // what the tracker's expiry counts as
  uint64_t used_bytes = 0;
  uint64_t locked_bytes = 0;
  uint64_t next_sequence = 0;
  SurfaceCacheStats stats;
  std::atomic<uint64_t> low_memory_busy_count{0};  // counted without the lock

  // All below: caller holds mutex.
  void MakeDiscardable(Entry* entry);
  void MakeUndiscardable(Entry* entry);
  void Discard(Entry* entry, DiscardReason reason);
  uint64_t DiscardAllUnlocked(DiscardReason reason);
  void MaybeForgetImage(uint64_t image_id);
  void CountRedecode(const Entry& entry, const std::optional<DiscardedKey>& discard);
  Entry* Prepare(const SurfaceKey& key, std::shared_ptr<CachedSurface>& surface);
  void Report(MemoryReportCollector& collector) const;
  std::string Check() const;
  void ValidateIfDebug() const {
    if constexpr (LETHE_DEBUG_LEVEL >= 2) {
      const std::string broken = Check();
      LETHE_CHECK(broken.empty(), broken.c_str());
    }
  }
};

uint64_t DefaultSurfaceCacheMaxBytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return kOneGiB;
  uint64_t ram_bytes = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(pages), static_cast<uint64_t>(page_size),
                             &ram_bytes)) {
    return kOneGiB;
  }
  return std::min(ram_bytes / 4, kOneGiB);
}

const char* SurfaceInsertOutcomeName(SurfaceInsertOutcome outcome) {
  switch (outcome) {
    case SurfaceInsertOutcome::kInserted: return "inserted";
    case SurfaceInsertOutcome::kAlreadyPresent: return "already present";
    case SurfaceInsertOutcome::kOverBudget: return "over budget";
    case SurfaceInsertOutcome::kInvalid: return "invalid surface";
    case SurfaceInsertOutcome::kOutOfMemory: return "out of memory";
  }
  return "unknown";
}

void SurfaceCache::Impl::MakeDiscardable(Entry* entry) {
  if (entry->locked) locked_bytes -= entry->cost_bytes;
  entry->locked = false;
  tracker.Add(entry);
  double ns_per_byte = static_cast<double>(entry->decode_time.count()) /
                       static_cast<double>(entry->cost_bytes);
  entry->rank_node.value() = {EvictionRank{ns_per_byte, entry->cost_bytes, entry->sequence}, entry};
  entry->rank = eviction_order.insert(std::move(entry->rank_node)).position;
}

void SurfaceCache::Impl::MakeUndiscardable(Entry* entry) {
  if (entry->locked) return;
  tracker.Remove(entry);
  entry->rank_node = eviction_order.extract(entry->rank);
  entry->locked = true;
  locked_bytes += entry->cost_bytes;
}

void SurfaceCache::Impl::Discard(Entry* entry, DiscardReason reason) {
  const SurfaceKey key = entry->key;
  tracker.Remove(entry);
  if (entry->locked) {
    locked_bytes -= entry->cost_bytes;
  } else {
    eviction_order.erase(entry->rank);
  }
  used_bytes -= entry->cost_bytes;
  ImageRecord& image = images.at(key.image_id);
  Entry* moved = image.surfaces.back();
  image.surfaces[entry->image_index] = moved;
  moved->image_index = entry->image_index;
  image.surfaces.pop_back();
  switch (reason) {
    case DiscardReason::kExpired: ++stats.expired_count; break;
    case DiscardReason::kCap: ++stats.evicted_for_cap_count; break;
    case DiscardReason::kPressure: ++stats.discarded_by_pressure_count; break;
    case DiscardReason::kRemoved: break;
  }
  if (reason != DiscardReason::kRemoved) image.Remember({key, clock.Now(), reason});
  internal::DeferRelease(discarded, entry->surface);
  entries.erase(key);
}

uint64_t SurfaceCache::Impl::DiscardAllUnlocked(DiscardReason reason) {
  uint64_t before = used_bytes;
  while (!eviction_order.empty()) Discard(eviction_order.begin()->second, reason);
  return before - used_bytes;
}

void SurfaceCache::Impl::MaybeForgetImage(uint64_t image_id) {
  auto it = images.find(image_id);
  if (it != images.end() && it->second.Empty()) images.erase(it);
}

void SurfaceCache::Impl::CountRedecode(const Entry& entry,
                                       const std::optional<DiscardedKey>& discard) {
  if (!discard.has_value()) return;
  const auto decode_ns = static_cast<uint64_t>(entry.decode_time.count());
  ++stats.redecode_count;
  stats.redecode_time_ns += decode_ns;
  if (clock.Now() - discard->when > options.regret_window) return;
  ++stats.regret_count;
  stats.regret_bytes += entry.cost_bytes;
  stats.regret_time_ns += decode_ns;
  switch (discard->reason) {
    case DiscardReason::kExpired: ++stats.regret_after_expiry_count; break;
    case DiscardReason::kCap: ++stats.regret_after_cap_count; break;
    case DiscardReason::kPressure: ++stats.regret_after_pressure_count; break;
    case DiscardReason::kRemoved: break;
  }
}

// Step 1 of Insert: every allocation the insert needs, before anything changes. Returns the new
// entry, owned by `entries` (with its eviction-order node and a place in its image's record), or
// throws std::bad_alloc having left no trace.
Entry* SurfaceCache::Impl::Prepare(const SurfaceKey& key, std::shared_ptr<CachedSurface>& surface) {
  auto entry = std::make_unique<Entry>();
  EvictionOrder scratch;  // allocates the entry's node, which then moves between order and entry
  entry->rank_node = scratch.extract(scratch.emplace(EvictionRank{0, 0, 0}, entry.get()).first);
  auto [record, fresh] = images.try_emplace(key.image_id);
  try {
    record->second.surfaces.reserve(record->second.surfaces.size() + 1);
    tracker.Reserve(entries.size() + 1);
    auto slot = entries.emplace(key, nullptr).first;  // the last allocation
    entry->key = key;
    entry->surface = std::move(surface);
    slot->second = std::move(entry);
    return slot->second.get();
  } catch (const std::bad_alloc&) {
    if (fresh) images.erase(record);
    throw;
  }
}

SurfaceCache::SurfaceCache(const Clock& clock, SurfaceCacheOptions options)
    : options_(options), impl_(std::make_unique<Impl>(clock, options)) {
  LETHE_CHECK(options.max_bytes > 0, "SurfaceCache needs a positive byte cap");
}

SurfaceCache::~SurfaceCache() = default;

SurfaceInsertOutcome SurfaceCache::Insert(const SurfaceKey& key,
                                          std::shared_ptr<CachedSurface> surface,
                                          Clock::Duration decode_time) {
  if (surface == nullptr) return SurfaceInsertOutcome::kInvalid;
  const uint64_t cost = surface->MemoryBytes();  // outside the lock: it may walk frames
  if (cost == 0) return SurfaceInsertOutcome::kInvalid;
  const bool animated = surface->IsAnimated();
  Impl& impl = *impl_;
  Impl::DiscardList doomed;
  std::lock_guard<internal::CacheMutex> lock(impl.mutex);
  if (impl.entries.count(key) != 0) return SurfaceInsertOutcome::kAlreadyPresent;
  // Step 1: refuse what cannot fit even with every unlocked surface gone.
  if (cost > options_.max_bytes - impl.locked_bytes) {
    ++impl.stats.over_budget_count;
    return SurfaceInsertOutcome::kOverBudget;
  }
  // Step 2: allocate what the entry needs; on failure nothing has changed.
  Entry* entry = nullptr;
  try {
    entry = impl.Prepare(key, surface);
  } catch (const std::bad_alloc&) {
    ++impl.stats.out_of_memory_count;
    return SurfaceInsertOutcome::kOutOfMemory;
  }
  // Step 3: make room, cheapest to recreate per byte first. Non-empty while over: the unlocked
  // bytes (used - locked) exceed max - cost - locked >= 0. The new entry is not in the order yet.
  while (impl.used_bytes + cost > options_.max_bytes) {
    impl.Discard(impl.eviction_order.begin()->second, DiscardReason::kCap);
  }
  // Step 4: account for it, locked if its image is. Nothing below allocates.
  entry->cost_bytes = cost;
  entry->decode_time = std::max(decode_time, Clock::Duration::zero());
  entry->sequence = impl.next_sequence++;
  entry->animated = animated;
  ImageRecord& image = impl.images.at(key.image_id);
  entry->image_index = static_cast<uint32_t>(image.surfaces.size());
  image.surfaces.push_back(entry);  // reserved in Prepare
  impl.used_bytes += cost;
  ++impl.stats.insert_count;
  impl.CountRedecode(*entry, image.Take(key));
  if (image.lock_count > 0) {
    entry->locked = true;
    impl.locked_bytes += cost;
  } else {
    impl.MakeDiscardable(entry);
  }
  impl.ValidateIfDebug();
  doomed.swap(impl.discarded);
  return SurfaceInsertOutcome::kInserted;
}

std::shared_ptr<CachedSurface> SurfaceCache::Lookup(const SurfaceKey& key) {
  std::lock_guard<internal::CacheMutex> lock(impl_->mutex);
  auto it = impl_->entries.find(key);
  if (it == impl_->entries.end()) {
    ++impl_->stats.miss_count;
    return nullptr;
  }
  ++impl_->stats.hit_count;
  Entry* entry = it->second.get();
  if (!entry->locked) impl_->tracker.Touch(entry);
  return entry->surface;
}

void SurfaceCache::LockImage(uint64_t image_id) {
  std::lock_guard<internal::CacheMutex> lock(impl_->mutex);
  ImageRecord& image = impl_->images[image_id];  // the one allocation: before any change
  if (image.lock_count++ > 0) return;
  for (Entry* entry : image.surfaces) impl_->MakeUndiscardable(entry);
  impl_->ValidateIfDebug();
}

void SurfaceCache::UnlockImage(uint64_t image_id) {
  std::lock_guard<internal::CacheMutex> lock(impl_->mutex);
  auto it = impl_->images.find(image_id);
  LETHE_CHECK(it != impl_->images.end() && it->second.lock_count > 0,
              "SurfaceCache::UnlockImage without a matching LockImage");
  if (--it->second.lock_count > 0) return;
  // The expiry window of each surface starts now.
  for (Entry* entry : it->second.surfaces) impl_->MakeDiscardable(entry);
  impl_->MaybeForgetImage(image_id);
  impl_->ValidateIfDebug();
}

bool SurfaceCache::IsImageLocked(uint64_t image_id) const {
  std::lock_guard<internal::CacheMutex> lock(impl_->mutex);
  auto it = impl_->images.find(image_id);
  return it != impl_->images.end() && it->second.lock_count > 0;
}

uint64_t SurfaceCache::RemoveImage(uint64_t image_id) {
  Impl& impl = *impl_;
  return internal::DiscardUnderLock(impl.mutex, impl.discarded, impl.used_bytes, [&] {
    auto it = impl.images.find(image_id);
    if (it == impl.images.end()) return;
    while (!it->second.surfaces.empty()) {
      impl.Discard(it->second.surfaces.back(), DiscardReason::kRemoved);
    }
    impl.images.erase(it);
    impl.ValidateIfDebug();
  });
}

uint64_t SurfaceCache::Tick() {
  Impl& impl = *impl_;
  return internal::DiscardUnderLock(impl.mutex, impl.discarded, impl.used_bytes, [&] {
    impl.aging_reason = DiscardReason::kExpired;
    impl.tracker.AgeIfDue(impl.clock.Now());
    impl.ValidateIfDebug();
  });
}

Clock::TimePoint SurfaceCache::NextExpiryTime() const {
  std::lock_guard<internal::CacheMutex> lock(impl_->mutex);
  return impl_->tracker.NextAgeTime();
}

uint64_t SurfaceCache::DiscardUnlocked() {
  Impl& impl = *impl_;
  return internal::DiscardUnderLock(impl.mutex, impl.discarded, impl.used_bytes,
                                    [&] { impl.DiscardAllUnlocked(DiscardReason::kPressure); });
}

std::optional<uint64_t> SurfaceCache::TryDiscardUnlocked() {
  Impl& impl = *impl_;
  Impl::DiscardList doomed;  // released after the lock, as everywhere
  std::unique_lock<internal::CacheMutex> lock(impl.mutex, std::try_to_lock);
  if (!lock.owns_lock()) {
    impl.low_memory_busy_count.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  uint64_t freed = impl.DiscardAllUnlocked(DiscardReason::kPressure);
  impl.stats.freed_by_pressure_bytes += freed;
  doomed.swap(impl.discarded);
  return freed;
}

uint64_t SurfaceCache::OnMemoryPressure(const MemoryPressureEvent& event) {
  Impl& impl = *impl_;
  auto respond = [&] {
    internal::RespondToPressure(
        event, [&] { impl.DiscardAllUnlocked(DiscardReason::kPressure); },
        [&] {
          impl.aging_reason = DiscardReason::kPressure;
          impl.tracker.Age();
        });
  };
  return internal::DiscardUnderLock(impl.mutex, impl.discarded, impl.used_bytes, respond,
                                    &impl.stats.freed_by_pressure_bytes);
}

MemoryPressure::Subscription SurfaceCache::SubscribeTo(MemoryPressure& pressure) {
  return pressure.Subscribe("surface-cache",
                            [this](const MemoryPressureEvent& event) { return OnMemoryPressure(event); });
}

MemoryReporter::Registration SurfaceCache::RegisterReporter(MemoryReporter& reporter) {
  return reporter.Register("surface-cache", [this](MemoryReportCollector& collector) {
    std::lock_guard<internal::CacheMutex> lock(impl_->mutex);
    impl_->Report(collector);
  });
}

void SurfaceCache::Impl::Report(MemoryReportCollector& collector) const {
  uint64_t bytes[2][2] = {};  // [animated][locked]
  for (const auto& [key, entry] : entries) bytes[entry->animated][entry->locked] += entry->cost_bytes;
  collector.HeapBytes("images/raster/still/locked", bytes[0][1],
                      "Decoded still images that are visible (locked): never discarded.");
  collector.HeapBytes("images/raster/still/unlocked", bytes[0][0],
                      "Decoded still images not drawn lately: they expire or go under pressure.");
  collector.HeapBytes("images/raster/animated/locked", bytes[1][1],
                      "Decoded animations that are visible (locked).");
  collector.HeapBytes("images/raster/animated/unlocked", bytes[1][0],
                      "Decoded animations not drawn lately.");
  SurfaceCacheStats counters = stats;
  counters.low_memory_busy_count = low_memory_busy_count.load(std::memory_order_relaxed);
  counters.ForEachCounter([&](const char* name, const char* description, uint64_t value) {
    collector.Counter(std::string("images/surface-cache/") + name, value, description);
  });
}

std::string SurfaceCache::Impl::Check() const {
  uint64_t used = 0;
  uint64_t locked = 0;
  size_t unlocked_count = 0;
  for (const auto& [key, entry] : entries) {
    if (!(entry->key == key)) return "an entry is filed under another key";
    used += entry->cost_bytes;
    auto image = images.find(key.image_id);
    if (image == images.end()) return "an entry's image has no record";
    const ImageRecord& record = image->second;
    if (entry->image_index >= record.surfaces.size() ||
        record.surfaces[entry->image_index] != entry.get()) {
      return "an entry is not at its index in its image's record";
    }
    if (entry->locked != (record.lock_count > 0)) return "an entry's lock differs from its image's";
    if (entry->locked) {
      locked += entry->cost_bytes;
      if (entry->expiration.IsTracked()) return "a locked entry is tracked for expiry";
      if (entry->rank_node.empty()) return "a locked entry lost its eviction-order node";
    } else {
      ++unlocked_count;
      if (!entry->expiration.IsTracked()) return "an unlocked entry is not tracked for expiry";
      if (entry->rank->second != entry.get()) return "an unlocked entry's rank points elsewhere";
    }
  }
  size_t filed = 0;
  for (const auto& [id, record] : images) filed += record.surfaces.size();
  if (filed != entries.size()) return "the images' records do not cover the entries";
  if (used != used_bytes) return "used bytes drifted from the sum of the entries' costs";
  if (locked != locked_bytes) return "locked bytes drifted from the sum of the locked entries";
  if (unlocked_count != eviction_order.size()) return "the eviction order holds other entries";
  if (unlocked_count != tracker.size()) return "the tracker holds other entries";
  if (!const_cast<ExpirationTracker<Entry>&>(tracker).Validate()) return "the tracker is corrupt";
  if (used_bytes > options.max_bytes) return "over the byte cap";
  return "";
}

std::string SurfaceCache::Validate() const {
  std::lock_guard<internal::CacheMutex> lock(impl_->mutex);
  return impl_->Check();
}

void SurfaceCache::SkewUsedBytesForTesting(int64_t delta) {
  std::lock_guard<internal::CacheMutex> lock(impl_->mutex);
  impl_->used_bytes += static_cast<uint64_t>(delta);
}

uint64_t SurfaceCache::used_bytes() const {
  std::lock_guard<internal::CacheMutex> lock(impl_->mutex);
  return impl_->used_bytes;
}

uint64_t SurfaceCache::locked_bytes() const {
  std::lock_guard<internal::CacheMutex> lock(impl_->mutex);
  return impl_->locked_bytes;
}

uint64_t SurfaceCache::discardable_bytes() const {
  std::lock_guard<internal::CacheMutex> lock(impl_->mutex);
  return impl_->used_bytes - impl_->locked_bytes;
}

size_t SurfaceCache::surface_count() const {
  std::lock_guard<internal::CacheMutex> lock(impl_->mutex);
  return impl_->entries.size();
}

SurfaceCacheStats SurfaceCache::stats() const {
  std::lock_guard<internal::CacheMutex> lock(impl_->mutex);
  SurfaceCacheStats stats = impl_->stats;
  stats.low_memory_busy_count = impl_->low_memory_busy_count.load(std::memory_order_relaxed);
  return stats;
}

}  // namespace lethe
