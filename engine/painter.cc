#include "painter.h"

#include <algorithm>

namespace lethe::internal {

namespace {

inline uint32_t MulDiv255(uint32_t a, uint32_t b) {
  uint32_t product = a * b + 128;
  return (product + (product >> 8)) >> 8;
}

// Source-over of one premultiplied pixel.
inline void Blend(uint8_t* out, const uint8_t* in) {
  uint32_t alpha = in[3];
  if (alpha == 255) {
    out[0] = in[0];
    out[1] = in[1];
    out[2] = in[2];
    out[3] = 255;
    return;
  }
  if (alpha == 0) return;
  uint32_t keep = 255 - alpha;
  for (int c = 0; c < 4; ++c) out[c] = static_cast<uint8_t>(in[c] + MulDiv255(out[c], keep));
}

struct Clip {
  int x0, y0, x1, y1;
  bool empty() const { return x0 >= x1 || y0 >= y1; }
};

Clip ClipTo(const Surface& target, const LayoutRect& rect) {
  return {std::max(0, rect.x), std::max(0, rect.y),
          std::min(static_cast<int>(target.width()), rect.x + rect.width),
          std::min(static_cast<int>(target.height()), rect.y + rect.height)};
}

LayoutRect WholeOf(const Surface& target) {
  return {0, 0, static_cast<int>(target.width()), static_cast<int>(target.height())};
}

}  // namespace

BgraView ViewOf(Surface& surface) {
  return {surface.pixels(), static_cast<int>(surface.width()), static_cast<int>(surface.height()),
          surface.stride()};
}

LayoutRect Intersect(const LayoutRect& a, const LayoutRect& b) {
  int x0 = std::max(a.x, b.x);
  int y0 = std::max(a.y, b.y);
  int x1 = std::min(a.x + a.width, b.x + b.width);
  int y1 = std::min(a.y + a.height, b.y + b.height);
  return {x0, y0, std::max(0, x1 - x0), std::max(0, y1 - y0)};
}

BgraView ClippedView(Surface& surface, const LayoutRect& rect) {
  LayoutRect area = Intersect(rect, WholeOf(surface));
  if (area.width == 0 || area.height == 0) return {};
  return {surface.Row(static_cast<uint32_t>(area.y)) + 4 * static_cast<size_t>(area.x), area.width,
          area.height, surface.stride()};
}

void FillRect(Surface& target, const LayoutRect& rect, uint32_t color) {
  FillRect(target, rect, color, WholeOf(target));
}

void FillRect(Surface& target, const LayoutRect& rect, uint32_t color, const LayoutRect& clip_rect) {
  Clip clip = ClipTo(target, Intersect(rect, clip_rect));
  if (clip.empty()) return;
  uint32_t alpha = color >> 24;
  uint8_t pixel[4] = {static_cast<uint8_t>(MulDiv255(color & 0xff, alpha)),
                      static_cast<uint8_t>(MulDiv255((color >> 8) & 0xff, alpha)),
                      static_cast<uint8_t>(MulDiv255((color >> 16) & 0xff, alpha)),
                      static_cast<uint8_t>(alpha)};
  for (int y = clip.y0; y < clip.y1; ++y) {
    uint8_t* row = target.Row(static_cast<uint32_t>(y));
    for (int x = clip.x0; x < clip.x1; ++x) Blend(row + 4 * x, pixel);
  }
}

void BlitScaled(Surface& target, const Surface& source, const LayoutRect& rect, bool smooth) {
  BlitScaled(target, source, rect, smooth, WholeOf(target));
}

void BlitScaled(Surface& target, const Surface& source, const LayoutRect& rect, bool smooth,
                const LayoutRect& clip_rect) {
  Clip clip = ClipTo(target, Intersect(rect, clip_rect));
  if (clip.empty() || source.empty() || rect.width <= 0 || rect.height <= 0) return;
  const int64_t sw = source.width();
  const int64_t sh = source.height();
  if (!smooth || (sw == rect.width && sh == rect.height)) {
    for (int y = clip.y0; y < clip.y1; ++y) {
      const uint8_t* in = source.Row(static_cast<uint32_t>((y - rect.y) * sh / rect.height));
      uint8_t* out = target.Row(static_cast<uint32_t>(y));
      for (int x = clip.x0; x < clip.x1; ++x) {
        Blend(out + 4 * x, in + 4 * ((x - rect.x) * sw / rect.width));
      }
    }
    return;
  }
  // Bilinear in 8-bit fixed point, sampling at pixel centres.
  for (int y = clip.y0; y < clip.y1; ++y) {
    int64_t fy = std::max<int64_t>(0, ((2 * (y - rect.y) + 1) * sh * 256) / (2 * rect.height) - 128);
    uint32_t y0 = static_cast<uint32_t>(std::min(fy >> 8, sh - 1));
    uint32_t y1 = static_cast<uint32_t>(std::min<int64_t>(y0 + 1, sh - 1));
    uint32_t wy = static_cast<uint32_t>(fy & 255);
    const uint8_t* r0 = source.Row(y0);
    const uint8_t* r1 = source.Row(y1);
    uint8_t* out = target.Row(static_cast<uint32_t>(y));
    for (int x = clip.x0; x < clip.x1; ++x) {
      int64_t fx = std::max<int64_t>(0, ((2 * (x - rect.x) + 1) * sw * 256) / (2 * rect.width) - 128);
      int64_t x0 = std::min(fx >> 8, sw - 1);
      int64_t x1 = std::min(x0 + 1, sw - 1);
      uint32_t wx = static_cast<uint32_t>(fx & 255);
      uint8_t pixel[4];
      for (int c = 0; c < 4; ++c) {
        uint32_t top = r0[4 * x0 + c] * (256 - wx) + r0[4 * x1 + c] * wx;
        uint32_t bottom = r1[4 * x0 + c] * (256 - wx) + r1[4 * x1 + c] * wx;
        pixel[c] = static_cast<uint8_t>((top * (256 - wy) + bottom * wy + 32768) >> 16);
      }
      Blend(out + 4 * x, pixel);
    }
  }
}

}  // namespace lethe::internal
