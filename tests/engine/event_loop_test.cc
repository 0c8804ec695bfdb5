#include "lethe/event_loop.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace lethe {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::vector<uint64_t>* g_decay_ticks = nullptr;
void RecordDecayTick(uint64_t now_ns) { g_decay_ticks->push_back(now_ns); }

EventLoop::Options NoDecay() {
  EventLoop::Options options;
  options.decay_tick = nullptr;
  return options;
}

struct Pipe {
  Pipe() { EXPECT_EQ(pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0); }
  ~Pipe() {
    for (int fd : fds) {
      if (fd >= 0) close(fd);
    }
  }
  void CloseReader() { close(std::exchange(fds[0], -1)); }
  void CloseWriter() { close(std::exchange(fds[1], -1)); }
  int fds[2] = {-1, -1};
};

TEST(EventLoop, RunsOnSimulatedTimeWithAManualClock) {
  ManualClock clock;
  EventLoop loop(clock);
  EXPECT_TRUE(loop.simulated());
  EventLoop steady_loop(Clock::Steady());
  EXPECT_FALSE(steady_loop.simulated());
}

TEST(EventLoop, FiresTimersInOrderOfDueTimeThenOfStart) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  std::string order;
  loop.StartTimer(seconds(3), [&] { order += 'c'; });
  loop.StartTimer(seconds(1), [&] { order += 'a'; });
  loop.StartTimer(seconds(2), [&] { order += 'b'; });
  loop.StartTimer(seconds(2), [&] { order += 'B'; });
  loop.StartTimer(seconds(0), [&] { order += '0'; });
  loop.RunFor(seconds(10));
  EXPECT_EQ(order, "0abBc");
  EXPECT_EQ(loop.timer_count(), 0u);
}

TEST(EventLoop, RunForEndsExactlyAtTheDeadlineOnSimulatedTime) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  const Clock::TimePoint start = clock.Now();
  loop.RunFor(milliseconds(1234));
  EXPECT_EQ(clock.Now() - start, milliseconds(1234));
}

TEST(EventLoop, FiresATimerDueExactlyAtTheDeadline) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  int fired = 0;
  loop.StartTimer(seconds(5), [&] { ++fired; });
  loop.RunFor(seconds(5));
  EXPECT_EQ(fired, 1);
}

TEST(EventLoop, RepeatingTimerFiresOncePerPeriodWithoutDrift) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  const Clock::TimePoint start = clock.Now();
  std::vector<Clock::Duration> fired_at;
  loop.StartRepeatingTimer(seconds(1), [&] { fired_at.push_back(clock.Now() - start); });
  loop.RunFor(seconds(10));
  ASSERT_EQ(fired_at.size(), 10u);
  for (size_t i = 0; i < fired_at.size(); ++i) EXPECT_EQ(fired_at[i], seconds(i + 1));
  EXPECT_EQ(loop.timer_count(), 1u);
}

TEST(EventLoop, RepeatingTimersTickEachOnItsOwnPeriod) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  std::string order;
  loop.StartRepeatingTimer(seconds(3), [&] { order += 'T'; });
  loop.StartRepeatingTimer(seconds(2), [&] { order += 't'; });
  loop.RunFor(seconds(12));
  // 2 t, 3 T, 4 t, 6 T (started first) then t, 8 t, 9 T, 10 t, 12 T then t.
  EXPECT_EQ(order, "tTtTttTtTt");
}

TEST(EventLoop, IdleLoopWaitsExactlyUntilTheNextTimerAndNeverSpuriously) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  loop.StartRepeatingTimer(seconds(1), [] {});
  loop.StartTimer(milliseconds(1500), [] {});
  EXPECT_EQ(loop.TimeToNextTimer(), seconds(1));
  loop.RunFor(seconds(10));
  // Waits end at 1, 1.5, 2, 3, ..., 10: eleven waits, each one exactly to a timer.
  EXPECT_EQ(loop.stats().wait_count, 11u);
  EXPECT_EQ(loop.stats().timer_fire_count, 11u);
  EXPECT_EQ(loop.stats().spurious_wakeup_count, 0u);
  EXPECT_EQ(loop.stats().last_wait_timeout_ns, std::chrono::nanoseconds(seconds(1)).count());
}

TEST(EventLoop, LoopWithoutTimersJumpsToTheDeadlineInOneWait) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  EXPECT_EQ(loop.TimeToNextTimer(), Clock::Duration::max());
  loop.RunFor(std::chrono::hours(1));
  EXPECT_EQ(loop.stats().wait_count, 1u);
  EXPECT_EQ(loop.stats().timer_fire_count, 0u);
}

TEST(EventLoop, DrivesTheAllocatorDecayWithTheSimulatedClock) {
  std::vector<uint64_t> ticks;
  g_decay_ticks = &ticks;
  ManualClock clock;
  EventLoop::Options options;
  options.decay_tick = &RecordDecayTick;
  EventLoop loop(clock, options);
  const auto start_ns = static_cast<uint64_t>(clock.Now().time_since_epoch().count());
  loop.StartRepeatingTimer(seconds(2), [] {});
  loop.RunFor(seconds(5));
  ASSERT_EQ(ticks.size(), 3u);  // at 2 s, 4 s, then the deadline at 5 s
  EXPECT_EQ(ticks[0] - start_ns, 2000000000u);
  EXPECT_EQ(ticks[1] - start_ns, 4000000000u);
  EXPECT_EQ(ticks[2] - start_ns, 5000000000u);
  EXPECT_EQ(loop.stats().decay_tick_count, 3u);
  g_decay_ticks = nullptr;
}

TEST(EventLoop, TellsTheAllocatorAboutAClockMovedByHandOnce) {
  std::vector<uint64_t> ticks;
  g_decay_ticks = &ticks;
  ManualClock clock;
  EventLoop::Options options;
  options.decay_tick = &RecordDecayTick;
  EventLoop loop(clock, options);
  loop.RunUntilIdle();
  EXPECT_TRUE(ticks.empty());  // time has not moved
  clock.Advance(seconds(3));
  loop.RunUntilIdle();
  loop.RunUntilIdle();
  ASSERT_EQ(ticks.size(), 1u);
  EXPECT_EQ(ticks[0], static_cast<uint64_t>(clock.Now().time_since_epoch().count()));
  g_decay_ticks = nullptr;
}

TEST(EventLoop, RealTimeLoopLeavesDecayToTheAllocatorsOwnThread) {
  EventLoop loop(Clock::Steady());
  loop.PostTask([] {});
  loop.RunUntilIdle();
  EXPECT_EQ(loop.stats().decay_tick_count, 0u);
}

TEST(EventLoop, DefaultOptionsCallTheAllocatorsDecayTick) {
  ManualClock clock;
  EventLoop loop(clock);
  loop.RunFor(seconds(1));
  EXPECT_EQ(loop.stats().decay_tick_count, 1u);
}

TEST(EventLoop, CancelledTimerNeverFires) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  int fired = 0;
  EventLoop::TimerId id = loop.StartTimer(seconds(1), [&] { ++fired; });
  EventLoop::TimerId repeating = loop.StartRepeatingTimer(seconds(1), [&] { ++fired; });
  EXPECT_TRUE(loop.CancelTimer(id));
  EXPECT_TRUE(loop.CancelTimer(repeating));
  EXPECT_FALSE(loop.CancelTimer(id));
  EXPECT_FALSE(loop.CancelTimer(0));
  loop.RunFor(seconds(5));
  EXPECT_EQ(fired, 0);
  EXPECT_EQ(loop.timer_count(), 0u);
}

TEST(EventLoop, RepeatingTimerMayCancelItselfFromItsCallback) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  int fired = 0;
  EventLoop::TimerId id = 0;
  id = loop.StartRepeatingTimer(seconds(1), [&] {
    if (++fired == 3) {
      EXPECT_TRUE(loop.CancelTimer(id));
    }
  });
  loop.RunFor(seconds(10));
  EXPECT_EQ(fired, 3);
  EXPECT_EQ(loop.timer_count(), 0u);
}

TEST(EventLoop, OneShotTimerCancellingItselfFromItsCallbackFindsNothing) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  EventLoop::TimerId id = 0;
  bool cancelled = true;
  id = loop.StartTimer(seconds(1), [&] { cancelled = loop.CancelTimer(id); });
  loop.RunFor(seconds(2));
  EXPECT_FALSE(cancelled);
}

TEST(EventLoop, TimerCanCancelALaterTimerDueAtTheSameTime) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  int fired = 0;
  EventLoop::TimerId second = 0;
  loop.StartTimer(seconds(1), [&] { loop.CancelTimer(second); });
  second = loop.StartTimer(seconds(1), [&] { ++fired; });
  loop.RunFor(seconds(2));
  EXPECT_EQ(fired, 0);
}

TEST(EventLoop, TimerStartedByATimerFiresOnItsOwnSchedule) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  const Clock::TimePoint start = clock.Now();
  Clock::Duration inner_at{};
  loop.StartTimer(seconds(1), [&] {
    loop.StartTimer(seconds(2), [&] { inner_at = clock.Now() - start; });
  });
  loop.RunFor(seconds(10));
  EXPECT_EQ(inner_at, seconds(3));
}

TEST(EventLoop, LateRepeatingTimerFiresOnceAndSkipsTheMissedPeriods) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  const Clock::TimePoint start = clock.Now();
  int fired = 0;
  loop.StartRepeatingTimer(seconds(1), [&] { ++fired; });
  clock.Advance(milliseconds(5500));  // the loop was busy elsewhere for 5.5 s
  loop.RunUntilIdle();
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(loop.stats().missed_tick_count, 4u);  // the ticks at 2, 3, 4 and 5 s
  EXPECT_EQ(loop.TimeToNextTimer(), milliseconds(500));  // back on the grid, at 6 s
  loop.RunUntilTime(start + seconds(6));
  EXPECT_EQ(fired, 2);
}

TEST(EventLoop, RunUntilIdleDoesNotMoveTheClock) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  const Clock::TimePoint start = clock.Now();
  int fired = 0;
  loop.StartTimer(seconds(1), [&] { ++fired; });
  loop.PostTask([&] { ++fired; });
  loop.RunUntilIdle();
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(clock.Now(), start);
}

TEST(EventLoop, RunUntilStopsWhenThePredicateHolds) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  const Clock::TimePoint start = clock.Now();
  int fired = 0;
  loop.StartRepeatingTimer(seconds(1), [&] { ++fired; });
  EXPECT_TRUE(loop.RunUntil([&] { return fired == 4; }));
  EXPECT_EQ(clock.Now() - start, seconds(4));
}

TEST(EventLoop, RunUntilReturnsFalseAtTheDeadline) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  EXPECT_FALSE(loop.RunUntil([] { return false; }, clock.Now() + seconds(3)));
}

TEST(EventLoop, RunsPostedTasksInOrder) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  std::string order;
  loop.PostTask([&] {
    order += 'a';
    loop.PostTask([&] { order += 'c'; });  // runs in the next batch
  });
  loop.PostTask([&] { order += 'b'; });
  loop.RunUntilIdle();
  EXPECT_EQ(order, "abc");
  EXPECT_EQ(loop.stats().task_count, 3u);
}

TEST(EventLoop, RunsTasksPostedFromOtherThreadsInEachThreadsOrder) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  constexpr int kThreads = 4;
  constexpr int kPostsPerThread = 2000;
  std::vector<int> last_seen(kThreads, -1);
  int ran = 0;
  bool in_order = true;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPostsPerThread; ++i) {
        loop.PostTask([&, t, i] {
          in_order = in_order && last_seen[t] == i - 1;
          last_seen[t] = i;
          ++ran;
        });
      }
    });
  }
  // No timer and no deadline: the simulated loop blocks in ppoll until the posts wake it.
  EXPECT_TRUE(loop.RunUntil([&] { return ran == kThreads * kPostsPerThread; }));
  for (std::thread& thread : threads) thread.join();
  EXPECT_TRUE(in_order);
  EXPECT_EQ(loop.stats().spurious_wakeup_count, 0u);
}

TEST(EventLoop, PostTaskWakesARealTimeLoopBlockedForever) {
  EventLoop loop(Clock::Steady());
  std::atomic<bool> ran{false};
  std::thread poster([&] { loop.PostTask([&] { ran = true; }); });
  EXPECT_TRUE(loop.RunUntil([&] { return ran.load(); }));
  poster.join();
  EXPECT_LE(loop.stats().wait_count, 1u);
  EXPECT_EQ(loop.stats().spurious_wakeup_count, 0u);
  if (loop.stats().wait_count == 1) {
    EXPECT_EQ(loop.stats().last_wait_timeout_ns, -1);
  }
}

TEST(EventLoop, QuitFromAnotherThreadEndsRun) {
  EventLoop loop(Clock::Steady());
  std::thread quitter([&] { loop.Quit(); });
  loop.Run();  // would block forever without the Quit
  quitter.join();
  EXPECT_EQ(loop.stats().spurious_wakeup_count, 0u);
}

TEST(EventLoop, QuitBeforeRunMakesTheNextRunReturnAtOnce) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  const Clock::TimePoint start = clock.Now();
  loop.Quit();
  loop.RunFor(seconds(5));
  EXPECT_EQ(clock.Now(), start);
  loop.RunFor(seconds(5));  // the Quit was consumed
  EXPECT_EQ(clock.Now() - start, seconds(5));
}

TEST(EventLoop, QuitFromATimerStopsBeforeTheNextTimer) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  int fired = 0;
  loop.StartRepeatingTimer(seconds(1), [&] {
    if (++fired == 2) loop.Quit();
  });
  loop.Run();
  EXPECT_EQ(fired, 2);
}

TEST(EventLoop, WatchCallsBackWhenAPipeBecomesReadable) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  Pipe pipe;
  std::string received;
  loop.WatchFd(pipe.fds[0], POLLIN, [&](short revents) {
    EXPECT_TRUE(revents & POLLIN);
    char buffer[16];
    ssize_t got = read(pipe.fds[0], buffer, sizeof(buffer));
    if (got > 0) received.append(buffer, static_cast<size_t>(got));
  });
  loop.RunUntilIdle();
  EXPECT_EQ(loop.stats().fd_event_count, 0u);
  ASSERT_EQ(write(pipe.fds[1], "hi", 2), 2);
  loop.RunUntilIdle();
  EXPECT_EQ(received, "hi");
  EXPECT_EQ(loop.stats().fd_event_count, 1u);
}

TEST(EventLoop, WatchWakesABlockedLoopWhenAnotherThreadWrites) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  Pipe pipe;
  bool readable = false;
  loop.WatchFd(pipe.fds[0], POLLIN, [&](short) {
    char byte;
    EXPECT_EQ(read(pipe.fds[0], &byte, 1), 1);
    readable = true;
  });
  std::thread writer([&] { EXPECT_EQ(write(pipe.fds[1], "x", 1), 1); });
  EXPECT_TRUE(loop.RunUntil([&] { return readable; }));
  writer.join();
  EXPECT_EQ(loop.stats().spurious_wakeup_count, 0u);
}

TEST(EventLoop, FdEventOnSimulatedTimeIsHandledBeforeTheClockMoves) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  const Clock::TimePoint start = clock.Now();
  Pipe pipe;
  Clock::Duration seen_at = seconds(-1);
  loop.WatchFd(pipe.fds[0], POLLIN, [&](short) {
    char byte;
    EXPECT_EQ(read(pipe.fds[0], &byte, 1), 1);
    seen_at = clock.Now() - start;
  });
  loop.StartTimer(seconds(1), [] {});
  ASSERT_EQ(write(pipe.fds[1], "x", 1), 1);
  loop.RunFor(seconds(2));
  EXPECT_EQ(seen_at, seconds(0));
}

TEST(EventLoop, WatchReportsHangUpWhenTheWriterCloses) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  Pipe pipe;
  short seen = 0;
  EventLoop::WatchId id = 0;
  id = loop.WatchFd(pipe.fds[0], POLLIN, [&](short revents) {
    seen = revents;
    loop.UnwatchFd(id);  // a callback may unwatch itself
  });
  pipe.CloseWriter();
  loop.RunUntilIdle();
  EXPECT_TRUE(seen & POLLHUP);
  EXPECT_EQ(loop.watch_count(), 0u);
}

TEST(EventLoop, WatchReportsErrorOnAPipeWhoseReaderIsGone) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  Pipe pipe;
  short seen = 0;
  EventLoop::WatchId id = 0;
  id = loop.WatchFd(pipe.fds[1], POLLPRI, [&](short revents) {
    seen = revents;
    loop.UnwatchFd(id);
  });
  pipe.CloseReader();
  loop.RunUntilIdle();
  EXPECT_TRUE(seen & POLLERR);
}

TEST(EventLoop, UnwatchedFdIsNoLongerReported) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  Pipe pipe;
  int calls = 0;
  EventLoop::WatchId id = loop.WatchFd(pipe.fds[0], POLLIN, [&](short) { ++calls; });
  EXPECT_TRUE(loop.UnwatchFd(id));
  EXPECT_FALSE(loop.UnwatchFd(id));
  ASSERT_EQ(write(pipe.fds[1], "x", 1), 1);
  loop.RunUntilIdle();
  EXPECT_EQ(calls, 0);
}

TEST(EventLoop, CallbackUnwatchingAnotherReadyFdSuppressesItsEvent) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  Pipe first;
  Pipe second;
  int calls = 0;
  EventLoop::WatchId first_id = 0;
  EventLoop::WatchId second_id = 0;
  auto callback = [&](short) {
    ++calls;
    loop.UnwatchFd(first_id);
    loop.UnwatchFd(second_id);
  };
  first_id = loop.WatchFd(first.fds[0], POLLIN, callback);
  second_id = loop.WatchFd(second.fds[0], POLLIN, callback);
  ASSERT_EQ(write(first.fds[1], "x", 1), 1);
  ASSERT_EQ(write(second.fds[1], "x", 1), 1);
  loop.RunUntilIdle();
  EXPECT_EQ(calls, 1);
}

TEST(EventLoop, ScopedTimerCancelsWhenDestroyed) {
  ManualClock clock;
  EventLoop loop(clock, NoDecay());
  int fired = 0;
  {
    ScopedTimer timer(loop, loop.StartRepeatingTimer(seconds(1), [&] { ++fired; }));
    loop.RunFor(seconds(2));
    ScopedTimer moved = std::move(timer);
    loop.RunFor(seconds(1));
  }
  loop.RunFor(seconds(5));
  EXPECT_EQ(fired, 3);
  EXPECT_EQ(loop.timer_count(), 0u);
}

TEST(EventLoop, RealTimeTimerDueNowFiresWithoutWaiting) {
  EventLoop loop(Clock::Steady());
  bool fired = false;
  loop.StartTimer(Clock::Duration::zero(), [&] { fired = true; });
  loop.RunUntilIdle();
  EXPECT_TRUE(fired);
  EXPECT_EQ(loop.stats().wait_count, 0u);
}

}  // namespace
}  // namespace lethe
