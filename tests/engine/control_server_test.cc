#include "lethe/control_server.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine_test_util.h"

namespace lethe {
namespace {

using std::chrono::microseconds;
using testing::Recorder;
using testing::TempDir;

// Handlers standing in for the engine's caches: pressure frees a known amount and takes a known
// time on the manual clock.
struct FakeEngine {
  ManualClock* clock = nullptr;
  std::vector<MemoryPressureLevel> pressures;
  std::vector<std::string> reports;

  ControlHandlers Handlers() {
    ControlHandlers handlers;
    handlers.pressure = [this](MemoryPressureLevel level) {
      pressures.push_back(level);
      clock->Advance(microseconds(1500));
      return ControlReply().SetFreedBytes(level == MemoryPressureLevel::kCritical ? 4096 : 1024)
          .AddNumber("surfaces_discarded", 3);
    };
    handlers.report = [this](const std::string& path) {
      reports.push_back(path);
      return ControlReply().AddNumber("report_bytes", 77);
    };
    handlers.stats = [] {
      return ControlReply().AddNumber("images", 12).AddString("allocator", "system");
    };
    return handlers;
  }
};

class ControlServerTest : public ::testing::Test {
 protected:
  ControlServerTest() : loop_(clock_, testing::NoDecayTick()) { engine_.clock = &clock_; }

  std::unique_ptr<ControlServer> Make(ControlHandlers handlers) {
    return std::make_unique<ControlServer>(loop_, dir_.File("control.sock"), std::move(handlers),
                                           recorder_.Log());
  }
  std::unique_ptr<ControlServer> MakeStarted() {
    auto server = Make(engine_.Handlers());
    EXPECT_TRUE(server->Start()) << recorder_.AllLog();
    return server;
  }

  int Connect() {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, dir_.File("control.sock").c_str(), sizeof(address.sun_path) - 1);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    return fd;
  }

  // Runs the loop until `fd` has `lines` complete lines (or end of stream) waiting, then reads them.
  std::vector<std::string> ReadLines(int fd, size_t lines) {
    std::string received;
    auto complete = [&] {
      char buffer[65536];
      ssize_t got = recv(fd, buffer, sizeof(buffer), MSG_PEEK | MSG_DONTWAIT);
      if (got == 0) return true;  // end of stream
      if (got < 0) return false;
      size_t newlines = 0;
      for (ssize_t i = 0; i < got; ++i) newlines += buffer[i] == '\n' ? 1 : 0;
      return newlines >= lines;
    };
    EXPECT_TRUE(loop_.RunUntil(complete));
    std::vector<std::string> out;
    while (out.size() < lines) {
      char c;
      std::string line;
      ssize_t got;
      while ((got = recv(fd, &c, 1, MSG_DONTWAIT)) == 1 && c != '\n') line += c;
      if (got != 1) break;
      out.push_back(line);
    }
    return out;
  }

  std::string Ask(int fd, std::string_view line) {
    std::string text = std::string(line) + "\n";
    EXPECT_EQ(send(fd, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size()));
    std::vector<std::string> lines = ReadLines(fd, 1);
    return lines.empty() ? std::string() : lines[0];
  }

  bool PeerClosed(int fd) {
    loop_.RunUntilIdle();
    char c;
    return recv(fd, &c, 1, MSG_DONTWAIT) == 0;
  }

  ManualClock clock_;
  EventLoop loop_;
  Recorder recorder_;
  TempDir dir_;
  FakeEngine engine_;
};

TEST_F(ControlServerTest, PressureAnswersWhatWasFreedAndHowLongItTook) {
  auto server = Make(engine_.Handlers());
  EXPECT_EQ(server->Execute("pressure critical"),
            "{\"ok\":true,\"command\":\"pressure\",\"level\":\"critical\",\"freed_bytes\":4096,"
            "\"elapsed_us\":1500,\"surfaces_discarded\":3}");
  EXPECT_EQ(server->Execute("  pressure   moderate \r"),
            "{\"ok\":true,\"command\":\"pressure\",\"level\":\"moderate\",\"freed_bytes\":1024,"
            "\"elapsed_us\":1500,\"surfaces_discarded\":3}");
  EXPECT_EQ(engine_.pressures, (std::vector<MemoryPressureLevel>{MemoryPressureLevel::kCritical,
                                                                 MemoryPressureLevel::kModerate}));
}

TEST_F(ControlServerTest, ReportAndStatsPassTheirFieldsThrough) {
  auto server = Make(engine_.Handlers());
  EXPECT_EQ(server->Execute("report /tmp/my report \"1\".json"),
            "{\"ok\":true,\"command\":\"report\",\"path\":\"/tmp/my report \\\"1\\\".json\","
            "\"elapsed_us\":0,\"report_bytes\":77}");
  EXPECT_EQ(engine_.reports, std::vector<std::string>{"/tmp/my report \"1\".json"});
  EXPECT_EQ(server->Execute("stats"),
            "{\"ok\":true,\"command\":\"stats\",\"elapsed_us\":0,\"images\":12,"
            "\"allocator\":\"system\"}");
}

TEST_F(ControlServerTest, BadCommandsGetAClearErrorLine) {
  auto server = Make(engine_.Handlers());
  EXPECT_EQ(server->Execute("frobnicate now"),
            "{\"ok\":false,\"command\":\"frobnicate\",\"error\":\"unknown command 'frobnicate'; "
            "expected: pressure moderate|critical, report PATH, stats\"}");
  EXPECT_NE(server->Execute("").find("empty command"), std::string::npos);
  EXPECT_NE(server->Execute("pressure").find("pressure needs 'moderate' or 'critical', not ''"),
            std::string::npos);
  EXPECT_NE(server->Execute("pressure none").find("not 'none'"), std::string::npos);
  EXPECT_NE(server->Execute("pressure severe").find("not 'severe'"), std::string::npos);
  EXPECT_NE(server->Execute("report").find("report needs a PATH"), std::string::npos);
  EXPECT_NE(server->Execute("stats now").find("stats takes no argument"), std::string::npos);
  EXPECT_TRUE(engine_.pressures.empty());
  EXPECT_EQ(server->stats().error_count, 7u);
  EXPECT_EQ(server->stats().command_count, 7u);
}

TEST_F(ControlServerTest, MissingFailingAndThrowingHandlersAreErrors) {
  ControlHandlers handlers;
  handlers.report = [](const std::string&) { return ControlReply::Error("disk full"); };
  handlers.stats = []() -> ControlReply { throw std::runtime_error("boom"); };
  auto server = Make(handlers);
  EXPECT_EQ(server->Execute("pressure critical"),
            "{\"ok\":false,\"command\":\"pressure\",\"error\":\"this engine has no handler for "
            "'pressure'\"}");
  EXPECT_EQ(server->Execute("report /x"),
            "{\"ok\":false,\"command\":\"report\",\"path\":\"/x\",\"error\":\"disk full\"}");
  EXPECT_EQ(server->Execute("stats"),
            "{\"ok\":false,\"command\":\"stats\",\"error\":\"the handler failed: boom\"}");
}

TEST_F(ControlServerTest, AnswersOverARealSocket) {
  auto server = MakeStarted();
  struct stat info {};
  ASSERT_EQ(stat(server->socket_path().c_str(), &info), 0);
  EXPECT_TRUE(S_ISSOCK(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0600u);

  int client = Connect();
  EXPECT_EQ(Ask(client, "pressure critical"),
            "{\"ok\":true,\"command\":\"pressure\",\"level\":\"critical\",\"freed_bytes\":4096,"
            "\"elapsed_us\":1500,\"surfaces_discarded\":3}");
  EXPECT_NE(Ask(client, "bogus").find("\"ok\":false"), std::string::npos);
  EXPECT_NE(Ask(client, "stats").find("\"images\":12"), std::string::npos);
  EXPECT_EQ(server->client_count(), 1u);
  close(client);
  loop_.RunUntilIdle();
  EXPECT_EQ(server->client_count(), 0u);
}

TEST_F(ControlServerTest, AnswersPipelinedCommandsInOrder) {
  auto server = MakeStarted();
  int client = Connect();
  std::string burst = "pressure moderate\nstats\r\nnope\npressure critical\n";
  ASSERT_EQ(send(client, burst.data(), burst.size(), 0), static_cast<ssize_t>(burst.size()));
  std::vector<std::string> lines = ReadLines(client, 4);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0].find("\"level\":\"moderate\""), std::string::npos);
  EXPECT_NE(lines[1].find("\"command\":\"stats\""), std::string::npos);
  EXPECT_NE(lines[2].find("unknown command 'nope'"), std::string::npos);
  EXPECT_NE(lines[3].find("\"level\":\"critical\""), std::string::npos);
  close(client);
}

TEST_F(ControlServerTest, AnswersALastLineWithoutNewlineThenCloses) {
  auto server = MakeStarted();
  int client = Connect();
  ASSERT_EQ(send(client, "stats", 5, 0), 5);
  ASSERT_EQ(shutdown(client, SHUT_WR), 0);
  std::vector<std::string> lines = ReadLines(client, 1);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("\"command\":\"stats\""), std::string::npos);
  EXPECT_TRUE(PeerClosed(client));
  EXPECT_EQ(server->client_count(), 0u);
  close(client);
}

TEST_F(ControlServerTest, ALineTooLongIsRefusedAndTheClientClosed) {
  auto server = MakeStarted();
  int client = Connect();
  std::string huge(ControlServer::kMaxLineBytes + 10, 'x');
  ASSERT_EQ(send(client, huge.data(), huge.size(), 0), static_cast<ssize_t>(huge.size()));
  std::vector<std::string> lines = ReadLines(client, 1);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("line longer than 4096 bytes"), std::string::npos) << lines[0];
  EXPECT_TRUE(PeerClosed(client));
  close(client);
}

TEST_F(ControlServerTest, ServesManyClientsAtOnce) {
  auto server = MakeStarted();
  std::vector<int> clients;
  for (int i = 0; i < 20; ++i) clients.push_back(Connect());
  // Every client sends before any is answered; each gets its own answer.
  for (size_t i = 0; i < clients.size(); ++i) {
    std::string line = i % 2 == 0 ? "pressure moderate\n" : "report /tmp/r" + std::to_string(i) + "\n";
    ASSERT_EQ(send(clients[i], line.data(), line.size(), 0), static_cast<ssize_t>(line.size()));
  }
  for (size_t i = 0; i < clients.size(); ++i) {
    std::vector<std::string> lines = ReadLines(clients[i], 1);
    ASSERT_EQ(lines.size(), 1u);
    if (i % 2 == 0) {
      EXPECT_NE(lines[0].find("\"level\":\"moderate\""), std::string::npos) << lines[0];
    } else {
      EXPECT_NE(lines[0].find("\"path\":\"/tmp/r" + std::to_string(i) + "\""), std::string::npos)
          << lines[0];
    }
  }
  EXPECT_EQ(server->client_count(), 20u);
  EXPECT_EQ(server->stats().clients_accepted_count, 20u);
  for (int fd : clients) close(fd);
  loop_.RunUntilIdle();
  EXPECT_EQ(server->client_count(), 0u);
}

TEST_F(ControlServerTest, ServesClientThreadsTalkingConcurrently) {
  auto server = MakeStarted();
  constexpr int kThreads = 6;
  constexpr int kRequests = 40;
  std::atomic<int> finished{0};
  std::atomic<int> good_answers{0};
  std::vector<std::thread> threads;
  const std::string path = server->socket_path();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_un address{};
      address.sun_family = AF_UNIX;
      std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
      if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
        for (int i = 0; i < kRequests; ++i) {
          std::string line = "report /r/" + std::to_string(t) + "/" + std::to_string(i) + "\n";
          if (send(fd, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) break;
          std::string answer;
          char c;
          while (recv(fd, &c, 1, 0) == 1 && c != '\n') answer += c;
          std::string expected = "\"path\":\"/r/" + std::to_string(t) + "/" + std::to_string(i) + "\"";
          if (answer.find(expected) != std::string::npos) ++good_answers;
        }
      }
      close(fd);
      ++finished;
      loop_.PostTask([] {});  // wakes the loop to look at `finished` again
    });
  }
  EXPECT_TRUE(loop_.RunUntil([&] { return finished.load() == kThreads; }));
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(good_answers.load(), kThreads * kRequests);
  EXPECT_EQ(engine_.reports.size(), static_cast<size_t>(kThreads * kRequests));
}

TEST_F(ControlServerTest, TurnsAwayClientsBeyondSixtyFour) {
  auto server = MakeStarted();
  std::vector<int> clients;
  for (int i = 0; i < 64; ++i) {
    clients.push_back(Connect());
    loop_.RunUntilIdle();  // accept each before the backlog fills
  }
  int extra = Connect();
  std::vector<std::string> lines = ReadLines(extra, 1);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "{\"ok\":false,\"error\":\"too many clients\"}");
  EXPECT_TRUE(PeerClosed(extra));
  EXPECT_EQ(server->client_count(), 64u);
  EXPECT_NE(Ask(clients[63], "stats").find("\"ok\":true"), std::string::npos);
  close(extra);
  for (int fd : clients) close(fd);
}

TEST_F(ControlServerTest, AClientThatDoesNotReadIsThrottledWithoutLosingAnswers) {
  auto server = MakeStarted();
  int client = Connect();
  ASSERT_EQ(fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK), 0);
  constexpr size_t kCommands = 20000;  // ~1.3 MB of answers, far beyond the socket buffers
  std::string requests;
  for (size_t i = 0; i < kCommands; ++i) requests += "stats\n";
  size_t sent = 0;
  size_t answers = 0;
  std::string partial;
  for (int round = 0; answers < kCommands && round < 100000; ++round) {
    if (sent < requests.size()) {
      ssize_t n = send(client, requests.data() + sent, requests.size() - sent, MSG_NOSIGNAL);
      if (n > 0) sent += static_cast<size_t>(n);
    }
    loop_.RunUntilIdle();  // returns once the server waits on the client
    if (round % 4 == 0) continue;  // read only now and then: the server must hold back
    char buffer[65536];
    ssize_t got;
    while ((got = recv(client, buffer, sizeof(buffer), MSG_DONTWAIT)) > 0) {
      for (ssize_t i = 0; i < got; ++i) {
        if (buffer[i] != '\n') {
          partial += buffer[i];
          continue;
        }
        EXPECT_EQ(partial, "{\"ok\":true,\"command\":\"stats\",\"elapsed_us\":0,\"images\":12,"
                           "\"allocator\":\"system\"}");
        partial.clear();
        ++answers;
      }
    }
  }
  EXPECT_EQ(answers, kCommands);
  EXPECT_EQ(server->stats().command_count, kCommands);
  EXPECT_GT(server->stats().input_paused_count, 0u);
  close(client);
}

TEST_F(ControlServerTest, AClientVanishingMidCommandLeavesTheOthersServed) {
  auto server = MakeStarted();
  int leaver = Connect();
  int stayer = Connect();
  ASSERT_EQ(send(leaver, "pressure crit", 13, 0), 13);
  close(leaver);
  EXPECT_NE(Ask(stayer, "stats").find("\"ok\":true"), std::string::npos);
  loop_.RunUntilIdle();
  EXPECT_EQ(server->client_count(), 1u);
  close(stayer);
}

TEST_F(ControlServerTest, ReplacesAStaleSocketAndRemovesItsOwnWhenDestroyed) {
  std::string path = dir_.File("control.sock");
  {
    int stale = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
    ASSERT_EQ(bind(stale, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    close(stale);  // the file stays, nobody listens: a crashed engine's leftover
  }
  auto server = MakeStarted();
  int client = Connect();
  EXPECT_NE(Ask(client, "stats").find("\"ok\":true"), std::string::npos);
  close(client);
  server.reset();
  struct stat info {};
  EXPECT_NE(stat(path.c_str(), &info), 0);
}

TEST_F(ControlServerTest, RefusesALiveSocketAFileAndAPathTooLong) {
  auto first = MakeStarted();
  auto second = Make(engine_.Handlers());
  EXPECT_FALSE(second->Start());
  EXPECT_EQ(recorder_.LogCount("another process is listening on it"), 1u) << recorder_.AllLog();
  second.reset();  // must not unlink the first server's socket
  int client = Connect();
  EXPECT_NE(Ask(client, "stats").find("\"ok\":true"), std::string::npos);
  close(client);

  testing::WriteFile(dir_.File("plain"), "keep me");
  ControlServer on_file(loop_, dir_.File("plain"), engine_.Handlers(), recorder_.Log());
  EXPECT_FALSE(on_file.Start());
  EXPECT_EQ(recorder_.LogCount("is not a socket"), 1u) << recorder_.AllLog();
  EXPECT_EQ(testing::ReadFile(dir_.File("plain")), "keep me");

  ControlServer too_long(loop_, dir_.File(std::string(200, 'p')), engine_.Handlers(), recorder_.Log());
  EXPECT_FALSE(too_long.Start());
  EXPECT_EQ(recorder_.LogCount("the path must have 1 to 107 bytes"), 1u) << recorder_.AllLog();
}

}  // namespace
}  // namespace lethe
