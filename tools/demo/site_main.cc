// lethe-demo-site DIR: writes the demo's sample site (run by the build).
#include <cstdio>

#include "sample_site.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: lethe-demo-site DIR\n");
    return 2;
  }
  std::string error = lethe::demo::GenerateSampleSite(argv[1]);
  if (!error.empty()) {
    std::fprintf(stderr, "lethe-demo-site: %s\n", error.c_str());
    return 1;
  }
  return 0;
}
