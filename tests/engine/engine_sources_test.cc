// Pressure reaching the Engine's caches from its sources (systemd's FIFO, the control socket) on
// simulated time, and the control socket's report and stats commands answered from the engine.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <string>

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

TEST_F(EngineSourcesTest, ABusyControlSocketPathFailsCreation) {
  auto first = EngineWithDiscardableSurfaces();
  ASSERT_NE(first, nullptr);
  std::string error;
  EXPECT_EQ(Engine::Create(options_, &error), nullptr);
  EXPECT_NE(error.find("control.sock"), std::string::npos) << error;
}

}  // namespace
}  // namespace lethe
