// lethe/memory_pressure_level.h — the levels of a memory-pressure event, shared by the caches that
// answer it (cache/) and the sources that detect it (engine/: PSI, cgroup v2, systemd's watch, the
// allocator's low-memory callback, the API).
//
// kModerate: memory is getting short; age caches by one generation and drop cheap-to-recreate data.
// kCritical: drop everything discardable now and return it to the OS.
// Matches Chromium's MODERATE/CRITICAL and Firefox's low-memory / heap-minimize.
#ifndef LETHE_MEMORY_PRESSURE_LEVEL_H_
#define LETHE_MEMORY_PRESSURE_LEVEL_H_

#include <optional>
#include <string_view>

namespace lethe {

enum class MemoryPressureLevel { kNone, kModerate, kCritical };

constexpr std::string_view MemoryPressureLevelName(MemoryPressureLevel level) {
  switch (level) {
    case MemoryPressureLevel::kModerate: return "moderate";
    case MemoryPressureLevel::kCritical: return "critical";
    case MemoryPressureLevel::kNone: break;
  }
  return "none";
}

// "moderate" / "critical" / "none"; anything else is nullopt.
constexpr std::optional<MemoryPressureLevel> ParseMemoryPressureLevel(std::string_view name) {
  if (name == "moderate") return MemoryPressureLevel::kModerate;
  if (name == "critical") return MemoryPressureLevel::kCritical;
  if (name == "none") return MemoryPressureLevel::kNone;
  return std::nullopt;
}

}  // namespace lethe

#endif  // LETHE_MEMORY_PRESSURE_LEVEL_H_
