// lethe-make-site: writes the sample site (images and page descriptions) that the demo, the
// stress test and the benchmarks run on. The build runs it once into build/<preset>/sample-site.
//   lethe-make-site DIR [--pages N] [--seed S]   (N: 1..99)
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sample_site.h"

namespace {

constexpr const char* kUsage =
    "usage: lethe-make-site DIR [--pages N] [--seed S]   (N: 1..99)\n"
    "  Writes the sample site (images of every kind and page descriptions) into DIR.\n";

int Usage(const char* problem) {
  std::fprintf(stderr, "lethe-make-site: %s\n%s", problem, kUsage);
  return 2;
}

bool ParsePositive(const char* text, long maximum, long* out) {
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 1 || value > maximum) return false;
  *out = value;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  lethe::sample_site::SiteOptions options;
  std::string directory;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    long value = 0;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if ((arg == "--pages" || arg == "--seed") && i + 1 < argc) {
      if (!ParsePositive(argv[++i], arg == "--pages" ? 99 : 1L << 30, &value))
        return Usage((arg + " needs a positive number").c_str());
      if (arg == "--pages") options.page_count = static_cast<int>(value);
      else options.seed = static_cast<uint32_t>(value);
    } else if (arg[0] == '-') {
      return Usage(("unknown or incomplete flag '" + arg + "'").c_str());
    } else if (directory.empty()) {
      directory = arg;
    } else {
      return Usage("more than one directory given");
    }
  }
  if (directory.empty()) return Usage("no output directory given");
  lethe::sample_site::Site site;
  std::string error;
  if (!lethe::sample_site::GenerateSite(directory, options, &site, &error)) {
    std::fprintf(stderr, "lethe-make-site: %s\n", error.c_str());
    return 1;
  }
  std::printf("sample site: %zu images, %zu pages in %s\n", site.images.size(), site.pages.size(), directory.c_str());
  return 0;
}
