// The graded pressure response and the memory report of every cache together, as the engine wires
// them: one MemoryPressure, one MemoryReporter, all five caches.
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "about_memory_rules.h"
#include "lethe/alloc.h"
#include "lethe/bf_cache.h"
#include "lethe/font_cache.h"
#include "lethe/image_cache.h"
#include "lethe/shaped_word_cache.h"
#include "lethe/surface_cache.h"

namespace lethe {
namespace {

using std::chrono::seconds;

// One block of Lethe's allocator, reported by its usable size: a surface, a document or a font.
class Block {
 public:
  explicit Block(size_t bytes) : data_(lethe_malloc(bytes)) {}
  Block(Block&& other) noexcept : data_(std::exchange(other.data_, nullptr)) {}
  Block& operator=(Block&& other) noexcept {
    std::swap(data_, other.data_);
    return *this;
  }
  ~Block() { lethe_free(data_); }
  size_t Bytes() const { return lethe_usable_size(data_); }

 private:
  void* data_ = nullptr;
};

class BlockSurface : public CachedSurface {
 public:
  explicit BlockSurface(size_t bytes) : block_(bytes) {}
  size_t MemoryBytes() const override { return block_.Bytes(); }

 private:
  Block block_;
};

class BlockDocument : public CachedDocument {
 public:
  explicit BlockDocument(size_t bytes) : block_(bytes) {}
  size_t MemoryBytes() const override { return block_.Bytes(); }

 private:
  Block block_;
};

// A stopwatch that moves 1 us at each reading: every timed section reads it twice, so each
// listener's elapsed time is exactly 1 us, whatever the machine's speed.
class SteppingClock final : public Clock {
 public:
  TimePoint Now() const override { return TimePoint(std::chrono::microseconds(++ticks_)); }

 private:
  mutable std::atomic<int64_t> ticks_{0};
};

using Fonts = FontCache<std::string, Block>;
using Words = ShapedWordCache<Block>;

// Every cache, subscribed and registered, holding some of everything.
struct Caches {
  Caches()
      : surfaces(clock, [] {
          SurfaceCacheOptions options;
          options.max_bytes = 256 << 20;
          return options;
        }()),
        images(clock),
        bfcache(clock),
        fonts(clock),
        words(clock),
        pressure(clock, MemoryPressureOptions{}, stopwatch) {
    subscriptions.push_back(surfaces.SubscribeTo(pressure));
    subscriptions.push_back(images.SubscribeTo(pressure));
    subscriptions.push_back(bfcache.SubscribeTo(pressure));
    subscriptions.push_back(fonts.SubscribeTo(pressure));
    subscriptions.push_back(words.SubscribeTo(pressure));
    registrations.push_back(surfaces.RegisterReporter(reporter));
    registrations.push_back(images.RegisterReporter(reporter));
    registrations.push_back(bfcache.RegisterReporter(reporter));
    registrations.push_back(fonts.RegisterReporter(reporter));
    registrations.push_back(words.RegisterReporter(reporter));
    Fill();
  }

  void Fill() {
    surfaces.LockImage(1);  // visible
    for (uint32_t i = 0; i < 3; ++i) {
      for (uint64_t image = 1; image <= 3; ++image) {
        auto surface = std::make_shared<BlockSurface>(300000 + i * 1000);
        (void)surfaces.Insert(SurfaceKey{image, 100 + i, 100 + i, 0}, surface, std::chrono::milliseconds(2));
      }
    }
    std::vector<uint8_t> bytes(20000, 1);
    (void)images.Put("http://site/visible.png", bytes, ImageHeaderInfo{ImageFormat::kPng, 10, 10, 1});
    images.AddReference("http://site/visible.png");
    (void)images.Put("http://site/other.png", bytes, ImageHeaderInfo{ImageFormat::kPng, 10, 10, 1});
    bfcache.SetCurrentIndex(1, 2);
    (void)bfcache.Store(HistoryEntryId{1, 0}, std::make_unique<BlockDocument>(50000));
    (void)bfcache.Store(HistoryEntryId{1, 1}, std::make_unique<BlockDocument>(60000));
    used_font = InsertFont("DejaVu Sans", 40000);
    InsertFont("DejaVu Serif", 30000);
    for (char16_t c = u'a'; c <= u'z'; ++c) {
      Block glyphs(64);
      uint64_t cost = glyphs.Bytes();
      words.Insert(1, std::u16string(3, c), std::move(glyphs), cost);
    }
  }

  Fonts::Handle InsertFont(const std::string& name, size_t bytes) {
    auto font = std::make_unique<Block>(bytes);
    uint64_t cost = font->Bytes();
    return fonts.Insert(name, std::move(font), cost);
  }

  uint64_t Held() const {
    return surfaces.used_bytes() + images.used_bytes() + bfcache.used_bytes() + fonts.used_bytes() +
           words.used_bytes();
  }

  ManualClock clock;
  SteppingClock stopwatch;
  SurfaceCache surfaces;
  ImageCache images;
  BfCache bfcache;
  Fonts fonts;
  Words words;
  MemoryPressure pressure;
  MemoryReporter reporter;
  std::vector<MemoryPressure::Subscription> subscriptions;
  std::vector<MemoryReporter::Registration> registrations;
  Fonts::Handle used_font;
};

TEST(PressureResponse, ModerateAgesEveryCacheOneGenerationAndEmptiesShapedWords) {
  Caches caches;
  size_t surface_count = caches.surfaces.surface_count();
  MemoryPressureDispatchResult first = caches.pressure.Dispatch(MemoryPressureLevel::kModerate);
  EXPECT_FALSE(first.purged);
  EXPECT_EQ(caches.words.word_count(), 0u);
  EXPECT_EQ(caches.surfaces.surface_count(), surface_count);  // aged, not yet gone (K = 2)
  EXPECT_EQ(caches.images.entry_count(), 2u);
  // A repeat within 10 s is ongoing: no further aging.
  caches.clock.Advance(seconds(5));
  caches.pressure.Dispatch(MemoryPressureLevel::kModerate);
  EXPECT_EQ(caches.surfaces.surface_count(), surface_count);
  // A fresh moderate event: the two-generation caches lose their unused entries.
  caches.clock.Advance(seconds(10));
  MemoryPressureDispatchResult second = caches.pressure.Dispatch(MemoryPressureLevel::kModerate);
  EXPECT_FALSE(second.event.ongoing);
  EXPECT_EQ(caches.surfaces.surface_count(), 3u);  // image 1's, locked
  EXPECT_EQ(caches.images.entry_count(), 1u);      // the referenced one
  EXPECT_EQ(caches.fonts.font_count(), 2u);        // 3 generations: one step to go
  EXPECT_EQ(caches.bfcache.document_count(), 2u);  // 11 generations
}

TEST(PressureResponse, CriticalDropsEverythingDiscardableAndPurges) {
  Caches caches;
  uint64_t locked = caches.surfaces.locked_bytes();
  uint64_t referenced = caches.images.referenced_bytes();
  uint64_t held_before = caches.Held();
  MemoryPressureDispatchResult result = caches.pressure.Dispatch(MemoryPressureLevel::kCritical);
  EXPECT_TRUE(result.purged);
  ASSERT_EQ(result.listeners.size(), 5u);
  EXPECT_EQ(caches.surfaces.used_bytes(), locked);
  EXPECT_EQ(caches.images.used_bytes(), referenced);
  EXPECT_EQ(caches.bfcache.document_count(), 0u);
  EXPECT_EQ(caches.fonts.font_count(), 1u);  // the one in use
  EXPECT_EQ(caches.words.word_count(), 0u);
  // What the listeners say they freed is what left the caches.
  EXPECT_EQ(result.total_freed_bytes, held_before - caches.Held());
  // Each listener is timed on the stopwatch around its own call; the total spans them all.
  Clock::Duration timed = result.purge.elapsed;
  for (const MemoryPressureListenerResult& listener : result.listeners) {
    EXPECT_EQ(listener.elapsed, std::chrono::microseconds(1)) << listener.name;
    timed += listener.elapsed;
  }
  EXPECT_EQ(result.purge.elapsed, std::chrono::microseconds(1));
  EXPECT_GT(result.total_elapsed, timed);
}

TEST(PressureResponse, ReportOfEveryCacheFollowsAboutMemoryAndLeavesLittleUnclassified) {
  Caches caches;
  caches.surfaces.Lookup(SurfaceKey{1, 100, 100, 0});
  caches.pressure.Dispatch(MemoryPressureLevel::kModerate);
  MemoryReport report = caches.reporter.Collect();
  auto json = nlohmann::ordered_json::parse(MemoryReportToJson(report));
  EXPECT_EQ(testing::AboutMemoryViolations(json), std::vector<std::string>{});
  int64_t heap_allocated = report.Amount("heap-allocated");
  int64_t unclassified = testing::HeapUnclassified(json);
  EXPECT_GE(unclassified, 0);
  EXPECT_LT(unclassified, heap_allocated / 10) << MemoryReportToJson(report);
  EXPECT_GT(report.Sum("explicit/images"), 0);
  EXPECT_GT(report.Amount("explicit/bfcache"), 0);
  EXPECT_GT(report.Amount("explicit/fonts"), 0);
  EXPECT_EQ(report.Amount("explicit/shaped-words"), 0);  // moderate emptied them
  EXPECT_EQ(report.Amount("lethe-counters/images/surface-cache/hits"), 1);
  EXPECT_GT(report.Amount("lethe-counters/shaped-words/flushed"), 0);
}

}  // namespace
}  // namespace lethe
