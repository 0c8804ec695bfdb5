#include "lethe/pressure_psi.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <string>
#include <vector>

#include "engine_test_util.h"

namespace lethe {
namespace {

using testing::PressureEvent;
using testing::Recorder;

// Stands in for the kernel's pressure file. Each Open hands out one end of an AF_UNIX socketpair
// (a byte sent with MSG_OOB raises POLLPRI on it, as a PSI event does) or, with use_pipes, the
// write end of a pipe (closing the read end raises POLLERR, as a removed cgroup does).
// WriteTrigger applies the kernel's rules: windows of 0.5-10 s, stall <= window, and, when
// `unprivileged`, windows that are multiples of 2 s.
class FakePsiFile : public PsiFileOps {
 public:
  bool unprivileged = true;
  bool use_pipes = false;
  int open_error = 0;   // errno for Open
  int write_error = 0;  // errno for every WriteTrigger
  std::vector<std::string> opened;
  std::vector<std::string> writes;

  ~FakePsiFile() override {
    for (auto& [fd, peer] : peers_) close(peer);
  }

  int Open(const std::string& path) override {
    opened.push_back(path);
    if (open_error != 0) return -open_error;
    int fds[2];
    if (use_pipes) {
      if (pipe2(fds, O_CLOEXEC) != 0) return -errno;
      peers_[fds[1]] = fds[0];
      return fds[1];
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return -errno;
    peers_[fds[0]] = fds[1];
    return fds[0];
  }

  int WriteTrigger(int, std::string_view text) override {
    writes.emplace_back(text);
    if (write_error != 0) return write_error;
    std::string error;
    auto trigger = ParsePsiTrigger(text, MemoryPressureLevel::kModerate, &error);
    if (!trigger) return EINVAL;
    if (unprivileged && trigger->window_us % 2000000 != 0) return EINVAL;
    return 0;
  }

  void Acknowledge(int fd) override {
    char byte;
    ++acknowledged;
    EXPECT_EQ(recv(fd, &byte, 1, MSG_OOB), 1);
  }

  void Close(int fd) override {
    ++closed;
    close(fd);
  }

  // The n-th opened file signals a PSI event.
  bool Raise(size_t n) {
    return send(Peer(n), "!", 1, MSG_OOB) == 1;
  }
  // The n-th opened file's source goes away.
  void Remove(size_t n) {
    auto it = std::next(peers_.begin(), static_cast<long>(n));
    close(it->second);
    peers_.erase(it);
  }

  int acknowledged = 0;
  int closed = 0;

 private:
  int Peer(size_t n) const { return std::next(peers_.begin(), static_cast<long>(n))->second; }
  std::map<int, int> peers_;  // our fd -> the test's end, in fd order == open order here
};

TEST(PsiTrigger, DefaultsAreSomeForModerateAndFullForCriticalOnTwoSecondWindows) {
  std::vector<PsiTrigger> triggers = DefaultPsiTriggers();
  ASSERT_EQ(triggers.size(), 2u);
  EXPECT_EQ(triggers[0].Text(), "some 140000 2000000");
  EXPECT_EQ(triggers[0].level, MemoryPressureLevel::kModerate);
  EXPECT_EQ(triggers[1].Text(), "full 1400000 2000000");
  EXPECT_EQ(triggers[1].level, MemoryPressureLevel::kCritical);
}

TEST(PsiTrigger, ParsesWhatItPrints) {
  std::string error;
  auto trigger = ParsePsiTrigger(" full 700000  1000000\n", MemoryPressureLevel::kCritical, &error);
  ASSERT_TRUE(trigger) << error;
  EXPECT_TRUE(trigger->full);
  EXPECT_EQ(trigger->Text(), "full 700000 1000000");
}

TEST(PsiTrigger, RejectsBadTextNamingTheField) {
  std::string error;
  EXPECT_FALSE(ParsePsiTrigger("most 1 1000000", MemoryPressureLevel::kModerate, &error));
  EXPECT_NE(error.find("'some' or 'full'"), std::string::npos) << error;
  EXPECT_FALSE(ParsePsiTrigger("some x 1000000", MemoryPressureLevel::kModerate, &error));
  EXPECT_NE(error.find("stall"), std::string::npos) << error;
  EXPECT_FALSE(ParsePsiTrigger("some 100", MemoryPressureLevel::kModerate, &error));
  EXPECT_NE(error.find("window"), std::string::npos) << error;
  EXPECT_FALSE(ParsePsiTrigger("some 100 1000000 7", MemoryPressureLevel::kModerate, &error));
  EXPECT_NE(error.find("after the window"), std::string::npos) << error;
  EXPECT_FALSE(ParsePsiTrigger("some 100 20000000", MemoryPressureLevel::kModerate, &error));
  EXPECT_NE(error.find("between 500000 and 10000000"), std::string::npos) << error;
  EXPECT_FALSE(ParsePsiTrigger("some 3000000 2000000", MemoryPressureLevel::kModerate, &error));
  EXPECT_NE(error.find("at most the window"), std::string::npos) << error;
}

TEST(PsiTrigger, RoundsTheWindowUpToTwoSecondsKeepingTheStallShare) {
  PsiTrigger lmkd{MemoryPressureLevel::kModerate, false, 70000, 1000000};
  EXPECT_EQ(RoundPsiTriggerToUnprivilegedWindow(lmkd).Text(), "some 140000 2000000");
  PsiTrigger odd{MemoryPressureLevel::kCritical, true, 500000, 2500000};
  EXPECT_EQ(RoundPsiTriggerToUnprivilegedWindow(odd).Text(), "full 800000 4000000");
  PsiTrigger max{MemoryPressureLevel::kCritical, true, 9500000, 9500000};
  EXPECT_EQ(RoundPsiTriggerToUnprivilegedWindow(max).Text(), "full 10000000 10000000");
  PsiTrigger already{MemoryPressureLevel::kModerate, false, 1, 4000000};
  EXPECT_EQ(RoundPsiTriggerToUnprivilegedWindow(already), already);
}

TEST(PsiFileOps, RealWriteTriggerAppendsTheNulTheKernelExpects) {
  testing::TempDir dir;
  std::string path = dir.File("pressure");
  testing::WriteFile(path, "");
  int fd = PsiFileOps::Real().Open(path);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(PsiFileOps::Real().WriteTrigger(fd, "some 1 2"), 0);
  PsiFileOps::Real().Close(fd);
  EXPECT_EQ(testing::ReadFile(path), std::string("some 1 2\0", 9));
}

TEST(PsiFileOps, RealOpenReportsTheErrno) {
  EXPECT_EQ(PsiFileOps::Real().Open("/nonexistent/lethe/pressure"), -ENOENT);
}

TEST(PsiPressureSource, ArmsOneFdPerTriggerAndDeliversEachLevel) {
  ManualClock clock;
  EventLoop loop(clock, testing::NoDecayTick());
  Recorder recorder;
  FakePsiFile file;
  PsiOptions options;
  options.path = "/fake/memory.pressure";
  options.ops = &file;
  PsiPressureSource source(recorder.Context(loop), options);
  ASSERT_TRUE(source.Start());
  EXPECT_TRUE(source.active());
  EXPECT_EQ(file.opened, std::vector<std::string>(2, "/fake/memory.pressure"));
  EXPECT_EQ(file.writes, (std::vector<std::string>{"some 140000 2000000", "full 1400000 2000000"}));
  EXPECT_TRUE(recorder.log.empty()) << recorder.AllLog();

  ASSERT_TRUE(file.Raise(0));
  loop.RunUntilIdle();
  ASSERT_TRUE(file.Raise(1));
  loop.RunUntilIdle();
  EXPECT_EQ(recorder.events, (std::vector<PressureEvent>{{MemoryPressureLevel::kModerate, "psi"},
                                                         {MemoryPressureLevel::kCritical, "psi"}}));
  EXPECT_EQ(file.acknowledged, 2);
  EXPECT_EQ(source.event_count(), 2u);
  EXPECT_EQ(source.last_level(), MemoryPressureLevel::kCritical);
}

TEST(PsiPressureSource, EventEndsAnIdleRunUntilThatWaitsOnNothingElse) {
  ManualClock clock;
  EventLoop loop(clock, testing::NoDecayTick());
  Recorder recorder;
  FakePsiFile file;
  PsiOptions options;
  options.ops = &file;
  PsiPressureSource source(recorder.Context(loop), options);
  ASSERT_TRUE(source.Start());
  ASSERT_TRUE(file.Raise(0));
  EXPECT_TRUE(loop.RunUntil([&] { return !recorder.events.empty(); }));
  EXPECT_EQ(recorder.events.size(), 1u);
}

TEST(PsiPressureSource, RoundsARefusedWindowAndSaysSoOnce) {
  ManualClock clock;
  EventLoop loop(clock, testing::NoDecayTick());
  Recorder recorder;
  FakePsiFile file;
  PsiOptions options;
  options.ops = &file;
  options.triggers = {PsiTrigger{MemoryPressureLevel::kModerate, false, 70000, 1000000},
                      PsiTrigger{MemoryPressureLevel::kCritical, true, 700000, 1000000}};
  PsiPressureSource source(recorder.Context(loop), options);
  ASSERT_TRUE(source.Start());
  EXPECT_EQ(file.writes, (std::vector<std::string>{"some 70000 1000000", "some 140000 2000000",
                                                   "full 700000 1000000", "full 1400000 2000000"}));
  std::vector<PsiTrigger> armed = source.armed_triggers();
  ASSERT_EQ(armed.size(), 2u);
  EXPECT_EQ(armed[0].Text(), "some 140000 2000000");
  EXPECT_EQ(armed[1].Text(), "full 1400000 2000000");
  EXPECT_EQ(recorder.LogCount("multiple of 2 s"), 2u) << recorder.AllLog();
  EXPECT_EQ(recorder.LogCount("using 'some 140000 2000000'"), 1u) << recorder.AllLog();
}

TEST(PsiPressureSource, KeepsTheWindowWhenTheKernelAcceptsIt) {
  ManualClock clock;
  EventLoop loop(clock, testing::NoDecayTick());
  Recorder recorder;
  FakePsiFile file;
  file.unprivileged = false;
  PsiOptions options;
  options.ops = &file;
  options.triggers = {PsiTrigger{MemoryPressureLevel::kModerate, false, 70000, 1000000}};
  PsiPressureSource source(recorder.Context(loop), options);
  ASSERT_TRUE(source.Start());
  EXPECT_EQ(source.armed_triggers()[0].Text(), "some 70000 1000000");
  EXPECT_TRUE(recorder.log.empty()) << recorder.AllLog();
}

TEST(PsiPressureSource, DoesNotRoundWhenTheWindowAlreadyFitsAndReportsTheError) {
  ManualClock clock;
  EventLoop loop(clock, testing::NoDecayTick());
  Recorder recorder;
  FakePsiFile file;
  file.write_error = EINVAL;
  PsiOptions options;
  options.ops = &file;
  PsiPressureSource source(recorder.Context(loop), options);
  EXPECT_FALSE(source.Start());
  EXPECT_EQ(file.writes.size(), 2u);  // one attempt per trigger, no retry
  EXPECT_EQ(file.closed, 2);
  EXPECT_EQ(recorder.LogCount("EINVAL"), 2u) << recorder.AllLog();
  EXPECT_EQ(recorder.LogCount("multiple of 2 s"), 0u) << recorder.AllLog();
}

TEST(PsiPressureSource, ReportsAMissingFileOnceAndStaysOff) {
  ManualClock clock;
  EventLoop loop(clock, testing::NoDecayTick());
  Recorder recorder;
  FakePsiFile file;
  file.open_error = ENOENT;
  PsiOptions options;
  options.ops = &file;
  options.path = "/proc/pressure/memory";
  PsiPressureSource source(recorder.Context(loop), options);
  EXPECT_FALSE(source.Start());
  EXPECT_FALSE(source.active());
  ASSERT_EQ(recorder.log.size(), 1u) << recorder.AllLog();
  EXPECT_NE(recorder.log[0].find("/proc/pressure/memory"), std::string::npos);
  EXPECT_NE(recorder.log[0].find("ENOENT"), std::string::npos);
  EXPECT_EQ(loop.watch_count(), 0u);
}

TEST(PsiPressureSource, ReportsAnInvalidConfiguredTriggerAndArmsTheOthers) {
  ManualClock clock;
  EventLoop loop(clock, testing::NoDecayTick());
  Recorder recorder;
  FakePsiFile file;
  PsiOptions options;
  options.ops = &file;
  options.triggers = {PsiTrigger{MemoryPressureLevel::kModerate, false, 0, 2000000},
                      PsiTrigger{MemoryPressureLevel::kCritical, true, 1400000, 2000000}};
  PsiPressureSource source(recorder.Context(loop), options);
  EXPECT_TRUE(source.Start());
  EXPECT_EQ(source.armed_triggers().size(), 1u);
  EXPECT_EQ(recorder.LogCount("ignored"), 1u) << recorder.AllLog();
}

TEST(PsiPressureSource, PollErrMeansTheSourceIsGone) {
  ManualClock clock;
  EventLoop loop(clock, testing::NoDecayTick());
  Recorder recorder;
  FakePsiFile file;
  file.use_pipes = true;
  PsiOptions options;
  options.ops = &file;
  PsiPressureSource source(recorder.Context(loop), options);
  ASSERT_TRUE(source.Start());
  file.Remove(0);
  loop.RunUntilIdle();
  EXPECT_TRUE(source.active());  // the other trigger still stands
  EXPECT_EQ(source.armed_triggers().size(), 1u);
  file.Remove(0);
  loop.RunUntilIdle();
  EXPECT_FALSE(source.active());
  EXPECT_EQ(loop.watch_count(), 0u);
  EXPECT_EQ(recorder.LogCount("gone"), 2u) << recorder.AllLog();
  EXPECT_TRUE(recorder.events.empty());
}

TEST(PsiPressureSource, UnwatchesAndClosesEverythingWhenDestroyed) {
  ManualClock clock;
  EventLoop loop(clock, testing::NoDecayTick());
  Recorder recorder;
  FakePsiFile file;
  PsiOptions options;
  options.ops = &file;
  {
    PsiPressureSource source(recorder.Context(loop), options);
    ASSERT_TRUE(source.Start());
    EXPECT_EQ(loop.watch_count(), 2u);
  }
  EXPECT_EQ(loop.watch_count(), 0u);
  EXPECT_EQ(file.closed, 2);
}

// The real kernel, when this machine has PSI: the defaults are accepted as they are, and a 1 s
// window is either accepted (privileged) or rounded to 2 s (Linux >= 6.5, unprivileged).
bool RealPsiAvailable() {
  int fd = PsiFileOps::Real().Open("/proc/pressure/memory");
  if (fd < 0) return false;
  close(fd);
  return true;
}

TEST(PsiPressureSource, ArmsTheDefaultTriggersOnTheRealKernel) {
  if (!RealPsiAvailable()) GTEST_SKIP() << "no writable /proc/pressure/memory here";
  ManualClock clock;
  EventLoop loop(clock, testing::NoDecayTick());
  Recorder recorder;
  PsiPressureSource source(recorder.Context(loop), PsiOptions{});
  ASSERT_TRUE(source.Start()) << recorder.AllLog();
  EXPECT_EQ(source.armed_triggers(), DefaultPsiTriggers());
  EXPECT_TRUE(recorder.log.empty()) << recorder.AllLog();
}

TEST(PsiPressureSource, RealKernelAcceptsOrRoundsAOneSecondWindow) {
  if (!RealPsiAvailable()) GTEST_SKIP() << "no writable /proc/pressure/memory here";
  ManualClock clock;
  EventLoop loop(clock, testing::NoDecayTick());
  Recorder recorder;
  PsiOptions options;
  options.triggers = {PsiTrigger{MemoryPressureLevel::kModerate, false, 150000, 1000000}};
  PsiPressureSource source(recorder.Context(loop), options);
  ASSERT_TRUE(source.Start()) << recorder.AllLog();
  std::string armed = source.armed_triggers().at(0).Text();
  if (recorder.LogCount("multiple of 2 s") == 1) {
    EXPECT_EQ(armed, "some 300000 2000000");
  } else {
    EXPECT_EQ(armed, "some 150000 1000000");
    EXPECT_TRUE(recorder.log.empty()) << recorder.AllLog();
  }
}

}  // namespace
}  // namespace lethe
