// engine/html_bounds.h — cuts an HTML text to the HtmlLimits before the parser sees it.
//
// litehtml builds its tree by recursion (one C++ frame chain per nesting level, during parsing,
// styling and layout), and gumbo frees its tree by recursion too: a page of 10^5 nested elements
// would overflow the stack. BoundHtml scans the text once, iteratively, keeping a stack of the
// open element names as the HTML tree builder would see them (void elements open nothing; an end
// tag closes up to its match; <p>, <li>, <td>, ... close an open sibling of their own kind), and:
//   - drops a start tag that would open an element deeper than max_depth (and its end tag);
//   - flattens a <table> nested deeper than max_table_depth tables: its table, row, cell and
//     column tags are dropped up to its end tag, its content stays;
//   - drops the text past max_words words (tags stay, so the structure survives);
//   - cuts the content of a <style> element to max_stylesheet_bytes.
// Comments, <script> and <style> content, and quoted attribute values are skipped as the tokenizer
// would. Misnested formatting tags that the parser re-opens (the adoption agency) can add a few
// levels; max_depth keeps a wide margin below what the stack needs.
// Pure function; any thread.
#ifndef LETHE_ENGINE_HTML_BOUNDS_H_
#define LETHE_ENGINE_HTML_BOUNDS_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "lethe/html_limits.h"

namespace lethe::internal {

struct HtmlCuts {
  size_t dropped_start_tag_count = 0;  // too deep
  size_t dropped_word_count = 0;       // past max_words
  size_t cut_style_bytes = 0;          // <style> content past max_stylesheet_bytes
  size_t flattened_table_count = 0;    // <table>s nested past max_table_depth
  int max_depth_seen = 0;              // after the cut (<= max_depth)
  int max_table_depth_seen = 0;        // after the cut (<= max_table_depth)
  bool any() const {
    return dropped_start_tag_count + dropped_word_count + cut_style_bytes + flattened_table_count >
           0;
  }
  // "nesting deeper than 256: 99744 start tags dropped; ..." (empty when nothing was cut).
  std::string Describe(const HtmlLimits& limits) const;
};

std::string BoundHtml(std::string_view html, const HtmlLimits& limits, HtmlCuts* cuts);

}  // namespace lethe::internal

#endif  // LETHE_ENGINE_HTML_BOUNDS_H_
