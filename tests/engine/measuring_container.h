// A litehtml container for tests and fuzzing without fonts or caches: text measures half its
// font size per byte, images are 16 x 16, nothing is painted. The engine's own container
// (html_container.h) is covered by lethe_html_page_test.
#ifndef LETHE_TESTS_ENGINE_MEASURING_CONTAINER_H_
#define LETHE_TESTS_ENGINE_MEASURING_CONTAINER_H_

#include <litehtml.h>

#include <memory>
#include <string>

namespace lethe::testing {

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

}  // namespace lethe::testing

#endif  // LETHE_TESTS_ENGINE_MEASURING_CONTAINER_H_
