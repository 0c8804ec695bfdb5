// lethe/html_limits.h — what one HTML page may cost the engine, whatever its author wrote.
//
// A page past a limit is not refused: it is cut to the limit and what remains is shown, and the
// cut is logged once per page ("page.html: nesting deeper than 256 elements: 99744 start tags
// dropped"). Limits exist because litehtml recurses over the element tree and allocates an object
// per word: without them a hostile page overflows the stack or takes gigabytes.
// Plain data; EngineOptions::html holds one.
#ifndef LETHE_HTML_LIMITS_H_
#define LETHE_HTML_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace lethe {

struct HtmlLimits {
  // Bytes of the .html file read; a larger file is refused with an error (nothing of it shown).
  size_t max_page_bytes = 16 * 1024 * 1024;
  // Element nesting: start tags that would open an element deeper than this are dropped (their
  // content stays, one level up). Bounds litehtml's recursion, and so the stack it needs.
  int max_depth = 256;
  // Tables nested in tables (elements shown as table or inline-table, anonymous boxes included).
  // litehtml lays every cell out several times for each table around it, so layout time grows
  // about 3x per level: 8 levels of two-cell tables took 54 ms, 12 took 4.5 s (release build). A
  // <table> start tag deeper than this is dropped with its rows and cells (their content stays, in
  // the enclosing cell); a page whose stylesheets nest deeper tables is parsed again with
  // max_depth lowered until they fit.
  int max_table_depth = 8;
  // Words of text in the page; past it the rest of the text is dropped (the elements stay).
  size_t max_words = 200000;
  // Bytes of one stylesheet (<style> content or a file import_css reads); a longer <style> is
  // cut, a longer file is not loaded.
  size_t max_stylesheet_bytes = 1024 * 1024;
  // Stylesheet files one page may import (<link> and @import together).
  size_t max_stylesheet_count = 64;
  // Distinct image URLs one page may load; later ones are broken images.
  size_t max_image_count = 1024;
  // Image placements drawn (an <img>, a background, a list marker); later ones are not drawn.
  size_t max_image_placement_count = 8192;
  // Bytes a data: URL may decode to.
  size_t max_data_url_bytes = 8 * 1024 * 1024;
  // Laid-out width or height of an image, in pixels: a declared 65535 x 65535 image is drawn at
  // most this large (and decoded at most at its natural size, as every image).
  int max_box_px = 16384;
};

}  // namespace lethe

#endif  // LETHE_HTML_LIMITS_H_
