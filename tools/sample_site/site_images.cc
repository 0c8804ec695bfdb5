#include "site_images.h"

#include <array>

#include "gif_pictures.h"
#include "pictures.h"
#include "random.h"

namespace lethe::sample_site {

namespace {

constexpr uint32_t kSharedPage = 0;

PlannedImage Plan(const std::string& name, int width, int height, const char* kind, ImageRole role,
                  int page, Random& random) {
  PlannedImage image;
  image.spec = {"images/" + name, width, height, 1, kind, page};
  image.role = role;
  image.seed = random.Next();
  return image;
}

PlannedImage PlanAnimation(const std::string& name, int width, int height, int frame_count, int style,
                           ImageRole role, int page, Random& random) {
  PlannedImage image = Plan(name, width, height, "animated-gif", role, page, random);
  image.spec.frame_count = frame_count;
  image.animation_style = style;
  return image;
}

// A natural photo size: `width`, and a height from landscape (3:2, 4:3, 16:9); a portrait
// photo (2:3) is `width` high instead.
std::array<int, 2> PhotoSize(int width, bool portrait, Random& random) {
  if (portrait) return {width * 2 / 3, width};
  static constexpr std::array<std::array<int, 2>, 3> kAspects = {{{3, 2}, {4, 3}, {16, 9}}};
  const auto& aspect = kAspects[random.Next() % kAspects.size()];
  return {width, width * aspect[1] / aspect[0]};
}

std::string PageFile(int page, const std::string& name) {
  return std::string("page-") + (page < 10 ? "0" : "") + std::to_string(page) + "-" + name;
}

// JPEGs: a hero, one or two photographs, three or four thumbnails.
void PlanPagePhotos(int page, Random& random, std::vector<PlannedImage>* images) {
  static constexpr std::array<int, 5> kHeroWidths = {1024, 1200, 1280, 1440, 1600};
  auto [hero_width, hero_height] = PhotoSize(kHeroWidths[random.Next() % kHeroWidths.size()], false, random);
  images->push_back(Plan(PageFile(page, "hero.jpg"), hero_width, hero_height, "jpeg", ImageRole::kHero, page, random));
  images->back().progressive = page % 3 == 2;
  const int photo_count = random.Range(1, 2);
  for (int i = 0; i < photo_count; ++i) {
    auto [width, height] = PhotoSize(random.Range(720, 1200), random.OneIn(4), random);
    images->push_back(Plan(PageFile(page, "photo-" + std::to_string(i) + ".jpg"), width, height, "jpeg",
                           ImageRole::kPhoto, page, random));
    images->back().progressive = random.OneIn(3);
  }
  const int thumbnail_count = random.Range(3, 4);
  for (int i = 0; i < thumbnail_count; ++i) {
    images->push_back(Plan(PageFile(page, "thumb-" + std::to_string(i) + ".jpg"), 224, 160, "jpeg",
                           ImageRole::kThumbnail, page, random));
  }
}

// PNGs: a chart, a screenshot and, on half of the pages, a grey figure.
void PlanPageDrawings(int page, Random& random, std::vector<PlannedImage>* images) {
  images->push_back(Plan(PageFile(page, "chart.png"), random.Range(480, 720), random.Range(300, 420), "png",
                         ImageRole::kChart, page, random));
  images->back().png_kind = page % 2 == 0 ? PngKind::kPalette : PngKind::kRgba;
  images->push_back(Plan(PageFile(page, "screenshot.png"), random.Range(800, 1000), random.Range(500, 640),
                         "png", ImageRole::kScreenshot, page, random));
  images->back().png_kind = PngKind::kRgb;
  images->back().progressive = page % 4 == 3;
  if (page % 2 == 1) {
    images->push_back(Plan(PageFile(page, "figure.png"), random.Range(320, 480), random.Range(240, 360), "png",
                           ImageRole::kFigure, page, random));
    images->back().png_kind = PngKind::kGray;
  }
}

// GIFs: one or two diagrams, one or two animations.
void PlanPageGifs(int page, Random& random, std::vector<PlannedImage>* images) {
  const int diagram_count = random.Range(1, 2);
  for (int i = 0; i < diagram_count; ++i) {
    images->push_back(Plan(PageFile(page, "diagram-" + std::to_string(i) + ".gif"), random.Range(200, 400),
                           random.Range(150, 300), "gif", ImageRole::kDiagram, page, random));
  }
  const int animation_count = random.Range(1, 2);
  for (int i = 0; i < animation_count; ++i) {
    images->push_back(PlanAnimation(PageFile(page, "anim-" + std::to_string(i) + ".gif"), random.Range(200, 480),
                                    random.Range(160, 320), random.Range(30, 60), (page + i) % 3,
                                    ImageRole::kAnimation, page, random));
  }
}

bool WriteJpegPicture(const std::string& path, const PlannedImage& image, Random& random, std::string* error) {
  PhotoPainter painter(image.spec.width, image.spec.height, random);
  const int quality = image.role == ImageRole::kThumbnail ? 75 : 82;
  return WriteJpeg(path, image.spec.width, image.spec.height,
                   [&painter](int y, uint8_t* rgba) { painter.PaintRow(y, rgba); }, quality, image.progressive, error);
}

// The picture of a PNG or still GIF of `role`.
Picture DrawFlat(const PlannedImage& image, Random& random) {
  const int width = image.spec.width, height = image.spec.height;
  switch (image.role) {
    case ImageRole::kChart: return ChartPicture(width, height, random);
    case ImageRole::kScreenshot: return ScreenshotPicture(width, height, random);
    case ImageRole::kLogo:
    case ImageRole::kIcon: return FlatPicture(width, height, random, image.spec.kind == "png");
    default: return FlatPicture(width, height, random, false);
  }
}

}  // namespace

std::vector<PlannedImage> PlanSharedImages(uint32_t site_seed) {
  Random random(site_seed, kSharedPage);
  std::vector<PlannedImage> images;
  images.push_back(Plan("logo.png", 240, 64, "png", ImageRole::kLogo, 0, random));
  images.push_back(Plan("icon-home.png", 32, 32, "png", ImageRole::kIcon, 0, random));
  images.back().png_kind = PngKind::kPalette;
  images.push_back(Plan("icon-search.png", 32, 32, "png", ImageRole::kIcon, 0, random));
  images.push_back(Plan("icon-menu.gif", 32, 32, "gif", ImageRole::kIcon, 0, random));
  images.push_back(Plan("icon-share.gif", 48, 48, "gif", ImageRole::kIcon, 0, random));
  images.push_back(PlanAnimation("spinner.gif", 48, 48, 30, 1, ImageRole::kSpinner, 0, random));
  return images;
}

std::vector<PlannedImage> PlanPageImages(int page, uint32_t site_seed) {
  Random random(site_seed, static_cast<uint32_t>(page));
  std::vector<PlannedImage> images;
  PlanPagePhotos(page, random, &images);
  PlanPageDrawings(page, random, &images);
  PlanPageGifs(page, random, &images);
  return images;
}

bool WritePlannedImage(const std::filesystem::path& root, const PlannedImage& image, std::string* error) {
  const std::string path = (root / image.spec.file).string();
  Random random(image.seed);
  const ImageSpec& spec = image.spec;
  if (spec.kind == "jpeg") return WriteJpegPicture(path, image, random, error);
  if (spec.kind == "animated-gif") {
    return WriteAnimation(path, spec.width, spec.height, spec.frame_count, image.animation_style, random, error);
  }
  const Picture picture = DrawFlat(image, random);
  if (spec.kind == "gif") return WriteStillGif(path, picture, error);
  return WritePng(path, picture.width, picture.height, picture.rgba, image.png_kind, image.progressive, error);
}

}  // namespace lethe::sample_site
