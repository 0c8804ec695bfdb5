// ImageCache: see lethe/image_cache.h.
//
// Invariants (mutex_ held):
//   used_bytes_       = sum of image->MemoryBytes() over entries_
//   referenced_bytes_ = the same over entries with reference_count > 0
//   an entry is in tracker_  <=>  reference_count == 0
//   used_bytes_ <= options_.max_bytes
#include "lethe/image_cache.h"

#include <cstring>
#include <utility>

#include "lethe/alloc.h"
#include "discarding.h"
#include "lethe/check.h"

namespace lethe {

struct ImageCache::Entry {
  std::string url;
  std::shared_ptr<const EncodedImage> image;
  uint64_t cost_bytes = 0;
  uint32_t reference_count = 0;
  ExpirationState expiration;
  ExpirationState& GetExpirationState() { return expiration; }
};

namespace {

// A copy of `bytes` in a block of Lethe's allocator; nullptr when refused (or empty input).
uint8_t* CopyToLetheBlock(std::span<const uint8_t> bytes) {
  if (bytes.empty()) return nullptr;
  auto* block = static_cast<uint8_t*>(lethe_malloc(bytes.size()));
  if (block != nullptr) std::memcpy(block, bytes.data(), bytes.size());
  return block;
}

}  // namespace

std::shared_ptr<const EncodedImage> EncodedImage::Create(std::span<const uint8_t> bytes,
                                                         const ImageHeaderInfo& header,
                                                         std::span<const uint8_t> placeholder) {
  std::shared_ptr<EncodedImage> image(new EncodedImage());
  image->header_ = header;
  image->bytes_ = CopyToLetheBlock(bytes);
  if (image->bytes_ == nullptr && !bytes.empty()) return nullptr;
  image->size_ = bytes.size();
  image->placeholder_ = CopyToLetheBlock(placeholder);
  if (image->placeholder_ == nullptr && !placeholder.empty()) return nullptr;
  image->placeholder_size_ = placeholder.size();
  return image;
}

EncodedImage::~EncodedImage() {
  lethe_free(bytes_);
  lethe_free(placeholder_);
}

size_t EncodedImage::compressed_bytes() const { return lethe_usable_size(bytes_); }
size_t EncodedImage::placeholder_bytes() const { return lethe_usable_size(placeholder_); }

const char* ImageCacheOutcomeName(ImageCacheOutcome outcome) {
  switch (outcome) {
    case ImageCacheOutcome::kStored: return "stored";
    case ImageCacheOutcome::kOverBudget: return "over budget";
    case ImageCacheOutcome::kOutOfMemory: return "out of memory";
    case ImageCacheOutcome::kInvalid: return "invalid";
  }
  return "unknown";
}

ImageCache::ImageCache(const Clock& clock, ImageCacheOptions options)
    : clock_(clock),
      options_(options),
      tracker_(options.generation_count, options.generation_period, clock.Now(),
               [this](Entry* entry) { Discard(entry, aging_reason_); }) {
  LETHE_CHECK(options.max_bytes > 0, "ImageCache needs a positive byte cap");
}

ImageCache::~ImageCache() {
  for (auto& [url, entry] : entries_) tracker_.Remove(entry.get());
}

void ImageCache::Discard(Entry* entry, DiscardReason reason) {
  tracker_.Remove(entry);
  used_bytes_ -= entry->cost_bytes;
  if (entry->reference_count > 0) referenced_bytes_ -= entry->cost_bytes;
  switch (reason) {
    case DiscardReason::kExpired: ++stats_.expired_count; break;
    case DiscardReason::kCap: ++stats_.evicted_for_cap_count; break;
    case DiscardReason::kPressure: ++stats_.discarded_by_pressure_count; break;
    case DiscardReason::kRemoved: break;
  }
  if (reason != DiscardReason::kRemoved) RememberDrop(entry->url);
  internal::DeferRelease(discarded_, entry->image);
  std::string url = std::move(entry->url);
  entries_.erase(url);
}

uint64_t ImageCache::DropUnreferencedLocked(DiscardReason reason) {
  uint64_t before = used_bytes_;
  while (Entry* oldest = tracker_.PeekOldest()) Discard(oldest, reason);
  return before - used_bytes_;
}

void ImageCache::RememberDrop(std::string_view url) {
  drops_[next_drop_] = Drop{std::hash<std::string_view>{}(url), clock_.Now(), true};
  next_drop_ = (next_drop_ + 1) % drops_.size();
}

void ImageCache::CountRegret(std::string_view url, uint64_t cost) {
  const size_t hash = std::hash<std::string_view>{}(url);
  bool regretted = false;  // one regret per store, however often the URL was dropped before
  for (Drop& drop : drops_) {
    if (!drop.valid || drop.url_hash != hash) continue;
    drop.valid = false;  // a drop is undone once
    if (regretted || clock_.Now() - drop.when > options_.regret_window) continue;
    regretted = true;
    ++stats_.regret_count;
    stats_.regret_bytes += cost;
  }
}

// Puts `image` under `url`, replacing an existing entry's image (keeping its references).
ImageCacheOutcome ImageCache::Store(std::string_view url, std::shared_ptr<const EncodedImage> image) {
  const uint64_t cost = image->MemoryBytes();
  auto it = entries_.find(url);
  Entry* existing = it == entries_.end() ? nullptr : it->second.get();
  const bool referenced = existing != nullptr && existing->reference_count > 0;
  // The replaced image's bytes are freed by the replacement: they do not count as held.
  const uint64_t old_cost = existing != nullptr ? existing->cost_bytes : 0;
  const uint64_t pinned = referenced_bytes_ - (referenced ? old_cost : 0);
  if (cost > options_.max_bytes || cost > options_.max_bytes - pinned) {
    ++stats_.over_budget_count;
    return ImageCacheOutcome::kOverBudget;
  }
  // Step 0: every allocation, before anything changes: a new entry (filed, not yet counted: it is
  // in no tracker, so no eviction below can pick it) and the tracker's room for it.
  if (existing == nullptr) {
    try {
      tracker_.Reserve(entries_.size() + 1);
      auto entry = std::make_unique<Entry>();
      entry->url = std::string(url);
      std::string_view key = entry->url;  // the entry's own string stays put while it lives
      existing = entries_.emplace(key, std::move(entry)).first->second.get();
    } catch (const std::bad_alloc&) {
      ++stats_.out_of_memory_count;
      return ImageCacheOutcome::kOutOfMemory;
    }
    CountRegret(url, cost);
  } else {
    // Step 1: the existing entry leaves the books (and the tracker) while room is made.
    tracker_.Remove(existing);
    used_bytes_ -= old_cost;
    if (referenced) referenced_bytes_ -= old_cost;
    internal::DeferRelease(discarded_, existing->image);
  }
  // Step 2: evict unreferenced entries, oldest generation first.
  while (used_bytes_ + cost > options_.max_bytes) Discard(tracker_.PeekOldest(), DiscardReason::kCap);
  // Step 3: (re)insert; nothing here allocates.
  existing->image = std::move(image);
  existing->cost_bytes = cost;
  used_bytes_ += cost;
  if (referenced) {
    referenced_bytes_ += cost;
  } else {
    tracker_.Add(existing);
  }
  return ImageCacheOutcome::kStored;
}

ImageCacheOutcome ImageCache::Put(std::string_view url, std::span<const uint8_t> bytes,
                                  const ImageHeaderInfo& header) {
  if (bytes.empty() || url.empty()) return ImageCacheOutcome::kInvalid;
  // Copy outside the lock: a multi-megabyte memcpy should not stall lookups.
  std::shared_ptr<const EncodedImage> image = EncodedImage::Create(bytes, header);
  DiscardList doomed;
  std::lock_guard<internal::CacheMutex> lock(mutex_);
  if (image == nullptr) {
    ++stats_.out_of_memory_count;
    return ImageCacheOutcome::kOutOfMemory;
  }
  ImageCacheOutcome outcome = Store(url, std::move(image));
  doomed.swap(discarded_);
  return outcome;
}

ImageCacheOutcome ImageCache::SetPlaceholder(std::string_view url,
                                             std::span<const uint8_t> placeholder) {
  if (placeholder.size() > EncodedImage::kMaxPlaceholderBytes) return ImageCacheOutcome::kInvalid;
  std::shared_ptr<const EncodedImage> current = Get(url);
  if (current == nullptr) return ImageCacheOutcome::kInvalid;
  // A new immutable EncodedImage: readers of the old one are never disturbed.
  std::shared_ptr<const EncodedImage> image =
      EncodedImage::Create(current->bytes(), current->header(), placeholder);
  DiscardList doomed;
  std::lock_guard<internal::CacheMutex> lock(mutex_);
  if (image == nullptr) {
    ++stats_.out_of_memory_count;
    return ImageCacheOutcome::kOutOfMemory;
  }
  auto it = entries_.find(url);
  if (it == entries_.end()) return ImageCacheOutcome::kInvalid;  // dropped meanwhile
  ImageCacheOutcome outcome = Store(url, std::move(image));
  doomed.swap(discarded_);
  return outcome;
}

std::shared_ptr<const EncodedImage> ImageCache::Get(std::string_view url) {
  std::lock_guard<internal::CacheMutex> lock(mutex_);
  auto it = entries_.find(url);
  if (it == entries_.end()) {
    ++stats_.miss_count;
    return nullptr;
  }
  ++stats_.hit_count;
  Entry* entry = it->second.get();
  if (entry->reference_count == 0) tracker_.Touch(entry);
  return entry->image;
}

bool ImageCache::AddReference(std::string_view url) {
  std::lock_guard<internal::CacheMutex> lock(mutex_);
  auto it = entries_.find(url);
  if (it == entries_.end()) return false;
  Entry* entry = it->second.get();
  if (entry->reference_count++ == 0) {
    tracker_.Remove(entry);
    referenced_bytes_ += entry->cost_bytes;
  }
  return true;
}

void ImageCache::RemoveReference(std::string_view url) {
  std::lock_guard<internal::CacheMutex> lock(mutex_);
  auto it = entries_.find(url);
  LETHE_CHECK(it != entries_.end() && it->second->reference_count > 0,
              "ImageCache::RemoveReference without a matching AddReference");
  Entry* entry = it->second.get();
  if (--entry->reference_count == 0) {
    referenced_bytes_ -= entry->cost_bytes;
    tracker_.Add(entry);  // its window starts now
  }
}

uint64_t ImageCache::Remove(std::string_view url) {
  return internal::DiscardUnderLock(mutex_, discarded_, used_bytes_, [&] {
    auto it = entries_.find(url);
    if (it != entries_.end()) Discard(it->second.get(), DiscardReason::kRemoved);
  });
}

uint64_t ImageCache::Tick() {
  return internal::DiscardUnderLock(mutex_, discarded_, used_bytes_, [&] {
    aging_reason_ = DiscardReason::kExpired;
    tracker_.AgeIfDue(clock_.Now());
  });
}

Clock::TimePoint ImageCache::NextExpiryTime() const {
  std::lock_guard<internal::CacheMutex> lock(mutex_);
  return tracker_.NextAgeTime();
}

uint64_t ImageCache::DropUnreferenced() {
  return internal::DiscardUnderLock(mutex_, discarded_, used_bytes_,
                          [&] { DropUnreferencedLocked(DiscardReason::kPressure); });
}

std::optional<uint64_t> ImageCache::TryDropUnreferenced() {
  DiscardList doomed;  // released after the lock, as everywhere
  std::unique_lock<internal::CacheMutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return std::nullopt;
  uint64_t freed = DropUnreferencedLocked(DiscardReason::kPressure);
  stats_.freed_by_pressure_bytes += freed;
  doomed.swap(discarded_);
  return freed;
}

uint64_t ImageCache::OnMemoryPressure(const MemoryPressureEvent& event) {
  auto respond = [&] {
    internal::RespondToPressure(
        event, [&] { DropUnreferencedLocked(DiscardReason::kPressure); },
        [&] {
          aging_reason_ = DiscardReason::kPressure;
          tracker_.Age();
        });
  };
  return internal::DiscardUnderLock(mutex_, discarded_, used_bytes_, respond,
                          &stats_.freed_by_pressure_bytes);
}

MemoryPressure::Subscription ImageCache::SubscribeTo(MemoryPressure& pressure) {
  return pressure.Subscribe("image-cache",
                            [this](const MemoryPressureEvent& event) { return OnMemoryPressure(event); });
}

MemoryReporter::Registration ImageCache::RegisterReporter(MemoryReporter& reporter) {
  return reporter.Register("image-cache",
                           [this](MemoryReportCollector& collector) { Report(collector); });
}

void ImageCache::Report(MemoryReportCollector& collector) const {
  std::lock_guard<internal::CacheMutex> lock(mutex_);
  uint64_t compressed = 0;
  uint64_t placeholders = 0;
  for (const auto& [url, entry] : entries_) {
    compressed += entry->image->compressed_bytes();
    placeholders += entry->image->placeholder_bytes();
  }
  collector.HeapBytes("images/encoded/compressed", compressed,
                      "Compressed image bytes kept in memory, to decode again after a discard.");
  collector.HeapBytes("images/encoded/placeholders", placeholders,
                      "Tiny stand-ins drawn while a discarded image decodes again.");
  auto counter = [&](const char* name, uint64_t value, const char* description) {
    collector.Counter(std::string("images/image-cache/") + name, value, description);
  };
  counter("hits", stats_.hit_count, "Gets that found the compressed bytes.");
  counter("misses", stats_.miss_count, "Gets that found nothing (a fetch follows).");
  counter("expired", stats_.expired_count, "Unreferenced entries that expired.");
  counter("evicted-for-cap", stats_.evicted_for_cap_count, "Entries evicted to stay under the cap.");
  counter("discarded-by-pressure", stats_.discarded_by_pressure_count,
          "Entries dropped by memory pressure.");
  counter("over-budget", stats_.over_budget_count, "Puts refused: no room without referenced entries.");
  counter("out-of-memory", stats_.out_of_memory_count, "Puts whose copy the allocator refused.");
  counter("freed-by-pressure-bytes", stats_.freed_by_pressure_bytes,
          "Bytes released by memory-pressure events (a byte count, cumulative).");
  counter("regrets", stats_.regret_count,
          "Drops undone: compressed bytes stored again within 5 s of being dropped.");
  counter("regret-bytes", stats_.regret_bytes, "Bytes of those (a byte count, cumulative).");
}

uint64_t ImageCache::used_bytes() const {
  std::lock_guard<internal::CacheMutex> lock(mutex_);
  return used_bytes_;
}

uint64_t ImageCache::referenced_bytes() const {
  std::lock_guard<internal::CacheMutex> lock(mutex_);
  return referenced_bytes_;
}

uint64_t ImageCache::discardable_bytes() const {
  std::lock_guard<internal::CacheMutex> lock(mutex_);
  return used_bytes_ - referenced_bytes_;
}

size_t ImageCache::entry_count() const {
  std::lock_guard<internal::CacheMutex> lock(mutex_);
  return entries_.size();
}

ImageCacheStats ImageCache::stats() const {
  std::lock_guard<internal::CacheMutex> lock(mutex_);
  return stats_;
}

}  // namespace lethe
