// DecodePool: urgent jobs first, no duplicate keys, ahead jobs cancellable, completions delivered
// on the loop thread, inline mode without workers. Synchronised with latches, never with sleeps.
#include "lethe/decode_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "lethe/clock.h"
#include "lethe/event_loop.h"

namespace lethe {
namespace {

SurfaceKey Key(uint64_t id) { return SurfaceKey{id, 1, 1, 0}; }

class DecodePoolTest : public ::testing::Test {
 protected:
  ManualClock clock_;
  EventLoop loop_{clock_};
};

TEST_F(DecodePoolTest, WithoutWorkersJobsRunInlineWithTheirCompletion) {
  DecodePool pool(loop_, 0);
  std::vector<std::string> order;
  EXPECT_TRUE(pool.Submit(Key(1), true, [&]() -> std::function<void()> {
    order.push_back("work");
    return [&] { order.push_back("done"); };
  }));
  EXPECT_EQ(order, (std::vector<std::string>{"work", "done"}));
  EXPECT_EQ(pool.pending_count(), 0u);
}

TEST_F(DecodePoolTest, CompletionsRunOnTheLoopThreadAfterWaitIdle) {
  DecodePool pool(loop_, 2);
  std::atomic<int> worked{0};
  std::vector<std::thread::id> done_threads;
  for (uint64_t i = 1; i <= 8; ++i) {
    ASSERT_TRUE(pool.Submit(Key(i), true, [&]() -> std::function<void()> {
      ++worked;
      return [&] { done_threads.push_back(std::this_thread::get_id()); };
    }));
  }
  pool.WaitIdle();
  EXPECT_EQ(worked.load(), 8);
  EXPECT_TRUE(done_threads.empty());  // not before the loop runs
  loop_.RunUntilIdle();
  ASSERT_EQ(done_threads.size(), 8u);
  for (std::thread::id id : done_threads) EXPECT_EQ(id, std::this_thread::get_id());
}

TEST_F(DecodePoolTest, UrgentJobsOvertakeAheadJobsAndDuplicatesAreRefused) {
  DecodePool pool(loop_, 1);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::promise<void> started;
  std::mutex mutex;
  std::vector<uint64_t> order;
  auto job = [&](uint64_t id) {
    return [&, id]() -> std::function<void()> {
      std::lock_guard<std::mutex> lock(mutex);
      order.push_back(id);
      return nullptr;
    };
  };
  // Job 1 holds the only worker until released.
  ASSERT_TRUE(pool.Submit(Key(1), true, [&]() -> std::function<void()> {
    started.set_value();
    gate.wait();
    return nullptr;
  }));
  started.get_future().wait();
  ASSERT_TRUE(pool.Submit(Key(2), false, job(2)));
  ASSERT_TRUE(pool.Submit(Key(3), false, job(3)));
  ASSERT_TRUE(pool.Submit(Key(4), true, job(4)));
  EXPECT_FALSE(pool.Submit(Key(2), false, job(2)));  // already queued
  EXPECT_FALSE(pool.Submit(Key(3), true, job(3)));   // queued ahead: promoted to urgent
  EXPECT_TRUE(pool.IsPending(Key(1)));
  EXPECT_EQ(pool.pending_count(), 4u);
  release.set_value();
  pool.WaitIdle();
  EXPECT_EQ(order, (std::vector<uint64_t>{4, 3, 2}));
  EXPECT_FALSE(pool.IsPending(Key(2)));
}

TEST_F(DecodePoolTest, CancelDropsQueuedAheadJobsOnly) {
  DecodePool pool(loop_, 1);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::promise<void> started;
  std::atomic<int> ran{0};
  ASSERT_TRUE(pool.Submit(Key(1), true, [&]() -> std::function<void()> {
    started.set_value();
    gate.wait();
    return nullptr;
  }));
  started.get_future().wait();
  for (uint64_t i = 2; i <= 4; ++i) {
    ASSERT_TRUE(pool.Submit(Key(i), false, [&]() -> std::function<void()> {
      ++ran;
      return nullptr;
    }));
  }
  ASSERT_TRUE(pool.Submit(Key(5), true, [&]() -> std::function<void()> {
    ++ran;
    return nullptr;
  }));
  EXPECT_EQ(pool.CancelAheadJobs(), 3u);
  release.set_value();
  pool.WaitIdle();
  EXPECT_EQ(ran.load(), 1);
  EXPECT_TRUE(pool.Submit(Key(2), false, [] { return std::function<void()>(); }));  // not pending
  pool.WaitIdle();
}

}  // namespace
}  // namespace lethe
