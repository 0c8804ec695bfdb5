// lethe/image_cache.h — every image's compressed bytes and header info by URL, referenced by the
// documents that use it. A discarded surface is decoded again from these bytes.
//
// Usage protocol (the engine):
//   - A fetched image: Put(url, bytes, header). A document that uses it: AddReference(url); when the
//     document goes (closed, evicted from the bfcache): RemoveReference(url). n references need n
//     removals.
//   - Decode: Get(url) gives a shared, immutable EncodedImage (a decode thread may keep reading it
//     while the cache drops it). SetPlaceholder(url, bytes) stores a tiny stand-in (a blurred
//     thumbnail, a dominant colour) drawn while a discarded surface decodes again.
//   - The engine's timer calls Tick(); SubscribeTo(pressure), RegisterReporter(reporter).
//
// Lifetimes: a referenced entry never expires. An unreferenced entry not used since t (Put, Get, or
// its last RemoveReference) expires in (t + (K-1)P, t + KP]; by default K = 2, P = 60 s.
// Cap: every entry (referenced or not; bytes + placeholder) counts against max_bytes (default
// 256 MiB). A Put that would exceed it evicts unreferenced entries, least recently used generation
// first; one that cannot fit even then (cost > max_bytes - referenced bytes) is refused with
// kOverBudget and evicts nothing.
// Pressure: moderate ages one generation (ongoing: nothing); critical drops every unreferenced entry.
// Regret: a URL stored again within regret_window (5 s) of being dropped (expired, evicted, by
// pressure) is a drop undone: counted with its bytes. The last 64 drops are remembered (by a hash
// of the URL, in fixed storage: dropping never allocates).
//
// Out of memory: Put and SetPlaceholder return kOutOfMemory having changed nothing; lookups and
// references allocate nothing under the lock; discarding never allocates.
// TryDropUnreferenced is for the allocator's low-memory callback: it never waits for the lock.
//
// Threads: every method from any thread (one lethe::internal::CacheMutex); entries are released
// outside the mutex.
// Ownership: the cache owns its entries' EncodedImage through shared_ptr; Get hands out references.
#ifndef LETHE_IMAGE_CACHE_H_
#define LETHE_IMAGE_CACHE_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lethe/cache_mutex.h"
#include "lethe/clock.h"
#include "lethe/expiration_tracker.h"
#include "lethe/image_format.h"
#include "lethe/memory_pressure.h"
#include "lethe/memory_reporter.h"

namespace lethe {

// What a Probe of the header said: known without decoding pixels.
struct ImageHeaderInfo {
  ImageFormat format = ImageFormat::kUnknown;
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t frame_count = 0;  // 0 when not known cheaply
};

// Immutable compressed bytes (and an optional placeholder) in blocks of Lethe's allocator.
class EncodedImage {
 public:
  static constexpr size_t kMaxPlaceholderBytes = 4096;

  // nullptr when the allocator refuses the memory.
  static std::shared_ptr<const EncodedImage> Create(std::span<const uint8_t> bytes,
                                                    const ImageHeaderInfo& header,
                                                    std::span<const uint8_t> placeholder = {});
  EncodedImage(const EncodedImage&) = delete;
  EncodedImage& operator=(const EncodedImage&) = delete;
  ~EncodedImage();

  std::span<const uint8_t> bytes() const { return {bytes_, size_}; }
  std::span<const uint8_t> placeholder() const { return {placeholder_, placeholder_size_}; }
  const ImageHeaderInfo& header() const { return header_; }
  // Usable sizes of the compressed bytes' block and of the placeholder's.
  size_t compressed_bytes() const;
  size_t placeholder_bytes() const;
  size_t MemoryBytes() const { return compressed_bytes() + placeholder_bytes(); }

 private:
  EncodedImage() = default;
  uint8_t* bytes_ = nullptr;
  size_t size_ = 0;
  uint8_t* placeholder_ = nullptr;
  size_t placeholder_size_ = 0;
  ImageHeaderInfo header_;
};

struct ImageCacheOptions {
  uint32_t generation_count = 2;
  Clock::Duration generation_period = std::chrono::seconds(60);
  uint64_t max_bytes = uint64_t{256} << 20;
  Clock::Duration regret_window = std::chrono::seconds(5);
};

enum class ImageCacheOutcome {
  kStored,
  kOverBudget,   // cannot fit without dropping referenced entries
  kOutOfMemory,  // the allocator refused the copy or the cache's bookkeeping; nothing changed
  kInvalid,      // empty bytes, placeholder over kMaxPlaceholderBytes, or unknown URL
};
const char* ImageCacheOutcomeName(ImageCacheOutcome outcome);

struct ImageCacheStats {
  uint64_t hit_count = 0;
  uint64_t miss_count = 0;
  uint64_t expired_count = 0;
  uint64_t evicted_for_cap_count = 0;
  uint64_t discarded_by_pressure_count = 0;
  uint64_t over_budget_count = 0;
  uint64_t out_of_memory_count = 0;
  uint64_t freed_by_pressure_bytes = 0;
  uint64_t regret_count = 0;  // URLs stored again within regret_window of being dropped
  uint64_t regret_bytes = 0;  // their bytes
};

class ImageCache {
 public:
  explicit ImageCache(const Clock& clock, ImageCacheOptions options = ImageCacheOptions{});
  ImageCache(const ImageCache&) = delete;
  ImageCache& operator=(const ImageCache&) = delete;
  ~ImageCache();

  // Stores (or replaces, keeping the references) the bytes of `url`.
  [[nodiscard]] ImageCacheOutcome Put(std::string_view url, std::span<const uint8_t> bytes,
                                      const ImageHeaderInfo& header);
  // Replaces the placeholder of a cached url (the compressed bytes are shared, not copied).
  [[nodiscard]] ImageCacheOutcome SetPlaceholder(std::string_view url,
                                                 std::span<const uint8_t> placeholder);
  // nullptr on a miss. A hit on an unreferenced entry restarts its window.
  std::shared_ptr<const EncodedImage> Get(std::string_view url);

  bool AddReference(std::string_view url);     // false when the url is not cached
  void RemoveReference(std::string_view url);  // more removals than references: checked
  uint64_t Remove(std::string_view url);       // bytes released

  uint64_t Tick();
  Clock::TimePoint NextExpiryTime() const;
  uint64_t DropUnreferenced();
  // DropUnreferenced for the allocator's low-memory callback: never waits. nullopt when the cache
  // is locked (by this thread or another): nothing freed; the loop's critical dispatch does it.
  std::optional<uint64_t> TryDropUnreferenced();
  uint64_t OnMemoryPressure(const MemoryPressureEvent& event);
  [[nodiscard]] MemoryPressure::Subscription SubscribeTo(MemoryPressure& pressure);
  [[nodiscard]] MemoryReporter::Registration RegisterReporter(MemoryReporter& reporter);

  uint64_t used_bytes() const;
  uint64_t referenced_bytes() const;
  // What a critical pressure event would free now: the unreferenced entries (one lock, one read).
  uint64_t discardable_bytes() const;
  size_t entry_count() const;
  ImageCacheStats stats() const;

 private:
  struct Entry;
  // Lookups by string_view, so that finding a URL under the lock allocates nothing.
  struct UrlHash {
    using is_transparent = void;
    size_t operator()(std::string_view url) const { return std::hash<std::string_view>{}(url); }
  };
  using DiscardList = std::vector<std::shared_ptr<const EncodedImage>>;
  enum class DiscardReason { kExpired, kCap, kPressure, kRemoved };

  // Caller holds mutex_.
  ImageCacheOutcome Store(std::string_view url, std::shared_ptr<const EncodedImage> image);
  void RememberDrop(std::string_view url);
  void CountRegret(std::string_view url, uint64_t cost);
  void Discard(Entry* entry, DiscardReason reason);
  uint64_t DropUnreferencedLocked(DiscardReason reason);
  void Report(MemoryReportCollector& collector) const;

  const Clock& clock_;
  const ImageCacheOptions options_;
  mutable internal::CacheMutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<Entry>, UrlHash, std::equal_to<>> entries_;
  ExpirationTracker<Entry> tracker_;  // the unreferenced entries
  DiscardList discarded_;
  DiscardReason aging_reason_ = DiscardReason::kExpired;
  struct Drop {
    size_t url_hash = 0;
    Clock::TimePoint when{};
    bool valid = false;
  };
  std::array<Drop, 64> drops_{};  // a ring of the latest drops
  size_t next_drop_ = 0;
  uint64_t used_bytes_ = 0;
  uint64_t referenced_bytes_ = 0;
  ImageCacheStats stats_;
};

}  // namespace lethe

#endif  // LETHE_IMAGE_CACHE_H_
