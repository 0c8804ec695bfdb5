// event_loop_benchmark — side-by-side figures for the engine's event loop and control channel, on
// real time (this is a tool, not a test: it sleeps and reads the wall clock).
//
//   1. Idle wakeups: the EventLoop (ppoll with the exact time to the next timer) against a
//      fixed-tick loop (wake every 10 ms and look at the timers, as many embedders' loops do), both
//      running the same cache timers for the same real time. Prints wakeups, CPU time and ratios.
//   2. Timer lateness on real time: how late the EventLoop's timers fire (timer slack, scheduling).
//   3. Cross-thread wake: round trip of PostTask (eventfd) against a mutex + condition variable
//      ping-pong, median of many.
//   4. Control channel: round trip of `stats` over the Unix socket against the same command
//      executed in-process, median of many.
//
// Usage: lethe_engine_loop_benchmark [seconds-for-part-1, default 2]
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lethe/control_server.h"
#include "lethe/event_loop.h"

namespace {

using lethe::Clock;
using lethe::EventLoop;
using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

// The timers of a small engine: surfaces, images, fonts, shaped words (scaled down so that a
// short run sees several ticks of each).
const std::vector<milliseconds> kCachePeriods = {milliseconds(250), milliseconds(500),
                                                 milliseconds(1000), milliseconds(1500)};

void IdleWakeups(double seconds) {
  const auto run_for = duration_cast<Clock::Duration>(std::chrono::duration<double>(seconds));

  // The EventLoop.
  EventLoop loop(Clock::Steady());
  uint64_t lethe_fires = 0;
  std::vector<lethe::ScopedTimer> timers;
  for (milliseconds period : kCachePeriods) {
    timers.emplace_back(loop, loop.StartRepeatingTimer(period, [&] { ++lethe_fires; }));
  }
  double cpu_before = CpuSeconds();
  loop.RunFor(run_for);
  double lethe_cpu = CpuSeconds() - cpu_before;
  timers.clear();

  // A fixed 10 ms tick checking the same timers.
  std::vector<Clock::TimePoint> due;
  const Clock::TimePoint start = Clock::Steady().Now();
  for (milliseconds period : kCachePeriods) due.push_back(start + period);
  uint64_t tick_wakeups = 0;
  uint64_t tick_fires = 0;
  cpu_before = CpuSeconds();
  while (Clock::Steady().Now() - start < run_for) {
    std::this_thread::sleep_for(milliseconds(10));
    ++tick_wakeups;
    Clock::TimePoint now = Clock::Steady().Now();
    for (size_t i = 0; i < due.size(); ++i) {
      while (due[i] <= now) {
        ++tick_fires;
        due[i] += kCachePeriods[i];
      }
    }
  }
  double tick_cpu = CpuSeconds() - cpu_before;

  const EventLoop::Stats& stats = loop.stats();
  std::printf("1. idle loop, %zu cache timers, %.1f s real time\n", kCachePeriods.size(), seconds);
  std::printf("   EventLoop:      %6llu wakeups (%llu spurious), %llu timer fires, cpu %.4f s\n",
              static_cast<unsigned long long>(stats.wait_count),
              static_cast<unsigned long long>(stats.spurious_wakeup_count),
              static_cast<unsigned long long>(lethe_fires), lethe_cpu);
  std::printf("   fixed 10 ms tick: %4llu wakeups, %llu timer fires, cpu %.4f s\n",
              static_cast<unsigned long long>(tick_wakeups),
              static_cast<unsigned long long>(tick_fires), tick_cpu);
  std::printf("   ratio: the tick loop wakes %.1fx as often\n",
              static_cast<double>(tick_wakeups) / static_cast<double>(std::max<uint64_t>(1, stats.wait_count)));
}

void TimerLateness() {
  EventLoop loop(Clock::Steady());
  std::vector<double> late_us;
  constexpr auto kPeriod = milliseconds(5);
  const Clock::TimePoint start = Clock::Steady().Now();
  lethe::ScopedTimer timer(loop, loop.StartRepeatingTimer(kPeriod, [&] {
    // Due times sit on the grid start + k x 5 ms (a late loop skips grid points, it never
    // drifts), so the lateness is the distance past the last grid point.
    auto since = Clock::Steady().Now() - start;
    late_us.push_back(static_cast<double>((since % kPeriod).count()) / 1e3);
  }));
  loop.RunUntil([&] { return late_us.size() >= 200; });
  double worst = *std::max_element(late_us.begin(), late_us.end());
  std::printf("2. real-time timer lateness over %zu fires of a 5 ms timer: median %.1f us, max %.1f us "
              "(within a period; %llu periods skipped by a busy machine)\n",
              late_us.size(), Median(late_us), worst,
              static_cast<unsigned long long>(loop.stats().missed_tick_count));
}

void CrossThreadWake() {
  constexpr int kRounds = 2000;
  // PostTask ping-pong: the worker posts to the loop, the loop answers through an atomic the
  // worker spins on (so only the loop side's wake is measured).
  EventLoop loop(Clock::Steady());
  std::atomic<int> answered{0};
  std::vector<double> post_us;
  std::thread worker([&] {
    for (int i = 0; i < kRounds; ++i) {
      auto sent = std::chrono::steady_clock::now();
      loop.PostTask([&] { answered.fetch_add(1, std::memory_order_release); });
      while (answered.load(std::memory_order_acquire) <= i) {
      }
      post_us.push_back(
          static_cast<double>(duration_cast<nanoseconds>(std::chrono::steady_clock::now() - sent).count()) / 1e3);
    }
  });
  loop.RunUntil([&] { return answered.load() == kRounds; });
  worker.join();

  // Baseline: the same round trip through a mutex and condition variable.
  std::mutex mutex;
  std::condition_variable wake;
  int requests = 0;
  std::atomic<int> served{0};
  std::vector<double> cv_us;
  std::thread server([&] {
    for (int i = 0; i < kRounds; ++i) {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] { return requests > i; });
      served.fetch_add(1, std::memory_order_release);
    }
  });
  for (int i = 0; i < kRounds; ++i) {
    auto sent = std::chrono::steady_clock::now();
    {
      std::lock_guard<std::mutex> lock(mutex);
      ++requests;
    }
    wake.notify_one();
    while (served.load(std::memory_order_acquire) <= i) {
    }
    cv_us.push_back(
        static_cast<double>(duration_cast<nanoseconds>(std::chrono::steady_clock::now() - sent).count()) / 1e3);
  }
  server.join();
  std::printf("3. cross-thread wake round trip, median of %d: PostTask %.1f us, condition variable "
              "%.1f us (ratio %.2f)\n",
              kRounds, Median(post_us), Median(cv_us), Median(post_us) / std::max(0.001, Median(cv_us)));
}

void ControlRoundTrip() {
  constexpr int kRounds = 2000;
  std::string dir = (std::filesystem::temp_directory_path() / "lethe-bench-XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) return;
  std::string path = dir + "/control.sock";
  EventLoop loop(Clock::Steady());
  lethe::ControlHandlers handlers;
  handlers.stats = [] { return lethe::ControlReply().AddNumber("images", 1); };
  lethe::ControlServer server(loop, path, handlers);
  if (!server.Start()) return;

  std::vector<double> in_process_us;
  for (int i = 0; i < kRounds; ++i) {
    auto start = std::chrono::steady_clock::now();
    std::string reply = server.Execute("stats");
    in_process_us.push_back(
        static_cast<double>(duration_cast<nanoseconds>(std::chrono::steady_clock::now() - start).count()) / 1e3);
  }

  std::atomic<bool> done{false};
  std::vector<double> socket_us;
  std::thread client([&] {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
      char buffer[512];
      for (int i = 0; i < kRounds; ++i) {
        auto start = std::chrono::steady_clock::now();
        if (send(fd, "stats\n", 6, MSG_NOSIGNAL) != 6) break;
        size_t got = 0;
        do {
          ssize_t more = recv(fd, buffer + got, sizeof(buffer) - got, 0);
          if (more <= 0) break;
          got += static_cast<size_t>(more);
        } while (buffer[got - 1] != '\n' && got < sizeof(buffer));
        socket_us.push_back(
            static_cast<double>(duration_cast<nanoseconds>(std::chrono::steady_clock::now() - start).count()) / 1e3);
      }
    }
    close(fd);
    done = true;
    loop.PostTask([] {});
  });
  loop.RunUntil([&] { return done.load(); });
  client.join();
  std::filesystem::remove_all(dir);
  std::printf("4. control channel `stats`, median of %d: over the socket %.1f us, in-process %.2f us "
              "(ratio %.0f)\n",
              kRounds, Median(socket_us), Median(in_process_us),
              Median(socket_us) / std::max(0.001, Median(in_process_us)));
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
  if (seconds <= 0) seconds = 2.0;
  IdleWakeups(seconds);
  TimerLateness();
  CrossThreadWake();
  ControlRoundTrip();
  return 0;
}
