// lethe-stress's parts that need no engine: samples and their CSV, the figures and targets, the
// SVG chart, the command line and page listing, /proc parsing, the progress bar.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "process_memory.h"
#include "progress_bar.h"
#include "stress_chart.h"
#include "stress_figures.h"
#include "stress_options.h"
#include "stress_samples.h"

namespace lethe::stress {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMiB = 1 << 20;

StressSample Sample(const std::string& run, const std::string& phase, int load, int cycle,
                    uint64_t rss_mib, double time_s = 0) {
  StressSample sample;
  sample.run = run;
  sample.phase = phase;
  sample.load = load;
  sample.cycle = cycle;
  sample.time_s = time_s;
  sample.windows = 1;
  sample.rss_bytes = rss_mib * kMiB;
  sample.resident_unique_bytes = rss_mib * kMiB / 2;
  sample.heap_allocated_bytes = rss_mib * kMiB / 3;
  sample.cache_bytes = {1, 2, 3, 4, 5};
  // `load` surfaces and half as many images regretted so far.
  const auto n = static_cast<uint64_t>(load);
  sample.regret = MakeRegretCounts(n, 4096 * n, 1500000, n / 2, 1000 * (n / 2));
  return sample;
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("lethe-stress-test-" + std::to_string(getpid()) + "-" +
                                         std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string File(const std::string& name) const { return (path_ / name).string(); }
  const fs::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

void Touch(const std::string& path, const std::string& text = "x") {
  std::ofstream(path) << text;
}

// ---- samples and CSV ------------------------------------------------------------------------

TEST(StressCsv, HeaderNamesEveryColumnInOrder) {
  EXPECT_EQ(CsvHeader(),
            "run,phase,load,cycle,time_s,windows,rss_bytes,resident_unique_bytes,"
            "heap_allocated_bytes,surface_cache_bytes,image_cache_bytes,bf_cache_bytes,"
            "font_cache_bytes,shaped_word_cache_bytes,surface_regret_count,surface_regret_bytes,"
            "surface_regret_decode_ns,image_regret_count,image_regret_bytes,regret_count,"
            "regret_bytes");
}

TEST(StressCsv, RoundTripsSamplesThroughAFile) {
  TempDir dir;
  std::vector<StressSample> written = {Sample("lethe", "load", 1, 0, 10, 2.5),
                                       Sample("lethe", "idle", 1, 0, 7, 12.25)};
  ASSERT_EQ(WriteCsvFile(dir.File("a.csv"), written), "");
  std::vector<StressSample> read;
  ASSERT_EQ(ReadCsvFile(dir.File("a.csv"), &read), "");
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[1].run, "lethe");
  EXPECT_EQ(read[1].phase, "idle");
  EXPECT_EQ(read[1].rss_bytes, 7 * kMiB);
  EXPECT_EQ(read[1].heap_allocated_bytes, 7 * kMiB / 3);
  EXPECT_DOUBLE_EQ(read[1].time_s, 12.25);
  EXPECT_EQ(read[1].cache_bytes[4], 5u);
  EXPECT_EQ(read[1].regret, (RegretCounts{1, 4096, 1500000, 0, 0, 1, 4096}));
}

TEST(StressCsv, RegretTotalsAreTheSumsOfBothCaches) {
  const RegretCounts regret = MakeRegretCounts(3, 300, 7, 2, 50);
  EXPECT_EQ(regret, (RegretCounts{3, 300, 7, 2, 50, 5, 350}));
}

// A total that is not the sum of its caches' figures is a file from something else.
TEST(StressCsv, ARegretTotalThatIsNotTheSumIsRejected) {
  TempDir dir;
  Touch(dir.File("e.csv"),
        CsvHeader() + "\nlethe,load,1,0,1.0,1,9,0,0,0,0,0,0,0,3,300,7,2,50,5,351\n");
  std::vector<StressSample> read;
  const std::string error = ReadCsvFile(dir.File("e.csv"), &read);
  EXPECT_NE(error.find("line 2: a regret total is not the sum"), std::string::npos) << error;
  Touch(dir.File("f.csv"),
        CsvHeader() + "\nlethe,load,1,0,1.0,1,9,0,0,0,0,0,0,0,3,300,7,2,50,5,350\n");
  EXPECT_EQ(ReadCsvFile(dir.File("f.csv"), &read), "");
}

TEST(StressCsv, ReadingAMissingFileNamesIt) {
  std::vector<StressSample> read;
  EXPECT_NE(ReadCsvFile("/nonexistent/x.csv", &read).find("cannot read /nonexistent/x.csv"),
            std::string::npos);
}

TEST(StressCsv, ReadingAFileWithAnotherHeaderFails) {
  TempDir dir;
  Touch(dir.File("b.csv"), "a,b,c\n1,2,3\n");
  std::vector<StressSample> read;
  EXPECT_NE(ReadCsvFile(dir.File("b.csv"), &read).find("line 1"), std::string::npos);
}

TEST(StressCsv, AShortRowIsReportedWithItsLineNumber) {
  TempDir dir;
  Touch(dir.File("c.csv"), CsvHeader() + "\nlethe,load,1,0\n");
  std::vector<StressSample> read;
  const std::string error = ReadCsvFile(dir.File("c.csv"), &read);
  EXPECT_NE(error.find("line 2"), std::string::npos) << error;
  EXPECT_NE(error.find("columns"), std::string::npos) << error;
}

TEST(StressCsv, ANonNumericByteCountIsRejected) {
  TempDir dir;
  Touch(dir.File("d.csv"),
        CsvHeader() + "\nlethe,load,1,0,1.0,1,lots,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n");
  std::vector<StressSample> read;
  EXPECT_NE(ReadCsvFile(dir.File("d.csv"), &read).find("not a number"), std::string::npos);
}

// ---- figures --------------------------------------------------------------------------------

// A run of 11 cycles of 2 pages: RSS rises to `plateau`, then `terminal` after the close.
std::vector<StressSample> Samples(const std::string& name, uint64_t plateau, uint64_t terminal,
                              uint64_t growth_per_cycle = 0) {
  std::vector<StressSample> samples = {Sample(name, "load", 0, 0, 5)};
  for (int load = 1; load <= 22; ++load) {
    const int cycle = load / 2;
    samples.push_back(Sample(name, "load", load, cycle, plateau + growth_per_cycle * static_cast<uint64_t>(cycle)));
  }
  samples.push_back(Sample(name, "close", 22, 11, terminal + 10));
  samples.push_back(Sample(name, "idle", 22, 11, terminal));
  return samples;
}

TEST(StressFigures, ComputesReductionPeakRatioAndAFlatSlope) {
  StressFigures figures;
  ASSERT_EQ(ComputeFigures(Samples("baseline", 200, 180), Samples("lethe", 50, 20), 11, &figures), "");
  EXPECT_EQ(figures.baseline.peak_rss_bytes, 200 * kMiB);
  EXPECT_EQ(figures.baseline.terminal_rss_bytes, 180 * kMiB);
  EXPECT_EQ(figures.lethe.terminal_rss_bytes, 20 * kMiB);
  EXPECT_NEAR(figures.terminal_reduction, 1 - 20.0 / 180.0, 1e-9);
  EXPECT_NEAR(figures.peak_vs_baseline_terminal, 50.0 / 180.0, 1e-9);
  ASSERT_TRUE(figures.has_slope);
  EXPECT_EQ(figures.slope_first_cycle, 6);
  EXPECT_EQ(figures.slope_last_cycle, 11);
  EXPECT_NEAR(figures.slope_percent_per_cycle, 0, 1e-9);
  EXPECT_TRUE(TargetsMet(figures));
}

TEST(StressFigures, AGrowingLetheRunMissesTheSlopeTarget) {
  StressFigures figures;
  ASSERT_EQ(ComputeFigures(Samples("baseline", 200, 180), Samples("lethe", 50, 20, 2), 11, &figures), "");
  // The cycles' means (cycle c: loads 2c-1 and 2c, counted c-1 and c) rise 61..71 MiB over cycles
  // 6..11: 2 MiB per cycle over a mean of 66 MiB.
  EXPECT_NEAR(figures.slope_percent_per_cycle, 100.0 * 2 / 66, 1e-6);
  EXPECT_FALSE(TargetsMet(figures));
  std::ostringstream out;
  PrintFigures(out, figures);
  EXPECT_NE(out.str().find("slope of lethe's RSS over cycles 6 to 11: +3.03% per cycle"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("NOT MET"), std::string::npos);
}

// The expiry timer makes a sawtooth within each cycle; where each cycle ends on it is chance.
TEST(StressFigures, ASawtoothWithFlatCycleMeansHasAFlatSlope) {
  std::vector<StressSample> lethe = {Sample("lethe", "load", 0, 0, 5)};
  for (int load = 1; load <= 44; ++load) {  // 11 cycles of 4 loads; the ends land high, then low
    const uint64_t tooth = static_cast<uint64_t>((load + (load - 1) / 4) % 4);  // 0..3 in every cycle
    lethe.push_back(Sample("lethe", "load", load, load / 4, 50 + 10 * tooth));
  }
  lethe.push_back(Sample("lethe", "idle", 44, 11, 20));
  StressFigures figures;
  ASSERT_EQ(ComputeFigures(Samples("baseline", 200, 180), lethe, 11, &figures), "");
  EXPECT_NEAR(figures.slope_percent_per_cycle, 0, 1e-9);
  EXPECT_DOUBLE_EQ(MeanLoadRssOfCycle(lethe, 3), 65.0 * kMiB);
}

TEST(StressFigures, PrintsEveryFigureBesideItsTarget) {
  StressFigures figures;
  ASSERT_EQ(ComputeFigures(Samples("baseline", 200, 100), Samples("lethe", 50, 25), 11, &figures), "");
  std::ostringstream out;
  PrintFigures(out, figures);
  const std::string text = out.str();
  EXPECT_NE(text.find("baseline: peak RSS 200.0 MiB, terminal RSS 100.0 MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("terminal reduction: 75%   (target >= 60%: met)"), std::string::npos) << text;
  EXPECT_NE(text.find("peak vs baseline terminal: 0.50x   (target < 1x: met)"), std::string::npos) << text;
  // Samples() puts resident-unique at half the RSS.
  EXPECT_NE(text.find("terminal resident-unique: baseline 50.0 MiB, lethe 12.5 MiB (reduction 75%"),
            std::string::npos)
      << text;
}

// What PrintHeapFigures prints for `figures`.
std::string HeapText(const StressFigures& figures) {
  std::ostringstream out;
  PrintHeapFigures(out, figures);
  return out.str();
}

// The heap figures come from heap_allocated_bytes (a third of RSS in Samples()), the same way.
TEST(StressFigures, HeapFiguresAreComputedOnHeapBytesAndJudgedAlike) {
  StressFigures heap;
  ASSERT_EQ(ComputeFigures(Samples("baseline", 200, 180), Samples("lethe", 50, 20), 11, &heap,
                           Metric::kHeap),
            "");
  EXPECT_EQ(heap.metric, Metric::kHeap);
  EXPECT_EQ(heap.baseline.terminal_rss_bytes, 180 * kMiB / 3);
  EXPECT_EQ(heap.lethe.peak_rss_bytes, 50 * kMiB / 3);
  EXPECT_NEAR(heap.terminal_reduction, 1 - (20 * kMiB / 3) / double(180 * kMiB / 3), 1e-9);
  EXPECT_TRUE(TargetsMet(heap));
  const std::string text = HeapText(heap);
  EXPECT_NE(text.find("heap: terminal reduction: 89%   (target >= 60%: met)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("heap: slope of lethe's heap over cycles 6 to 11: +0.00% per cycle"),
            std::string::npos) << text;
  // A Lethe heap that grows cycle after cycle misses the slope target on heap bytes too.
  ASSERT_EQ(ComputeFigures(Samples("baseline", 200, 180), Samples("lethe", 50, 20, 6), 11, &heap,
                           Metric::kHeap),
            "");
  EXPECT_FALSE(TargetsMet(heap));
}

// On heap bytes the peak is judged against the baseline's peak: the baseline's terminal heap is
// one window's, which Lethe's peak with every window open passes whatever its caches do (on RSS
// the system allocator keeps the baseline's freed peak resident).
TEST(StressFigures, OnHeapLethesPeakIsJudgedAgainstTheBaselinesPeak) {
  StressFigures rss;
  StressFigures heap;
  // Lethe peaks at 50 (heap 50/3), the baseline at 200 and ends at 40: above its terminal, below
  // its peak.
  ASSERT_EQ(ComputeFigures(Samples("baseline", 200, 40), Samples("lethe", 50, 10), 11, &rss), "");
  ASSERT_EQ(ComputeFigures(Samples("baseline", 200, 40), Samples("lethe", 50, 10), 11, &heap,
                           Metric::kHeap),
            "");
  EXPECT_FALSE(TargetsMet(rss));
  EXPECT_GT(heap.peak_vs_baseline_terminal, 1.0);
  EXPECT_NEAR(heap.peak_vs_baseline_peak, 50.0 / 200.0, 1e-3);
  EXPECT_TRUE(TargetsMet(heap));
  std::string text = HeapText(heap);
  EXPECT_NE(text.find("heap: peak vs baseline terminal: 1.25x   (no target on heap"),
            std::string::npos) << text;
  EXPECT_NE(text.find("heap: peak vs baseline peak: 0.25x   (target < 1x: met)"), std::string::npos)
      << text;
  // A Lethe that peaks above the baseline's peak misses it.
  ASSERT_EQ(ComputeFigures(Samples("baseline", 40, 30), Samples("lethe", 50, 10), 11, &heap,
                           Metric::kHeap),
            "");
  EXPECT_FALSE(TargetsMet(heap));
  text = HeapText(heap);
  EXPECT_NE(text.find("heap: peak vs baseline peak: 1.25x   (target < 1x: NOT MET)"),
            std::string::npos) << text;
}

TEST(StressFigures, RegretIsLethesAtTheEndOfItsRun) {
  StressFigures figures;
  ASSERT_EQ(ComputeFigures(Samples("baseline", 200, 180), Samples("lethe", 50, 20), 11, &figures), "");
  EXPECT_EQ(figures.lethe.regret, MakeRegretCounts(22, 22 * 4096, 1500000, 11, 11000));
  std::ostringstream out;
  PrintRegret(out, figures.lethe);
  EXPECT_EQ(out.str(),
            "regret: surface cache: 22 surfaces decoded again within 5 s of their discard, 0.1 MiB, "
            "1.5 ms of decoding\n"
            "regret: image cache: 11 images' compressed bytes stored again within 5 s of their "
            "drop, 0.0 MiB\n"
            "regret: total over both caches: 33 discards undone, 0.1 MiB, 1.5 ms of re-decoding "
            "(no target: tune the expiry times against it)\n");
}

TEST(StressFigures, ALethePeakAboveTheBaselineTerminalMissesThatTarget) {
  StressFigures figures;
  ASSERT_EQ(ComputeFigures(Samples("baseline", 200, 40), Samples("lethe", 50, 10), 11, &figures), "");
  EXPECT_GT(figures.peak_vs_baseline_terminal, 1.0);
  EXPECT_FALSE(TargetsMet(figures));
}

TEST(StressFigures, ARunWithoutSamplesIsAnError) {
  StressFigures figures;
  EXPECT_NE(ComputeFigures({}, Samples("lethe", 50, 20), 11, &figures), "");
  EXPECT_NE(ComputeFigures(Samples("baseline", 50, 20), {}, 11, &figures), "");
}

TEST(StressFigures, OneCycleHasNoSlopeAndSaysSo) {
  std::vector<StressSample> one = {Sample("lethe", "load", 0, 0, 5), Sample("lethe", "load", 1, 1, 9),
                                   Sample("lethe", "idle", 1, 1, 6)};
  StressFigures figures;
  ASSERT_EQ(ComputeFigures(one, one, 1, &figures), "");
  EXPECT_FALSE(figures.has_slope);
  std::ostringstream out;
  PrintFigures(out, figures);
  EXPECT_NE(out.str().find("n/a"), std::string::npos);
}

TEST(StressFigures, SlopeCyclesScaleWithTheRun) {
  EXPECT_EQ(SlopeFirstCycle(11), 6);
  EXPECT_EQ(SlopeFirstCycle(2), 1);
  EXPECT_EQ(SlopeFirstCycle(22), 12);
  EXPECT_EQ(SlopeFirstCycle(1), 1);
}

TEST(StressFigures, LeastSquaresSlopeOfALine) {
  EXPECT_DOUBLE_EQ(LeastSquaresSlope({1, 2, 3}, {2, 4, 6}), 2);
  EXPECT_DOUBLE_EQ(LeastSquaresSlope({1}, {5}), 0);
  EXPECT_DOUBLE_EQ(LeastSquaresSlope({2, 2}, {1, 5}), 0);
}

// ---- chart ----------------------------------------------------------------------------------

TEST(StressChart, DrawsBothRunsTheCloseMarkAndLabelledAxes) {
  ChartInput input;
  input.title = "t <&> t";
  input.load_count = 22;
  input.pages_per_cycle = 2;
  input.baseline = Samples("baseline", 200, 180);
  input.lethe = Samples("lethe", 50, 20);
  const std::string svg = RenderStressChart(input);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  size_t polylines = 0;
  for (size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) {
    ++polylines;
  }
  EXPECT_EQ(polylines, 4u);  // RSS and heap of each run
  EXPECT_NE(svg.find("all windows but one closed"), std::string::npos);
  EXPECT_NE(svg.find("page loads"), std::string::npos);
  EXPECT_NE(svg.find("memory (MiB)"), std::string::npos);
  EXPECT_NE(svg.find("baseline RSS"), std::string::npos);
  EXPECT_NE(svg.find("Lethe RSS"), std::string::npos);
  EXPECT_NE(svg.find("t &lt;&amp;&gt; t"), std::string::npos);  // the title is escaped
}

TEST(StressChart, WritingToAMissingDirectoryFails) {
  ChartInput input;
  EXPECT_NE(WriteStressChart("/nonexistent/dir/x.svg", input), "");
}

// ---- command line and pages -----------------------------------------------------------------

TEST(StressOptions, DefaultsAreTheIssuesSizes) {
  StressOptions options;
  ASSERT_EQ(ParseStressArgs({}, &options), "");
  EXPECT_EQ(options.window_count, 30);
  EXPECT_EQ(options.cycle_count, 11);
  EXPECT_EQ(options.page_count, 0);
  EXPECT_FALSE(options.real_time);
}

TEST(StressOptions, ParsesTheCiSize) {
  StressOptions options;
  ASSERT_EQ(ParseStressArgs({"--page-count", "5", "--windows", "5", "--cycles", "2", "--scale", "3",
                             "--idle", "12.5", "--real-time", "--out", "o", "--no-progress"},
                            &options),
            "");
  EXPECT_EQ(options.page_count, 5);
  EXPECT_EQ(options.window_count, 5);
  EXPECT_EQ(TotalCycles(options), 6);
  EXPECT_DOUBLE_EQ(options.idle_seconds, 12.5);
  EXPECT_TRUE(options.real_time);
  EXPECT_FALSE(options.progress);
}

TEST(StressOptions, RequireHeapTargetsGoesWithASimulatedRun) {
  StressOptions options;
  ASSERT_EQ(ParseStressArgs({"--require-heap-targets"}, &options), "");
  EXPECT_TRUE(options.require_heap_targets);
  StressOptions real;
  EXPECT_NE(ParseStressArgs({"--require-heap-targets", "--real-time"}, &real), "");
}

TEST(StressOptions, BadFlagsGetAMessageNamingThem) {
  StressOptions options;
  EXPECT_EQ(ParseStressArgs({"--bogus"}, &options), "unknown flag '--bogus'");
  EXPECT_EQ(ParseStressArgs({"--windows"}, &options), "--windows needs a value");
  EXPECT_EQ(ParseStressArgs({"--windows", "0"}, &options),
            "--windows needs a whole number in 1..10000, not '0'");
  EXPECT_EQ(ParseStressArgs({"--cycles", "x"}, &options).find("--cycles needs"), 0u);
  EXPECT_EQ(ParseStressArgs({"--idle", "-1"}, &options).find("--idle needs"), 0u);
  EXPECT_EQ(ParseStressArgs({"--child", "other"}, &options).find("--child needs"), 0u);
  StressOptions fresh;
  EXPECT_NE(ParseStressArgs({"--baseline"}, &fresh), "");
  StressOptions churn;
  EXPECT_NE(ParseStressArgs({"--churn-ms", "10"}, &churn), "");
  StressOptions browse;
  EXPECT_EQ(ParseStressArgs({"--browse"}, &browse), "--browse goes with --serve");
  StressOptions both;
  EXPECT_EQ(ParseStressArgs({"--serve", "s", "--browse", "--churn-ms", "10"}, &both),
            "--browse and --churn-ms exclude each other");
  StressOptions serve_browse;
  EXPECT_EQ(ParseStressArgs({"--serve", "s", "--browse"}, &serve_browse), "");
  EXPECT_TRUE(serve_browse.serve_browse);
  StressOptions child;
  EXPECT_EQ(ParseStressArgs({"--child", "lethe"}, &child), "--child needs --result FILE");
}

TEST(StressOptions, WorkloadArgsRepeatTheWorkloadForAChild) {
  StressOptions options;
  ASSERT_EQ(ParseStressArgs({"--pages", "p", "--page-count", "4", "--cycles", "3", "--real-time"}, &options), "");
  StressOptions child;
  std::vector<std::string> args = WorkloadArgs(options);
  args.insert(args.end(), {"--child", "lethe", "--result", "r.csv"});
  ASSERT_EQ(ParseStressArgs(args, &child), "");
  EXPECT_EQ(child.pages_dir, "p");
  EXPECT_EQ(child.page_count, 4);
  EXPECT_EQ(child.cycle_count, 3);
  EXPECT_TRUE(child.real_time);
}

// What ListPages finds in a new folder holding `files` (paths relative to it, empty files): its
// error, and the pages' file names in the order listed.
struct Listing {
  std::string error;
  std::vector<std::string> names;
};

Listing ListPagesAmong(const std::vector<std::string>& files, int page_count = 0, int scale = 1) {
  TempDir dir;
  for (const std::string& file : files) {
    fs::create_directories((dir.path() / file).parent_path());
    Touch(dir.File(file));
  }
  Listing listing;
  std::vector<std::string> pages;
  listing.error = ListPages(dir.path().string(), page_count, scale, &pages);
  for (const std::string& page : pages) listing.names.push_back(fs::path(page).filename().string());
  return listing;
}

using Names = std::vector<std::string>;

TEST(StressPages, PrefersHtmlPagesToPageDescriptions) {
  Listing listing = ListPagesAmong({"pages/b.html", "pages/a.json", "pages/a.html"});
  ASSERT_EQ(listing.error, "");
  EXPECT_EQ(listing.names, (Names{"a.html", "b.html"}));
}

TEST(StressPages, ListsPageDescriptionsSortedAndPrefersThePagesFolder) {
  Listing listing = ListPagesAmong({"index.json", "pages/b.json", "pages/a.json"});
  ASSERT_EQ(listing.error, "");
  EXPECT_EQ(listing.names, (Names{"a.json", "b.json"}));
}

TEST(StressPages, TakesImagesWhenThereAreNoPageDescriptions) {
  Listing listing = ListPagesAmong({"x.PNG", "y.gif", "notes.txt"});
  ASSERT_EQ(listing.error, "");
  EXPECT_EQ(listing.names, (Names{"x.PNG", "y.gif"}));
}

TEST(StressPages, PageCountRepeatsAShortListAndScaleMultipliesIt) {
  Listing listing = ListPagesAmong({"a.json", "b.json"}, 5, 2);
  ASSERT_EQ(listing.error, "");
  ASSERT_EQ(listing.names.size(), 10u);
  EXPECT_EQ(listing.names[2], listing.names[0]);
}

TEST(StressPages, AnEmptyOrMissingDirectoryIsAnError) {
  TempDir dir;
  std::vector<std::string> pages;
  EXPECT_NE(ListPages(dir.path().string(), 0, 1, &pages).find("no pages (*.html, *.json)"), std::string::npos);
  EXPECT_NE(ListPages("/nonexistent/pages", 0, 1, &pages).find("is not a directory"), std::string::npos);
}

// ---- /proc ----------------------------------------------------------------------------------

TEST(ProcessMemory, ParsesPrivatePagesOfSmapsRollup) {
  uint64_t bytes = 0;
  ASSERT_TRUE(ParsePrivateBytes("Rss:   100 kB\nPrivate_Clean:   8 kB\nPrivate_Dirty:  32 kB\n"
                                "Shared_Clean: 4 kB\n",
                                &bytes));
  EXPECT_EQ(bytes, 40u * 1024);
  EXPECT_FALSE(ParsePrivateBytes("Rss: 100 kB\n", &bytes));
}

TEST(ProcessMemory, ReadsThisProcess) {
  ProcessMemory memory;
  std::string error;
  ASSERT_TRUE(ReadProcessMemory(0, &memory, &error)) << error;
  EXPECT_GT(memory.rss_bytes, 0u);
  ASSERT_TRUE(ReadProcessMemory(getpid(), &memory, &error)) << error;
  EXPECT_GT(memory.rss_bytes, 0u);
}

TEST(ProcessMemory, AMissingProcessIsAnErrorNamingTheFile) {
  ProcessMemory memory;
  std::string error;
  EXPECT_FALSE(ReadProcessMemory(1 << 30, &memory, &error));
  EXPECT_NE(error.find("/proc/"), std::string::npos);
}

TEST(ProcessMemory, MallinfoSeesABlockThisProcessHolds) {
  const uint64_t before = HeapAllocatedBytes(HeapSource::kMallinfo);
  std::vector<char> block(4 << 20, 'x');
  const uint64_t after = HeapAllocatedBytes(HeapSource::kMallinfo);
  // Under a sanitizer or with malloc replaced, mallinfo2 may not see the block; it never shrinks.
  EXPECT_GE(after + (1 << 20), before);
  EXPECT_EQ(block[100], 'x');
}

// ---- progress bar ---------------------------------------------------------------------------

TEST(ProgressBar, RendersDoneOutOfTotal) {
  EXPECT_EQ(ProgressBar::Render("lethe", 5, 10, 10), "lethe [#####.....] 5/10");
  EXPECT_EQ(ProgressBar::Render("x", 20, 10, 4), "x [####] 10/10");
}

TEST(ProgressBar, IsSilentWhenDisabled) {
  ProgressBar bar("x", 10, false);
  EXPECT_FALSE(bar.active());
  bar.Update(3);  // draws nothing, must not crash
}

}  // namespace
}  // namespace lethe::stress
