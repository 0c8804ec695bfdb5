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
//
// Arena: each page has its own allocator arena (lethe_arena_create), bound to the loop thread while
// litehtml parses, lays out and paints it, and unbound (ArenaScope(LETHE_ARENA_NONE)) around every
// callback into the engine's caches, so that the arena holds exactly the page's DOM, style and
// layout. When the page goes its arena is destroyed: empty, it goes back to the OS whole; still
// holding bytes (something keeps the DOM: RetainDom), it is a ghost, which HtmlServices lists and
// reports until its last byte is freed.
#ifndef LETHE_ENGINE_HTML_PAGE_H_
#define LETHE_ENGINE_HTML_PAGE_H_

#include <memory>
#include <cstdint>
#include <string>
#include <vector>

#include "html_bounds.h"
#include "lethe/alloc.h"
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

  // A closed page's arena that still held bytes: a ghost until the arena is released.
  struct Ghost {
    std::string url;
    lethe_arena_t arena = LETHE_ARENA_NONE;
    uint64_t bytes = 0;  // allocated bytes at the last look
  };
  void AddGhost(std::string url, lethe_arena_t arena, uint64_t bytes);
  // Drops the ghosts whose arenas were released and refreshes the bytes of the others.
  const std::vector<Ghost>& Ghosts() const;

 private:
  void WarmUp();

  std::unique_ptr<litehtml::context> context_;
  mutable std::vector<Ghost> ghosts_;  // refreshed by Ghosts(), which reports call
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
  // The page object's own bytes, outside its arena.
  size_t MemoryBytes() const;
  // The bytes of the page's arena: its DOM, style and layout (0 without an arena, or under the
  // system malloc, where arenas are not tracked).
  uint64_t DomBytes() const;
  // The same bytes by the phase that allocated them, from the arena's figure at the two phase
  // boundaries of the page's build: dom, what parsing made (litehtml's elements, attributes,
  // text); style, what applying the stylesheets added (declarations, computed styles); layout, the
  // rest (the boxes render made, and whatever the page allocated since: what changes after the
  // build is layout's). The three add up to DomBytes().
  struct ArenaParts {
    uint64_t dom = 0;
    uint64_t style = 0;
    uint64_t layout = 0;
  };
  ArenaParts DomParts() const;
  // A reference to the parsed document (the DOM and its container) that keeps it alive after the
  // page is gone, as an embedder's script or extension would; while one is held, the closed
  // page's arena is a ghost. Drop it before the engine.
  std::shared_ptr<const void> RetainDom() const { return dom_; }

 private:
  explicit HtmlPage(HtmlServices& services, const std::string& url);
  void Build(std::string_view html);
  void LogCuts(const HtmlCuts& cuts, int lowered_depth) const;

  HtmlServices& services_;
  struct Dom;  // the container and litehtml's document (destroyed first)
  lethe_arena_t arena_ = LETHE_ARENA_NONE;
  std::string url_;
  std::shared_ptr<Dom> dom_;
  HtmlContainer* container_ = nullptr;  // dom_'s
  int width_ = 0;
  int height_ = 0;
  uint32_t background_ = 0xffffffff;
  size_t source_bytes_ = 0;
  uint64_t dom_end_ = 0;    // arena bytes when the DOM was built, before the stylesheets
  uint64_t style_end_ = 0;  // arena bytes when the styles were applied, before render
};

}  // namespace lethe::internal

#endif  // LETHE_ENGINE_HTML_PAGE_H_
