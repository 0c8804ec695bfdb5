// engine/html_page.h — one HTML document laid out and painted by litehtml, on the engine's caches.
//
// HtmlPage::Load bounds the text (html_bounds.h), has litehtml parse it, lays it out at the
// viewport width, then paints it once in record mode: every image placement (an <img>, a CSS
// background with its repeat, position and size, a list-marker image) becomes a DocumentImage in
// page coordinates, so that the window locks, animates and decodes ahead exactly the images a
// frame will draw. Paint draws the part of the page under the viewport: backgrounds, borders and
// text directly, images through the HtmlImagePainter (the engine: SurfaceCache lookup, decode,
// placeholder), matched to their placement.
//
// Its litehtml callbacks go to the engine: images to the ImageStore (one reference per URL per
// page, released with the page), text to the TextPainter (FontCache, ShapedWordCache, glyph
// tables). Loop thread only; owned by its Document.
#ifndef LETHE_ENGINE_HTML_PAGE_H_
#define LETHE_ENGINE_HTML_PAGE_H_

#include <memory>
#include <string>
#include <vector>

#include "lethe/document.h"
#include "lethe/html_limits.h"
#include "lethe/pressure_source.h"
#include "lethe/surface.h"

namespace litehtml {
class context;
}

namespace lethe::internal {

class ImageStore;
class TextPainter;
class HtmlContainer;

// What every page of an engine shares: the parser's context (its user-agent stylesheet) and the
// engine's services. Outlives every HtmlPage.
class HtmlServices {
 public:
  HtmlServices(ImageStore& store, TextPainter& text, HtmlLimits limits, int viewport_width,
               int viewport_height, LogFunction log);
  ~HtmlServices();
  HtmlServices(const HtmlServices&) = delete;
  HtmlServices& operator=(const HtmlServices&) = delete;

  ImageStore& store;
  TextPainter& text;
  const HtmlLimits limits;
  const int viewport_width;
  const int viewport_height;
  const LogFunction log;
  litehtml::context& context() { return *context_; }

 private:
  std::unique_ptr<litehtml::context> context_;
};

class HtmlImagePainter {
 public:
  // Draws `image` (one tile of it, at `tile` in target coordinates) only inside `clip`.
  virtual void PaintImage(DocumentImage& image, const LayoutRect& tile, const LayoutRect& clip) = 0;

 protected:
  ~HtmlImagePainter() = default;
};

class HtmlPage {
 public:
  // nullptr with *error when the file cannot be read or is past max_page_bytes. Parsing never
  // fails: malformed HTML and CSS give what litehtml makes of them. Cuts (html_bounds.h) and
  // broken images are logged.
  static std::unique_ptr<HtmlPage> Load(HtmlServices& services, const std::string& path,
                                        std::string* error);
  // The same from text in memory; `url` is its base for relative URLs.
  static std::unique_ptr<HtmlPage> FromText(HtmlServices& services, std::string_view html,
                                            const std::string& url);
  ~HtmlPage();
  HtmlPage(const HtmlPage&) = delete;
  HtmlPage& operator=(const HtmlPage&) = delete;

  const std::string& title() const;
  int width() const { return width_; }
  int height() const { return height_; }
  uint32_t background() const { return background_; }
  // The placements found by the record pass; the Document takes them.
  std::vector<DocumentImage> TakeImages();
  // "url: why" per image that could not be loaded.
  const std::vector<std::string>& broken_images() const;
  // Draws the page under `viewport` (page coordinates) into `target` at (0, 0).
  void Paint(Surface& target, const LayoutRect& viewport, std::vector<DocumentImage>& images,
             HtmlImagePainter& painter);
  // The source text's bytes and the page's own records; litehtml's tree is counted by the
  // document's arena where the allocator has one.
  size_t MemoryBytes() const;

 private:
  explicit HtmlPage(HtmlServices& services, const std::string& url);
  void Build(std::string_view html);

  HtmlServices& services_;
  std::unique_ptr<HtmlContainer> container_;
  std::shared_ptr<void> document_;  // litehtml::document, kept opaque for the header
  int width_ = 0;
  int height_ = 0;
  uint32_t background_ = 0xffffffff;
  size_t source_bytes_ = 0;
};

}  // namespace lethe::internal

#endif  // LETHE_ENGINE_HTML_PAGE_H_
