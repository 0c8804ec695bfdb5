// The event loop: one turn = the batch of posted tasks, the due timers, then one ppoll() over the
// watched fds whose timeout is 0 when work is pending, else exactly the time to the next timer or
// the run's deadline (forever when neither). On simulated time the "wait" is a non-blocking poll
// followed by a jump of the ManualClock.
#include "lethe/event_loop.h"

#include <errno.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "lethe/check.h"

namespace lethe {

namespace {

using TimePoint = Clock::TimePoint;
using Duration = Clock::Duration;

// now + duration without overflowing past TimePoint::max().
TimePoint SaturatingAdd(TimePoint now, Duration duration) {
  if (duration >= TimePoint::max() - now) return TimePoint::max();
  return now + duration;
}

}  // namespace

EventLoop::EventLoop(Clock& clock) : EventLoop(clock, Options{}) {}

EventLoop::EventLoop(Clock& clock, Options options)
    : clock_(clock),
      manual_clock_(dynamic_cast<ManualClock*>(&clock)),
      decay_tick_(options.decay_tick),
      owner_(std::this_thread::get_id()),
      last_decay_tick_ns_(static_cast<uint64_t>(clock.Now().time_since_epoch().count())) {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  // Without its eventfd the loop could not be woken from another thread: nothing sensible is left
  // to run, and running out of fds this early is a broken process.
  LETHE_CHECK(wake_fd_ >= 0, "EventLoop: eventfd() failed");
}

EventLoop::~EventLoop() {
  LETHE_DCHECK(!running_, "EventLoop destroyed while running");
  { std::lock_guard<std::mutex> wait_for_quit(mutex_); }  // see Quit()
  close(wake_fd_);
}

// ---- cross-thread ---------------------------------------------------------------------------

void EventLoop::Wake() {
  // Caller holds mutex_. Writing under the lock keeps wake_pending_ == (counter > 0), so a wake
  // never outlives the work it announced and an idle wait never ends for nothing.
  if (wake_pending_) return;
  uint64_t one = 1;
  ssize_t written;
  do {
    written = write(wake_fd_, &one, sizeof(one));
  } while (written < 0 && errno == EINTR);
  wake_pending_ = written == static_cast<ssize_t>(sizeof(one));
}

void EventLoop::PostTask(Task task) {
  std::lock_guard<std::mutex> lock(mutex_);
  posted_.push_back(std::move(task));
  Wake();
}

void EventLoop::Quit() {
  // The flag is set under the lock, and the destructor takes the lock: a loop that sees the flag,
  // returns and is destroyed at once still waits for this call to leave the mutex.
  std::lock_guard<std::mutex> lock(mutex_);
  quit_.store(true, std::memory_order_release);
  Wake();
}

bool EventLoop::HasPostedTasks() {
  std::lock_guard<std::mutex> lock(mutex_);
  return !posted_.empty();
}

bool EventLoop::RunPostedTasks() {
  std::deque<Task> batch;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    batch.swap(posted_);
    if (wake_pending_) {
      uint64_t count = 0;
      ssize_t got;
      do {
        got = read(wake_fd_, &count, sizeof(count));
      } while (got < 0 && errno == EINTR);
      wake_pending_ = false;
    }
  }
  for (Task& task : batch) {
    task();
    ++stats_.task_count;
  }
  return !batch.empty();
}

// ---- timers ---------------------------------------------------------------------------------

EventLoop::TimerId EventLoop::AddTimer(TimePoint due, Duration period, Task task) {
  LETHE_DCHECK(OnLoopThread(), "timers belong to the loop thread");
  TimerId id = next_timer_id_++;
  timers_.emplace(TimerKey{due, id}, Timer{due, period, std::move(task)});
  timer_due_.emplace(id, due);
  return id;
}

EventLoop::TimerId EventLoop::StartTimer(Duration delay, Task task) {
  TimePoint now = clock_.Now();
  return AddTimer(delay.count() > 0 ? SaturatingAdd(now, delay) : now, Duration::zero(),
                  std::move(task));
}

EventLoop::TimerId EventLoop::StartRepeatingTimer(Duration period, Task task) {
  LETHE_CHECK(period.count() > 0, "StartRepeatingTimer: the period must be positive");
  return AddTimer(SaturatingAdd(clock_.Now(), period), period, std::move(task));
}

bool EventLoop::CancelTimer(TimerId id) {
  LETHE_DCHECK(OnLoopThread(), "timers belong to the loop thread");
  auto found = timer_due_.find(id);
  if (found == timer_due_.end()) return false;
  if (id == firing_timer_) {
    // A repeating timer cancelling itself: it is out of timers_ while it runs; just do not re-arm.
    firing_timer_cancelled_ = true;
  } else {
    timers_.erase(TimerKey{found->second, id});
  }
  timer_due_.erase(found);
  return true;
}

Duration EventLoop::TimeToNextTimer() const {
  if (timers_.empty()) return Duration::max();
  Duration left = timers_.begin()->first.first - clock_.Now();
  return std::max(left, Duration::zero());
}

bool EventLoop::FireDueTimers() {
  // `now` is read once: timers that become due while this pass runs wait for the next turn, so a
  // pass is bounded even on real time.
  const TimePoint now = clock_.Now();
  bool fired = false;
  while (!timers_.empty() && !quit_.load(std::memory_order_acquire)) {
    auto first = timers_.begin();
    if (first->first.first > now) break;
    const TimerId id = first->first.second;
    Timer timer = std::move(first->second);
    timers_.erase(first);
    if (timer.period == Duration::zero()) timer_due_.erase(id);

    firing_timer_ = id;
    firing_timer_cancelled_ = false;
    timer.task();
    firing_timer_ = 0;
    ++stats_.timer_fire_count;
    fired = true;

    if (timer.period != Duration::zero() && !firing_timer_cancelled_) {
      // Stay on the grid due + k x period; a late loop fires once for all the periods it missed.
      TimePoint next = timer.due + timer.period;
      if (next <= now) {
        auto behind = static_cast<uint64_t>((now - timer.due) / timer.period);
        stats_.missed_tick_count += behind;
        next = timer.due + timer.period * static_cast<Duration::rep>(behind + 1);
      }
      timer.due = next;
      timers_.emplace(TimerKey{next, id}, std::move(timer));
      timer_due_[id] = next;
    }
  }
  return fired;
}

// ---- fds ------------------------------------------------------------------------------------

EventLoop::WatchId EventLoop::WatchFd(int fd, short events, FdCallback callback) {
  LETHE_DCHECK(OnLoopThread(), "fd watches belong to the loop thread");
  LETHE_CHECK(fd >= 0, "WatchFd: invalid fd");
  WatchId id = next_watch_id_++;
  watches_.emplace(id, Watch{fd, events, std::make_shared<FdCallback>(std::move(callback))});
  return id;
}

bool EventLoop::UnwatchFd(WatchId id) {
  LETHE_DCHECK(OnLoopThread(), "fd watches belong to the loop thread");
  return watches_.erase(id) != 0;
}

size_t EventLoop::PollAndDispatch(int64_t timeout_ns, bool* woken_by_post) {
  poll_fds_.clear();
  poll_watch_ids_.clear();
  poll_fds_.push_back(pollfd{wake_fd_, POLLIN, 0});
  for (const auto& [id, watch] : watches_) {
    poll_fds_.push_back(pollfd{watch.fd, watch.events, 0});
    poll_watch_ids_.push_back(id);
  }
  timespec timeout{};
  timespec* timeout_pointer = nullptr;
  if (timeout_ns >= 0) {
    timeout.tv_sec = static_cast<time_t>(timeout_ns / 1000000000);
    timeout.tv_nsec = static_cast<long>(timeout_ns % 1000000000);
    timeout_pointer = &timeout;
  }
  int ready = ppoll(poll_fds_.data(), poll_fds_.size(), timeout_pointer, nullptr);
  *woken_by_post = false;
  if (ready <= 0) return 0;  // timeout, or EINTR: the caller's turn simply goes around again
  *woken_by_post = (poll_fds_[0].revents & POLLIN) != 0;

  // Copy out first: callbacks may watch and unwatch, which must not disturb this dispatch. (The
  // scratch vector is a member: no nested Run* can re-enter here.)
  std::vector<std::pair<WatchId, short>>& events = ready_scratch_;
  events.clear();
  for (size_t i = 1; i < poll_fds_.size(); ++i) {
    if (poll_fds_[i].revents != 0) events.emplace_back(poll_watch_ids_[i - 1], poll_fds_[i].revents);
  }
  size_t dispatched = 0;
  for (const auto& [id, revents] : events) {
    if (quit_.load(std::memory_order_acquire)) break;
    auto found = watches_.find(id);
    if (found == watches_.end()) continue;  // unwatched by an earlier callback of this batch
    std::shared_ptr<FdCallback> callback = found->second.callback;
    (*callback)(revents);
    ++stats_.fd_event_count;
    ++dispatched;
  }
  return dispatched;
}

// ---- running --------------------------------------------------------------------------------

void EventLoop::AdvanceSimulatedClock(TimePoint to) {
  manual_clock_->Set(to);
  TickAllocatorIfTimeMoved();
}

void EventLoop::TickAllocatorIfTimeMoved() {
  // Also catches a clock moved by hand (ManualClock::Advance between runs), so the allocator's
  // decay always sees the time the caches see.
  if (!simulated() || decay_tick_ == nullptr) return;
  const auto now_ns = static_cast<uint64_t>(clock_.Now().time_since_epoch().count());
  if (now_ns == last_decay_tick_ns_) return;
  last_decay_tick_ns_ = now_ns;
  decay_tick_(now_ns);
  ++stats_.decay_tick_count;
}

void EventLoop::Wait(TimePoint until, TimePoint deadline) {
  const TimePoint now = clock_.Now();
  bool woken_by_post = false;
  if (simulated() && until != TimePoint::max()) {
    // Simulated time never sleeps: see what the fds have now, and only when nothing arrived jump
    // the clock to the next thing due.
    if (PollAndDispatch(0, &woken_by_post) != 0 || woken_by_post) return;
    ++stats_.wait_count;
    stats_.last_wait_timeout_ns = (until - now).count();
    AdvanceSimulatedClock(until);
    return;
  }
  const int64_t timeout_ns = until == TimePoint::max() ? -1 : (until - now).count();
  ++stats_.wait_count;
  stats_.last_wait_timeout_ns = timeout_ns;
  size_t events = PollAndDispatch(timeout_ns, &woken_by_post);
  const TimePoint after = clock_.Now();
  const bool timer_due = !timers_.empty() && timers_.begin()->first.first <= after;
  if (events == 0 && !woken_by_post && !timer_due && after < deadline &&
      !quit_.load(std::memory_order_acquire)) {
    ++stats_.spurious_wakeup_count;
  }
}

bool EventLoop::RunOnce(TimePoint deadline, const std::function<bool()>* done) {
  auto quit_or_done = [&] {
    return quit_.load(std::memory_order_acquire) || (done != nullptr && (*done)());
  };
  // Timers due exactly at the deadline still fire: the deadline is checked after them.
  auto should_stop = [&] { return quit_or_done() || clock_.Now() >= deadline; };
  TickAllocatorIfTimeMoved();
  bool worked = RunPostedTasks();
  if (quit_or_done()) return true;
  worked |= FireDueTimers();
  if (should_stop()) return true;
  if (worked || HasPostedTasks()) {
    // Work may have made fds ready or posted more; look at the fds without waiting.
    bool woken_by_post = false;
    PollAndDispatch(0, &woken_by_post);
  } else {
    TimePoint next_timer =
        timers_.empty() ? TimePoint::max() : timers_.begin()->first.first;
    Wait(std::min(next_timer, deadline), deadline);
  }
  // Not the deadline: what became due at it gets the next turn, which then stops.
  return quit_or_done();
}

bool EventLoop::RunUntil(const std::function<bool()>& done, TimePoint deadline) {
  LETHE_DCHECK(OnLoopThread(), "Run* belongs to the loop thread");
  LETHE_CHECK(!running_, "EventLoop: nested Run* is not supported");
  running_ = true;
  while (!RunOnce(deadline, &done)) {
  }
  running_ = false;
  quit_.store(false, std::memory_order_release);
  return done();
}

void EventLoop::RunUntilTime(TimePoint deadline) {
  RunUntil([] { return false; }, deadline);
}

void EventLoop::RunFor(Duration duration) {
  RunUntilTime(SaturatingAdd(clock_.Now(), duration));
}

void EventLoop::Run() { RunUntilTime(TimePoint::max()); }

void EventLoop::RunUntilIdle() {
  LETHE_DCHECK(OnLoopThread(), "Run* belongs to the loop thread");
  LETHE_CHECK(!running_, "EventLoop: nested Run* is not supported");
  running_ = true;
  bool worked = true;
  while (worked && !quit_.load(std::memory_order_acquire)) {
    TickAllocatorIfTimeMoved();
    worked = RunPostedTasks();
    worked |= FireDueTimers();
    bool woken_by_post = false;
    worked |= PollAndDispatch(0, &woken_by_post) != 0;
    worked |= woken_by_post;
  }
  running_ = false;
  quit_.store(false, std::memory_order_release);
}

}  // namespace lethe
