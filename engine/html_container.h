// engine/html_container.h — litehtml's document_container on Lethe: fonts and text through the
// TextPainter, images through the ImageStore, URLs resolved against the page (and its <base>),
// stylesheets read from local files, boxes painted into the framebuffer.
//
// Two modes per paint: Record (after layout, once: collects every image placement in page
// coordinates) and Paint (each frame: draws under a viewport). litehtml gives positions already
// offset by the x, y of document::draw; the page draws at (0, -scroll), so the container adds the
// scroll back to find a placement. Loop thread only; owned by its HtmlPage.
#ifndef LETHE_ENGINE_HTML_CONTAINER_H_
#define LETHE_ENGINE_HTML_CONTAINER_H_

#include <litehtml.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "box_painter.h"
#include "html_page.h"
#include "image_store.h"
#include "text_painter.h"

namespace lethe::internal {

struct HtmlFont {
  TextStyle style;
  bool italic = false;      // style.italic: the italic face, or the upright one slanted
  unsigned decoration = 0;  // litehtml::font_decoration_* bits
  FontMetrics metrics;
};

class HtmlContainer final : public litehtml::document_container {
 public:
  // `detached`: measures text by its length and loads no image, touching no cache (the parser's
  // warm-up, html_page.cc).
  HtmlContainer(HtmlServices& services, std::string url, bool detached = false);
  ~HtmlContainer();

  void BeginRecord(std::vector<DocumentImage>* images);
  void BeginPaint(Surface* target, int scroll_y, std::vector<DocumentImage>* images,
                  HtmlImagePainter* painter);
  void End();

  const std::string& title() const { return title_; }
  const std::vector<std::string>& broken_images() const { return broken_; }
  size_t MemoryBytes() const;

  // Calls `mark` once, at litehtml's next get_media_features: while a document is created, litehtml
  // asks for the media features after it has built the DOM and before it applies the stylesheets,
  // the one callback between the two phases (the page's arena bytes there split DOM from style).
  void MarkBeforeStyles(std::function<void()> mark) { before_styles_ = std::move(mark); }
  // A page parsed again (table_nesting.h) starts its stylesheet count afresh.
  void BeginParse() { stylesheet_count_ = 0; }

  // ---- litehtml::document_container --------------------------------------------------------
  litehtml::uint_ptr create_font(const char* face_name, int size, int weight,
                                 litehtml::font_style italic, unsigned int decoration,
                                 litehtml::font_metrics* fm) override;
  void delete_font(litehtml::uint_ptr font) override;
  int text_width(const char* text, litehtml::uint_ptr font) override;
  void draw_text(litehtml::uint_ptr hdc, const char* text, litehtml::uint_ptr font,
                 litehtml::web_color color, const litehtml::position& pos) override;
  int pt_to_px(int pt) const override;
  int get_default_font_size() const override;
  const char* get_default_font_name() const override;
  void draw_list_marker(litehtml::uint_ptr hdc, const litehtml::list_marker& marker) override;
  void load_image(const char* src, const char* baseurl, bool redraw_on_ready) override;
  void get_image_size(const char* src, const char* baseurl, litehtml::size& size) override;
  void draw_background(litehtml::uint_ptr hdc, const litehtml::background_paint& bg) override;
  void draw_borders(litehtml::uint_ptr hdc, const litehtml::borders& borders,
                    const litehtml::position& draw_pos, bool root) override;
  void set_caption(const char* caption) override;
  void set_base_url(const char* base_url) override;
  void link(const std::shared_ptr<litehtml::document>& doc,
            const litehtml::element::ptr& el) override;
  void on_anchor_click(const char* url, const litehtml::element::ptr& el) override;
  void set_cursor(const char* cursor) override;
  void transform_text(litehtml::tstring& text, litehtml::text_transform tt) override;
  void import_css(litehtml::tstring& text, const litehtml::tstring& url,
                  litehtml::tstring& baseurl) override;
  void set_clip(const litehtml::position& pos, const litehtml::border_radiuses& radius,
                bool valid_x, bool valid_y) override;
  void del_clip() override;
  void get_client_rect(litehtml::position& client) const override;
  std::shared_ptr<litehtml::element> create_element(
      const char* tag_name, const litehtml::string_map& attributes,
      const std::shared_ptr<litehtml::document>& doc) override;
  void get_media_features(litehtml::media_features& media) const override;
  void get_language(litehtml::tstring& language, litehtml::tstring& culture) const override;

 private:
  enum class Mode { kIdle, kRecord, kPaint };
  mutable std::function<void()> before_styles_;  // MarkBeforeStyles's, until called
  using PlacementKey = std::tuple<std::string, int, int, int, int, int, int, int, int>;

  std::string Resolve(const char* src, const char* baseurl) const;
  // The store's record for `url` (acquired once per page); nullptr when broken.
  const ImageRecord* Image(const std::string& url);
  const HtmlFont* Font(litehtml::uint_ptr font) const;
  LayoutRect Clip() const;
  // An image placed at `tile` over `area` (target coordinates): recorded, or painted.
  void PlaceImage(const std::string& url, const LayoutRect& area, const LayoutRect& tile,
                  bool repeat_x, bool repeat_y);
  void PaintTiles(DocumentImage& image, const LayoutRect& area, const LayoutRect& tile);
  void FillBox(const LayoutRect& rect, uint32_t color);

  HtmlServices& services_;
  const bool detached_;
  std::string url_;
  std::string base_;
  std::string title_;
  std::vector<std::unique_ptr<HtmlFont>> fonts_;
  std::unordered_map<std::string, uint64_t> image_ids_;  // 0: broken
  std::vector<std::string> broken_;
  size_t stylesheet_count_ = 0;
  Mode mode_ = Mode::kIdle;
  Surface* target_ = nullptr;
  int scroll_y_ = 0;
  std::vector<DocumentImage>* images_ = nullptr;
  HtmlImagePainter* painter_ = nullptr;
  std::map<PlacementKey, size_t> placements_;  // built by the record pass
  std::vector<LayoutRect> clips_;
  // A clip with rounded corners (overflow: hidden with border-radius) keeps what its corners cover
  // from before it was set, and puts it back when it is removed; nullptr for a square clip.
  struct RoundedClip {
    RoundedClip(Surface& target, const RoundedBox& box, const LayoutRect& area)
        : shape(box), guard(target, shape, area) {}
    RoundedBox shape;
    RoundedCornerGuard guard;  // refers to shape
  };
  std::vector<std::unique_ptr<RoundedClip>> rounded_clips_;  // one per clips_ entry
};

}  // namespace lethe::internal

#endif  // LETHE_ENGINE_HTML_CONTAINER_H_
