#include "sample_site.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "image_writers.h"

namespace lethe::sample_site {

namespace {

using Rgba = std::vector<uint8_t>;
using Palette = std::vector<std::array<uint8_t, 3>>;

// xorshift32: deterministic, tiny, good enough for pictures.
struct Random {
  uint32_t state;
  uint32_t Next() {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  }
  int Range(int low, int high) { return low + static_cast<int>(Next() % static_cast<uint32_t>(high - low + 1)); }
  double Unit() { return (Next() & 0xffffff) / double{0x1000000}; }
};

uint8_t Clamp(double value) { return static_cast<uint8_t>(std::clamp(value, 0.0, 255.0)); }

// Smooth, photo-like: interfering waves under a vignette, plus fine grain. Compresses like a
// photograph in JPEG (neither flat nor noise).
Rgba PhotoPicture(int width, int height, Random& random) {
  Rgba rgba(static_cast<size_t>(width) * static_cast<size_t>(height) * 4);
  double fx = 0.004 + random.Unit() * 0.02, fy = 0.004 + random.Unit() * 0.02;
  double phase = random.Unit() * 6.28;
  double hue = random.Unit();
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      double dx = (x - width / 2.0) / width, dy = (y - height / 2.0) / height;
      double vignette = 1.0 - 1.2 * (dx * dx + dy * dy);
      double wave = std::sin(x * fx + phase) + std::sin(y * fy * 1.3 + phase * 0.7) +
                    std::sin((x + y) * (fx + fy) * 0.5);
      double grain = static_cast<double>(random.Next() % 17) - 8.0;
      uint8_t* p = &rgba[(static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 4];
      p[0] = Clamp((128 + 40 * wave + 90 * hue) * vignette + grain);
      p[1] = Clamp((110 + 35 * std::sin(wave + hue * 6)) * vignette + grain);
      p[2] = Clamp((150 - 30 * wave) * vignette + grain);
      p[3] = 255;
    }
  }
  return rgba;
}

// Flat colours and shapes, like icons, diagrams and logos: what PNG and GIF carry on the web.
// `alpha` cuts the background out (transparent corners) for RGBA/palette-with-tRNS files.
Rgba FlatPicture(int width, int height, Random& random, bool alpha) {
  Rgba rgba(static_cast<size_t>(width) * static_cast<size_t>(height) * 4);
  std::array<uint8_t, 3> background = {static_cast<uint8_t>(random.Range(180, 255)),
                                       static_cast<uint8_t>(random.Range(180, 255)),
                                       static_cast<uint8_t>(random.Range(180, 255))};
  for (size_t i = 0; i < rgba.size(); i += 4) {
    rgba[i] = background[0]; rgba[i + 1] = background[1]; rgba[i + 2] = background[2];
    rgba[i + 3] = alpha ? 0 : 255;
  }
  int shapes = random.Range(6, 14);
  for (int s = 0; s < shapes; ++s) {
    int cx = random.Range(0, width), cy = random.Range(0, height);
    int radius = random.Range(std::max(4, width / 16), std::max(5, width / 4));
    bool circle = random.Next() % 2 == 0;
    std::array<uint8_t, 4> color = {static_cast<uint8_t>(random.Range(0, 255)),
                                    static_cast<uint8_t>(random.Range(0, 255)),
                                    static_cast<uint8_t>(random.Range(0, 255)), 255};
    for (int y = std::max(0, cy - radius); y < std::min(height, cy + radius); ++y) {
      for (int x = std::max(0, cx - radius); x < std::min(width, cx + radius); ++x) {
        if (circle && (x - cx) * (x - cx) + (y - cy) * (y - cy) > radius * radius) continue;
        std::copy(color.begin(), color.end(),
                  &rgba[(static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)) * 4]);
      }
    }
  }
  return rgba;
}

std::vector<uint8_t> DropAlpha(const Rgba& rgba) {
  std::vector<uint8_t> rgb;
  rgb.reserve(rgba.size() / 4 * 3);
  for (size_t i = 0; i < rgba.size(); i += 4) rgb.insert(rgb.end(), &rgba[i], &rgba[i + 3]);
  return rgb;
}

// The animations' global palette: 48 background shades, 15 sprite colours, transparent last.
constexpr int kSpriteBase = 48;
constexpr int kTransparent = 63;
Palette AnimationPalette(Random& random) {
  Palette palette(64);
  double tint = random.Unit();
  for (int i = 0; i < kSpriteBase; ++i) {
    palette[static_cast<size_t>(i)] = {Clamp(60 + i * 3 + tint * 60), Clamp(90 + i * 2), Clamp(200 - i * 2)};
  }
  for (int i = kSpriteBase; i < 64; ++i) {
    palette[static_cast<size_t>(i)] = {Clamp(255 - (i - kSpriteBase) * 8), Clamp(40 + (i - kSpriteBase) * 10), 30};
  }
  return palette;
}

// Background indices over the whole screen: diagonal bands of the 48 shades.
std::vector<uint8_t> AnimationBackground(int width, int height) {
  std::vector<uint8_t> indices(static_cast<size_t>(width) * static_cast<size_t>(height));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      indices[static_cast<size_t>(y) * static_cast<size_t>(width) + static_cast<size_t>(x)] =
          static_cast<uint8_t>(((x + 2 * y) / 12) % kSpriteBase);
  return indices;
}

// Frame n of an animation: a ball in its own small rectangle, transparent around it. Disposal
// varies with `style` so the site exercises 1 (keep), 2 (background) and 3 (previous).
GifFrame BallFrame(int n, int frame_count, int width, int height, int style) {
  int radius = std::max(6, std::min(width, height) / 8);
  double t = 6.2832 * n / frame_count;
  int cx = width / 2 + static_cast<int>((width / 2 - radius - 1) * std::cos(t));
  int cy = height / 2 + static_cast<int>((height / 2 - radius - 1) * std::sin(2 * t));
  GifFrame frame;
  frame.left = cx - radius;
  frame.top = cy - radius;
  frame.width = frame.height = 2 * radius;
  frame.transparent_index = kTransparent;
  frame.delay_centiseconds = 4 + n % 3;
  frame.disposal = style == 0 ? 3 : style == 1 ? 2 : 1;
  frame.interlaced = style == 2 && n % 4 == 0;
  frame.indices.resize(static_cast<size_t>(frame.width) * static_cast<size_t>(frame.height));
  for (int y = 0; y < frame.height; ++y) {
    for (int x = 0; x < frame.width; ++x) {
      int dx = x - radius, dy = y - radius;
      int distance_squared = dx * dx + dy * dy;
      frame.indices[static_cast<size_t>(y) * static_cast<size_t>(frame.width) + static_cast<size_t>(x)] =
          distance_squared >= radius * radius
              ? static_cast<uint8_t>(kTransparent)
              : static_cast<uint8_t>(kSpriteBase + distance_squared * 15 / (radius * radius));
    }
  }
  if (style == 1 && n % 5 == 0) {  // some frames bring a local palette (a recoloured ball)
    Palette local(64, {0, 0, 0});
    for (int i = kSpriteBase; i < 64; ++i) local[static_cast<size_t>(i)] = {30, Clamp(80 + (i - kSpriteBase) * 10), 240};
    frame.local_palette = local;
  }
  return frame;
}

bool WriteAnimation(const std::string& path, int width, int height, int frame_count, int style,
                    Random& random, std::string* error) {
  std::vector<GifFrame> frames;
  GifFrame background;
  background.width = width;
  background.height = height;
  background.indices = AnimationBackground(width, height);
  background.disposal = 1;
  background.delay_centiseconds = 5;
  frames.push_back(std::move(background));
  for (int n = 1; n < frame_count; ++n) frames.push_back(BallFrame(n, frame_count, width, height, style));
  return WriteGif(path, width, height, AnimationPalette(random), frames, 0, error);
}

bool WriteStaticGif(const std::string& path, int width, int height, Random& random, std::string* error) {
  Rgba picture = FlatPicture(width, height, random, false);
  // Flat pictures have few colours; map each to a palette entry.
  Palette palette;
  GifFrame frame;
  frame.width = width;
  frame.height = height;
  frame.indices.resize(static_cast<size_t>(width) * static_cast<size_t>(height));
  for (size_t i = 0; i < frame.indices.size(); ++i) {
    std::array<uint8_t, 3> color = {picture[4 * i], picture[4 * i + 1], picture[4 * i + 2]};
    auto found = std::find(palette.begin(), palette.end(), color);
    if (found == palette.end() && palette.size() < 256) found = palette.insert(palette.end(), color);
    frame.indices[i] = static_cast<uint8_t>(found == palette.end() ? 0 : found - palette.begin());
  }
  return WriteGif(path, width, height, palette, {frame}, -1, error);
}

const char* const kWords[] = {
    "memory", "surface", "decoded", "pixels", "expire", "generation", "timer", "cache", "window",
    "document", "history", "palette", "frame", "pressure", "allocator", "page", "chunk", "purge",
    "the", "a", "of", "and", "is", "when", "nobody", "drew", "it", "for", "while", "again", "on",
    "next", "draw", "back", "forward", "fonts", "shaped", "words", "age", "cap", "every"};

std::string Sentence(Random& random, int words) {
  std::string text;
  for (int i = 0; i < words; ++i) {
    if (i > 0) text += ' ';
    text += kWords[random.Next() % std::size(kWords)];
  }
  text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  return text + ".";
}

bool WriteImages(const std::filesystem::path& directory, Random& random, Site* site, std::string* error) {
  std::filesystem::path images = directory / "images";
  auto add = [&](const std::string& name, int width, int height, int frames, const std::string& kind) {
    site->images.push_back({"images/" + name, width, height, frames, kind});
    return (images / name).string();
  };
  static constexpr std::array<std::array<int, 2>, 10> kPhotoSizes = {{
      {1600, 1200}, {1280, 853}, {1024, 768}, {800, 600}, {1920, 1080},
      {640, 480}, {1200, 1600}, {960, 640}, {1440, 960}, {720, 540}}};
  for (size_t i = 0; i < kPhotoSizes.size(); ++i) {
    auto [width, height] = kPhotoSizes[i];
    std::string path = add("photo-" + std::to_string(i) + ".jpg", width, height, 1, "jpeg");
    if (!WriteJpeg(path, width, height, DropAlpha(PhotoPicture(width, height, random)), 82, i % 3 == 1, error))
      return false;
  }
  static constexpr PngKind kPngKinds[] = {PngKind::kRgba, PngKind::kRgb, PngKind::kPalette, PngKind::kGray};
  for (int i = 0; i < 12; ++i) {
    int width = 128 << (i % 3), height = (96 << (i % 3)) + 32 * (i % 4);
    PngKind kind = kPngKinds[i % 4];
    bool photo = i % 5 == 4;  // a few photographic PNGs (screenshots, renders)
    Rgba picture = photo ? PhotoPicture(width, height, random) : FlatPicture(width, height, random, kind == PngKind::kRgba || kind == PngKind::kPalette);
    std::string path = add("art-" + std::to_string(i) + ".png", width, height, 1, "png");
    if (!WritePng(path, width, height, picture, kind, i % 3 == 2, error)) return false;
  }
  for (int i = 0; i < 4; ++i) {
    int width = 160 + 40 * i, height = 120 + 30 * i;
    if (!WriteStaticGif(add("icon-" + std::to_string(i) + ".gif", width, height, 1, "gif"), width, height, random, error))
      return false;
  }
  static constexpr std::array<std::array<int, 3>, 6> kAnimations = {{
      {320, 240, 36}, {480, 320, 48}, {256, 256, 30}, {400, 300, 60}, {200, 200, 40}, {500, 280, 32}}};
  for (size_t i = 0; i < kAnimations.size(); ++i) {
    auto [width, height, frames] = kAnimations[i];
    std::string path = add("anim-" + std::to_string(i) + ".gif", width, height, frames, "animated-gif");
    if (!WriteAnimation(path, width, height, frames, static_cast<int>(i % 3), random, error)) return false;
  }
  return true;
}

// Indices of the site's images of one kind.
std::vector<size_t> OfKind(const Site& site, const std::string& kind) {
  std::vector<size_t> found;
  for (size_t i = 0; i < site.images.size(); ++i)
    if (site.images[i].kind == kind) found.push_back(i);
  return found;
}

nlohmann::json PageDescription(int page, const SiteOptions& options, const Site& site, Random& random) {
  constexpr int kPageWidth = 1024;
  nlohmann::json items = nlohmann::json::array();
  int y = 24;
  items.push_back({{"type", "text"}, {"text", "Sample page " + std::to_string(page + 1)},
                   {"x", 24}, {"y", y}, {"width", kPageWidth - 48}, {"size", 28}, {"color", "#202040"}});
  y += 56;
  const std::vector<std::vector<size_t>> kinds = {OfKind(site, "jpeg"), OfKind(site, "png"),
                                                  OfKind(site, "animated-gif"), OfKind(site, "gif")};
  for (int n = 0; n < options.images_per_page; ++n) {
    const std::vector<size_t>& pool = kinds[static_cast<size_t>(n) % kinds.size()];
    const ImageSpec& image = site.images[pool[static_cast<size_t>(page * 3 + n) % pool.size()]];
    // Large pictures are laid out smaller than their natural size, as on real pages.
    int width = std::min(image.width, n % 2 == 0 ? 640 : 480);
    int height = image.height * width / image.width;
    int x = n % 2 == 0 ? 24 : kPageWidth - 24 - width;
    items.push_back({{"type", "image"}, {"src", "../" + image.file}, {"x", x}, {"y", y},
                     {"width", width}, {"height", height}});
    y += height + 16;
    items.push_back({{"type", "text"}, {"text", Sentence(random, random.Range(12, 40))}, {"x", 24},
                     {"y", y}, {"width", kPageWidth - 48}, {"size", 16}, {"color", "#303030"}});
    y += 120;
  }
  return {{"title", "Sample page " + std::to_string(page + 1)}, {"width", kPageWidth},
          {"height", y}, {"background", "#ffffff"}, {"items", items}};
}

bool WriteText(const std::filesystem::path& path, const std::string& text, std::string* error) {
  std::ofstream file(path);
  file << text << "\n";
  file.close();
  if (!file) *error = path.string() + ": cannot write";
  return static_cast<bool>(file);
}

}  // namespace

bool GenerateSite(const std::string& directory, const SiteOptions& options, Site* site, std::string* error) {
  if (options.page_count < 1 || options.images_per_page < 4) {
    *error = "a site needs at least 1 page and 4 images per page (one of each kind)";
    return false;
  }
  std::filesystem::path root(directory);
  std::error_code code;
  std::filesystem::create_directories(root / "images", code);
  if (!code) std::filesystem::create_directories(root / "pages", code);
  if (code) {
    *error = directory + ": cannot create (" + code.message() + ")";
    return false;
  }
  Random random{options.seed * 2654435761u + 1};
  if (!WriteImages(root, random, site, error)) return false;
  nlohmann::json index = {{"images", nlohmann::json::array()}, {"pages", nlohmann::json::array()}};
  for (const ImageSpec& image : site->images) {
    index["images"].push_back({{"file", image.file}, {"kind", image.kind}, {"width", image.width},
                               {"height", image.height}, {"frames", image.frame_count}});
  }
  for (int page = 0; page < options.page_count; ++page) {
    char name[32];
    std::snprintf(name, sizeof(name), "pages/page-%02d.json", page + 1);
    if (!WriteText(root / name, PageDescription(page, options, *site, random).dump(1), error)) return false;
    site->pages.push_back(name);
    index["pages"].push_back(name);
  }
  return WriteText(root / "index.json", index.dump(1), error);
}

}  // namespace lethe::sample_site
