#include "lethe/trace_recorder.h"

#include <nlohmann/json.hpp>

#include "lethe/atomic_file.h"

namespace lethe {

TraceRecorder::TraceRecorder(std::string process_name, int pid)
    : process_name_(std::move(process_name)), pid_(pid) {}

void TraceRecorder::Counter(const std::string& name, Micros timestamp,
                            const std::vector<std::pair<std::string, int64_t>>& series) {
  std::lock_guard lock(mutex_);
  events_.push_back(Event{'C', name, timestamp.count(), series, {}});
}

void TraceRecorder::Instant(const std::string& name, Micros timestamp,
                            const std::vector<std::pair<std::string, std::string>>& args) {
  std::lock_guard lock(mutex_);
  events_.push_back(Event{'i', name, timestamp.count(), {}, args});
}

size_t TraceRecorder::event_count() const {
  std::lock_guard lock(mutex_);
  return events_.size();
}

std::string TraceRecorder::ToJson() const {
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid_}, {"tid", 0},
                    {"args", {{"name", process_name_}}}});
  std::vector<Event> copy;
  {
    std::lock_guard lock(mutex_);
    copy = events_;
  }
  for (const Event& event : copy) {
    nlohmann::json json = {{"name", event.name}, {"ph", std::string(1, event.phase)},
                           {"ts", event.timestamp_us}, {"pid", pid_}, {"tid", 0}};
    nlohmann::json args = nlohmann::json::object();
    for (const auto& [key, value] : event.counters) args[key] = value;
    for (const auto& [key, value] : event.args) args[key] = value;
    json["args"] = args;
    if (event.phase == 'i') json["s"] = "g";
    events.push_back(std::move(json));
  }
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump();
}

bool TraceRecorder::Write(const std::string& path, std::string* error) const {
  return WriteFileAtomically(path, ToJson(), error);
}

}  // namespace lethe
