#include "lethe/memory_reporter.h"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "about_memory_rules.h"
#include "lethe/alloc.h"

namespace lethe {
namespace {

using nlohmann::ordered_json;

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("lethe_reporter_" + std::to_string(getpid()) + "_" + name))
      .string();
}

std::string ReadGzip(const std::string& path) {
  gzFile in = gzopen(path.c_str(), "rb");
  if (in == nullptr) return "";
  std::string text;
  char buffer[4096];
  int n;
  while ((n = gzread(in, buffer, sizeof(buffer))) > 0) text.append(buffer, static_cast<size_t>(n));
  gzclose(in);
  return text;
}

// A reporter holding a few lethe_malloc'd blocks, reporting their usable sizes.
struct BlockHolder {
  std::vector<void*> blocks;
  explicit BlockHolder(std::initializer_list<size_t> sizes) {
    for (size_t size : sizes) blocks.push_back(lethe_malloc(size));
  }
  ~BlockHolder() {
    for (void* block : blocks) lethe_free(block);
  }
  uint64_t Bytes() const {
    uint64_t bytes = 0;
    for (void* block : blocks) bytes += lethe_usable_size(block);
    return bytes;
  }
};

TEST(MemoryReporter, CollectRunsRegisteredReportersAndAddsProcessFigures) {
  MemoryReporter reporter("test-process");
  BlockHolder holder({1000, 5000});
  auto registration = reporter.Register("holder", [&](MemoryReportCollector& collector) {
    collector.HeapBytes("test/blocks", holder.Bytes(), "Blocks.");
    collector.Counter("test/hits", 42, "Hits.");
  });
  MemoryReport report = reporter.Collect();
  EXPECT_EQ(report.process, "test-process");
  EXPECT_EQ(report.Amount("explicit/test/blocks"), static_cast<int64_t>(holder.Bytes()));
  EXPECT_EQ(report.Amount("lethe-counters/test/hits"), 42);
  EXPECT_GE(report.Amount("heap-allocated"), static_cast<int64_t>(holder.Bytes()));
  EXPECT_GT(report.Amount("resident"), 0);
  EXPECT_GT(report.Amount("resident-unique"), 0);
  EXPECT_LE(report.Amount("resident-unique"), report.Amount("resident"));
  EXPECT_GE(report.Amount("explicit/heap-overhead/bin-unused"), 0);
  EXPECT_GE(report.Amount("explicit/heap-overhead/bookkeeping"), 0);
  EXPECT_GE(report.Amount("explicit/heap-overhead/thread-caches"), 0);
  EXPECT_GE(report.Amount("explicit/heap-overhead/transfer-caches"), 0);
  EXPECT_GE(report.Amount("explicit/heap-overhead/page-cache"), 0);
}

// The allocator's caches are heap overhead of their own, beside bin-unused: blocks freed into the
// calling thread's cache show up there (with the bundled allocator; forwarding has no caches).
TEST(MemoryReporter, TheAllocatorsCachesAreReportedAsHeapOverhead) {
  MemoryReporter reporter;
  lethe_free(lethe_malloc(100));
  MemoryReport report = reporter.Collect();
  for (const char* path : {"explicit/heap-overhead/thread-caches",
                           "explicit/heap-overhead/transfer-caches"}) {
    auto entry = std::find_if(report.entries.begin(), report.entries.end(),
                              [path](const MemoryReportEntry& e) { return e.path == path; });
    ASSERT_NE(entry, report.entries.end()) << path;
    EXPECT_EQ(entry->kind, ReportKind::kNonHeap) << path;
  }
  if (std::string(lethe_allocator_name()) == "lethe") {
    EXPECT_GE(report.Amount("explicit/heap-overhead/thread-caches"), 100);
  }
}

TEST(MemoryReporter, DestroyedRegistrationIsNotCalled) {
  MemoryReporter reporter;
  int calls = 0;
  {
    auto registration = reporter.Register("r", [&](MemoryReportCollector&) { ++calls; });
    reporter.Collect();
  }
  reporter.Collect();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(reporter.reporter_count(), 0u);
}

TEST(MemoryReporter, JsonFollowsEveryAboutMemoryRule) {
  MemoryReporter reporter;
  BlockHolder holder({64, 100000});
  auto registration = reporter.Register("holder", [&](MemoryReportCollector& collector) {
    collector.HeapBytes("images/" + EscapePathSegment("http://example.com/a.png"), holder.Bytes(),
                        "A \"quoted\" description\nwith a newline.");
    collector.Counter("images/hits", 3, "Hits.");
  });
  ordered_json json = ordered_json::parse(MemoryReportToJson(reporter.Collect()));
  EXPECT_EQ(testing::AboutMemoryViolations(json), std::vector<std::string>{});
  bool found = false;
  for (const auto& entry : json["reports"]) {
    if (entry["path"] == "explicit/images/http:\\\\example.com\\a.png") found = true;
  }
  EXPECT_TRUE(found) << "a '/' inside a name is written as '\\'";
  // Everything on lethe_* here is reported, so nothing is left unclassified.
  EXPECT_EQ(testing::HeapUnclassified(json), 0);
}

TEST(AboutMemoryRules, CatchesEachBrokenRule) {
  // The checker itself must be able to fail, or the test above proves nothing.
  auto report = [](ordered_json reports) {
    return ordered_json{{"version", 1}, {"hasMozMallocUsableSize", true}, {"reports", reports}};
  };
  auto entry = [](std::string path, int kind, int units, int64_t amount) {
    return ordered_json{{"process", "p"}, {"path", path}, {"kind", kind},
                        {"units", units}, {"amount", amount}, {"description", "d"}};
  };
  EXPECT_TRUE(testing::AboutMemoryViolations(report({entry("explicit/a", 1, 0, 1)})).empty());
  EXPECT_FALSE(testing::AboutMemoryViolations(report({entry("explicit/a", 2, 0, 1)})).empty());
  EXPECT_FALSE(testing::AboutMemoryViolations(report({entry("explicit/a", 1, 1, 1)})).empty());
  EXPECT_FALSE(testing::AboutMemoryViolations(
                   report({entry("explicit/a", 1, 0, 1), entry("explicit/a/b", 1, 0, 1)}))
                   .empty());
  EXPECT_FALSE(testing::AboutMemoryViolations(
                   report({entry("c/a", 2, 2, 1), entry("c/b", 2, 1, 1)}))
                   .empty());
  EXPECT_FALSE(testing::AboutMemoryViolations(report({entry("c//a", 2, 2, 1)})).empty());
  ordered_json bad_version = report(ordered_json::array());
  bad_version["version"] = 2;
  EXPECT_FALSE(testing::AboutMemoryViolations(bad_version).empty());
  ordered_json missing = ordered_json{{"version", 1}, {"reports", ordered_json::array()}};
  EXPECT_FALSE(testing::AboutMemoryViolations(missing).empty());
  ordered_json not_array = ordered_json{{"version", 1}, {"hasMozMallocUsableSize", true}, {"reports", 3}};
  EXPECT_FALSE(testing::AboutMemoryViolations(not_array).empty());
}

TEST(MemoryReporter, WritesGzipWhenTheNameEndsInGz) {
  MemoryReporter reporter;
  MemoryReport report = reporter.Collect();
  std::string gz_path = TempPath("report.json.gz");
  ASSERT_EQ(WriteMemoryReport(report, gz_path), "");
  std::ifstream raw(gz_path, std::ios::binary);
  char magic[2] = {};
  raw.read(magic, 2);
  EXPECT_EQ(static_cast<unsigned char>(magic[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(magic[1]), 0x8b);
  EXPECT_EQ(ReadGzip(gz_path), MemoryReportToJson(report));
  std::filesystem::remove(gz_path);

  std::string plain_path = TempPath("report.json");
  ASSERT_EQ(WriteMemoryReport(report, plain_path), "");
  std::ifstream plain(plain_path);
  std::stringstream text;
  text << plain.rdbuf();
  EXPECT_EQ(text.str(), MemoryReportToJson(report));
  std::filesystem::remove(plain_path);
}

TEST(MemoryReporter, WriteToAnUnwritablePathSaysWhy) {
  MemoryReport report;
  std::string error = WriteMemoryReport(report, "/nonexistent-dir/x/report.json.gz");
  EXPECT_NE(error.find("/nonexistent-dir/x/report.json.gz: cannot create: No such file"),
            std::string::npos) << error;
  error = WriteMemoryReport(report, "/nonexistent-dir/x/report.json");
  EXPECT_NE(error.find("report.json: cannot create: No such file"), std::string::npos) << error;
}

// A report that stays large once gzip'd: distinct paths with pseudo-random descriptions.
MemoryReport LargeReport() {
  MemoryReport report;
  report.process = "large";
  uint64_t state = 88172645463325252u;
  for (int i = 0; i < 3000; ++i) {
    std::string description;
    for (int j = 0; j < 4; ++j) {
      state ^= state << 13, state ^= state >> 7, state ^= state << 17;
      description += std::to_string(state);
    }
    report.entries.push_back({"explicit/blocks/b" + std::to_string(i), ReportKind::kHeap,
                              ReportUnits::kBytes, i, description});
  }
  return report;
}

// A full disk, simulated in a child with RLIMIT_FSIZE: the write fails part-way, the error says
// so, the earlier report is untouched and no partial or temporary file is left beside it.
TEST(MemoryReporter, FullDiskLeavesTheEarlierReportWholeAndNoPartialFile) {
  for (const char* name : {"full.json.gz", "full.json"}) {
    std::filesystem::path directory = TempPath(std::string("dir_") + name);
    std::filesystem::create_directories(directory);
    std::string path = (directory / name).string();
    MemoryReport small;
    small.process = "earlier";
    ASSERT_EQ(WriteMemoryReport(small, path), "");
    auto write_on_a_small_disk = [&path] {
      std::signal(SIGXFSZ, SIG_IGN);
      rlimit limit{4096, 4096};
      setrlimit(RLIMIT_FSIZE, &limit);
      std::string error = WriteMemoryReport(LargeReport(), path);
      bool clear = error.find(path + ": write failed: File too large") != std::string::npos;
      std::_Exit(clear ? 0 : 1);
    };
    EXPECT_EXIT(write_on_a_small_disk(), ::testing::ExitedWithCode(0), "") << name;
    std::string earlier = std::string(name).ends_with(".gz") ? ReadGzip(path) : [&] {
      std::ifstream in(path);
      std::stringstream text;
      text << in.rdbuf();
      return text.str();
    }();
    EXPECT_EQ(earlier, MemoryReportToJson(small)) << name;
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(directory),
                            std::filesystem::directory_iterator()), 1) << name;
    std::filesystem::remove_all(directory);
  }
}

// The test above must be able to fail: without the limit the large report is written whole.
TEST(MemoryReporter, LargeReportIsWrittenWholeWithoutTheLimit) {
  std::string path = TempPath("large.json.gz");
  MemoryReport report = LargeReport();
  ASSERT_EQ(WriteMemoryReport(report, path), "");
  EXPECT_GT(std::filesystem::file_size(path), 4096u * 4);
  EXPECT_EQ(ReadGzip(path), MemoryReportToJson(report));
  std::filesystem::remove(path);
}

TEST(ResidentMemory, ReadsThisProcess) {
  ResidentMemory memory = ReadResidentMemory();
  EXPECT_GT(memory.resident_bytes, 1u << 20);
  EXPECT_GT(memory.resident_unique_bytes, 0u);
}

}  // namespace
}  // namespace lethe
