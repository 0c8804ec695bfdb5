// lethe/trace_recorder.h — memory over time as a Trace Event Format file that Perfetto and
// chrome://tracing open: counter series (bytes per cache, RSS, heap) and instant events
// (discards, pressure, window open/close).
//
// Any thread may record; Write() may run concurrently with recording (it copies under the lock).
// Events are kept in memory until written, about 100 bytes each: a run that samples every
// simulated second for an hour keeps a few MB. Timestamps come from the caller (a Clock), so
// simulated-time runs produce simulated-time traces.
#ifndef LETHE_TRACE_RECORDER_H_
#define LETHE_TRACE_RECORDER_H_

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace lethe {

class TraceRecorder {
 public:
  using Micros = std::chrono::microseconds;

  explicit TraceRecorder(std::string process_name, int pid = 1);

  // One sample of a counter track: each (series, value) pair is a series of `name` (stacked in
  // chrome://tracing, so put unrelated quantities under different names).
  void Counter(const std::string& name, Micros timestamp,
               const std::vector<std::pair<std::string, int64_t>>& series);

  // A global instant event (a pressure event, a discard sweep), with optional string arguments.
  void Instant(const std::string& name, Micros timestamp,
               const std::vector<std::pair<std::string, std::string>>& args = {});

  size_t event_count() const;

  // Writes {"traceEvents":[...],"displayTimeUnit":"ms"}, whole or not at all (WriteFileAtomically).
  bool Write(const std::string& path, std::string* error) const;
  std::string ToJson() const;

 private:
  struct Event {
    char phase;  // 'C' counter, 'i' instant
    std::string name;
    int64_t timestamp_us;
    std::vector<std::pair<std::string, int64_t>> counters;
    std::vector<std::pair<std::string, std::string>> args;
  };
  std::string process_name_;
  int pid_;
  mutable std::mutex mutex_;
  std::vector<Event> events_;  // guarded by mutex_
};

}  // namespace lethe

#endif  // LETHE_TRACE_RECORDER_H_
