// lethe/event_loop.h — the engine's main-thread event loop: timers, cross-thread tasks, fd watches.
//
// What it is: one loop per engine, run on the main thread. It owns
//   - timers, one-shot and repeating (each cache's ExpirationTracker ticks on its own period);
//   - a queue of tasks that any thread may post (a decode worker, the allocator's low-memory hook);
//   - file-descriptor watches (PSI triggers, memory.events, the control socket).
// Nothing fires while nothing is due: an idle loop blocks in ppoll() with exactly the time left to
// the next timer (or forever when there is none), and PostTask wakes it through an eventfd.
//
// Time comes from a Clock. Two modes, chosen by the clock:
//   - real time (any clock but ManualClock, normally Clock::Steady()): waits really sleep;
//   - simulated time (ManualClock): a wait does not sleep; the loop polls its fds without blocking,
//     then moves the clock straight to the next timer (or the run's deadline) and tells the
//     allocator with lethe_decay_tick(now_ns), so that memory is also returned on simulated time.
//     Only when no timer is due before the deadline and the deadline is infinite does a simulated
//     loop block in ppoll(), waiting for a post or an fd (it cannot invent time to jump to).
//
// Threads: the loop is bound to the thread that constructs it. PostTask and Quit may be called from
// any thread; everything else only from the loop thread (checked with LETHE_DCHECK). Callbacks run
// on the loop thread, one at a time, and may call back into the loop (start or cancel timers, watch
// or unwatch fds, post tasks, Quit) but not start a nested Run*.
//
// Ownership: the loop owns its callbacks and its eventfd. It does not own watched fds: whoever
// watches an fd must unwatch it before closing it.
//
// Ordering guarantees: timers fire in order of due time, ties in the order they were started;
// posted tasks run in the order they were posted, those posted by a running task in a later batch
// (so a task that reposts itself cannot starve timers and fds).
#ifndef LETHE_EVENT_LOOP_H_
#define LETHE_EVENT_LOOP_H_

#include <poll.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lethe/alloc.h"
#include "lethe/clock.h"

namespace lethe {

class EventLoop {
 public:
  using Task = std::function<void()>;
  // revents as poll() reported them (POLLIN, POLLPRI, POLLERR, POLLHUP, ...).
  using FdCallback = std::function<void(short revents)>;
  using TimerId = uint64_t;  // 0 is never a valid id
  using WatchId = uint64_t;  // 0 is never a valid id
  using DecayTickFunction = void (*)(uint64_t now_ns);

  struct Options {
    // Simulated time only: called with the clock's nanoseconds each time the loop moves the clock.
    // Defaults to the allocator's lethe_decay_tick; nullptr turns it off.
    DecayTickFunction decay_tick = &lethe_decay_tick;
  };

  // Counters for tests and reports. A "wait" is one blocking ppoll() (real time) or one move of
  // the simulated clock. A wait is "spurious" when it ends with nothing to do: no fd event, no
  // task, no timer due, no deadline reached, no Quit. The loop is built so that this stays 0.
  struct Stats {
    uint64_t wait_count = 0;
    uint64_t spurious_wakeup_count = 0;
    uint64_t timer_fire_count = 0;
    uint64_t missed_tick_count = 0;  // periods a repeating timer skipped because the loop was late
    uint64_t task_count = 0;
    uint64_t fd_event_count = 0;
    uint64_t decay_tick_count = 0;
    // The timeout of the last wait, -1 for "forever". On simulated time: how far the clock moved.
    int64_t last_wait_timeout_ns = -1;
  };

  explicit EventLoop(Clock& clock);
  EventLoop(Clock& clock, Options options);
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  Clock& clock() const { return clock_; }
  bool simulated() const { return manual_clock_ != nullptr; }
  bool OnLoopThread() const { return std::this_thread::get_id() == owner_; }

  // ---- any thread ---------------------------------------------------------------------------
  // Runs `task` on the loop thread soon. Wakes a blocked loop. Never blocks for long: one mutex
  // and, when the queue was idle, one eventfd write.
  void PostTask(Task task);
  // Makes the innermost running Run* return after the callback in progress. Called while no Run*
  // is running, it makes the next one return at once.
  void Quit();

  // ---- loop thread --------------------------------------------------------------------------
  // Fires `task` once, `delay` from now (<= 0: at the next iteration).
  TimerId StartTimer(Clock::Duration delay, Task task);
  // Fires `task` every `period` (> 0), first at now + period. Due times stay on the grid
  // start + k x period; when the loop was late by whole periods it fires once and skips them.
  TimerId StartRepeatingTimer(Clock::Duration period, Task task);
  // True when the timer existed (a timer may cancel itself from its own callback).
  bool CancelTimer(TimerId id);
  size_t timer_count() const { return timers_.size(); }

  // Calls `callback(revents)` on the loop thread while `fd` has any of `events`; POLLERR, POLLHUP
  // and POLLNVAL are always reported. Level-triggered: the callback must consume the condition
  // (read the data, unwatch) or it is called again on the next iteration.
  WatchId WatchFd(int fd, short events, FdCallback callback);
  bool UnwatchFd(WatchId id);
  size_t watch_count() const { return watches_.size(); }

  // Runs what is ready now (tasks, due timers, ready fds) without waiting and without moving a
  // simulated clock; repeats while that produced more ready work.
  void RunUntilIdle();
  // Runs until `done()` is true (checked after each step of a turn: the batch of posted tasks, the
  // due timers, the fd callbacks), Quit, or the clock reaches `deadline`. Returns done().
  bool RunUntil(const std::function<bool()>& done,
                Clock::TimePoint deadline = Clock::TimePoint::max());
  // Runs until the clock reaches `deadline` or Quit. On simulated time, ends with Now()==deadline
  // unless quit.
  void RunUntilTime(Clock::TimePoint deadline);
  void RunFor(Clock::Duration duration);
  // Runs until Quit.
  void Run();

  // Time from now to the next timer; Duration::max() when there is none. What an idle wait uses.
  Clock::Duration TimeToNextTimer() const;

  const Stats& stats() const { return stats_; }

 private:
  struct Timer {
    Clock::TimePoint due;
    Clock::Duration period;  // zero for one-shot
    Task task;
  };
  struct Watch {
    int fd;
    short events;
    std::shared_ptr<FdCallback> callback;  // shared so a callback may unwatch itself
  };
  using TimerKey = std::pair<Clock::TimePoint, TimerId>;

  TimerId AddTimer(Clock::TimePoint due, Clock::Duration period, Task task);
  // One turn: tasks, due timers, then (when nothing ran) a wait until the next timer, `deadline`
  // or an event. Returns whether a Run* should stop (quit or deadline reached).
  bool RunOnce(Clock::TimePoint deadline, const std::function<bool()>* done);
  bool RunPostedTasks();
  bool FireDueTimers();
  // Polls the fds with `timeout_ns` (-1 forever) and dispatches their callbacks; returns the
  // number of fd events dispatched (the wake eventfd excluded) and sets *woken_by_post.
  size_t PollAndDispatch(int64_t timeout_ns, bool* woken_by_post);
  void Wait(Clock::TimePoint until, Clock::TimePoint deadline);
  void AdvanceSimulatedClock(Clock::TimePoint to);
  void TickAllocatorIfTimeMoved();
  bool HasPostedTasks();
  void Wake();

  Clock& clock_;
  ManualClock* manual_clock_;  // non-null on simulated time
  DecayTickFunction decay_tick_;
  std::thread::id owner_;
  uint64_t last_decay_tick_ns_;  // the clock's time at the last decay tick (or construction)
  int wake_fd_ = -1;
  bool running_ = false;

  // Timers, ordered by (due, id); id -> due for cancellation.
  std::map<TimerKey, Timer> timers_;
  std::unordered_map<TimerId, Clock::TimePoint> timer_due_;
  TimerId next_timer_id_ = 1;
  TimerId firing_timer_ = 0;
  bool firing_timer_cancelled_ = false;

  std::map<WatchId, Watch> watches_;
  WatchId next_watch_id_ = 1;
  std::vector<pollfd> poll_fds_;          // scratch, rebuilt each wait
  std::vector<WatchId> poll_watch_ids_;   // poll_fds_[i + 1] belongs to poll_watch_ids_[i]
  std::vector<std::pair<WatchId, short>> ready_scratch_;

  // Cross-thread state. Invariant (under mutex_): wake_pending_ == (the eventfd's counter > 0).
  std::mutex mutex_;
  std::deque<Task> posted_;
  bool wake_pending_ = false;
  std::atomic<bool> quit_{false};

  Stats stats_;
};

// Cancels its timer when destroyed: the usual way for an object to own a tick.
class ScopedTimer {
 public:
  ScopedTimer() = default;
  ScopedTimer(EventLoop& loop, EventLoop::TimerId id) : loop_(&loop), id_(id) {}
  ScopedTimer(ScopedTimer&& other) noexcept
      : loop_(std::exchange(other.loop_, nullptr)), id_(std::exchange(other.id_, 0)) {}
  ScopedTimer& operator=(ScopedTimer&& other) noexcept {
    if (this != &other) {
      Cancel();
      loop_ = std::exchange(other.loop_, nullptr);
      id_ = std::exchange(other.id_, 0);
    }
    return *this;
  }
  ~ScopedTimer() { Cancel(); }
  void Cancel() {
    if (loop_ != nullptr && id_ != 0) loop_->CancelTimer(id_);
    id_ = 0;
  }
  EventLoop::TimerId id() const { return id_; }

 private:
  EventLoop* loop_ = nullptr;
  EventLoop::TimerId id_ = 0;
};

}  // namespace lethe

#endif  // LETHE_EVENT_LOOP_H_
