#include "lethe/glyph_painter.h"

#include <algorithm>

namespace lethe {

namespace {

// (a * b + 127) / 255 without a division: exact for 0..255 inputs.
inline uint32_t MulDiv255(uint32_t a, uint32_t b) {
  uint32_t product = a * b + 128;
  return (product + (product >> 8)) >> 8;
}

}  // namespace

void PaintGlyph(BgraView target, const GlyphBitmap& glyph, int pen_x, int baseline_y, Argb color) {
  const int origin_x = pen_x + glyph.left;
  const int origin_y = baseline_y + glyph.top;
  const int first_column = std::max(0, -origin_x);
  const int last_column = std::min(glyph.width, target.width - origin_x);
  const int first_row = std::max(0, -origin_y);
  const int last_row = std::min(glyph.height, target.height - origin_y);
  const uint32_t alpha = color >> 24;
  const uint32_t red = (color >> 16) & 0xff;
  const uint32_t green = (color >> 8) & 0xff;
  const uint32_t blue = color & 0xff;
  for (int row = first_row; row < last_row; ++row) {
    const uint8_t* coverage = glyph.coverage.data() + static_cast<size_t>(row) * static_cast<size_t>(glyph.width);
    uint8_t* out = target.pixels + static_cast<size_t>(origin_y + row) * target.stride;
    for (int column = first_column; column < last_column; ++column) {
      uint32_t source_alpha = MulDiv255(alpha, coverage[column]);
      if (source_alpha == 0) continue;
      uint8_t* pixel = out + 4 * static_cast<size_t>(origin_x + column);
      uint32_t keep = 255 - source_alpha;
      pixel[0] = static_cast<uint8_t>(MulDiv255(blue, source_alpha) + MulDiv255(pixel[0], keep));
      pixel[1] = static_cast<uint8_t>(MulDiv255(green, source_alpha) + MulDiv255(pixel[1], keep));
      pixel[2] = static_cast<uint8_t>(MulDiv255(red, source_alpha) + MulDiv255(pixel[2], keep));
      pixel[3] = static_cast<uint8_t>(source_alpha + MulDiv255(pixel[3], keep));
    }
  }
}

}  // namespace lethe
