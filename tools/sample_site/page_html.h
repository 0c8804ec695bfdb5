// page_html.h — one page of the sample site as a web page: HTML with the site's shared stylesheet
// (site.css) and the page's own (pages/page-NN.css), laid out by the engine (litehtml).
//
// The page flows as an article does: a header bar (the logo, the shared icons and spinner, the
// icons repeated as the bar's background image), a title, the hero photograph across the column
// with its caption, paragraphs with the page's other pictures floated left and right beside them,
// a diagram as a box's background image (per-page stylesheet), a table of thumbnails, a list, and
// a footer. Large pictures get width/height attributes smaller than their natural size, as on real
// pages (the engine decodes them at the size drawn). Pure functions; any thread.
#ifndef LETHE_TOOLS_SAMPLE_SITE_PAGE_HTML_H_
#define LETHE_TOOLS_SAMPLE_SITE_PAGE_HTML_H_

#include <cstdint>
#include <string>
#include <vector>

#include "site_images.h"

namespace lethe::sample_site {

// The shared stylesheet, written once at the site's root as site.css.
std::string SiteStylesheet(const std::vector<PlannedImage>& shared);
// Page `page`'s own stylesheet (pages/page-NN.css): its colours and its background picture.
std::string PageStylesheet(int page, const std::vector<PlannedImage>& own);
// Page `page` (1-based) as HTML (pages/page-NN.html); URLs relative to pages/.
std::string PageHtml(int page, const std::vector<PlannedImage>& shared,
                     const std::vector<PlannedImage>& own, uint32_t site_seed);

}  // namespace lethe::sample_site

#endif  // LETHE_TOOLS_SAMPLE_SITE_PAGE_HTML_H_
