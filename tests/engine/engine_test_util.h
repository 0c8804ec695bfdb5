// Helpers shared by the engine's tests: a temporary directory, file writers, and a recorder of
// pressure events and log lines.
#ifndef LETHE_TESTS_ENGINE_ENGINE_TEST_UTIL_H_
#define LETHE_TESTS_ENGINE_ENGINE_TEST_UTIL_H_

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lethe/event_loop.h"
#include "lethe/pressure_source.h"

namespace lethe::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "lethe-engine-XXXXXX").string();
    path_ = mkdtemp(pattern.data()) != nullptr ? pattern : std::string();
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, std::string_view text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct PressureEvent {
  MemoryPressureLevel level;
  std::string source;
  friend bool operator==(const PressureEvent&, const PressureEvent&) = default;
};

inline std::ostream& operator<<(std::ostream& out, const PressureEvent& event) {
  return out << MemoryPressureLevelName(event.level) << " from " << event.source;
}

// Records what sources deliver and log.
struct Recorder {
  std::vector<PressureEvent> events;
  std::vector<std::string> log;

  PressureCallback Callback() {
    return [this](MemoryPressureLevel level, std::string_view source) {
      events.push_back(PressureEvent{level, std::string(source)});
    };
  }
  LogFunction Log() {
    return [this](std::string_view line) { log.emplace_back(line); };
  }
  PressureContext Context(EventLoop& loop) { return PressureContext{&loop, Callback(), Log()}; }

  // How many log lines contain `text`.
  size_t LogCount(std::string_view text) const {
    size_t count = 0;
    for (const std::string& line : log) count += line.find(text) != std::string::npos ? 1 : 0;
    return count;
  }
  std::string AllLog() const {
    std::string all;
    for (const std::string& line : log) all += line + "\n";
    return all;
  }
};

inline EventLoop::Options NoDecayTick() {
  EventLoop::Options options;
  options.decay_tick = nullptr;
  return options;
}

}  // namespace lethe::testing

#endif  // LETHE_TESTS_ENGINE_ENGINE_TEST_UTIL_H_
