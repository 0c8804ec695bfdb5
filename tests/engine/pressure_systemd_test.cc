#include "lethe/pressure_systemd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <string>

#include "engine_test_util.h"

namespace lethe {
namespace {

using testing::PressureEvent;
using testing::Recorder;
using testing::TempDir;

// "some 140000 2000000\0", as systemd encodes its default trigger.
constexpr char kDefaultTriggerBase64[] = "c29tZSAxNDAwMDAgMjAwMDAwMAA=";
const std::string kDefaultTrigger("some 140000 2000000\0", 20);

TEST(DecodeBase64, DecodesPaddedAndUnpaddedText) {
  EXPECT_EQ(DecodeBase64(kDefaultTriggerBase64), kDefaultTrigger);
  EXPECT_EQ(DecodeBase64("YWI="), "ab");
  EXPECT_EQ(DecodeBase64("YWI"), "ab");
  EXPECT_EQ(DecodeBase64("YWJj"), "abc");
  EXPECT_EQ(DecodeBase64(" YW\nJj "), "abc");
  EXPECT_EQ(DecodeBase64(""), "");
}

TEST(DecodeBase64, RejectsWhatIsNotBase64) {
  EXPECT_FALSE(DecodeBase64("YW*j"));
  EXPECT_FALSE(DecodeBase64("YWJjZ"));   // 4n+1 symbols
  EXPECT_FALSE(DecodeBase64("YW=I"));    // data after padding
  EXPECT_FALSE(DecodeBase64("YWJj===")); // too much padding
  EXPECT_FALSE(DecodeBase64("YW="));     // padding to a length not a multiple of 4
}

TEST(SystemdPressureOptions, ComesFromTheEnvironmentOnlyWhenTheWatchIsSet) {
  std::map<std::string, std::string> env;
  auto get_env = [&](const char* name) -> const char* {
    auto found = env.find(name);
    return found == env.end() ? nullptr : found->second.c_str();
  };
  EXPECT_FALSE(SystemdPressureOptions::FromEnvironment(get_env));
  env["MEMORY_PRESSURE_WATCH"] = "";
  EXPECT_FALSE(SystemdPressureOptions::FromEnvironment(get_env));
  env["MEMORY_PRESSURE_WATCH"] = "/sys/fs/cgroup/a.service/memory.pressure";
  env["MEMORY_PRESSURE_WRITE"] = kDefaultTriggerBase64;
  auto options = SystemdPressureOptions::FromEnvironment(get_env);
  ASSERT_TRUE(options);
  EXPECT_EQ(options->watch, "/sys/fs/cgroup/a.service/memory.pressure");
  EXPECT_EQ(options->write_base64, kDefaultTriggerBase64);
  EXPECT_FALSE(options->off());
}

class SystemdSourceTest : public ::testing::Test {
 protected:
  SystemdSourceTest() : loop_(clock_, testing::NoDecayTick()) {}
  std::unique_ptr<SystemdPressureSource> Make(std::string watch, std::string write = "") {
    return std::make_unique<SystemdPressureSource>(
        recorder_.Context(loop_), SystemdPressureOptions{std::move(watch), std::move(write)});
  }
  ManualClock clock_;
  EventLoop loop_;
  Recorder recorder_;
  TempDir dir_;
};

TEST_F(SystemdSourceTest, DevNullMeansOff) {
  auto source = Make("/dev/null");
  EXPECT_FALSE(source->Start());
  EXPECT_EQ(recorder_.LogCount("turned memory-pressure watching off"), 1u) << recorder_.AllLog();
  EXPECT_EQ(loop_.watch_count(), 0u);
}

TEST_F(SystemdSourceTest, RegularFileGetsTheDecodedBytesAndIsWatchedForPollPri) {
  std::string path = dir_.File("memory.pressure");
  testing::WriteFile(path, "");
  auto source = Make(path, kDefaultTriggerBase64);
  ASSERT_TRUE(source->Start()) << recorder_.AllLog();
  EXPECT_EQ(source->mode(), SystemdPressureSource::Mode::kPsiFile);
  EXPECT_EQ(source->watched_events(), POLLPRI);
  EXPECT_EQ(testing::ReadFile(path), kDefaultTrigger);
  EXPECT_EQ(recorder_.LogCount("PSI file, POLLPRI"), 1u) << recorder_.AllLog();
  loop_.RunUntilIdle();  // a plain file never raises POLLPRI
  EXPECT_TRUE(recorder_.events.empty());
}

TEST_F(SystemdSourceTest, FifoIsWatchedForPollInAndSurvivesItsWriterClosing) {
  std::string path = dir_.File("pressure.fifo");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  auto source = Make(path, kDefaultTriggerBase64);
  ASSERT_TRUE(source->Start()) << recorder_.AllLog();
  EXPECT_EQ(source->mode(), SystemdPressureSource::Mode::kFifo);
  EXPECT_EQ(source->watched_events(), POLLIN);

  int writer = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(writer, 0);
  ASSERT_EQ(write(writer, "pressure", 8), 8);
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder_.events,
            (std::vector<PressureEvent>{{MemoryPressureLevel::kModerate, "systemd"}}));
  close(writer);
  loop_.RunUntilIdle();  // would spin on POLLHUP if the source held no writer of its own
  EXPECT_TRUE(source->active());
  EXPECT_EQ(recorder_.events.size(), 1u);

  writer = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_EQ(write(writer, "x", 1), 1);
  close(writer);
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder_.events.size(), 2u);
}

struct Listener {
  explicit Listener(const std::string& path) {
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    EXPECT_EQ(listen(fd, 4), 0);
  }
  ~Listener() { close(fd); }
  int fd = -1;
};

TEST_F(SystemdSourceTest, SocketGetsTheBytesAndEachMessageIsAnEventUntilItCloses) {
  std::string path = dir_.File("pressure.sock");
  Listener listener(path);
  auto source = Make(path, kDefaultTriggerBase64);
  ASSERT_TRUE(source->Start()) << recorder_.AllLog();
  EXPECT_EQ(source->mode(), SystemdPressureSource::Mode::kSocket);
  EXPECT_EQ(source->watched_events(), POLLIN);

  int peer = accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC);
  ASSERT_GE(peer, 0);
  char received[64] = {};
  ASSERT_EQ(read(peer, received, sizeof(received)), static_cast<ssize_t>(kDefaultTrigger.size()));
  EXPECT_EQ(std::string(received, kDefaultTrigger.size()), kDefaultTrigger);

  ASSERT_EQ(write(peer, "1", 1), 1);
  loop_.RunUntilIdle();
  ASSERT_EQ(write(peer, "2", 1), 1);
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder_.events.size(), 2u);

  close(peer);
  loop_.RunUntilIdle();
  EXPECT_FALSE(source->active());
  EXPECT_EQ(loop_.watch_count(), 0u);
  EXPECT_EQ(recorder_.LogCount("gone"), 1u) << recorder_.AllLog();
}

TEST_F(SystemdSourceTest, SocketNobodyListensOnIsReported) {
  std::string path = dir_.File("dead.sock");
  { Listener listener(path); }  // bound, then closed: the path stays, nobody listens
  auto source = Make(path);
  EXPECT_FALSE(source->Start());
  EXPECT_EQ(recorder_.LogCount("ECONNREFUSED"), 1u) << recorder_.AllLog();
}

TEST_F(SystemdSourceTest, MissingPathDirectoryAndBadBase64AreReported) {
  auto missing = Make(dir_.File("missing"));
  EXPECT_FALSE(missing->Start());
  auto directory = Make(dir_.path());
  EXPECT_FALSE(directory->Start());
  std::string path = dir_.File("memory.pressure");
  testing::WriteFile(path, "");
  auto bad = Make(path, "not base64!");
  EXPECT_FALSE(bad->Start());
  EXPECT_EQ(recorder_.LogCount("ENOENT"), 1u) << recorder_.AllLog();
  EXPECT_EQ(recorder_.LogCount("cannot watch it"), 1u) << recorder_.AllLog();
  EXPECT_EQ(recorder_.LogCount("not valid base64"), 1u) << recorder_.AllLog();
  EXPECT_EQ(testing::ReadFile(path), "");
  EXPECT_EQ(loop_.watch_count(), 0u);
}

TEST_F(SystemdSourceTest, ArmsARealPsiFileWithSystemdsDefaultTrigger) {
  int probe = open("/proc/pressure/memory", O_RDWR | O_CLOEXEC);
  if (probe < 0) GTEST_SKIP() << "no writable /proc/pressure/memory here";
  close(probe);
  auto source = Make("/proc/pressure/memory", kDefaultTriggerBase64);
  EXPECT_TRUE(source->Start()) << recorder_.AllLog();
  EXPECT_EQ(source->mode(), SystemdPressureSource::Mode::kPsiFile);
}

TEST_F(SystemdSourceTest, RealPsiFileRefusingTheTriggerIsReported) {
  int probe = open("/proc/pressure/memory", O_RDWR | O_CLOEXEC);
  if (probe < 0) GTEST_SKIP() << "no writable /proc/pressure/memory here";
  close(probe);
  auto source = Make("/proc/pressure/memory", "Ym9ndXMA");  // "bogus\0"
  EXPECT_FALSE(source->Start());
  EXPECT_EQ(recorder_.LogCount("EINVAL"), 1u) << recorder_.AllLog();
}

}  // namespace
}  // namespace lethe
