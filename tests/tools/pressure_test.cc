// lethe-pressure's parts: the control client (against the engine's real ControlServer), reading
// replies, the trial figures and their targets, and the squeeze's CI refusal and cgroup discovery.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <future>
#include <sstream>
#include <thread>

#include "control_client.h"
#include "lethe/control_server.h"
#include "lethe/event_loop.h"
#include "pressure_trials.h"
#include "squeeze.h"

namespace lethe::pressure {
namespace {

constexpr uint64_t kMiB = 1 << 20;

std::string SocketPath(const std::string& name) {
  return "/tmp/lethe-pressure-test-" + std::to_string(getpid()) + "-" + name + ".sock";
}

// The engine's control server on a loop of its own thread, with handlers the test chooses.
class ServerThread {
 public:
  ServerThread(std::string path, ControlHandlers handlers) {
    // started_ is a member: the thread may still be inside set_value when get() returns here.
    std::promise<EventLoop*>& started = started_;
    thread_ = std::thread([&started, path, handlers] {
      EventLoop loop(Clock::Steady());
      ControlServer server(loop, path, handlers, [](std::string_view) {});
      EXPECT_TRUE(server.Start());
      started.set_value(&loop);
      loop.Run();
    });
    loop_ = started.get_future().get();
  }
  ~ServerThread() {
    // Quit from the loop's own thread: a Quit() from here could still be inside the loop's mutex
    // when the loop thread sees the flag, returns and destroys the loop. PostTask is done with the
    // loop before the task can run.
    EventLoop* loop = loop_;
    loop_->PostTask([loop] { loop->Quit(); });
    thread_.join();
  }

 private:
  std::promise<EventLoop*> started_;
  std::thread thread_;
  EventLoop* loop_ = nullptr;
};

TEST(ControlClient, SendsACommandAndReadsItsReplyAndKnowsThePeer) {
  ControlHandlers handlers;
  handlers.stats = [] { return ControlReply().AddNumber("unlocked_bytes", 42); };
  handlers.pressure = [](MemoryPressureLevel) { return ControlReply().SetFreedBytes(7); };
  const std::string path = SocketPath("ok");
  ServerThread server(path, handlers);
  std::string error;
  auto client = ControlClient::Connect(path, &error);
  ASSERT_NE(client, nullptr) << error;
  EXPECT_EQ(client->peer_pid(), getpid());
  std::string reply;
  ASSERT_TRUE(client->Request("stats", std::chrono::seconds(10), &reply, &error)) << error;
  EXPECT_EQ(ReplyError(reply), "");
  EXPECT_EQ(UnlockedBytesFromStats(reply), 42u);
  ASSERT_TRUE(client->Request("pressure critical", std::chrono::seconds(10), &reply, &error)) << error;
  EXPECT_EQ(NumberField(reply, "freed_bytes"), 7);
  EXPECT_TRUE(NumberField(reply, "elapsed_us").has_value());
  ASSERT_TRUE(client->Request("frobnicate", std::chrono::seconds(10), &reply, &error)) << error;
  EXPECT_NE(ReplyError(reply).find("unknown command"), std::string::npos);
}

// A Unix stream socket bound at `path` (nobody listening yet), or -1.
int BoundSocket(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof(address.sun_path), "%s", path.c_str());
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

TEST(ControlClient, AMissingSocketSaysSo) {
  std::string error;
  EXPECT_EQ(ControlClient::Connect("/nonexistent/engine.sock", &error), nullptr);
  EXPECT_NE(error.find("no control socket at /nonexistent/engine.sock"), std::string::npos) << error;
}

TEST(ControlClient, ADeadSocketSaysConnectionRefused) {
  const std::string path = SocketPath("dead");
  int fd = BoundSocket(path);
  ASSERT_GE(fd, 0);
  close(fd);  // the file stays, nobody listens: what a crashed engine leaves behind
  std::string error;
  EXPECT_EQ(ControlClient::Connect(path, &error), nullptr);
  EXPECT_NE(error.find("connection refused"), std::string::npos) << error;
  unlink(path.c_str());
}

TEST(ControlClient, AnOverlongPathIsRefusedBeforeConnecting) {
  std::string error;
  EXPECT_EQ(ControlClient::Connect(std::string(200, 'x'), &error), nullptr);
  EXPECT_NE(error.find("socket path"), std::string::npos);
}

TEST(ControlClient, AnEngineThatNeverAnswersTimesOut) {
  const std::string path = SocketPath("mute");
  int listener = BoundSocket(path);
  ASSERT_GE(listener, 0);
  ASSERT_EQ(listen(listener, 1), 0);
  std::string error;
  auto client = ControlClient::Connect(path, &error);  // queued in the backlog, never read
  ASSERT_NE(client, nullptr) << error;
  std::string reply;
  EXPECT_FALSE(client->Request("stats", std::chrono::milliseconds(20), &reply, &error));
  EXPECT_NE(error.find("did not answer"), std::string::npos) << error;
  close(listener);
  unlink(path.c_str());
}

// ---- replies --------------------------------------------------------------------------------

TEST(PressureReplies, UnlockedBytesComeFromTheBestFieldThereIs) {
  EXPECT_EQ(UnlockedBytesFromStats(
                R"({"ok":true,"discardable_bytes":8,"surfaces_bytes":100,"locked_surfaces_bytes":30})"),
            8u);
  EXPECT_EQ(UnlockedBytesFromStats(R"({"ok":true,"unlocked_bytes":5,"a_unlocked_bytes":9})"), 5u);
  EXPECT_EQ(UnlockedBytesFromStats(R"({"ok":true,"a_unlocked_bytes":4,"b_unlocked_bytes":3})"), 7u);
  // The Engine's stats: surfaces not locked, plus the bfcache.
  EXPECT_EQ(UnlockedBytesFromStats(
                R"({"ok":true,"surfaces_bytes":100,"locked_surfaces_bytes":30,"bfcache_bytes":5})"),
            75u);
  EXPECT_FALSE(UnlockedBytesFromStats(R"({"ok":true,"windows":3})").has_value());
  EXPECT_FALSE(UnlockedBytesFromStats("not json").has_value());
}

TEST(PressureReplies, ErrorsAreReadFromTheReply) {
  EXPECT_EQ(ReplyError(R"({"ok":true})"), "");
  EXPECT_EQ(ReplyError(R"({"ok":false,"error":"nope"})"), "nope");
  EXPECT_NE(ReplyError("garbage").find("not a JSON object"), std::string::npos);
  EXPECT_NE(ReplyError(R"({"fine":1})").find("lacks"), std::string::npos);
}

TEST(PressureReplies, FieldsOfTheWrongTypeAreAbsent) {
  EXPECT_FALSE(NumberField(R"({"freed_bytes":"many"})", "freed_bytes").has_value());
  EXPECT_EQ(StringField(R"({"level":"critical"})", "level"), "critical");
  EXPECT_FALSE(StringField(R"({"level":3})", "level").has_value());
}

// ---- trials ---------------------------------------------------------------------------------

TrialResult Trial(uint64_t unlocked_mib, uint64_t rss_before_mib, uint64_t rss_after_mib,
                  uint64_t freed_mib, double round_trip_ms) {
  TrialResult trial;
  trial.unlocked_bytes_before = unlocked_mib * kMiB;
  trial.rss_before_bytes = rss_before_mib * kMiB;
  trial.rss_after_bytes = rss_after_mib * kMiB;
  trial.freed_bytes = freed_mib * kMiB;
  trial.elapsed_us = static_cast<int64_t>(round_trip_ms * 900);
  trial.round_trip_ms = round_trip_ms;
  return trial;
}

TEST(PressureTrials, ReturnedShareIsTheRssDropOverTheUnlockedBytes) {
  EXPECT_NEAR(*Trial(40, 50, 10, 40, 5).ReturnedShare(), 1.0, 1e-9);
  EXPECT_NEAR(*Trial(40, 50, 30, 40, 5).ReturnedShare(), 0.5, 1e-9);
  EXPECT_FALSE(Trial(0, 50, 50, 0, 5).ReturnedShare().has_value());
  TrialResult unknown = Trial(10, 50, 40, 10, 5);
  unknown.unlocked_bytes_before.reset();
  EXPECT_FALSE(unknown.ReturnedShare().has_value());
}

TEST(PressureTrials, FreeingMuchMoreThanWasUnlockedMarksADisturbedTrial) {
  EXPECT_FALSE(Disturbed(Trial(40, 50, 10, 40, 5)));
  EXPECT_TRUE(Disturbed(Trial(20, 50, 10, 40, 5)));
}

TEST(PressureTrials, MediansOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(Median({}), 0);
}

TEST(PressureTrials, PrintsEachTrialTheMediansAndTheTargets) {
  std::ostringstream out;
  PrintTrials(out, {Trial(40, 50, 10, 40, 5), Trial(0, 10, 10, 0, 0.1), Trial(40, 50, 11, 40, 7)},
              true);
  const std::string text = out.str();
  EXPECT_NE(text.find("trial 1: unlocked 40.0 MiB before"), std::string::npos) << text;
  EXPECT_NE(text.find("nothing unlocked to free"), std::string::npos) << text;
  EXPECT_NE(text.find("median of 3"), std::string::npos) << text;
  // The share and the time are judged on the two trials that had something to free.
  EXPECT_NE(text.find("returned share of unlocked bytes: 99% (median of 2 trials"), std::string::npos)
      << text;
  EXPECT_NE(text.find("(target >= 95%: met)"), std::string::npos) << text;
  EXPECT_NE(text.find("median round trip of those trials: 6.00 ms   (target < 100 ms: met)"),
            std::string::npos)
      << text;
}

TEST(PressureTrials, AShortfallIsNotMet) {
  std::ostringstream out;
  PrintTrials(out, {Trial(40, 50, 30, 40, 500)}, true);
  EXPECT_NE(out.str().find("(target >= 95%: NOT MET)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("(target < 100 ms: NOT MET)"), std::string::npos) << out.str();
}

TEST(PressureTrials, ModerateEventsPrintNoCriticalTargets) {
  std::ostringstream out;
  PrintTrials(out, {Trial(40, 50, 45, 5, 1)}, false);
  EXPECT_EQ(out.str().find("target"), std::string::npos) << out.str();
}

// ---- squeeze --------------------------------------------------------------------------------

TEST(Squeeze, RefusesInCi) {
  EXPECT_NE(CiRefusal("true").find("refuses to run in CI"), std::string::npos);
  EXPECT_NE(CiRefusal("1"), "");
  EXPECT_EQ(CiRefusal(nullptr), "");
  EXPECT_EQ(CiRefusal(""), "");
  EXPECT_EQ(CiRefusal("false"), "");
}

TEST(Squeeze, NeedsAUnifiedCgroup) {
  std::string why;
  EXPECT_EQ(FindWritableCgroup("4:memory:/x\n", "", &why), "");
  EXPECT_NE(why.find("no cgroup v2"), std::string::npos) << why;
}

TEST(Squeeze, NeedsACgroup2Mount) {
  std::string why;
  const std::string mounts = "22 1 0:20 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";
  EXPECT_EQ(FindWritableCgroup("0::/\n", mounts, &why), "");
  EXPECT_NE(why.find("no cgroup2"), std::string::npos) << why;
}

TEST(Squeeze, NeedsTheMemoryControllerDelegated) {
  std::string why;
  // A mount point with no cgroup.subtree_control at all (a plain directory).
  const std::string mounts = "30 1 0:26 / /nonexistent/cgroup2 rw - cgroup2 cgroup2 rw\n";
  EXPECT_EQ(FindWritableCgroup("0::/some/group\n", mounts, &why), "");
  EXPECT_NE(why.find("memory controller is not enabled"), std::string::npos) << why;
  EXPECT_NE(why.find("/nonexistent/cgroup2/some/group"), std::string::npos) << why;
}

}  // namespace
}  // namespace lethe::pressure
