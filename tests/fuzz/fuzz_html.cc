// Fuzzes the HTML path: BoundHtml, then litehtml parsing, styling, layout and a paint of the
// result, as the engine does for every page (a page is content from the web, as hostile as an
// image). The container measures text by its bytes and paints nothing, so the fuzz build needs no
// fonts or caches; the engine's own container is covered by lethe_html_page_test. Beyond "no
// crash, no leak, no stack overflow": the bounded text must nest no deeper than the limits, and
// the laid-out tree must hold no table nested deeper than max_table_depth (layout time grows
// geometrically with it: one 294-byte page of nested tables ran for 10 minutes before the limit).
#include <litehtml.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "html_bounds.h"
#include "measuring_container.h"
#include "table_nesting.h"


extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lethe::HtmlLimits limits;
  limits.max_depth = 64;  // the engine's 256 with a margin for the fuzzer's bigger frames
  limits.max_words = 20000;
  const std::string_view html(reinterpret_cast<const char*>(data), size);
  static litehtml::context* context = [] {
    auto* made = new litehtml::context();
    made->load_master_stylesheet("div, p, body, html { display: block; } li { display: list-item; }"
                                 "table { display: table; } tr { display: table-row; }"
                                 "td { display: table-cell; } head, style { display: none; }");
    return made;
  }();
  lethe::testing::MeasuringContainer container;
  lethe::internal::HtmlCuts cuts;
  int lowered_depth = -1;
  litehtml::document::ptr document = lethe::internal::ParseBounded(
      html, limits,
      [&container](const std::string& bounded) {
        return litehtml::document::createFromUTF8(bounded.c_str(), &container, context);
      },
      &cuts, &lowered_depth);
  if (cuts.max_depth_seen > limits.max_depth) __builtin_trap();
  if (cuts.max_table_depth_seen > limits.max_table_depth) __builtin_trap();
  if (document != nullptr && lowered_depth != 0 &&
      lethe::internal::DepthThatCutsDeepTables(document->root(), limits.max_table_depth)) {
    __builtin_trap();  // only a page cut to no elements at all may keep its (stylesheet) tables
  }
  if (document != nullptr) {
    document->render(1024);
    litehtml::position clip(0, 0, 1024, 768);
    document->draw(0, 0, 0, &clip);
  }
  return 0;
}
