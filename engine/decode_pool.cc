#include "lethe/decode_pool.h"

#include <utility>

#include "lethe/check.h"

namespace lethe {

DecodePool::DecodePool(EventLoop& loop, int thread_count) : loop_(loop) {
  for (int i = 0; i < thread_count; ++i) threads_.emplace_back([this] { WorkerMain(); });
}

DecodePool::~DecodePool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    urgent_.clear();
    ahead_.clear();
  }
  work_ready_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

bool DecodePool::Submit(const SurfaceKey& key, bool urgent, Work work) {
  if (threads_.empty()) {
    // Inline: the key cannot be pending (a job runs to completion here), unless a job submits
    // itself recursively, which the engine never does.
    std::function<void()> done = work();
    if (done) done();
    return true;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!pending_.insert(key).second) {
      // An ahead job that became urgent moves to the urgent queue.
      if (urgent) {
        for (auto it = ahead_.begin(); it != ahead_.end(); ++it) {
          if (it->key == key) {
            urgent_.push_back(std::move(*it));
            ahead_.erase(it);
            break;
          }
        }
      }
      return false;
    }
    (urgent ? urgent_ : ahead_).push_back(Job{key, std::move(work)});
  }
  work_ready_.notify_one();
  return true;
}

size_t DecodePool::CancelAheadJobs() {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t count = ahead_.size();
  for (const Job& job : ahead_) pending_.erase(job.key);
  ahead_.clear();
  if (count > 0 && urgent_.empty() && running_count_ == 0) idle_.notify_all();
  return count;
}

void DecodePool::WaitIdle() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return urgent_.empty() && ahead_.empty() && running_count_ == 0; });
}

bool DecodePool::IsPending(const SurfaceKey& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pending_.count(key) != 0;
}

size_t DecodePool::pending_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pending_.size();
}

void DecodePool::WorkerMain() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [this] { return stopping_ || !urgent_.empty() || !ahead_.empty(); });
    if (stopping_) return;
    std::deque<Job>& queue = !urgent_.empty() ? urgent_ : ahead_;
    Job job = std::move(queue.front());
    queue.pop_front();
    ++running_count_;
    lock.unlock();
    std::function<void()> done = job.work();
    job.work = nullptr;  // release what the job captured before reporting idle
    lock.lock();
    // Posted before the key leaves pending_ and before WaitIdle can return, so that a WaitIdle
    // followed by RunUntilIdle delivers every completion.
    if (done && !stopping_) loop_.PostTask(std::move(done));
    pending_.erase(job.key);
    --running_count_;
    if (urgent_.empty() && ahead_.empty() && running_count_ == 0) idle_.notify_all();
  }
}

}  // namespace lethe
