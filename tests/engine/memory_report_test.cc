// Engine::ReportMemory covers every subsystem, and heap-unclassified stays between 0 and 10% of
// heap-allocated.
//
// This binary links Lethe's malloc replacement when the build has one (LETHE_REPLACE_MALLOC), as
// Lethe's tools do: then every byte a reporter classifies as heap (the C++ containers of the
// shaped words, the bfcache's layouts, the glyph tables, as well as the lethe_malloc buffers) is in
// heap-allocated, and the lower bound is exact. Under ThreadSanitizer (the tsan-alloc preset) lethe_*
// are Lethe's but malloc is the sanitizer's: the lower bound then leaves out every reporter whose
// bytes may live in C++ containers, and holds for the lethe_malloc buffers alone.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "about_memory_rules.h"
#include "engine_test_pages.h"
#include "lethe/alloc.h"
#include "lethe/engine.h"

namespace lethe {
namespace {

using testing::TestOptions;
using testing::TestSite;

// True when malloc itself is served by Lethe's allocator: a 4 MiB malloc is a huge block, counted
// exactly by lethe_stats only if it went through Lethe.
bool MallocIsLethes() {
  lethe_stats_t before;
  lethe_stats(&before);
  void* volatile block = std::malloc(size_t{4} << 20);
  lethe_stats_t during;
  lethe_stats(&during);
  std::free(block);
  return during.huge_count == before.huge_count + 1;
}

// The heap kind entries under explicit/: what the report classifies as heap.
int64_t ClassifiedHeapBytes(const MemoryReport& report) {
  int64_t classified = 0;
  for (const MemoryReportEntry& entry : report.entries) {
    if (entry.kind == ReportKind::kHeap && entry.path.rfind("explicit/", 0) == 0) {
      classified += entry.amount;
    }
  }
  return classified;
}

// A page of the size the 10% rule is about: a 1024 x 768 window showing a 640 x 400 picture and
// paragraphs of text. (On the TestSite's 400 x 300 pages of 64 x 32 icons, the engine's fixed
// bookkeeping and the test runner's own heap would be most of the heap.)
std::string WriteArticlePage(const TestSite& site) {
  testing::WriteBytes(site.Image("photo.gif"),
                      testing::SolidGif(640, 400, {testing::kGreen, testing::kBlue}));
  std::string paragraph;
  for (int i = 0; i < 40; ++i) paragraph += "memory pressure discards surfaces nobody drew ";
  std::string items = R"({"type": "image", "src": "img/photo.gif", "x": 20, "y": 20,
                          "width": 640, "height": 400})";
  for (int y = 440; y < 760; y += 80) {
    items += R"(, {"type": "text", "text": ")" + paragraph + R"(", "x": 20, "y": )" +
             std::to_string(y) + R"(, "width": 980, "size": 16, "color": "#202020"})";
  }
  std::string path = site.dir().File("article.json");
  testing::WriteFile(path, R"({"title": "article", "width": 1024, "height": 2000, "items": [)" +
                               items + "]}");
  return path;
}

class MemoryReportTest : public ::testing::Test {
 protected:
  // The article drawn in a 1024 x 768 window, the TestSite's page 1 in the bfcache: every
  // subsystem holds something.
  std::unique_ptr<Engine> MakeBusyEngine() {
    EngineOptions options = TestOptions(&log_);
    options.viewport_width = 1024;
    options.viewport_height = 768;
    auto engine = testing::MakeEngine(std::move(options));
    if (engine == nullptr) return engine;
    WindowId tab = engine->OpenWindow();
    EXPECT_TRUE(engine->Navigate(tab, site_.Page(1)).ok());
    engine->DrawFrame();
    EXPECT_TRUE(engine->Navigate(tab, WriteArticlePage(site_)).ok());  // page 1 in the bfcache
    engine->DrawFrame();
    return engine;
  }

  TestSite site_;
  std::vector<std::string> log_;
};

TEST_F(MemoryReportTest, TheWholeProcessRunsOnLethesHeapWhenTheBuildReplacesMalloc) {
#if defined(LETHE_TEST_LINKS_MALLOC)
  EXPECT_TRUE(MallocIsLethes()) << "this test binary should link lethe_malloc_static";
#else
  EXPECT_FALSE(MallocIsLethes());
#endif
}

TEST_F(MemoryReportTest, EverySubsystemHasItsPath) {
  auto engine = MakeBusyEngine();
  ASSERT_NE(engine, nullptr);
  MemoryReport report = engine->CollectMemoryReport();
  for (const char* path :
       {"explicit/images/raster/still/locked", "explicit/images/encoded/compressed",
        "explicit/images/encoded/placeholders", "explicit/bfcache", "explicit/fonts",
        "explicit/shaped-words", "explicit/storage/sqlite", "explicit/engine/framebuffer",
        "heap-allocated", "explicit/heap-overhead/bookkeeping", "resident", "resident-unique"}) {
    EXPECT_GE(report.Amount(path), 0) << path;
  }
  EXPECT_GT(report.Amount("explicit/images/encoded/placeholders"), 0);
  EXPECT_GT(report.Amount("explicit/bfcache"), 0);
  EXPECT_GT(report.Amount("explicit/fonts"), 0);
  EXPECT_GT(report.Amount("explicit/shaped-words"), 0);
}

TEST_F(MemoryReportTest, HeapUnclassifiedIsBetweenZeroAndTenPercent) {
  if (std::string(lethe_allocator_name()) != "lethe") {
    GTEST_SKIP() << "lethe_* forward to the system malloc: heap-allocated is not Lethe's heap";
  }
  auto engine = MakeBusyEngine();
  ASSERT_NE(engine, nullptr);
  MemoryReport report = engine->CollectMemoryReport();
  const int64_t heap = report.Amount("heap-allocated");
  const int64_t unclassified = heap - ClassifiedHeapBytes(report);
  if (MallocIsLethes()) {
    EXPECT_GE(unclassified, 0) << "the reporters claim more heap than the allocator holds";
  } else {
    // Off Lethe's heap here, in part or whole: the C++ containers (shaped words, bfcache layouts,
    // documents' DOMs, the image store's index, glyph tables) and the font faces' objects.
    const int64_t off_lethe_heap =
        report.Amount("explicit/shaped-words") + report.Amount("explicit/bfcache") +
        report.Amount("explicit/engine/documents") + report.Amount("explicit/engine/image-store") +
        report.Amount("explicit/fonts") + static_cast<int64_t>(engine->Memory().glyph_bytes);
    EXPECT_GE(unclassified + off_lethe_heap, 0);
  }
  EXPECT_LE(unclassified, heap / 10) << "heap-unclassified over 10% of " << heap;
  RecordProperty("heap_unclassified_bytes", std::to_string(unclassified));
  RecordProperty("heap_allocated_bytes", std::to_string(heap));
}

TEST_F(MemoryReportTest, TheFileFollowsAboutMemorysRulesAndABadPathIsAnError) {
  auto engine = MakeBusyEngine();
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->ReportMemory(site_.dir().File("report.json")).ok());
  auto json = nlohmann::ordered_json::parse(testing::ReadFile(site_.dir().File("report.json")));
  EXPECT_EQ(testing::AboutMemoryViolations(json), std::vector<std::string>{});
  EXPECT_FALSE(engine->ReportMemory("/nonexistent/dir/report.json").ok());
}

}  // namespace
}  // namespace lethe
