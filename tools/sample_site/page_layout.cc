#include "page_layout.h"

#include <algorithm>
#include <string>
#include <utility>

#include "random.h"
#include "site_text.h"

namespace lethe::sample_site {

namespace {

constexpr int kMargin = 24;
constexpr int kColumn = kPageWidth - 2 * kMargin;
constexpr int kGap = 16;
constexpr uint32_t kLayoutStream = 0x1a70u;  // the page's Random for text, apart from its images'

// Builds the items top to bottom; y_ is where the next block starts.
class PageBuilder {
 public:
  PageBuilder(int page, uint32_t site_seed) : random_(site_seed, static_cast<uint32_t>(page), kLayoutStream) {}

  void Image(const ImageSpec& image, int x, int y, int width, int height) {
    items_.push_back({{"type", "image"}, {"src", "../" + image.file}, {"x", x}, {"y", y},
                      {"width", width}, {"height", height}});
  }
  // A paragraph at (x, y) at most `width` wide; returns its estimated height.
  int Text(const std::string& text, int x, int y, int width, int size, const char* color) {
    items_.push_back({{"type", "text"}, {"text", text}, {"x", x}, {"y", y}, {"width", width},
                      {"size", size}, {"color", color}});
    return TextHeight(text, width, size);
  }
  int Prose(int x, int y, int width) { return Text(Paragraph(random_, width * 2 / 5), x, y, width, 16, "#303030"); }

  void Header(const std::string& title, const std::vector<PlannedImage>& shared);
  void Hero(const ImageSpec& hero);
  void Beside(const PlannedImage& image, bool on_left);
  void Thumbnails(const std::vector<const ImageSpec*>& thumbnails);
  void Footer(const std::vector<PlannedImage>& shared);
  Random& random() { return random_; }

  nlohmann::json Finish(const std::string& title) {
    return {{"title", title}, {"width", kPageWidth}, {"height", y_ + kMargin},
            {"background", "#ffffff"}, {"items", std::move(items_)}};
  }

 private:
  Random random_;
  nlohmann::json items_ = nlohmann::json::array();
  int y_ = 16;
};

// Icons and the spinner right-aligned in a row ending at the right margin; returns the row's height.
int IconRow(PageBuilder& builder, const std::vector<PlannedImage>& shared, int y) {
  int x = kPageWidth - kMargin, height = 0;
  for (auto it = shared.rbegin(); it != shared.rend(); ++it) {
    if (it->role != ImageRole::kIcon && it->role != ImageRole::kSpinner) continue;
    x -= it->spec.width;
    builder.Image(it->spec, x, y, it->spec.width, it->spec.height);
    x -= 12;
    height = std::max(height, it->spec.height);
  }
  return height;
}

void PageBuilder::Header(const std::string& title, const std::vector<PlannedImage>& shared) {
  int height = IconRow(*this, shared, y_ + 8);
  for (const PlannedImage& image : shared) {
    if (image.role != ImageRole::kLogo) continue;
    Image(image.spec, kMargin, y_, image.spec.width, image.spec.height);
    height = std::max(height, image.spec.height);
  }
  y_ += height + kGap;
  y_ += Text(title, kMargin, y_, kColumn, 28, "#202040") + kGap;
}

void PageBuilder::Hero(const ImageSpec& hero) {
  const int height = hero.height * kColumn / hero.width;
  Image(hero, kMargin, y_, kColumn, height);
  y_ += height + 6;
  y_ += Text(Sentence(random_, random_.Range(6, 14)), kMargin, y_, kColumn, 13, "#606060") + kGap;
  y_ += Prose(kMargin, y_, kColumn) + kGap;
}

// The width an image gets beside the text: photographs and drawings are scaled down to fit,
// GIFs keep their natural size.
int LaidOutWidth(const PlannedImage& image) {
  switch (image.role) {
    case ImageRole::kPhoto: return std::min(image.spec.width, image.spec.height > image.spec.width ? 400 : 560);
    case ImageRole::kChart:
    case ImageRole::kScreenshot: return std::min(image.spec.width, 600);
    default: return std::min(image.spec.width, 520);
  }
}

void PageBuilder::Beside(const PlannedImage& image, bool on_left) {
  const int width = LaidOutWidth(image);
  const int height = image.spec.height * width / image.spec.width;
  const int text_width = kColumn - width - kGap;
  const int image_x = on_left ? kMargin : kPageWidth - kMargin - width;
  const int text_x = on_left ? kMargin + width + kGap : kMargin;
  Image(image.spec, image_x, y_, width, height);
  int text_height = 0;
  while (text_height < height - 40) text_height += Prose(text_x, y_ + text_height, text_width) + 8;
  y_ += std::max(height, text_height) + kGap;
  y_ += Prose(kMargin, y_, kColumn) + kGap;
}

void PageBuilder::Thumbnails(const std::vector<const ImageSpec*>& thumbnails) {
  y_ += Text("Related", kMargin, y_, kColumn, 20, "#202040") + 4;
  int x = kMargin, height = 0;
  for (const ImageSpec* thumbnail : thumbnails) {
    Image(*thumbnail, x, y_, thumbnail->width, thumbnail->height);
    Text(Sentence(random_, random_.Range(2, 4)), x, y_ + thumbnail->height + 4, thumbnail->width, 13, "#404040");
    x += thumbnail->width + kGap;
    height = std::max(height, thumbnail->height);
  }
  y_ += height + 4 + 2 * 20 + kGap;
}

void PageBuilder::Footer(const std::vector<PlannedImage>& shared) {
  y_ += Text(Sentence(random_, 8), kMargin, y_, kColumn - 300, 13, "#808080");
  y_ += IconRow(*this, shared, y_) + kGap;
}

}  // namespace

nlohmann::json LayOutPage(int page, const std::vector<PlannedImage>& shared, const std::vector<PlannedImage>& own,
                          uint32_t site_seed) {
  PageBuilder builder(page, site_seed);
  const std::string title = "Sample page " + std::to_string(page) + ": " + Sentence(builder.random(), 4);
  builder.Header(title, shared);
  std::vector<const PlannedImage*> body;
  std::vector<const ImageSpec*> thumbnails;
  for (const PlannedImage& image : own) {
    if (image.role == ImageRole::kHero) builder.Hero(image.spec);
    else if (image.role == ImageRole::kThumbnail) thumbnails.push_back(&image.spec);
    else body.push_back(&image);
  }
  // Real pages mix their kinds of pictures: shuffle the body (Fisher-Yates, seeded).
  for (size_t i = body.size(); i > 1; --i) std::swap(body[i - 1], body[builder.random().Next() % i]);
  for (size_t i = 0; i < body.size(); ++i) builder.Beside(*body[i], i % 2 == 0);
  if (!thumbnails.empty()) builder.Thumbnails(thumbnails);
  builder.Footer(shared);
  return builder.Finish(title);
}

}  // namespace lethe::sample_site
