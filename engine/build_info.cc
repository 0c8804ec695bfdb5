#include "lethe/build_info.h"

#include "lethe/alloc.h"
#include "lethe/check.h"

#ifndef LETHE_VERSION_STRING
#error "LETHE_VERSION_STRING is set by engine/CMakeLists.txt"
#endif
#ifndef LETHE_SANITIZER_NAME
#define LETHE_SANITIZER_NAME ""
#endif

namespace lethe {

BuildInfo GetBuildInfo() {
  return BuildInfo{LETHE_VERSION_STRING, lethe_allocator_name(), LETHE_SANITIZER_NAME,
                   LETHE_DEBUG_LEVEL};
}

std::string DescribeBuild() {
  BuildInfo info = GetBuildInfo();
  std::string text = "lethe ";
  text += info.version;
  text += " (allocator: ";
  text += info.allocator;
  text += ", sanitizer: ";
  text += info.sanitizer[0] != '\0' ? info.sanitizer : "none";
  text += ", debug level ";
  text += std::to_string(info.debug_level);
  text += ")";
  return text;
}

}  // namespace lethe
