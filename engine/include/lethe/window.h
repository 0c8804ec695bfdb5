// lethe/window.h — one tab: its session history, the live document of the current entry, the
// scroll position, and whether it is the foreground (visible) window.
//
// Visibility rule (UpdateLocks): in the foreground window, every image whose layout rectangle meets
// the viewport holds one SurfaceCache lock; everything else holds none. A background window locks
// nothing, so its surfaces age and go like any unused surface.
//
// The Engine drives windows (navigation, BfCache, animation timers); embedders inspect them through
// Engine::window(). Loop thread only. The Engine owns windows; a window owns its current document.
#ifndef LETHE_WINDOW_H_
#define LETHE_WINDOW_H_

#include <cstdint>
#include <memory>

#include "lethe/document.h"
#include "lethe/page_description.h"
#include "lethe/session_history.h"
#include "lethe/surface_cache.h"

namespace lethe {

class Window {
 public:
  Window(uint64_t id, int viewport_width, int viewport_height)
      : id_(id), viewport_width_(viewport_width), viewport_height_(viewport_height) {}
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  uint64_t id() const { return id_; }
  const SessionHistory& history() const { return history_; }
  SessionHistory& mutable_history() { return history_; }
  Document* document() const { return document_.get(); }
  int scroll_y() const { return scroll_y_; }
  bool foreground() const { return foreground_; }
  // The viewport in page coordinates.
  LayoutRect Viewport() const { return {0, scroll_y_, viewport_width_, viewport_height_}; }

  // Clamps to [0, document height - viewport height].
  void SetScroll(int y);
  void SetForeground(bool foreground) { foreground_ = foreground; }

  // Replaces the current document; returns the previous one (its locks already released).
  std::unique_ptr<Document> SwapDocument(std::unique_ptr<Document> document, SurfaceCache& surfaces);

  // Locks the images in the viewport of a foreground window, unlocks the rest. Returns how many
  // images are locked afterwards.
  size_t UpdateLocks(SurfaceCache& surfaces);
  // Releases every lock (before the document leaves, or the window closes).
  void UnlockAll(SurfaceCache& surfaces);
  // Whether the image meets the viewport (the visibility rule, foreground or not).
  bool InViewport(const DocumentImage& image) const;

 private:
  uint64_t id_;
  int viewport_width_;
  int viewport_height_;
  SessionHistory history_;
  std::unique_ptr<Document> document_;
  int scroll_y_ = 0;
  bool foreground_ = false;
};

}  // namespace lethe

#endif  // LETHE_WINDOW_H_
