// lethe/document.h — a page laid out: its images placed in a tall layout and its text runs, built
// from a PageDescription, or an HTML page that litehtml laid out (engine/html_page.h).
//
// A Document references every image it shows in the engine's image store (and so in the ImageCache:
// a referenced entry never expires) for as long as it lives — in a window or frozen in the BfCache
// — and releases them when destroyed. An image that cannot be loaded (missing file, not an image)
// stays in the layout as a broken image (image_id 0, drawn as a grey box); the document counts it.
// Per image it also keeps the display state the engine drives: locked (visible in the foreground
// window) and, for animations, the current frame and its timer.
//
// Loop thread only. Owned by its Window while current, by the BfCache while frozen.
#ifndef LETHE_DOCUMENT_H_
#define LETHE_DOCUMENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lethe/bf_cache.h"
#include "lethe/event_loop.h"
#include "lethe/page_description.h"

namespace lethe {

namespace internal {
class ImageStore;
class HtmlPage;
}

struct DocumentImage {
  uint64_t image_id = 0;  // 0: broken (could not be loaded)
  std::string url;
  LayoutRect rect;  // the area it covers (visibility, locks): one tile, or a repeated background's
  LayoutRect tile;  // one copy of it, at the size it is drawn and decoded
  bool repeat_x = false;
  bool repeat_y = false;
  uint32_t natural_width = 0;
  uint32_t natural_height = 0;
  uint32_t frame_count = 0;
  // Display state.
  bool locked = false;       // holds one SurfaceCache lock
  uint32_t frame = 0;        // the animation frame shown
  uint64_t frames_shown = 0; // frame advances since load (tests, stats)
  uint32_t plays = 0;        // times the last frame was reached
  bool finished = false;     // played its loop count: stays on its last frame
  EventLoop::TimerId frame_timer = 0;
  bool animated() const { return frame_count > 1; }
};

class Document final : public CachedDocument {
 public:
  // Acquires every image; errors loading an image are collected in broken_images(), not fatal.
  Document(const PageDescription& page, std::string url, internal::ImageStore& store);
  // An HTML page laid out by litehtml: its images are the page's placements (the page holds one
  // reference per image URL); its text is drawn by the page, so texts() is empty.
  Document(std::unique_ptr<internal::HtmlPage> page, std::string url, internal::ImageStore& store);
  ~Document() override;
  Document(const Document&) = delete;
  Document& operator=(const Document&) = delete;

  // The layout's own heap bytes (items, strings); images and surfaces are reported by their caches.
  size_t MemoryBytes() const override;

  const std::string& url() const { return url_; }
  const std::string& title() const { return title_; }
  int width() const { return width_; }
  int height() const { return height_; }
  uint32_t background() const { return background_; }
  std::vector<DocumentImage>& images() { return images_; }
  const std::vector<DocumentImage>& images() const { return images_; }
  const std::vector<PageTextItem>& texts() const { return texts_; }
  // The engine lays text out once per document: each run's rect.height becomes its wrapped height.
  std::vector<PageTextItem>& texts() { return texts_; }
  // The HTML page, or nullptr for a page description.
  internal::HtmlPage* html() const { return html_.get(); }
  // "path: why" for each image that could not be loaded.
  const std::vector<std::string>& broken_images() const { return broken_images_; }

 private:
  internal::ImageStore& store_;
  std::string url_;
  std::string title_;
  int width_ = 0;
  int height_ = 0;
  uint32_t background_ = 0xffffffff;
  std::vector<DocumentImage> images_;
  std::vector<PageTextItem> texts_;
  std::vector<std::string> broken_images_;
  std::unique_ptr<internal::HtmlPage> html_;  // last: destroyed first, releasing its images
};

}  // namespace lethe

#endif  // LETHE_DOCUMENT_H_
