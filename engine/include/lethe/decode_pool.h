// lethe/decode_pool.h — worker threads that run decode jobs off the loop thread.
//
// The engine submits a job per missing surface (what a draw needs now, or decode-ahead for what is
// about to scroll into view); a worker runs it — decoding and inserting into the SurfaceCache,
// which is thread-safe — and then the job's completion runs on the loop thread through
// EventLoop::PostTask (counters, the placeholder, a trace event, the next frame).
//
// Order: urgent jobs (visible now) before ahead jobs; FIFO within each. A key already queued or
// running is not queued twice (Submit returns false).
// With zero threads the pool runs each job inline inside Submit, completion included: what tests
// and simulated runs that want determinism use.
//
// Threads: Submit, WaitIdle, Cancel* and destruction on the loop thread; work on the workers.
// Destruction drops queued jobs and joins the workers after their current job (whose completion
// is then not posted).
#ifndef LETHE_DECODE_POOL_H_
#define LETHE_DECODE_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

#include "lethe/cached_surface.h"
#include "lethe/event_loop.h"

namespace lethe {

class DecodePool {
 public:
  // Runs on a worker; returns the completion to run on the loop thread (may be empty).
  using Work = std::function<std::function<void()>()>;

  DecodePool(EventLoop& loop, int thread_count);
  ~DecodePool();
  DecodePool(const DecodePool&) = delete;
  DecodePool& operator=(const DecodePool&) = delete;

  // False when `key` is already queued or running.
  bool Submit(const SurfaceKey& key, bool urgent, Work work);
  // Drops queued (not running) ahead jobs, e.g. when the viewport moved on. Returns how many.
  size_t CancelAheadJobs();
  // Blocks until nothing is queued or running; completions are posted to the loop by then.
  void WaitIdle();

  bool IsPending(const SurfaceKey& key) const;
  size_t pending_count() const;
  int thread_count() const { return static_cast<int>(threads_.size()); }

 private:
  struct Job {
    SurfaceKey key;
    Work work;
  };
  void WorkerMain();

  EventLoop& loop_;
  mutable std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable idle_;
  std::deque<Job> urgent_;  // guarded by mutex_
  std::deque<Job> ahead_;   // guarded by mutex_
  std::unordered_set<SurfaceKey, SurfaceKeyHash> pending_;  // queued or running; mutex_
  size_t running_count_ = 0;                                 // mutex_
  bool stopping_ = false;                                    // mutex_
  std::vector<std::thread> threads_;
};

}  // namespace lethe

#endif  // LETHE_DECODE_POOL_H_
