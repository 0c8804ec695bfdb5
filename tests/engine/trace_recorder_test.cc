#include "lethe/trace_recorder.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
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
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0]["ph"], "M");
  EXPECT_EQ(events[0]["name"], "process_name");
  EXPECT_EQ(events[0]["args"]["name"], "lethe-test");
  EXPECT_EQ(events[1]["ph"], "C");
  EXPECT_EQ(events[1]["ts"], 1000);
  EXPECT_EQ(events[1]["pid"], 7);
  EXPECT_EQ(events[1]["args"]["decoded"], 123);
  EXPECT_EQ(events[1]["args"]["encoded"], 45);
  EXPECT_EQ(events[2]["ph"], "i");
  EXPECT_EQ(events[2]["s"], "g");
  EXPECT_EQ(events[2]["args"]["level"], "critical");
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
  EXPECT_EQ(nlohmann::json::parse(trace.ToJson())["traceEvents"].size(), 1001u);
}

TEST(TraceRecorder, ReportsAnUnwritablePath) {
  TraceRecorder trace("lethe-test");
  std::string error;
  EXPECT_FALSE(trace.Write("/nonexistent-dir/trace.json", &error));
  EXPECT_EQ(error.rfind("/nonexistent-dir/trace.json: cannot create", 0), 0u) << error;
}

}  // namespace
}  // namespace lethe
