// sample_site.h — the generated sample site: procedural pictures encoded as PNG, JPEG, static and
// animated GIF, and page descriptions (JSON) that place them in tall layouts with text.
//
// lethe-demo runs on it, lethe-stress cycles its pages, the benchmarks read it. Deterministic for a
// given seed, so figures from two runs compare.
#ifndef LETHE_TOOLS_SAMPLE_SITE_SAMPLE_SITE_H_
#define LETHE_TOOLS_SAMPLE_SITE_SAMPLE_SITE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace lethe::sample_site {

struct SiteOptions {
  int page_count = 29;
  int images_per_page = 9;  // drawn from the image set, every kind on every page
  uint32_t seed = 1;
};

struct ImageSpec {
  std::string file;  // relative to the site directory, e.g. "images/photo-03.jpg"
  int width = 0;
  int height = 0;
  int frame_count = 1;
  std::string kind;  // "png", "jpeg", "gif", "animated-gif"
};

struct Site {
  std::vector<ImageSpec> images;
  std::vector<std::string> pages;  // relative paths of the page descriptions
};

// Writes images/ and pages/ under `directory` (created if missing) and index.json listing both.
// Returns false with a readable *error (naming the file) when anything cannot be written.
bool GenerateSite(const std::string& directory, const SiteOptions& options, Site* site,
                  std::string* error);

}  // namespace lethe::sample_site

#endif  // LETHE_TOOLS_SAMPLE_SITE_SAMPLE_SITE_H_
