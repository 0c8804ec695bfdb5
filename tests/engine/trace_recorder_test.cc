#include "lethe/trace_recorder.h"

#include <gtest/gtest.h>

#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <map>
#include <thread>

namespace lethe {
namespace {

using std::chrono::microseconds;

TEST(TraceRecorder, WritesTraceEventFormatThatPerfettoReads) {
  TraceRecorder trace("lethe-test", 7);
  trace.Counter("images", microseconds(1000), {{"decoded", 123}, {"encoded", 45}});
  trace.Instant("pressure", microseconds(2500), {{"level", "critical"}});
  nlohmann::json json = nlohmann::json::parse(trace.ToJson());
  EXPECT_EQ(json["displayTimeUnit"], "ms");
  const auto& events = json["traceEvents"];
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0]["ph"], "M");
  EXPECT_EQ(events[0]["name"], "process_name");
  EXPECT_EQ(events[0]["args"]["name"], "lethe-test");
  EXPECT_EQ(events[1]["ph"], "M");
  EXPECT_EQ(events[1]["name"], "thread_name");
  EXPECT_EQ(events[2]["ph"], "C");
  EXPECT_EQ(events[2]["ts"], 1000);
  EXPECT_EQ(events[2]["pid"], 7);
  EXPECT_EQ(events[2]["args"]["decoded"], 123);
  EXPECT_EQ(events[2]["args"]["encoded"], 45);
  EXPECT_EQ(events[3]["ph"], "i");
  EXPECT_EQ(events[3]["s"], "g");
  EXPECT_EQ(events[3]["args"]["level"], "critical");
}

TEST(TraceRecorder, RecordsFromManyThreads) {
  TraceRecorder trace("lethe-test");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&trace, t] {
      for (int i = 0; i < 250; ++i) trace.Counter("c" + std::to_string(t), microseconds(i), {{"v", i}});
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(trace.event_count(), 1000u);
  // The process name, a name per recording thread, the samples.
  EXPECT_EQ(nlohmann::json::parse(trace.ToJson())["traceEvents"].size(), 1005u);
}

int ThreadId() { return static_cast<int>(syscall(SYS_gettid)); }

TEST(TraceRecorder, UsesTheRealProcessIdAndNamesEachThreadThatRecords) {
  TraceRecorder trace("lethe-test");
  EXPECT_EQ(trace.pid(), static_cast<int>(getpid()));
  trace.NameThread("loop");
  trace.Counter("heap", microseconds(1), {{"allocated", 1}});
  int worker_tid = 0;
  std::thread([&] {
    pthread_setname_np(pthread_self(), "decode-1");
    worker_tid = ThreadId();
    trace.Instant("decoded", microseconds(2));
  }).join();
  nlohmann::json events = nlohmann::json::parse(trace.ToJson())["traceEvents"];
  std::map<int, std::string> names;
  std::map<std::string, int> event_tids;
  for (const auto& event : events) {
    EXPECT_EQ(event["pid"], getpid()) << event.dump();
    if (event["name"] == "thread_name") names[event["tid"]] = event["args"]["name"];
    if (event["ph"] != "M") event_tids[event["name"]] = event["tid"];
  }
  EXPECT_EQ(names, (std::map<int, std::string>{{ThreadId(), "loop"}, {worker_tid, "decode-1"}}));
  EXPECT_EQ(event_tids["heap"], ThreadId());
  EXPECT_EQ(event_tids["decoded"], worker_tid);
}

// Two processes' traces (lethe-stress's two runs) carry different pids: opened together in
// Perfetto they are two processes, not one.
TEST(TraceRecorder, TracesOfTwoProcessesDoNotShareAProcessId) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    TraceRecorder trace("child");
    trace.Counter("heap", microseconds(1), {{"allocated", 1}});
    const std::string json = trace.ToJson();
    ssize_t ignored = write(pipe_fds[1], json.data(), json.size());
    (void)ignored;
    _exit(0);
  }
  close(pipe_fds[1]);
  std::string text;
  char buffer[4096];
  ssize_t got;
  while ((got = read(pipe_fds[0], buffer, sizeof(buffer))) > 0) text.append(buffer, static_cast<size_t>(got));
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  TraceRecorder mine("parent");
  mine.Counter("heap", microseconds(1), {{"allocated", 1}});
  const auto theirs = nlohmann::json::parse(text)["traceEvents"].back();
  const auto ours = nlohmann::json::parse(mine.ToJson())["traceEvents"].back();
  EXPECT_EQ(theirs["pid"], child);
  EXPECT_NE(theirs["pid"], ours["pid"]);
}

TEST(TraceRecorder, StaysBoundedOverALongSessionByThinningCounterSamples) {
  TraceRecorder trace("lethe-test", 1, 100);
  for (int t = 0; t < 1000; ++t) {
    trace.Counter("images", microseconds(t), {{"decoded", t}});
    trace.Counter("heap", microseconds(t), {{"allocated", 2 * t}});
    if (t % 200 == 100) trace.Instant("pressure", microseconds(t), {{"level", "critical"}});
  }
  EXPECT_LE(trace.event_count(), 100u);
  EXPECT_GE(trace.counter_stride(), 32u);
  nlohmann::json json = nlohmann::json::parse(trace.ToJson());
  EXPECT_EQ(json["otherData"]["lethe_counter_sample_stride"], trace.counter_stride());
  std::map<std::string, std::vector<int64_t>> samples;
  int instants = 0;
  for (const auto& event : json["traceEvents"]) {
    if (event["ph"] == "C") samples[event["name"]].push_back(event["ts"]);
    if (event["ph"] == "i") ++instants;
  }
  EXPECT_EQ(instants, 5);  // every instant event is kept
  for (const auto& [name, times] : samples) {
    ASSERT_GE(times.size(), 10u) << name;
    EXPECT_EQ(times.front(), 0) << name << ": the session's start is kept";
    EXPECT_GE(times.back(), 999 - static_cast<int64_t>(trace.counter_stride())) << name;
    EXPECT_TRUE(std::is_sorted(times.begin(), times.end())) << name;
  }
  // The two tracks were thinned alike.
  EXPECT_EQ(samples["images"], samples["heap"]);
}

TEST(TraceRecorder, AStormOfInstantsDropsTheOldestOnes) {
  TraceRecorder trace("lethe-test", 1, 20);
  for (int t = 0; t < 100; ++t) trace.Instant("pressure", microseconds(t));
  EXPECT_LE(trace.event_count(), 20u);
  nlohmann::json events = nlohmann::json::parse(trace.ToJson())["traceEvents"];
  EXPECT_EQ(events.back()["ts"], 99);  // the newest is there
  EXPECT_GT(events[2]["ts"], 0);       // the oldest went (after the process and thread names)
}

TEST(TraceRecorder, MemoryBytesFollowTheEventsHeld) {
  TraceRecorder small("lethe-test", 1, 50);
  TraceRecorder large("lethe-test", 1, 5000);
  for (int t = 0; t < 2000; ++t) {
    small.Counter("images", microseconds(t), {{"decoded", t}});
    large.Counter("images", microseconds(t), {{"decoded", t}});
  }
  EXPECT_GT(large.MemoryBytes(), 2000 * sizeof(int64_t));
  EXPECT_LT(small.MemoryBytes() * 10, large.MemoryBytes());
}

TEST(TraceRecorder, ReportsAnUnwritablePath) {
  TraceRecorder trace("lethe-test");
  std::string error;
  EXPECT_FALSE(trace.Write("/nonexistent-dir/trace.json", &error));
  EXPECT_EQ(error.rfind("/nonexistent-dir/trace.json: cannot create", 0), 0u) << error;
}

}  // namespace
}  // namespace lethe
