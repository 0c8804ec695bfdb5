// Crash safety: a child process Puts entries into one cache file and is killed with SIGKILL at a
// random point, again and again (kRuns times, the same file throughout). After each kill the cache
// opens without being moved aside, passes integrity_check, and every entry whose Put the child
// acknowledged (it writes the acknowledgement only after Put returned success) is present and
// byte-identical.
//
// The kill points are random without any sleeping: the test kills right after reading a random
// number of acknowledgements plus a random busy spin, which lands inside the next Put, a batch of
// LRU touches, a blob write, a commit or a checkpoint.
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "disk_cache_crash_common.h"
#include "disk_cache_test_util.h"
#include "lethe/disk_cache.h"

namespace lethe::cache {
namespace {

constexpr int kRuns = 60;

struct Acks {
  std::vector<int> acknowledged;
  std::string partial;  // a line not finished yet

  void Feed(const char* data, ssize_t n) {
    for (ssize_t i = 0; i < n; ++i) {
      if (data[i] == '\n') {
        acknowledged.push_back(std::stoi(partial));
        partial.clear();
      } else {
        partial += data[i];
      }
    }
  }
};

// Starts the child with stdout on a pipe; returns its pid and the read end.
pid_t StartChild(const std::string& path, int run, unsigned seed, int* read_fd) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    std::string run_text = std::to_string(run);
    std::string seed_text = std::to_string(seed);
    ::execl(LETHE_CRASH_CHILD, LETHE_CRASH_CHILD, path.c_str(), run_text.c_str(),
            seed_text.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  *read_fd = fds[0];
  return pid;
}

// Reads acknowledgements until `kill_after` of them arrived (then SIGKILLs the child after a busy
// spin of `spin` steps) or the child ended; then drains the pipe: acknowledgements written before
// the kill are still in it and count.
Acks RunAndKill(pid_t pid, int fd, int kill_after, int spin) {
  Acks acks;
  char buffer[256];
  bool killed = false;
  while (true) {
    if (!killed && static_cast<int>(acks.acknowledged.size()) >= kill_after) {
      std::atomic<int> sink{0};
      for (int i = 0; i < spin; ++i) sink.fetch_add(1, std::memory_order_relaxed);
      ::kill(pid, SIGKILL);
      killed = true;
    }
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n <= 0) break;  // EOF: the child is gone and the pipe is drained
    acks.Feed(buffer, n);
  }
  ::close(fd);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return acks;
}

// A SIGKILL loses nothing the kernel already has, so fsync plays no part in what this test proves;
// on tmpfs the child's checkpoints do not wait for the disk and the test stays within seconds.
std::filesystem::path CrashDirectory() {
  std::error_code error;
  if (std::filesystem::is_directory("/dev/shm", error) &&
      ::access("/dev/shm", W_OK) == 0) {
    return "/dev/shm";
  }
  return std::filesystem::temp_directory_path();
}

TEST(DiskCacheCrash, EveryAcknowledgedPutSurvivesSigkillAtRandomPoints) {
  testing::TempDir dir(CrashDirectory());
  const std::string path = dir.File("cache.db");
  std::mt19937 random(20261123);
  std::vector<std::vector<int>> acknowledged(kRuns);  // per run
  int killed_mid_run = 0;

  for (int run = 0; run < kRuns; ++run) {
    int fd = -1;
    pid_t pid = StartChild(path, run, static_cast<unsigned>(random()), &fd);
    ASSERT_GT(pid, 0);
    // Mostly early kills, sometimes before the first Put finishes (inside open and recovery).
    int kill_after = static_cast<int>(random() % 12);
    int spin = static_cast<int>(random() % 400'000);
    Acks acks = RunAndKill(pid, fd, kill_after, spin);
    ASSERT_TRUE(acks.partial.empty()) << "a torn acknowledgement line";
    if (static_cast<int>(acks.acknowledged.size()) < testing::kCrashPutsPerRun) ++killed_mid_run;
    acknowledged[run] = acks.acknowledged;

    auto opened = DiskCache::Open(path, testing::CrashOptions());
    ASSERT_TRUE(opened.ok()) << "run " << run << ": " << opened.status().ToString();
    DiskCache& cache = *opened.value();
    ASSERT_EQ(cache.open_notice(), "") << "run " << run;
    auto verdict = cache.IntegrityCheck();
    ASSERT_TRUE(verdict.ok()) << verdict.status().ToString();
    ASSERT_EQ(verdict.value(), "ok") << "run " << run;
    // This run's acknowledged entries and the previous run's (its WAL was checkpointed or recovered
    // by this run); every run's are checked again at the end.
    for (int r = std::max(0, run - 1); r <= run; ++r) {
      for (int i : acknowledged[r]) {
        auto got = cache.Get(testing::CrashUrl(r, i));
        ASSERT_TRUE(got.ok()) << "run " << run << ", entry " << r << "/" << i << ": "
                              << got.status().ToString();
        ASSERT_EQ(got->bytes, testing::CrashPayload(r, i)) << "entry " << r << "/" << i;
      }
    }
  }
  {
    auto opened = DiskCache::Open(path, testing::CrashOptions());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    for (int r = 0; r < kRuns; ++r) {
      for (int i : acknowledged[r]) {
        auto got = opened.value()->Get(testing::CrashUrl(r, i));
        ASSERT_TRUE(got.ok()) << "entry " << r << "/" << i << ": " << got.status().ToString();
        ASSERT_EQ(got->bytes, testing::CrashPayload(r, i)) << "entry " << r << "/" << i;
      }
    }
  }
  EXPECT_EQ(killed_mid_run, kRuns) << "every child must have been killed before it finished";
  std::size_t total = 0;
  for (const auto& run : acknowledged) total += run.size();
  std::printf("crash test: %d SIGKILLs, %zu acknowledged entries, all byte-identical\n", kRuns,
              total);
  EXPECT_GT(total, static_cast<std::size_t>(kRuns));
}

}  // namespace
}  // namespace lethe::cache
