#include "lethe/document.h"

#include "html_page.h"
#include "image_store.h"
#include "lethe/check.h"

namespace lethe {

Document::Document(const PageDescription& page, std::string url, internal::ImageStore& store)
    : store_(store),
      url_(std::move(url)),
      title_(page.title),
      width_(page.width),
      height_(page.height),
      background_(page.background) {
  for (const PageItem& item : page.items) {
    if (const auto* text = std::get_if<PageTextItem>(&item)) {
      texts_.push_back(*text);
      continue;
    }
    const auto& image_item = std::get<PageImageItem>(item);
    DocumentImage image;
    image.url = image_item.src;
    image.rect = image_item.rect;
    image.tile = image_item.rect;
    std::string error;
    if (const internal::ImageRecord* record = store_.Acquire(image_item.src, &error)) {
      image.image_id = record->id;
      image.natural_width = record->header.width;
      image.natural_height = record->header.height;
      image.frame_count = record->header.frame_count;
    } else {
      broken_images_.push_back(std::move(error));
    }
    images_.push_back(std::move(image));
  }
}

Document::Document(std::unique_ptr<internal::HtmlPage> page, std::string url,
                   internal::ImageStore& store)
    : store_(store),
      url_(std::move(url)),
      title_(page->title()),
      width_(page->width()),
      height_(page->height()),
      background_(page->background()),
      images_(page->TakeImages()),
      broken_images_(page->broken_images()),
      html_(std::move(page)) {}

Document::~Document() {
  for (const DocumentImage& image : images_) {
    // The engine unlocks and stops animations before a document leaves its window.
    LETHE_DCHECK(!image.locked && image.frame_timer == 0, "Document destroyed while displayed");
    // An HTML page's images are referenced once per URL by the page itself.
    if (image.image_id != 0 && html_ == nullptr) store_.Release(image.image_id);
  }
}

size_t Document::MemoryBytes() const {
  size_t bytes = sizeof(*this) + url_.capacity() + title_.capacity() +
                 images_.capacity() * sizeof(DocumentImage) +
                 texts_.capacity() * sizeof(PageTextItem);
  for (const DocumentImage& image : images_) bytes += image.url.capacity();
  for (const PageTextItem& text : texts_) bytes += text.text.capacity();
  for (const std::string& error : broken_images_) bytes += sizeof(error) + error.capacity();
  if (html_ != nullptr) bytes += html_->MemoryBytes();
  return bytes;
}

}  // namespace lethe
