// lethe-memreport's reader, tree builder, printer and differ, on reports written here.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lethe/memory_reporter.h"
#include "memory_report_file.h"

namespace lethe::memreport {
namespace {

std::string Report(const std::string& reports) {
  return R"({"version":1,"hasMozMallocUsableSize":true,"reports":[)" + reports + "]}";
}

std::string Item(const std::string& path, int kind, int units, long long amount) {
  return R"({"process":"lethe","path":")" + path + R"(","kind":)" + std::to_string(kind) +
         R"(,"units":)" + std::to_string(units) + R"(,"amount":)" + std::to_string(amount) +
         R"(,"description":"d"})";
}

ReportFile MustParse(const std::string& text) {
  std::string error;
  auto report = ParseReport(text, "test.json", &error);
  EXPECT_TRUE(report.has_value()) << error;
  return report.value_or(ReportFile{});
}

std::string ParseError(const std::string& text) {
  std::string error;
  EXPECT_FALSE(ParseReport(text, "bad.json", &error).has_value());
  return error;
}

const std::string kSample = Report(
    Item("explicit/images/raster/decoded", 1, 0, 6 << 20) + "," +
    Item("explicit/images/raster/encoded", 1, 0, 2 << 20) + "," +
    Item("explicit/bfcache", 1, 0, 1 << 20) + "," +
    Item("explicit/heap-overhead/bookkeeping", 0, 0, 512 << 10) + "," +
    Item("heap-allocated", 2, 0, 10 << 20) + "," + Item("resident", 2, 0, 40 << 20) + "," +
    Item("lethe-counters/images/discards", 2, 2, 17) + "," +
    Item(R"(explicit/images/url(https:\\\\example.com\\a.png))", 1, 0, 100));

TEST(MemoryReportFile, BuildsTreesAndComputesHeapUnclassified) {
  ReportFile report = MustParse(kSample);
  auto trees = BuildTrees(report);
  ASSERT_EQ(trees.count("lethe"), 1u);
  const Node& explicit_root = *trees["lethe"].roots["explicit"];
  const Node& images = *explicit_root.children.at("images");
  EXPECT_EQ(images.amount, (8 << 20) + 100);
  // heap-unclassified = heap-allocated - explicit heap reports (the nonheap overhead excluded).
  const Node& unclassified = *explicit_root.children.at("heap-unclassified");
  EXPECT_EQ(unclassified.amount, (10 << 20) - (9 << 20) - 100);
  // A backslash in a path stands for a '/' inside a name.
  EXPECT_EQ(images.children.count("url(https://example.com/a.png)"), 1u);
}

TEST(MemoryReportFile, PrintsLargestFirstWithPercentages) {
  std::ostringstream out;
  PrintReport(MustParse(kSample), out);
  std::string text = out.str();
  EXPECT_NE(text.find("Explicit Allocations"), std::string::npos);
  size_t images = text.find("-- images");
  size_t bfcache = text.find("── bfcache");
  ASSERT_NE(images, std::string::npos) << text;
  ASSERT_NE(bfcache, std::string::npos) << text;
  EXPECT_LT(images, bfcache);
  EXPECT_NE(text.find("6.00 MB (57.14%)"), std::string::npos) << text;  // 6 of 10.5 MB
  EXPECT_NE(text.find("17 ── discards"), std::string::npos) << text;
  EXPECT_NE(text.find("40.00 MB ── resident"), std::string::npos) << text;
}

TEST(MemoryReportFile, FoldsSmallNodes) {
  std::ostringstream out;
  PrintReport(MustParse(kSample), out, 1 << 20);
  EXPECT_NE(out.str().find("(2 smaller)"), std::string::npos) << out.str();
}

TEST(MemoryReportFile, RejectsWhatAboutMemoryRejects) {
  EXPECT_NE(ParseError("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(ParseError(R"({"version":2,"hasMozMallocUsableSize":true,"reports":[]})").find("'version' must be 1"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"version":1,"reports":[]})").find("hasMozMallocUsableSize"), std::string::npos);
  EXPECT_NE(ParseError(R"({"version":1,"hasMozMallocUsableSize":true,"reports":{}})").find("not an array"),
            std::string::npos);
  EXPECT_NE(ParseError(Report(R"({"process":"p","path":"a","kind":1,"units":0,"description":""})"))
                .find("reports[0]: missing field 'amount'"),
            std::string::npos);
  EXPECT_NE(ParseError(Report(Item("explicit/x", 2, 0, 1))).find("not heap/nonheap bytes"), std::string::npos);
  EXPECT_NE(ParseError(Report(Item("explicit/x", 1, 1, 1))).find("not heap/nonheap bytes"), std::string::npos);
  EXPECT_NE(ParseError(Report(Item("t/a", 2, 0, 1) + "," + Item("t/b", 2, 1, 1))).find("mixes units"),
            std::string::npos);
  EXPECT_NE(ParseError(Report(Item("a//b", 2, 0, 1))).find("malformed path"), std::string::npos);
  EXPECT_NE(ParseError(Report(Item("x", 7, 0, 1))).find("kind 7"), std::string::npos);
}

TEST(MemoryReportFile, LoadsGzipAndReportsMissingAndCorruptFiles) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("memreport-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string gz = (dir / "r.json.gz").string();
  gzFile file = gzopen(gz.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  gzwrite(file, kSample.data(), static_cast<unsigned>(kSample.size()));
  gzclose(file);
  std::string error;
  auto report = LoadReportFile(gz, &error);
  ASSERT_TRUE(report.has_value()) << error;
  EXPECT_EQ(report->entries.size(), 8u);

  EXPECT_FALSE(LoadReportFile((dir / "missing.json").string(), &error).has_value());
  EXPECT_NE(error.find("cannot open"), std::string::npos);
  std::string corrupt = (dir / "corrupt.json.gz").string();
  std::ofstream(corrupt) << "\x1f\x8b garbage that is not deflate";
  EXPECT_FALSE(LoadReportFile(corrupt, &error).has_value());
  std::filesystem::remove_all(dir);
}

TEST(MemoryReportFile, DiffShowsOnlyChangesWithSigns) {
  ReportFile before = MustParse(kSample);
  ReportFile after = MustParse(Report(
      Item("explicit/images/raster/decoded", 1, 0, 1 << 20) + "," +
      Item("explicit/images/raster/encoded", 1, 0, 2 << 20) + "," +
      Item("explicit/bfcache", 1, 0, 1 << 20) + "," +
      Item("explicit/heap-overhead/bookkeeping", 0, 0, 512 << 10) + "," +
      Item("heap-allocated", 2, 0, 5 << 20) + "," + Item("resident", 2, 0, 40 << 20) + "," +
      Item("lethe-counters/images/discards", 2, 2, 20) + "," +
      Item(R"(explicit/images/url(https:\\\\example.com\\a.png))", 1, 0, 100)));
  std::ostringstream out;
  PrintDiff(before, after, out);
  std::string text = out.str();
  EXPECT_NE(text.find("-5.00 MB -- raster"), std::string::npos) << text;
  EXPECT_NE(text.find("+3 ── discards"), std::string::npos) << text;
  EXPECT_EQ(text.find("bfcache"), std::string::npos) << text;   // unchanged
  EXPECT_EQ(text.find("resident"), std::string::npos) << text;  // unchanged

  std::ostringstream same;
  PrintDiff(before, before, same);
  EXPECT_NE(same.str().find("no differences"), std::string::npos);
}

// The one text tree for Lethe's reports: a report written by the cache layer (gzip'd, through
// WriteMemoryReport) loads here, with heap-unclassified computed and amounts in MB.
TEST(MemoryReportFile, PrintsWhatTheCacheLayerWrites) {
  lethe::MemoryReport written;
  written.process = "lethe-test";
  written.entries = {
      {"explicit/images/decoded", lethe::ReportKind::kHeap, lethe::ReportUnits::kBytes, 3 << 20, "Decoded."},
      {"explicit/bfcache", lethe::ReportKind::kHeap, lethe::ReportUnits::kBytes, 1 << 20, "Documents."},
      {"heap-allocated", lethe::ReportKind::kOther, lethe::ReportUnits::kBytes, 5 << 20, "Heap."},
      {"lethe-counters/images/hits", lethe::ReportKind::kOther, lethe::ReportUnits::kCountCumulative, 7, "Hits."},
  };
  std::string path = (std::filesystem::temp_directory_path() /
                      ("lethe-memreport-" + std::to_string(::getpid()) + ".json.gz")).string();
  ASSERT_EQ(lethe::WriteMemoryReport(written, path), "");
  std::string error;
  auto report = LoadReportFile(path, &error);
  std::filesystem::remove(path);
  ASSERT_TRUE(report.has_value()) << error;
  auto trees = BuildTrees(*report);
  const Node& explicit_root = *trees["lethe-test"].roots.at("explicit");
  EXPECT_EQ(explicit_root.amount, 5 << 20);
  EXPECT_EQ(explicit_root.children.at("heap-unclassified")->amount, 1 << 20);
  EXPECT_EQ(trees["lethe-test"].roots.at("lethe-counters")->amount, 7);
  std::ostringstream text;
  PrintReport(*report, text);
  EXPECT_NE(text.str().find("heap-unclassified"), std::string::npos) << text.str();
}

}  // namespace
}  // namespace lethe::memreport
