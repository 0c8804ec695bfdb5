#include "gif_pictures.h"

#include <algorithm>
#include <cmath>

#include "image_writers.h"

namespace lethe::sample_site {

namespace {

using Palette = std::vector<std::array<uint8_t, 3>>;

uint8_t Clamp(double value) { return static_cast<uint8_t>(std::clamp(value, 0.0, 255.0)); }

// The animations' global palette: 48 background shades, 15 sprite colours, transparent last.
constexpr int kSpriteBase = 48;
constexpr int kTransparent = 63;
Palette AnimationPalette(Random& random) {
  Palette palette(64);
  const double tint = random.Unit();
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

// Palette indices of a shaded ball of `radius` in a 2r x 2r square, transparent around it.
std::vector<uint8_t> Ball(int radius) {
  const int side = 2 * radius;
  std::vector<uint8_t> indices(static_cast<size_t>(side) * static_cast<size_t>(side));
  for (int y = 0; y < side; ++y) {
    for (int x = 0; x < side; ++x) {
      const int dx = x - radius, dy = y - radius;
      const int distance_squared = dx * dx + dy * dy;
      indices[static_cast<size_t>(y) * static_cast<size_t>(side) + static_cast<size_t>(x)] =
          distance_squared >= radius * radius
              ? static_cast<uint8_t>(kTransparent)
              : static_cast<uint8_t>(kSpriteBase + distance_squared * 15 / (radius * radius));
    }
  }
  return indices;
}

// Frame n of an animation: the ball somewhere on its figure-of-eight path.
GifFrame BallFrame(int n, int frame_count, int width, int height, int style) {
  const int radius = std::max(6, std::min(width, height) / 8);
  const double t = 6.2832 * n / frame_count;
  const int cx = width / 2 + static_cast<int>((width / 2 - radius - 1) * std::cos(t));
  const int cy = height / 2 + static_cast<int>((height / 2 - radius - 1) * std::sin(2 * t));
  GifFrame frame;
  frame.left = cx - radius;
  frame.top = cy - radius;
  frame.width = frame.height = 2 * radius;
  frame.transparent_index = kTransparent;
  frame.delay_centiseconds = 4 + n % 3;
  frame.disposal = style == 0 ? 3 : style == 1 ? 2 : 1;
  frame.interlaced = style == 2 && n % 4 == 0;
  frame.indices = Ball(radius);
  if (style == 1 && n % 5 == 0) {  // some frames bring a local palette (a recoloured ball)
    Palette local(64, {0, 0, 0});
    for (int i = kSpriteBase; i < 64; ++i) local[static_cast<size_t>(i)] = {30, Clamp(80 + (i - kSpriteBase) * 10), 240};
    frame.local_palette = local;
  }
  return frame;
}

}  // namespace

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

bool WriteStillGif(const std::string& path, const Picture& picture, std::string* error) {
  Palette palette;
  GifFrame frame;
  frame.width = picture.width;
  frame.height = picture.height;
  frame.indices.resize(picture.rgba.size() / 4);
  for (size_t i = 0; i < frame.indices.size(); ++i) {
    const std::array<uint8_t, 3> color = {picture.rgba[4 * i], picture.rgba[4 * i + 1], picture.rgba[4 * i + 2]};
    auto found = std::find(palette.begin(), palette.end(), color);
    if (found == palette.end() && palette.size() < 256) found = palette.insert(palette.end(), color);
    frame.indices[i] = static_cast<uint8_t>(found == palette.end() ? 0 : found - palette.begin());
  }
  if (palette.size() < 2) palette.push_back({0, 0, 0});  // a GIF palette has at least 2 entries
  return WriteGif(path, picture.width, picture.height, palette, {frame}, -1, error);
}

}  // namespace lethe::sample_site
