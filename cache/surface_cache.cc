// SurfaceCache: see lethe/surface_cache.h for the protocol, the eviction order and the threads.
//
// Invariants (mutex_ held), checked by the tests through the public counters:
//   used_bytes_   = sum of cost_bytes over entries_
//   locked_bytes_ = sum of cost_bytes over entries whose image has lock_count > 0
//   an entry is in tracker_ and eviction_order_  <=>  it is unlocked
//   used_bytes_ <= options_.max_bytes
#include "lethe/surface_cache.h"

#include <unistd.h>

#include <algorithm>
#include <utility>

#include "discarding.h"
#include "lethe/check.h"

namespace lethe {

struct SurfaceCache::Entry {
  SurfaceKey key;
  std::shared_ptr<CachedSurface> surface;
  uint64_t cost_bytes = 0;
  Clock::Duration decode_time{};
  uint64_t sequence = 0;
  bool locked = false;
  bool animated = false;
  uint32_t image_index = 0;     // position in ImageRecord::surfaces
  EvictionOrder::iterator rank;  // valid while unlocked
  ExpirationState expiration;
  ExpirationState& GetExpirationState() { return expiration; }
};

namespace {

constexpr uint64_t kOneGiB = uint64_t{1} << 30;
constexpr size_t kMaxDiscardedKeysPerImage = 16;

}  // namespace

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
  }
  return "unknown";
}

bool SurfaceCache::EvictionRank::operator<(const EvictionRank& other) const {
  if (ns_per_byte != other.ns_per_byte) return ns_per_byte < other.ns_per_byte;
  if (cost_bytes != other.cost_bytes) return cost_bytes > other.cost_bytes;
  return sequence < other.sequence;
}

SurfaceCache::SurfaceCache(const Clock& clock, SurfaceCacheOptions options)
    : clock_(clock),
      options_(options),
      tracker_(options.generation_count, options.generation_period, clock.Now(),
               [this](Entry* entry) { Discard(entry, aging_reason_); }) {
  LETHE_CHECK(options.max_bytes > 0, "SurfaceCache needs a positive byte cap");
}

SurfaceCache::~SurfaceCache() {
  // Entries leave the tracker before they die (its contract); surfaces die with the entries.
  for (auto& [key, entry] : entries_) tracker_.Remove(entry.get());
}

SurfaceCache::ImageRecord& SurfaceCache::Image(uint64_t image_id) { return images_[image_id]; }

void SurfaceCache::MakeDiscardable(Entry* entry) {
  if (entry->locked) locked_bytes_ -= entry->cost_bytes;
  entry->locked = false;
  tracker_.Add(entry);
  double ns_per_byte = static_cast<double>(entry->decode_time.count()) /
                       static_cast<double>(entry->cost_bytes);
  entry->rank =
      eviction_order_.emplace(EvictionRank{ns_per_byte, entry->cost_bytes, entry->sequence}, entry)
          .first;
}

void SurfaceCache::MakeUndiscardable(Entry* entry) {
  if (entry->locked) return;
  tracker_.Remove(entry);
  eviction_order_.erase(entry->rank);
  entry->locked = true;
  locked_bytes_ += entry->cost_bytes;
}

void SurfaceCache::Discard(Entry* entry, DiscardReason reason) {
  const SurfaceKey key = entry->key;
  tracker_.Remove(entry);
  if (entry->locked) {
    locked_bytes_ -= entry->cost_bytes;
  } else {
    eviction_order_.erase(entry->rank);
  }
  used_bytes_ -= entry->cost_bytes;
  ImageRecord& image = images_.at(key.image_id);
  Entry* moved = image.surfaces.back();
  image.surfaces[entry->image_index] = moved;
  moved->image_index = entry->image_index;
  image.surfaces.pop_back();
  switch (reason) {
    case DiscardReason::kExpired: ++stats_.expired_count; break;
    case DiscardReason::kCap: ++stats_.evicted_for_cap_count; break;
    case DiscardReason::kPressure: ++stats_.discarded_by_pressure_count; break;
    case DiscardReason::kRemoved: break;
  }
  if (reason != DiscardReason::kRemoved) {
    if (image.discarded_keys.size() == kMaxDiscardedKeysPerImage) {
      image.discarded_keys.erase(image.discarded_keys.begin());
    }
    image.discarded_keys.push_back(key);
  }
  discarded_.push_back(std::move(entry->surface));  // released after the mutex
  entries_.erase(key);
}

uint64_t SurfaceCache::DiscardAllUnlockedLocked(DiscardReason reason) {
  uint64_t before = used_bytes_;
  while (!eviction_order_.empty()) Discard(eviction_order_.begin()->second, reason);
  return before - used_bytes_;
}

void SurfaceCache::MaybeForgetImage(uint64_t image_id) {
  auto it = images_.find(image_id);
  if (it != images_.end() && it->second.lock_count == 0 && it->second.surfaces.empty() &&
      it->second.discarded_keys.empty()) {
    images_.erase(it);
  }
}

bool SurfaceCache::TakeDiscardedKey(const SurfaceKey& key) {
  std::vector<SurfaceKey>& keys = images_.at(key.image_id).discarded_keys;
  auto it = std::find(keys.begin(), keys.end(), key);
  if (it == keys.end()) return false;
  keys.erase(it);
  return true;
}

SurfaceInsertOutcome SurfaceCache::Insert(const SurfaceKey& key,
                                          std::shared_ptr<CachedSurface> surface,
                                          Clock::Duration decode_time) {
  if (surface == nullptr) return SurfaceInsertOutcome::kInvalid;
  const uint64_t cost = surface->MemoryBytes();  // outside the lock: it may walk frames
  if (cost == 0) return SurfaceInsertOutcome::kInvalid;
  const bool animated = surface->IsAnimated();
  DiscardList doomed;
  std::lock_guard<std::mutex> lock(mutex_);
  if (entries_.count(key) != 0) return SurfaceInsertOutcome::kAlreadyPresent;
  // Step 1: refuse what cannot fit even with every unlocked surface gone.
  if (cost > options_.max_bytes - locked_bytes_) {
    ++stats_.over_budget_count;
    return SurfaceInsertOutcome::kOverBudget;
  }
  // Step 2: make room, cheapest to recreate per byte first. Non-empty while over: the unlocked
  // bytes (used - locked) exceed max - cost - locked >= 0.
  while (used_bytes_ + cost > options_.max_bytes) {
    Discard(eviction_order_.begin()->second, DiscardReason::kCap);
  }
  // Step 3: insert, locked if its image is.
  auto entry = std::make_unique<Entry>();
  entry->key = key;
  entry->surface = std::move(surface);
  entry->cost_bytes = cost;
  entry->decode_time = std::max(decode_time, Clock::Duration::zero());
  entry->sequence = next_sequence_++;
  entry->animated = animated;
  ImageRecord& image = Image(key.image_id);
  entry->image_index = static_cast<uint32_t>(image.surfaces.size());
  image.surfaces.push_back(entry.get());
  used_bytes_ += cost;
  ++stats_.insert_count;
  if (TakeDiscardedKey(key)) ++stats_.redecode_count;
  Entry* raw = entry.get();
  entries_.emplace(key, std::move(entry));
  if (image.lock_count > 0) {
    raw->locked = true;
    locked_bytes_ += cost;
  } else {
    MakeDiscardable(raw);
  }
  doomed.swap(discarded_);
  return SurfaceInsertOutcome::kInserted;
}

std::shared_ptr<CachedSurface> SurfaceCache::Lookup(const SurfaceKey& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    ++stats_.miss_count;
    return nullptr;
  }
  ++stats_.hit_count;
  Entry* entry = it->second.get();
  if (!entry->locked) tracker_.Touch(entry);
  return entry->surface;
}

void SurfaceCache::LockImage(uint64_t image_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  ImageRecord& image = Image(image_id);
  if (image.lock_count++ > 0) return;
  for (Entry* entry : image.surfaces) MakeUndiscardable(entry);
}

void SurfaceCache::UnlockImage(uint64_t image_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = images_.find(image_id);
  LETHE_CHECK(it != images_.end() && it->second.lock_count > 0,
              "SurfaceCache::UnlockImage without a matching LockImage");
  if (--it->second.lock_count > 0) return;
  // The expiry window of each surface starts now.
  for (Entry* entry : it->second.surfaces) MakeDiscardable(entry);
  MaybeForgetImage(image_id);
}

bool SurfaceCache::IsImageLocked(uint64_t image_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = images_.find(image_id);
  return it != images_.end() && it->second.lock_count > 0;
}

uint64_t SurfaceCache::RemoveImage(uint64_t image_id) {
  return internal::DiscardUnderLock(mutex_, discarded_, used_bytes_, [&] {
    auto it = images_.find(image_id);
    if (it == images_.end()) return;
    while (!it->second.surfaces.empty()) Discard(it->second.surfaces.back(), DiscardReason::kRemoved);
    images_.erase(it);
  });
}

uint64_t SurfaceCache::Tick() {
  return internal::DiscardUnderLock(mutex_, discarded_, used_bytes_, [&] {
    aging_reason_ = DiscardReason::kExpired;
    tracker_.AgeIfDue(clock_.Now());
  });
}

Clock::TimePoint SurfaceCache::NextExpiryTime() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return tracker_.NextAgeTime();
}

uint64_t SurfaceCache::DiscardUnlocked() {
  return internal::DiscardUnderLock(mutex_, discarded_, used_bytes_,
                          [&] { DiscardAllUnlockedLocked(DiscardReason::kPressure); });
}

uint64_t SurfaceCache::OnMemoryPressure(const MemoryPressureEvent& event) {
  auto respond = [&] {
    internal::RespondToPressure(
        event, [&] { DiscardAllUnlockedLocked(DiscardReason::kPressure); },
        [&] {
          aging_reason_ = DiscardReason::kPressure;
          tracker_.Age();
        });
  };
  return internal::DiscardUnderLock(mutex_, discarded_, used_bytes_, respond,
                          &stats_.freed_by_pressure_bytes);
}

MemoryPressure::Subscription SurfaceCache::SubscribeTo(MemoryPressure& pressure) {
  return pressure.Subscribe("surface-cache",
                            [this](const MemoryPressureEvent& event) { return OnMemoryPressure(event); });
}

MemoryReporter::Registration SurfaceCache::RegisterReporter(MemoryReporter& reporter) {
  return reporter.Register("surface-cache",
                           [this](MemoryReportCollector& collector) { Report(collector); });
}

void SurfaceCache::Report(MemoryReportCollector& collector) const {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t bytes[2][2] = {};  // [animated][locked]
  for (const auto& [key, entry] : entries_) bytes[entry->animated][entry->locked] += entry->cost_bytes;
  collector.HeapBytes("images/raster/still/locked", bytes[0][1],
                      "Decoded still images that are visible (locked): never discarded.");
  collector.HeapBytes("images/raster/still/unlocked", bytes[0][0],
                      "Decoded still images not drawn lately: they expire or go under pressure.");
  collector.HeapBytes("images/raster/animated/locked", bytes[1][1],
                      "Decoded animations that are visible (locked).");
  collector.HeapBytes("images/raster/animated/unlocked", bytes[1][0],
                      "Decoded animations not drawn lately.");
  const char* kPrefix = "images/surface-cache/";
  auto counter = [&](const char* name, uint64_t value, const char* description) {
    collector.Counter(std::string(kPrefix) + name, value, description);
  };
  counter("hits", stats_.hit_count, "Lookups that found a decoded surface.");
  counter("misses", stats_.miss_count, "Lookups that found none (a decode follows).");
  counter("inserts", stats_.insert_count, "Surfaces inserted.");
  counter("redecodes", stats_.redecode_count, "Inserts of a surface this cache had discarded.");
  counter("expired", stats_.expired_count, "Surfaces discarded by expiry.");
  counter("evicted-for-cap", stats_.evicted_for_cap_count, "Surfaces discarded to stay under the cap.");
  counter("discarded-by-pressure", stats_.discarded_by_pressure_count,
          "Surfaces discarded by memory pressure.");
  counter("over-budget", stats_.over_budget_count, "Inserts refused: no room without locked surfaces.");
  counter("freed-by-pressure-bytes", stats_.freed_by_pressure_bytes,
          "Bytes released by memory-pressure events (a byte count, cumulative).");
}

uint64_t SurfaceCache::used_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return used_bytes_;
}

uint64_t SurfaceCache::locked_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return locked_bytes_;
}

size_t SurfaceCache::surface_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

SurfaceCacheStats SurfaceCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace lethe
