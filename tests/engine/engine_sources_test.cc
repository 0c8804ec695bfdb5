// Pressure reaching the Engine's caches from its sources (systemd's FIFO, the control socket) on
// simulated time, and the control socket's report and stats commands answered from the engine.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <string>

#include <nlohmann/json.hpp>

#include "engine_test_pages.h"
#include "lethe/engine.h"

namespace lethe {
namespace {

// Sends `line` and returns the one-line answer, running the engine's loop without blocking.
std::string Ask(Engine& engine, const std::string& socket_path, const std::string& line) {
  int client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket_path.c_str(), sizeof(address.sun_path) - 1);
  if (connect(client, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) return "";
  std::string request = line + "\n";
  if (send(client, request.data(), request.size(), 0) != static_cast<ssize_t>(request.size())) return "";
  std::string reply;
  for (int turn = 0; turn < 10 && reply.find('\n') == std::string::npos; ++turn) {
    engine.RunUntilIdle();
    char buffer[512];
    ssize_t got = recv(client, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (got > 0) reply.append(buffer, static_cast<size_t>(got));
  }
  close(client);
  return reply;
}

class EngineSourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fifo_ = site_.dir().File("pressure.fifo");
    ASSERT_EQ(mkfifo(fifo_.c_str(), 0600), 0);
    options_ = testing::TestOptions(&log_);
    options_.pressure_sources = true;
    PressureMonitorOptions& sources = options_.pressure_source_options;
    sources.psi = false;
    sources.cgroup_events = false;
    sources.allocator = false;  // process-wide: left to the allocator-source tests
    sources.get_env = [this](const char* name) -> const char* {
      return std::string(name) == "MEMORY_PRESSURE_WATCH" ? fifo_.c_str() : nullptr;
    };
    options_.control_socket_path = site_.dir().File("control.sock");
  }

  // A page drawn, then scrolled so that its top images are unlocked (discardable).
  std::unique_ptr<Engine> EngineWithDiscardableSurfaces() {
    std::string error;
    auto engine = Engine::Create(options_, &error);
    EXPECT_NE(engine, nullptr) << error;
    if (engine == nullptr) return nullptr;
    WindowId tab = engine->OpenWindow();
    EXPECT_TRUE(engine->Navigate(tab, site_.Page(1)).ok());
    engine->DrawFrame();
    engine->ScrollTo(tab, 1900);
    return engine;
  }

  testing::TestSite site_;
  std::vector<std::string> log_;
  std::string fifo_;
  EngineOptions options_;
};

TEST_F(EngineSourcesTest, SystemdFifoEventFlushesTheCaches) {
  auto engine = EngineWithDiscardableSurfaces();
  ASSERT_NE(engine, nullptr);
  ASSERT_NE(engine->pressure_monitor(), nullptr);
  ASSERT_NE(engine->pressure_monitor()->Find("systemd"), nullptr);
  EXPECT_TRUE(engine->pressure_monitor()->Find("systemd")->active());
  ASSERT_GT(engine->Memory().shaped_words_bytes, 0u);
  int writer = open(fifo_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(writer, 0);
  ASSERT_EQ(write(writer, "x", 1), 1);
  close(writer);
  engine->RunUntilIdle();
  EXPECT_EQ(engine->last_pressure().source, "systemd");
  // systemd's watch says "pressure", not how much: moderate. Moderate empties the shaped words
  // and ages the other caches by one generation.
  EXPECT_EQ(engine->last_pressure().level, MemoryPressureLevel::kModerate);
  EXPECT_GT(engine->last_pressure().freed_bytes, 0u);
  EXPECT_EQ(engine->Memory().shaped_words_bytes, 0u);
}

TEST_F(EngineSourcesTest, ControlSocketAnswersPressureReportAndStats) {
  auto engine = EngineWithDiscardableSurfaces();
  ASSERT_NE(engine, nullptr);
  std::string pressure = Ask(*engine, options_.control_socket_path, "pressure critical");
  EXPECT_NE(pressure.find("\"ok\":true"), std::string::npos) << pressure;
  EXPECT_EQ(pressure.find("\"freed_bytes\":0,"), std::string::npos) << pressure;
  EXPECT_NE(pressure.find("\"freed_bytes\":"), std::string::npos) << pressure;
  EXPECT_EQ(engine->last_pressure().source, "control");

  std::string report_path = site_.dir().File("control-report.json");
  std::string report = Ask(*engine, options_.control_socket_path, "report " + report_path);
  EXPECT_NE(report.find("\"ok\":true"), std::string::npos) << report;
  EXPECT_NE(testing::ReadFile(report_path).find("explicit/images"), std::string::npos);
  std::string bad = Ask(*engine, options_.control_socket_path, "report /nonexistent/dir/r.json");
  EXPECT_NE(bad.find("\"ok\":false"), std::string::npos) << bad;

  std::string stats = Ask(*engine, options_.control_socket_path, "stats");
  EXPECT_NE(stats.find("\"surfaces_bytes\":"), std::string::npos) << stats;
  EXPECT_NE(stats.find("\"windows\":1"), std::string::npos) << stats;
}

// The engine's memory figures are one list (lethe/memory_figures.h) generated into four outputs:
// each figure of the list must be in Memory() (by construction), the stats reply, the trace's
// counter samples and the memory report, with the same value where nothing moved in between.
TEST_F(EngineSourcesTest, EveryMemoryFigureIsInTheStatsTheTraceAndTheReport) {
  options_.trace_path = site_.dir().File("figures-trace.json");
  auto engine = EngineWithDiscardableSurfaces();
  ASSERT_NE(engine, nullptr);
  const std::string stats = Ask(*engine, options_.control_socket_path, "stats");
  ASSERT_NE(stats.find("\"ok\":true"), std::string::npos) << stats;
  auto stats_json = nlohmann::json::parse(stats);
  const MemorySnapshot memory = engine->Memory();
  const MemoryReport report = engine->CollectMemoryReport();
  ASSERT_TRUE(engine->WriteTrace(options_.trace_path).ok());
  auto trace = nlohmann::json::parse(testing::ReadFile(options_.trace_path));
  // The last sample of each counter (WriteTrace samples just before writing).
  std::map<std::string, nlohmann::json> last_sample;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "C") last_sample[event["name"].get<std::string>()] = event["args"];
  }
  std::set<std::string_view> fields, stats_keys, report_paths;
  std::set<std::string> trace_names;
  for (const MemoryFigure& figure : kMemoryFigures) {
    SCOPED_TRACE(std::string(figure.field));
    EXPECT_TRUE(fields.insert(figure.field).second) << "listed twice";
    EXPECT_TRUE(stats_keys.insert(figure.stats_key).second) << "stats key used twice";
    EXPECT_TRUE(report_paths.insert(figure.report_path).second) << "report path used twice";
    EXPECT_TRUE(trace_names.insert(std::string(figure.trace_counter) + "/" +
                                   std::string(figure.trace_arg)).second);
    ASSERT_TRUE(stats_json.contains(std::string(figure.stats_key))) << stats;
    const std::string counter(figure.trace_counter);
    ASSERT_TRUE(last_sample.count(counter) == 1) << counter;
    EXPECT_TRUE(last_sample[counter].contains(std::string(figure.trace_arg))) << last_sample[counter];
    // Own figures are one entry the engine adds; the others are already in the report, at their
    // path or in the subtree under it, and the engine must not add a copy.
    std::vector<const MemoryReportEntry*> under;
    for (const MemoryReportEntry& e : report.entries) {
      if (e.path == figure.report_path || e.path.starts_with(std::string(figure.report_path) + "/")) {
        under.push_back(&e);
      }
    }
    ASSERT_FALSE(under.empty()) << figure.report_path;
    EXPECT_LE(std::count_if(under.begin(), under.end(),
                            [&](const MemoryReportEntry* e) { return e->path == figure.report_path; }),
              1)
        << "reported twice: " << figure.report_path;
    if (figure.engine_reports) {
      ASSERT_EQ(under.size(), 1u) << figure.report_path;
      EXPECT_EQ(under[0]->kind, ReportKind::kOther) << "never added to explicit/ twice";
      EXPECT_EQ(figure.is_count || figure.report_path.find('/') == std::string_view::npos, true)
          << "bytes of the engine's own are top-level single entries, never a tree";
    }
    for (const MemoryReportEntry* e : under) {
      EXPECT_EQ(e->units, figure.is_count ? ReportUnits::kCount : ReportUnits::kBytes) << e->path;
    }
    EXPECT_FALSE(figure.description.empty());
    // The process-wide figures move between the reads; the engine's own do not.
    if (figure.field == "heap_allocated_bytes" || figure.field == "resident_bytes" ||
        figure.field == "sqlite_bytes") {
      continue;
    }
    const auto value = static_cast<int64_t>(figure.value(memory));
    EXPECT_EQ(stats_json[std::string(figure.stats_key)].get<int64_t>(), value);
    EXPECT_EQ(last_sample[counter][std::string(figure.trace_arg)].get<int64_t>(), value);
    int64_t reported = 0;
    for (const MemoryReportEntry* e : under) reported += e->amount;
    // A subtree may hold more than the figure (the raster subtree also has the surfaces the cache
    // refused); never less.
    if (figure.engine_reports) EXPECT_EQ(reported, value);
    else EXPECT_GE(reported, value);
  }
  // The figures that matter to a reader are non-trivial on this page.
  EXPECT_GT(memory.surfaces_bytes, memory.locked_surfaces_bytes);
  EXPECT_GT(memory.discardable_bytes, 0u);
  EXPECT_EQ(memory.window_count, 1u);
  // discardable_bytes is each cache's own figure summed, and exactly what critical frees.
  // (The font cache is not reachable from the facade: its part is bounded by its bytes.)
  const uint64_t others = engine->surface_cache().discardable_bytes() +
                          engine->image_cache().discardable_bytes() +
                          engine->bfcache().discardable_bytes() + memory.shaped_words_bytes;
  EXPECT_GE(memory.discardable_bytes, others);
  EXPECT_LE(memory.discardable_bytes, others + memory.fonts_bytes);
  EXPECT_EQ(engine->OnMemoryPressure(MemoryPressureLevel::kCritical).freed_bytes,
            memory.discardable_bytes);
}

TEST_F(EngineSourcesTest, ABusyControlSocketPathFailsCreation) {
  auto first = EngineWithDiscardableSurfaces();
  ASSERT_NE(first, nullptr);
  std::string error;
  EXPECT_EQ(Engine::Create(options_, &error), nullptr);
  EXPECT_NE(error.find("control.sock"), std::string::npos) << error;
}

}  // namespace
}  // namespace lethe
