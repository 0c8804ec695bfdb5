// page_layout.h — one page of the sample site as a page description (the JSON of
// lethe/page_description.h): a header with the site's logo, icons and spinner, a title, the page's
// hero photograph across the column, then paragraphs with the page's other images beside them,
// a row of thumbnails and a footer. Large pictures are laid out smaller than their natural size,
// as on real pages (the engine decodes them at their laid-out size). Pure; any thread.
#ifndef LETHE_TOOLS_SAMPLE_SITE_PAGE_LAYOUT_H_
#define LETHE_TOOLS_SAMPLE_SITE_PAGE_LAYOUT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "site_images.h"

namespace lethe::sample_site {

constexpr int kPageWidth = 1024;

// Page `page` (1-based) showing `shared` and its own images `own` (PlanPageImages: the hero first,
// thumbnails anywhere). Image sources are relative to the pages/ folder ("../images/...").
nlohmann::json LayOutPage(int page, const std::vector<PlannedImage>& shared,
                          const std::vector<PlannedImage>& own, uint32_t site_seed);

}  // namespace lethe::sample_site

#endif  // LETHE_TOOLS_SAMPLE_SITE_PAGE_LAYOUT_H_
