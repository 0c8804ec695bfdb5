// Checks the memory report lethe-demo writes after its workload (the CTest fixture
// lethe_demo_workload runs the demo first): every about:memory rule, and a small
// heap-unclassified.
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "about_memory_rules.h"
#include "lethe/alloc.h"

namespace lethe {
namespace {

std::string ReadGzip(const char* path) {
  gzFile in = gzopen(path, "rb");
  if (in == nullptr) return "";
  std::string text;
  char buffer[8192];
  int n;
  while ((n = gzread(in, buffer, sizeof(buffer))) > 0) text.append(buffer, static_cast<size_t>(n));
  gzclose(in);
  return text;
}

TEST(DemoReport, FollowsEveryAboutMemoryRuleAndLeavesUnderTenPercentUnclassified) {
  std::string text = ReadGzip(LETHE_DEMO_REPORT);
  ASSERT_FALSE(text.empty()) << "no report at " << LETHE_DEMO_REPORT;
  auto json = nlohmann::ordered_json::parse(text);
  EXPECT_EQ(testing::AboutMemoryViolations(json), std::vector<std::string>{});
  int64_t heap_allocated = -1;
  int64_t animated = 0;
  int64_t containers = 0;  // entries held through operator new or malloc, not lethe_* blocks
  bool resident = false, resident_unique = false, decoded = false;
  for (const auto& entry : json["reports"]) {
    std::string path = entry["path"];
    if (path == "heap-allocated") heap_allocated = entry["amount"];
    if (path.rfind("explicit/images/raster/animated/", 0) == 0) animated += entry["amount"].get<int64_t>();
    if (path == "explicit/engine/documents" || path == "explicit/engine/image-store" ||
        path == "explicit/bfcache" || path == "explicit/shaped-words" || path == "explicit/fonts") {
      containers += entry["amount"].get<int64_t>();
    }
    resident |= path == "resident";
    resident_unique |= path == "resident-unique";
    decoded |= path.rfind("explicit/images/raster/", 0) == 0 && entry["amount"] > 0;
  }
  EXPECT_TRUE(resident);
  EXPECT_TRUE(resident_unique);
  EXPECT_TRUE(decoded) << "the report should show decoded surfaces on screen";
  ASSERT_GT(heap_allocated, 0);
  int64_t unclassified = testing::HeapUnclassified(json);
  if (std::string(lethe_allocator_name()) == "lethe") {
    EXPECT_GE(unclassified, 0);
  } else {
    // The sanitizer presets: lethe_* forward to the system malloc and no malloc replacement is
    // linked, so heap-allocated holds only the lethe_* blocks. The animations' per-frame records
    // and palettes (std::vector in the decoders) are classified yet sit outside it: a few percent
    // of the animations' bytes at most; so do the engine's structures kept in std containers (the
    // documents, the image store, the BfCache's documents once the demo browses HTML pages in one
    // tab, the shaped words) and FreeType's faces (malloc): at most their whole size.
    EXPECT_GE(unclassified + animated / 20 + containers, 0)
        << "animated bytes " << animated << ", in containers " << containers;
  }
  EXPECT_LT(unclassified, heap_allocated / 10);
}

// The regret counters (discards undone within 5 s) are in the report, as cumulative counts, for
// a user to tune the expiry times against.
TEST(DemoReport, CarriesTheSurfaceCachesRegretCounters) {
  std::string text = ReadGzip(LETHE_DEMO_REPORT);
  ASSERT_FALSE(text.empty()) << "no report at " << LETHE_DEMO_REPORT;
  auto json = nlohmann::ordered_json::parse(text);
  std::vector<std::string> found;
  for (const auto& entry : json["reports"]) {
    const std::string path = entry["path"];
    if (path.rfind("lethe-counters/images/surface-cache/regret", 0) != 0) continue;
    found.push_back(path.substr(path.rfind('/') + 1));
    EXPECT_EQ(entry["kind"], 2) << path;
    EXPECT_EQ(entry["units"], 2) << path;
  }
  EXPECT_EQ(found, (std::vector<std::string>{"regrets", "regret-bytes", "regret-decode-time-ns",
                                             "regrets-after-expiry", "regrets-after-cap",
                                             "regrets-after-pressure"}));
}

}  // namespace
}  // namespace lethe
