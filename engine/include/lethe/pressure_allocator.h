// lethe/pressure_allocator.h — memory pressure from the allocator's low-memory callback.
//
// When the OS refuses memory, the allocator (lethe/alloc.h) calls its low-memory callback on the
// allocating thread — any thread — with no allocator lock held, then retries the allocation. This
// source answers in two steps:
//   1. synchronously, on that thread: the embedder's FlushHook, which should free what it can
//      cheaply and at once (it runs while an allocation waits on it);
//   2. asynchronously: a critical dispatch on the loop thread, where the caches flush the rest.
// Step 2 must not assume memory is available, so it does not allocate: the callback bumps an
// atomic counter and writes to an eventfd created at Start(); the loop sees the eventfd and
// dispatches once for however many callbacks arrived meanwhile.
//
// The allocator has one callback slot for the process: one source may be started at a time (a
// second Start() is reported and refused). The destructor clears the slot.
//
// Threads: construct, Start and destroy on the loop thread; OnLowMemory on any thread.
#ifndef LETHE_PRESSURE_ALLOCATOR_H_
#define LETHE_PRESSURE_ALLOCATOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "lethe/pressure_source.h"

namespace lethe {

class AllocatorPressureSource final : public PressureSource {
 public:
  // Runs on the allocating thread; `request_bytes` is the size that failed. Must not throw.
  using FlushHook = std::function<void(size_t request_bytes)>;

  AllocatorPressureSource(PressureContext context, FlushHook flush);
  ~AllocatorPressureSource() override;

  bool Start() override;

  // What the allocator calls (exposed so tests can call it the way the allocator does).
  static void OnLowMemory(size_t request_bytes, void* self) noexcept;

  uint64_t callback_count() const { return callback_count_.load(std::memory_order_relaxed); }
  size_t last_request_bytes() const { return last_request_bytes_.load(std::memory_order_relaxed); }

 private:
  void OnEventFd();

  FlushHook flush_;
  int event_fd_ = -1;
  EventLoop::WatchId watch_ = 0;
  bool registered_ = false;
  std::atomic<uint64_t> callback_count_{0};
  std::atomic<size_t> last_request_bytes_{0};
};

}  // namespace lethe

#endif  // LETHE_PRESSURE_ALLOCATOR_H_
