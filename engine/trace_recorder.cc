#include "lethe/trace_recorder.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "lethe/atomic_file.h"

namespace lethe {

namespace {

int ThisThreadId() {
  thread_local const int tid = static_cast<int>(syscall(SYS_gettid));
  return tid;
}

std::string ThisThreadName(int tid) {
  char name[16] = {};  // the kernel's limit, with the NUL
  if (pthread_getname_np(pthread_self(), name, sizeof(name)) == 0 && name[0] != '\0') return name;
  return "thread " + std::to_string(tid);
}

}  // namespace

TraceRecorder::TraceRecorder(std::string process_name, int pid, size_t max_events)
    : process_name_(std::move(process_name)),
      pid_(pid == kThisProcess ? static_cast<int>(getpid()) : pid),
      max_events_(std::max<size_t>(max_events, 4)) {}

void TraceRecorder::NameThread(const std::string& name) {
  std::lock_guard lock(mutex_);
  thread_names_[ThisThreadId()] = name;
}

int TraceRecorder::RecordingThread() {
  const int tid = ThisThreadId();
  if (thread_names_.count(tid) == 0) thread_names_.emplace(tid, ThisThreadName(tid));
  return tid;
}

void TraceRecorder::Counter(const std::string& name, Micros timestamp,
                            const std::vector<std::pair<std::string, int64_t>>& series) {
  std::lock_guard lock(mutex_);
  if (events_.size() >= max_events_) Thin();  // first: the stride may double
  // Sample n of a track is kept when n is a multiple of the stride: after a thinning, new samples
  // come at the same resolution as the old ones kept.
  uint64_t& offered = counter_samples_offered_[name];
  const bool keep = offered % counter_stride_ == 0;
  ++offered;
  if (keep) Add(Event{'C', name, timestamp.count(), RecordingThread(), series, {}});
}

void TraceRecorder::Instant(const std::string& name, Micros timestamp,
                            const std::vector<std::pair<std::string, std::string>>& args) {
  std::lock_guard lock(mutex_);
  if (events_.size() >= max_events_) Thin();
  Add(Event{'i', name, timestamp.count(), RecordingThread(), {}, args});
}

size_t TraceRecorder::BytesOf(const Event& event) {
  size_t bytes = sizeof(Event) + event.name.capacity();
  for (const auto& [key, value] : event.counters) bytes += sizeof(*event.counters.data()) + key.capacity();
  for (const auto& [key, value] : event.args) {
    bytes += sizeof(*event.args.data()) + key.capacity() + value.capacity();
  }
  return bytes;
}

void TraceRecorder::Add(Event event) {
  bytes_ += BytesOf(event);
  events_.push_back(std::move(event));
}

void TraceRecorder::Thin() {
  // Per counter track: keep its next sample? The samples held are those whose index is a multiple
  // of the stride, so keeping every other one starting with the first leaves the multiples of 2x.
  std::unordered_map<std::string, bool> keep_next;
  size_t instant_count = 0;
  std::vector<Event> kept;
  kept.reserve(events_.size());
  for (Event& event : events_) {
    bool keep = true;
    if (event.phase == 'C') {
      auto [it, first] = keep_next.try_emplace(event.name, true);
      keep = it->second;
      it->second = !keep;
    } else {
      ++instant_count;
    }
    if (keep) kept.push_back(std::move(event));
  }
  counter_stride_ *= 2;
  if (instant_count > max_events_ / 2) {  // instants crowd the trace: the oldest go
    size_t to_drop = instant_count - max_events_ / 4;
    std::erase_if(kept, [&to_drop](const Event& event) {
      if (event.phase != 'i' || to_drop == 0) return false;
      --to_drop;
      return true;
    });
  }
  events_ = std::move(kept);
  bytes_ = 0;
  for (const Event& event : events_) bytes_ += BytesOf(event);
}

size_t TraceRecorder::event_count() const {
  std::lock_guard lock(mutex_);
  return events_.size();
}

uint64_t TraceRecorder::counter_stride() const {
  std::lock_guard lock(mutex_);
  return counter_stride_;
}

size_t TraceRecorder::MemoryBytes() const {
  std::lock_guard lock(mutex_);
  return sizeof(*this) + bytes_ + (events_.capacity() - events_.size()) * sizeof(Event);
}

std::string TraceRecorder::ToJson() const {
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid_}, {"tid", 0},
                    {"args", {{"name", process_name_}}}});
  std::vector<Event> copy;
  std::vector<std::pair<int, std::string>> threads;
  uint64_t stride = 1;
  {
    std::lock_guard lock(mutex_);
    copy = events_;
    threads.assign(thread_names_.begin(), thread_names_.end());
    stride = counter_stride_;
  }
  std::sort(threads.begin(), threads.end());
  for (const auto& [tid, name] : threads) {
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid_}, {"tid", tid},
                      {"args", {{"name", name}}}});
  }
  for (const Event& event : copy) {
    nlohmann::json json = {{"name", event.name}, {"ph", std::string(1, event.phase)},
                           {"ts", event.timestamp_us}, {"pid", pid_}, {"tid", event.tid}};
    nlohmann::json args = nlohmann::json::object();
    for (const auto& [key, value] : event.counters) args[key] = value;
    for (const auto& [key, value] : event.args) args[key] = value;
    json["args"] = args;
    if (event.phase == 'i') json["s"] = "g";
    events.push_back(std::move(json));
  }
  return nlohmann::json{{"traceEvents", events},
                        {"displayTimeUnit", "ms"},
                        {"otherData", {{"lethe_counter_sample_stride", stride}}}}
      .dump();
}

bool TraceRecorder::Write(const std::string& path, std::string* error) const {
  return WriteFileAtomically(path, ToJson(), error);
}

}  // namespace lethe
