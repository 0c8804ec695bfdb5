// The engine's DiskCache: image bytes read from their file (the network, in the engine's model) are
// stored on disk and come back from there once their in-memory copy has expired, or in the next
// session; a cache that cannot be opened is an error at Create, a corrupt one is moved aside, and a
// store that fails never loses the image.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engine_test_pages.h"
#include "lethe/alloc.h"
#include "lethe/engine.h"
#include "lethe/sqlite_allocator.h"

namespace lethe {
namespace {

using testing::PixelAt;
using testing::TestOptions;
using testing::TestSite;

constexpr uint32_t kOpaqueBlue = 0xFF0000FF;
constexpr uint32_t kOpaqueRed = 0xFFFF0000;

int64_t EngineCounter(const Engine& engine, const std::string& name) {
  return engine.CollectMemoryReport().Amount("lethe-counters/engine/" + name);
}

// A counter of the engine's DiskCache; negative when the engine has none.
int64_t DiskCounter(const Engine& engine, const std::string& name) {
  return engine.CollectMemoryReport().Amount("lethe-counters/disk-cache/" + name);
}

class EngineDiskCacheTest : public ::testing::Test {
 protected:
  EngineOptions Options() {
    EngineOptions options = TestOptions(&log_);
    options.disk_cache_path = site_.dir().File("cache.sqlite");
    return options;
  }
  std::unique_ptr<Engine> Make(EngineOptions options) { return testing::MakeEngine(std::move(options)); }
  // Closes every window showing the site and drops the compressed bytes nobody references.
  static void ForgetImages(Engine& engine, WindowId tab) {
    engine.CloseWindow(tab);
    engine.OnMemoryPressure(MemoryPressureLevel::kCritical);
  }
  // The blue icon, its file deleted: only a cache can bring it back.
  Status ShowPageTwoWithoutItsFile(Engine& engine) {
    std::filesystem::remove(site_.Image("blue.gif"));
    return engine.Navigate(engine.OpenWindow(), site_.Page(2));
  }

  TestSite site_;
  std::vector<std::string> log_;
};

TEST_F(EngineDiskCacheTest, ImageBytesThatExpiredInMemoryComeBackFromDisk) {
  auto engine = Make(Options());
  ASSERT_NE(engine, nullptr);
  WindowId tab = engine->OpenWindow();
  ASSERT_TRUE(engine->Navigate(tab, site_.Page(2)).ok());
  EXPECT_EQ(EngineCounter(*engine, "image-file-reads"), 1);
  EXPECT_EQ(DiskCounter(*engine, "hit-count"), 0);
  ForgetImages(*engine, tab);

  Status again = ShowPageTwoWithoutItsFile(*engine);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(EngineCounter(*engine, "image-file-reads"), 1);
  EXPECT_EQ(DiskCounter(*engine, "hit-count"), 1);
  EXPECT_EQ(PixelAt(engine->DrawFrame(), 20, 20), kOpaqueBlue);
}

TEST_F(EngineDiskCacheTest, CriticalPressureReachesTheDiskCache) {
  auto engine = Make(Options());
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Navigate(engine->OpenWindow(), site_.Page(1)).ok());
  PressureOutcome outcome = engine->OnMemoryPressure(MemoryPressureLevel::kCritical);
  bool listened = false;
  for (const MemoryPressureListenerResult& listener : outcome.dispatch.listeners) {
    listened = listened || listener.name == "disk-cache";
  }
  EXPECT_TRUE(listened) << "the disk cache's SQLite page cache is not released under pressure";
}

// The disk cache puts SQLite on Lethe's heap where the process runs on Lethe's allocator, and the
// report files SQLite's memory as heap there, as nonheap on SQLite's own allocator (issue 17).
TEST_F(EngineDiskCacheTest, SqliteRunsOnLethesHeapWhereTheProcessDoesAndTheReportSaysWhich) {
  auto engine = Make(Options());
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Navigate(engine->OpenWindow(), site_.Page(1)).ok());
  MemoryReport report = engine->CollectMemoryReport();
  std::vector<const MemoryReportEntry*> sqlite;
  for (const MemoryReportEntry& entry : report.entries) {
    if (entry.path == "explicit/storage/sqlite") sqlite.push_back(&entry);
  }
  ASSERT_EQ(sqlite.size(), 1u);
  const bool on_lethe = std::string(lethe_allocator_name()) == "lethe";
  EXPECT_EQ(cache::SqliteMemoryInUse().allocator,
            on_lethe ? cache::SqliteAllocatorKind::kLethe : cache::SqliteAllocatorKind::kSqliteOwn);
  EXPECT_EQ(sqlite[0]->kind, on_lethe ? ReportKind::kHeap : ReportKind::kNonHeap);
  EXPECT_GT(sqlite[0]->amount, 0);
}

TEST_F(EngineDiskCacheTest, WithoutADiskCacheAnImageWhoseFileIsGoneCannotComeBack) {
  auto engine = Make(TestOptions(&log_));
  ASSERT_NE(engine, nullptr);
  WindowId tab = engine->OpenWindow();
  ASSERT_TRUE(engine->Navigate(tab, site_.Page(2)).ok());
  ForgetImages(*engine, tab);

  ASSERT_TRUE(ShowPageTwoWithoutItsFile(*engine).ok());  // the page loads; its image is broken
  EXPECT_EQ(EngineCounter(*engine, "image-file-reads"), 2);
  EXPECT_LT(DiskCounter(*engine, "hit-count"), 0);  // no disk cache in the report
  EXPECT_NE(PixelAt(engine->DrawFrame(), 20, 20), kOpaqueBlue);
}

TEST_F(EngineDiskCacheTest, TheNextSessionReadsNoFile) {
  {
    auto first = Make(Options());
    ASSERT_NE(first, nullptr);
    ASSERT_TRUE(first->Navigate(first->OpenWindow(), site_.Page(1)).ok());
    EXPECT_EQ(EngineCounter(*first, "image-file-reads"), 4);
  }
  auto second = Make(Options());
  ASSERT_NE(second, nullptr);
  ASSERT_TRUE(second->Navigate(second->OpenWindow(), site_.Page(1)).ok());
  EXPECT_EQ(EngineCounter(*second, "image-file-reads"), 0);
  EXPECT_EQ(DiskCounter(*second, "hit-count"), 4);
  EXPECT_EQ(PixelAt(second->DrawFrame(), 20, 20), kOpaqueRed);
}

TEST_F(EngineDiskCacheTest, APathThatCannotBeOpenedFailsCreateWithTheReason) {
  EngineOptions options = Options();
  options.disk_cache_path = site_.dir().File("no/such/dir/cache.sqlite");
  std::string error;
  EXPECT_EQ(Engine::Create(std::move(options), &error), nullptr);
  EXPECT_NE(error.find("disk cache"), std::string::npos) << error;
  EXPECT_NE(error.find("cannot-open"), std::string::npos) << error;
}

TEST_F(EngineDiskCacheTest, ACacheLockedByAnotherEngineFailsCreate) {
  auto owner = Make(Options());
  ASSERT_NE(owner, nullptr);
  std::string error;
  EXPECT_EQ(Engine::Create(Options(), &error), nullptr);
  EXPECT_NE(error.find("disk cache"), std::string::npos) << error;
}

TEST_F(EngineDiskCacheTest, ACorruptCacheFileIsMovedAsideAndTheEngineGoesOn) {
  testing::WriteFile(site_.dir().File("cache.sqlite"), std::string(8192, 'x'));
  auto engine = Make(Options());
  ASSERT_NE(engine, nullptr);
  bool logged = false;
  for (const std::string& line : log_) logged = logged || line.find("aside") != std::string::npos;
  EXPECT_TRUE(logged) << "the move aside is not in the log";
  ASSERT_TRUE(engine->Navigate(engine->OpenWindow(), site_.Page(2)).ok());
  EXPECT_EQ(PixelAt(engine->DrawFrame(), 20, 20), kOpaqueBlue);
  EXPECT_EQ(engine->CollectMemoryReport().Amount("lethe-counters/disk-cache/moved-aside-count"), 1);
}

TEST_F(EngineDiskCacheTest, AStoreThatFailsIsCountedAndTheImageStillShows) {
  EngineOptions options = Options();
  options.disk_cache.capacity_bytes = 16;  // no image fits: every Put is refused
  auto engine = Make(std::move(options));
  ASSERT_NE(engine, nullptr);
  WindowId tab = engine->OpenWindow();
  ASSERT_TRUE(engine->Navigate(tab, site_.Page(2)).ok());
  EXPECT_EQ(DiskCounter(*engine, "rejected-count"), 1);  // over the cap: refused before storage
  EXPECT_EQ(DiskCounter(*engine, "put-count"), 0);
  EXPECT_EQ(PixelAt(engine->DrawFrame(), 20, 20), kOpaqueBlue);
  ForgetImages(*engine, tab);
  ASSERT_TRUE(ShowPageTwoWithoutItsFile(*engine).ok());  // the page loads; its image is broken
  EXPECT_EQ(DiskCounter(*engine, "hit-count"), 0);  // nothing was stored
  EXPECT_NE(PixelAt(engine->DrawFrame(), 20, 20), kOpaqueBlue);
}

}  // namespace
}  // namespace lethe
