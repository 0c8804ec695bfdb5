// lethe/build_info.h — how this copy of Lethe was built, for tools and memory reports to print.
#ifndef LETHE_BUILD_INFO_H_
#define LETHE_BUILD_INFO_H_

#include <string>

namespace lethe {

struct BuildInfo {
  const char* version;          // "0.1.0"
  const char* allocator;        // lethe_allocator_name(): "lethe" or "system"
  const char* sanitizer;        // "address", "thread", ... or "" when none
  int debug_level;              // LETHE_DEBUG_LEVEL
};

BuildInfo GetBuildInfo();

// One line: "lethe 0.1.0 (allocator: lethe, sanitizer: none, debug level 0)".
std::string DescribeBuild();

}  // namespace lethe

#endif  // LETHE_BUILD_INFO_H_
