#include "lethe/pressure_allocator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "engine_test_util.h"
#include "lethe/alloc.h"

// A request of 2^47 bytes cannot be served on x86-64 (it is the whole user address space); under
// ASan or TSan the allocator must then return NULL, as the real one does, rather than abort.
extern "C" const char* __asan_default_options();
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
extern "C" const char* __tsan_default_options();
extern "C" const char* __tsan_default_options() { return "allocator_may_return_null=1"; }

namespace lethe {
namespace {

using testing::PressureEvent;
using testing::Recorder;

class AllocatorSourceTest : public ::testing::Test {
 protected:
  AllocatorSourceTest() : loop_(clock_, testing::NoDecayTick()) {}
  ManualClock clock_;
  EventLoop loop_;
  Recorder recorder_;
};

TEST_F(AllocatorSourceTest, FlushesSynchronouslyThenDispatchesCriticalOnTheLoop) {
  std::atomic<size_t> flushed_for{0};
  std::thread::id flush_thread;
  AllocatorPressureSource source(recorder_.Context(loop_), [&](size_t request_bytes) {
    flushed_for = request_bytes;
    flush_thread = std::this_thread::get_id();
  });
  ASSERT_TRUE(source.Start());

  std::thread allocating([&] { AllocatorPressureSource::OnLowMemory(4096, &source); });
  allocating.join();
  // The hook ran at once, on the allocating thread; the dispatch waits for the loop.
  EXPECT_EQ(flushed_for.load(), 4096u);
  EXPECT_NE(flush_thread, std::this_thread::get_id());
  EXPECT_TRUE(recorder_.events.empty());
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder_.events,
            (std::vector<PressureEvent>{{MemoryPressureLevel::kCritical, "allocator"}}));
  EXPECT_EQ(source.callback_count(), 1u);
  EXPECT_EQ(source.last_request_bytes(), 4096u);
}

TEST_F(AllocatorSourceTest, ManyCallbacksBeforeTheLoopRunsMakeOneDispatch) {
  AllocatorPressureSource source(recorder_.Context(loop_), nullptr);
  ASSERT_TRUE(source.Start());
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 100; ++j) AllocatorPressureSource::OnLowMemory(64, &source);
    });
  }
  for (std::thread& thread : threads) thread.join();
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder_.events.size(), 1u);
  EXPECT_EQ(source.callback_count(), 400u);
}

TEST_F(AllocatorSourceTest, AThrowingHookStillLeadsToTheCriticalDispatch) {
  AllocatorPressureSource source(recorder_.Context(loop_),
                                 [](size_t) { throw std::runtime_error("hook failed"); });
  ASSERT_TRUE(source.Start());
  AllocatorPressureSource::OnLowMemory(1, &source);
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder_.events.size(), 1u);
}

TEST_F(AllocatorSourceTest, OnlyOneSourceHoldsTheAllocatorsCallback) {
  AllocatorPressureSource first(recorder_.Context(loop_), nullptr);
  ASSERT_TRUE(first.Start());
  {
    AllocatorPressureSource second(recorder_.Context(loop_), nullptr);
    EXPECT_FALSE(second.Start());
    EXPECT_EQ(recorder_.LogCount("already belongs to another source"), 1u) << recorder_.AllLog();
  }
  EXPECT_TRUE(first.active());
}

TEST_F(AllocatorSourceTest, TheSlotIsFreeAgainAfterTheSourceIsDestroyed) {
  {
    AllocatorPressureSource first(recorder_.Context(loop_), nullptr);
    ASSERT_TRUE(first.Start());
  }
  AllocatorPressureSource second(recorder_.Context(loop_), nullptr);
  EXPECT_TRUE(second.Start());
  EXPECT_EQ(loop_.watch_count(), 1u);
}

TEST_F(AllocatorSourceTest, ARefusedAllocationReachesTheSourceThroughTheAllocator) {
  size_t flushed_for = 0;
  AllocatorPressureSource source(recorder_.Context(loop_),
                                 [&](size_t request_bytes) { flushed_for = request_bytes; });
  ASSERT_TRUE(source.Start());
  lethe_stats_t before;
  lethe_stats(&before);
  constexpr size_t kImpossible = size_t{1} << 47;
  void* block = lethe_malloc(kImpossible);
  lethe_stats_t after;
  lethe_stats(&after);
  if (block != nullptr) {
    lethe_free(block);
    GTEST_SKIP() << "this allocator served 128 TiB";
  }
  if (after.low_memory_callbacks == before.low_memory_callbacks) {
    GTEST_SKIP() << "this allocator refused the size without asking the OS (no callback)";
  }
  EXPECT_EQ(flushed_for, kImpossible);
  loop_.RunUntilIdle();
  EXPECT_EQ(recorder_.events,
            (std::vector<PressureEvent>{{MemoryPressureLevel::kCritical, "allocator"}}));
}

}  // namespace
}  // namespace lethe
