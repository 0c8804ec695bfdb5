// The loop, the pressure monitor and the control channel together, on simulated time: events from
// systemd's FIFO, the allocator's low-memory callback, the API and the control socket all arrive on
// the loop thread, in order, between the ticks of a cache tracker, and the allocator's decay follows
// the simulated clock.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <thread>

#include "engine_test_util.h"
#include "lethe/alloc.h"
#include "lethe/control_server.h"
#include "lethe/pressure_monitor.h"

extern "C" const char* __asan_default_options();
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
extern "C" const char* __tsan_default_options();
extern "C" const char* __tsan_default_options() { return "allocator_may_return_null=1"; }

namespace lethe {
namespace {

using std::chrono::seconds;

std::vector<uint64_t>* g_ticks = nullptr;
void RecordTick(uint64_t now_ns) { g_ticks->push_back(now_ns); }

struct Seen {
  std::string source;
  MemoryPressureLevel level;
  Clock::Duration at;
  std::thread::id thread;
};

TEST(EnginePressure, EverySourceReachesTheLoopThreadInOrderOnSimulatedTime) {
  testing::TempDir dir;
  std::vector<uint64_t> ticks;
  g_ticks = &ticks;
  ManualClock clock;
  EventLoop::Options loop_options;
  loop_options.decay_tick = &RecordTick;
  EventLoop loop(clock, loop_options);
  const Clock::TimePoint start = clock.Now();

  std::vector<Seen> seen;
  auto on_pressure = [&](MemoryPressureLevel level, std::string_view source) {
    seen.push_back({std::string(source), level, clock.Now() - start, std::this_thread::get_id()});
  };
  std::string fifo = dir.File("pressure.fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::map<std::string, std::string> env{{"MEMORY_PRESSURE_WATCH", fifo}};
  PressureMonitorOptions options;
  options.memory_events.path = dir.File("none");  // no cgroup source here: reported, skipped
  options.get_env = [&](const char* name) -> const char* {
    auto found = env.find(name);
    return found == env.end() ? nullptr : found->second.c_str();
  };
  size_t flushes = 0;
  options.allocator_flush = [&](size_t) { ++flushes; };
  testing::Recorder log;
  PressureMonitor monitor(loop, on_pressure, log.Log(), options);
  EXPECT_EQ(monitor.Start(), 3u) << log.AllLog();  // systemd, allocator, api

  ControlHandlers handlers;
  handlers.pressure = [&](MemoryPressureLevel level) {
    on_pressure(level, "control");
    return ControlReply().SetFreedBytes(1 << 20);
  };
  ControlServer control(loop, dir.File("control.sock"), handlers, log.Log());
  ASSERT_TRUE(control.Start());

  int tracker_ticks = 0;
  ScopedTimer tracker(loop, loop.StartRepeatingTimer(seconds(1), [&] { ++tracker_ticks; }));
  loop.StartTimer(seconds(2), [&] {
    int writer = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    ASSERT_GE(writer, 0);
    ASSERT_EQ(write(writer, "x", 1), 1);
    close(writer);
  });
  loop.StartTimer(seconds(5), [&] {
    lethe_stats_t before;
    lethe_stats(&before);
    void* impossible = lethe_malloc(size_t{1} << 47);
    EXPECT_EQ(impossible, nullptr);
    lethe_stats_t after;
    lethe_stats(&after);
    if (after.low_memory_callbacks == before.low_memory_callbacks) {
      // An allocator that refuses such a size without asking the OS never calls back; make the
      // call it would have made (pressure_allocator_test covers the real path where it exists).
      AllocatorPressureSource::OnLowMemory(
          size_t{1} << 47, static_cast<AllocatorPressureSource*>(monitor.Find("allocator")));
    }
  });
  loop.StartTimer(seconds(7), [&] {
    std::thread([&] { monitor.Simulate(MemoryPressureLevel::kModerate); }).join();
  });
  loop.RunFor(seconds(10));

  // The control socket, driven without blocking so simulated time stays where it is.
  int client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, control.socket_path().c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(send(client, "pressure critical\n", 18, 0), 18);
  loop.RunUntilIdle();
  char reply[256] = {};
  ASSERT_GT(recv(client, reply, sizeof(reply) - 1, MSG_DONTWAIT), 0);
  EXPECT_NE(std::string(reply).find("\"freed_bytes\":1048576"), std::string::npos) << reply;
  close(client);

  ASSERT_EQ(seen.size(), 4u) << log.AllLog();
  EXPECT_EQ(seen[0].source, "systemd");
  EXPECT_EQ(seen[0].at, seconds(2));
  EXPECT_EQ(seen[1].source, "allocator");
  EXPECT_EQ(seen[1].level, MemoryPressureLevel::kCritical);
  EXPECT_EQ(seen[1].at, seconds(5));
  EXPECT_EQ(seen[2].source, "api");
  EXPECT_EQ(seen[2].at, seconds(7));
  EXPECT_EQ(seen[3].source, "control");
  EXPECT_EQ(seen[3].at, seconds(10));
  for (const Seen& event : seen) EXPECT_EQ(event.thread, std::this_thread::get_id());
  EXPECT_EQ(flushes, 1u);
  EXPECT_EQ(tracker_ticks, 10);
  EXPECT_EQ(ticks.size(), 10u);  // the allocator's decay followed each second of simulated time
  EXPECT_EQ(loop.stats().spurious_wakeup_count, 0u);
  g_ticks = nullptr;
}

}  // namespace
}  // namespace lethe
