#include "lethe/window.h"

#include <algorithm>

#include "lethe/check.h"

namespace lethe {

Window::~Window() = default;

void Window::SetScroll(int y) {
  int max_scroll = document_ != nullptr ? std::max(0, document_->height() - viewport_height_) : 0;
  scroll_y_ = std::clamp(y, 0, max_scroll);
}

std::unique_ptr<Document> Window::SwapDocument(std::unique_ptr<Document> document,
                                               SurfaceCache& surfaces) {
  UnlockAll(surfaces);
  std::swap(document_, document);
  return document;
}

bool Window::InViewport(const DocumentImage& image) const {
  return image.rect.Intersects(Viewport());
}

size_t Window::UpdateLocks(SurfaceCache& surfaces) {
  if (document_ == nullptr) return 0;
  size_t locked_count = 0;
  for (DocumentImage& image : document_->images()) {
    bool want = foreground_ && image.image_id != 0 && InViewport(image);
    if (want && !image.locked) surfaces.LockImage(image.image_id);
    if (!want && image.locked) surfaces.UnlockImage(image.image_id);
    image.locked = want;
    locked_count += want ? 1 : 0;
  }
  return locked_count;
}

void Window::UnlockAll(SurfaceCache& surfaces) {
  if (document_ == nullptr) return;
  for (DocumentImage& image : document_->images()) {
    if (image.locked) surfaces.UnlockImage(image.image_id);
    image.locked = false;
  }
}

}  // namespace lethe
