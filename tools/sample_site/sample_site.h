// sample_site.h — the generated sample site: procedural pictures encoded as PNG, JPEG, static and
// animated GIF, and HTML pages (with a shared and a per-page stylesheet) that show them in articles
// with text; the same pages also as page descriptions (JSON), for embedders that lay out
// themselves.
//
// Every page has its own images of every kind (a hero photograph, photographs, thumbnails, a
// chart, a screenshot, diagrams, animations) and shows the few the whole site shares (logo, icons,
// spinner), so that cycling pages through windows decodes new pictures on every page, as browsing
// real sites does. lethe-demo runs on its images, lethe-stress cycles its pages, lethe-browse and
// the tests read them. Deterministic for a given seed, so figures from two runs compare.
//
// Layout on disk:  DIR/index.json   every image (file, kind, size, frames, page) and every page
//                  DIR/site.css     the shared stylesheet
//                  DIR/images/      logo.png, icon-*, spinner.gif (shared) and page-NN-*.{jpg,png,gif}
//                  DIR/pages/       page-NN.html and page-NN.css (URLs relative to pages/), and
//                                   page-NN.json (the page description of the same page)
#ifndef LETHE_TOOLS_SAMPLE_SITE_SAMPLE_SITE_H_
#define LETHE_TOOLS_SAMPLE_SITE_SAMPLE_SITE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace lethe::sample_site {

struct SiteOptions {
  int page_count = 29;
  uint32_t seed = 1;
};

struct ImageSpec {
  std::string file;  // relative to the site directory, e.g. "images/page-03-hero.jpg"
  int width = 0;     // natural size
  int height = 0;
  int frame_count = 1;
  std::string kind;  // "png", "jpeg", "gif", "animated-gif"
  int page = 0;      // the page (1-based) that alone shows it; 0: every page shows it
};

struct Site {
  std::vector<ImageSpec> images;   // the shared images first, then each page's in page order
  std::vector<std::string> pages;         // relative paths of the HTML pages
  std::vector<std::string> descriptions;  // relative paths of the page descriptions (JSON)
};

// Writes images/ and pages/ under `directory` (created if missing) and index.json listing both.
// Returns false with a readable *error (naming the file) when anything cannot be written.
bool GenerateSite(const std::string& directory, const SiteOptions& options, Site* site,
                  std::string* error);

// The images a generated site's first `page_count` pages show (its shared images and the pages'
// own), as paths under `directory`, in index order; read from directory/index.json. False with a
// readable *error when the index is missing or malformed. lethe-demo shows these: the whole site
// (hundreds of images) is a page-cycling workload, not one page to scroll.
bool ImagesOfFirstPages(const std::string& directory, int page_count, std::vector<std::string>* paths,
                        std::string* error);

}  // namespace lethe::sample_site

#endif  // LETHE_TOOLS_SAMPLE_SITE_SAMPLE_SITE_H_
