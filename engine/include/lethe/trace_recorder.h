// lethe/trace_recorder.h — memory over time as a Trace Event Format file that Perfetto and
// chrome://tracing open: counter series (bytes per cache, RSS, heap) and instant events
// (discards, pressure, window open/close).
//
// Any thread may record; Write() may run concurrently with recording (it copies under the lock).
// Events are kept in memory until written, a few hundred bytes each. The memory stays bounded over
// a session of any length: when max_events are held, every counter track keeps every other sample
// (instant events are all kept), so the trace still spans the whole session at half the counter
// resolution; the file says the stride in "otherData". Only instant events beyond max_events / 2
// (a session of pressure storms) make the oldest of them go. Timestamps come from the caller (a
// Clock), so simulated-time runs produce simulated-time traces.
//
// Process and threads: events carry this process's real id (getpid) unless a pid is given, so that
// two traces opened together in Perfetto (lethe-stress's baseline and Lethe runs, two sessions)
// stay two processes; and the id of the thread that recorded them (gettid), each thread named in
// the file by a thread_name record (its pthread name, or the one given to NameThread).
#ifndef LETHE_TRACE_RECORDER_H_
#define LETHE_TRACE_RECORDER_H_

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace lethe {

class TraceRecorder {
 public:
  using Micros = std::chrono::microseconds;

  static constexpr size_t kDefaultMaxEvents = 100000;  // about 30 MB at most
  static constexpr int kThisProcess = 0;  // the pid argument meaning getpid()

  explicit TraceRecorder(std::string process_name, int pid = kThisProcess,
                         size_t max_events = kDefaultMaxEvents);

  // Names the calling thread in the trace ("loop", "decode-1"), over its pthread name.
  void NameThread(const std::string& name);
  int pid() const { return pid_; }

  // One sample of a counter track: each (series, value) pair is a series of `name` (stacked in
  // chrome://tracing, so put unrelated quantities under different names).
  void Counter(const std::string& name, Micros timestamp,
               const std::vector<std::pair<std::string, int64_t>>& series);

  // A global instant event (a pressure event, a discard sweep), with optional string arguments.
  void Instant(const std::string& name, Micros timestamp,
               const std::vector<std::pair<std::string, std::string>>& args = {});

  size_t event_count() const;
  // Counter samples kept per sample recorded: 1, then 2, 4, ... after each thinning.
  uint64_t counter_stride() const;
  // Estimated heap bytes of the events held (for the memory report).
  size_t MemoryBytes() const;

  // Writes {"traceEvents":[...],"displayTimeUnit":"ms"}, whole or not at all (WriteFileAtomically).
  bool Write(const std::string& path, std::string* error) const;
  std::string ToJson() const;

 private:
  struct Event {
    char phase;  // 'C' counter, 'i' instant
    std::string name;
    int64_t timestamp_us;
    int tid;
    std::vector<std::pair<std::string, int64_t>> counters;
    std::vector<std::pair<std::string, std::string>> args;
  };
  static size_t BytesOf(const Event& event);
  // Caller holds mutex_. The calling thread's id, named in thread_names_ on its first event.
  int RecordingThread();
  // Caller holds mutex_, and has thinned if max_events_ were held. Appends `event`.
  void Add(Event event);
  // Caller holds mutex_. Keeps every other sample of each counter track (the first included), then,
  // if instants alone still fill more than half, drops the oldest instants down to a quarter.
  void Thin();

  std::string process_name_;
  int pid_;
  size_t max_events_;
  mutable std::mutex mutex_;
  std::vector<Event> events_;  // guarded by mutex_
  size_t bytes_ = 0;           // sum of BytesOf(events_), guarded by mutex_
  uint64_t counter_stride_ = 1;  // guarded by mutex_
  std::unordered_map<std::string, uint64_t> counter_samples_offered_;  // per track; guarded by mutex_
  std::unordered_map<int, std::string> thread_names_;  // by tid, every thread that recorded; mutex_
};

}  // namespace lethe

#endif  // LETHE_TRACE_RECORDER_H_
