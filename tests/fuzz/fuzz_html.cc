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
#include "table_nesting.h"

namespace {

class MeasuringContainer final : public litehtml::document_container {
 public:
  litehtml::uint_ptr create_font(const char*, int size, int, litehtml::font_style, unsigned int,
                                 litehtml::font_metrics* fm) override {
    if (fm != nullptr) {
      fm->ascent = size * 3 / 4;
      fm->descent = size / 4;
      fm->height = size;
      fm->x_height = size / 2;
      fm->draw_spaces = false;
    }
    return static_cast<litehtml::uint_ptr>(size > 0 ? size : 1);
  }
  void delete_font(litehtml::uint_ptr) override {}
  int text_width(const char* text, litehtml::uint_ptr font) override {
    return static_cast<int>(std::char_traits<char>::length(text) * font / 2);
  }
  void draw_text(litehtml::uint_ptr, const char*, litehtml::uint_ptr, litehtml::web_color,
                 const litehtml::position&) override {}
  int pt_to_px(int pt) const override { return pt * 96 / 72; }
  int get_default_font_size() const override { return 16; }
  const char* get_default_font_name() const override { return "sans-serif"; }
  void draw_list_marker(litehtml::uint_ptr, const litehtml::list_marker&) override {}
  void load_image(const char*, const char*, bool) override {}
  void get_image_size(const char*, const char*, litehtml::size& size) override {
    size.width = 16;
    size.height = 16;
  }
  void draw_background(litehtml::uint_ptr, const litehtml::background_paint&) override {}
  void draw_borders(litehtml::uint_ptr, const litehtml::borders&, const litehtml::position&,
                    bool) override {}
  void set_caption(const char*) override {}
  void set_base_url(const char*) override {}
  void link(const std::shared_ptr<litehtml::document>&, const litehtml::element::ptr&) override {}
  void on_anchor_click(const char*, const litehtml::element::ptr&) override {}
  void set_cursor(const char*) override {}
  void transform_text(litehtml::tstring&, litehtml::text_transform) override {}
  void import_css(litehtml::tstring&, const litehtml::tstring&, litehtml::tstring&) override {}
  void set_clip(const litehtml::position&, const litehtml::border_radiuses&, bool, bool) override {}
  void del_clip() override {}
  void get_client_rect(litehtml::position& client) const override {
    client = litehtml::position(0, 0, 1024, 768);
  }
  std::shared_ptr<litehtml::element> create_element(
      const char*, const litehtml::string_map&,
      const std::shared_ptr<litehtml::document>&) override {
    return nullptr;
  }
  void get_media_features(litehtml::media_features& media) const override {
    media.type = litehtml::media_type_screen;
    media.width = media.device_width = 1024;
    media.height = media.device_height = 768;
    media.color = 8;
    media.color_index = 0;
    media.monochrome = 0;
    media.resolution = 96;
  }
  void get_language(litehtml::tstring& language, litehtml::tstring& culture) const override {
    language = "en";
    culture.clear();
  }
};

}  // namespace

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
  MeasuringContainer container;
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
