#include "lethe/pressure_monitor.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <thread>

#include "engine_test_util.h"

namespace lethe {
namespace {

using testing::PressureEvent;
using testing::Recorder;
using testing::TempDir;

// Options whose every OS source points into `dir`, so the test controls what exists.
PressureMonitorOptions Contained(const TempDir& dir, std::map<std::string, std::string>* env) {
  PressureMonitorOptions options;
  options.psi_options.path = dir.File("no-psi");
  options.memory_events.path = dir.File("no-memory.events");
  options.get_env = [env](const char* name) -> const char* {
    auto found = env->find(name);
    return found == env->end() ? nullptr : found->second.c_str();
  };
  return options;
}

class PressureMonitorTest : public ::testing::Test {
 protected:
  PressureMonitorTest() : loop_(clock_, testing::NoDecayTick()) {}
  std::unique_ptr<PressureMonitor> Make(PressureMonitorOptions options) {
    return std::make_unique<PressureMonitor>(loop_, recorder_.Callback(), recorder_.Log(),
                                             std::move(options));
  }
  ManualClock clock_;
  EventLoop loop_;
  Recorder recorder_;
  TempDir dir_;
  std::map<std::string, std::string> env_;
};

TEST_F(PressureMonitorTest, SourcesThatCannotOpenAreReportedOnceAndTheRestRun) {
  auto monitor = Make(Contained(dir_, &env_));
  EXPECT_EQ(monitor->Start(), 2u);  // allocator and api; no PSI, no memory.events here
  EXPECT_EQ(recorder_.LogCount("PSI unavailable"), 1u) << recorder_.AllLog();
  EXPECT_EQ(recorder_.LogCount("memory.events unavailable"), 1u) << recorder_.AllLog();
  EXPECT_EQ(recorder_.log.size(), 2u) << recorder_.AllLog();
  EXPECT_FALSE(monitor->Find("psi")->active());
  EXPECT_TRUE(monitor->Find("allocator")->active());
  EXPECT_EQ(monitor->Find("systemd"), nullptr);
  EXPECT_EQ(monitor->Describe(),
            "psi: off; cgroup: off; allocator: active, 0 events; api: active, 0 events");

  monitor->Simulate(MemoryPressureLevel::kModerate);
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder_.events, (std::vector<PressureEvent>{{MemoryPressureLevel::kModerate, "api"}}));
}

TEST_F(PressureMonitorTest, SimulateFromAnyThreadIsDeliveredOnTheLoopThread) {
  PressureMonitorOptions options = Contained(dir_, &env_);
  options.psi = options.cgroup_events = options.allocator = false;
  std::thread::id delivered_on;
  PressureMonitor monitor(loop_,
                          [&](MemoryPressureLevel level, std::string_view source) {
                            delivered_on = std::this_thread::get_id();
                            recorder_.events.push_back({level, std::string(source)});
                          },
                          recorder_.Log(), options);
  EXPECT_EQ(monitor.Start(), 1u);
  std::thread other([&] { monitor.Simulate(MemoryPressureLevel::kCritical); });
  EXPECT_TRUE(loop_.RunUntil([&] { return !recorder_.events.empty(); }));
  other.join();
  EXPECT_EQ(delivered_on, std::this_thread::get_id());
  EXPECT_EQ(recorder_.events[0], (PressureEvent{MemoryPressureLevel::kCritical, "api"}));
  EXPECT_EQ(monitor.Find("api")->event_count(), 1u);
}

TEST_F(PressureMonitorTest, ASimulationStillQueuedWhenTheMonitorDiesIsDropped) {
  PressureMonitorOptions options = Contained(dir_, &env_);
  options.psi = options.cgroup_events = options.allocator = false;
  auto monitor = Make(options);
  monitor->Start();
  monitor->Simulate(MemoryPressureLevel::kCritical);
  monitor.reset();
  loop_.RunUntilIdle();
  EXPECT_TRUE(recorder_.events.empty());
}

TEST_F(PressureMonitorTest, SystemdsWatchReplacesThePsiSource) {
  std::string fifo = dir_.File("pressure.fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  env_["MEMORY_PRESSURE_WATCH"] = fifo;
  PressureMonitorOptions options = Contained(dir_, &env_);
  options.cgroup_events = options.allocator = false;
  auto monitor = Make(options);
  EXPECT_EQ(monitor->Start(), 2u);
  EXPECT_EQ(monitor->Find("psi"), nullptr);
  ASSERT_NE(monitor->Find("systemd"), nullptr);
  int writer = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(writer, 0);
  ASSERT_EQ(write(writer, "x", 1), 1);
  close(writer);
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder_.events,
            (std::vector<PressureEvent>{{MemoryPressureLevel::kModerate, "systemd"}}));
}

TEST_F(PressureMonitorTest, DevNullTurnsOffBothSystemdAndPsi) {
  env_["MEMORY_PRESSURE_WATCH"] = "/dev/null";
  PressureMonitorOptions options = Contained(dir_, &env_);
  options.cgroup_events = options.allocator = false;
  auto monitor = Make(options);
  EXPECT_EQ(monitor->Start(), 1u);  // only the API
  EXPECT_EQ(monitor->Find("psi"), nullptr);
  EXPECT_FALSE(monitor->Find("systemd")->active());
  EXPECT_EQ(recorder_.LogCount("/dev/null"), 2u) << recorder_.AllLog();
}

TEST_F(PressureMonitorTest, PsiInACgroupOnV1FallsBackToTheSystemFileAndSaysSo) {
  testing::WriteFile(dir_.File("self"), "4:memory:/a\n0::/\n");
  testing::WriteFile(dir_.File("mounts"), "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\n");
  PressureMonitorOptions options = Contained(dir_, &env_);
  options.psi_in_cgroup = true;
  options.memory_events.path.clear();
  options.memory_events.cgroup_paths = {dir_.File("self"), dir_.File("mounts")};
  options.allocator = false;
  auto monitor = Make(options);
  monitor->Start();
  EXPECT_EQ(recorder_.LogCount("PSI falls back to " + dir_.File("no-psi")), 1u)
      << recorder_.AllLog();
  EXPECT_EQ(static_cast<PsiPressureSource*>(monitor->Find("psi"))->path(), dir_.File("no-psi"));
  EXPECT_EQ(recorder_.LogCount("cgroup v1"), 2u) << recorder_.AllLog();
}

TEST_F(PressureMonitorTest, PsiInACgroupOnV2WatchesThatCgroupsMemoryPressure) {
  testing::WriteFile(dir_.File("self"), "0::/svc\n");
  testing::WriteFile(dir_.File("mounts"), "cgroup2 " + dir_.File("cg") + " cgroup2 rw 0 0\n");
  PressureMonitorOptions options = Contained(dir_, &env_);
  options.psi_in_cgroup = true;
  options.cgroup_events = options.allocator = false;
  options.memory_events.cgroup_paths = {dir_.File("self"), dir_.File("mounts")};
  auto monitor = Make(options);
  monitor->Start();
  EXPECT_EQ(static_cast<PsiPressureSource*>(monitor->Find("psi"))->path(),
            dir_.File("cg") + "/svc/memory.pressure");
}

}  // namespace
}  // namespace lethe
