// lethe/glyph_painter.h — blending glyph coverage into a premultiplied BGRA8 framebuffer.
// Pure functions over caller-owned memory; any thread, one writer per framebuffer.
#ifndef LETHE_GLYPH_PAINTER_H_
#define LETHE_GLYPH_PAINTER_H_

#include <cstddef>
#include <cstdint>

#include "lethe/font_face.h"

namespace lethe {

// A window onto premultiplied BGRA8 pixels owned by someone else.
struct BgraView {
  uint8_t* pixels = nullptr;
  int width = 0;
  int height = 0;
  size_t stride = 0;  // bytes per row, >= 4 * width
};

// Colour as 0xAARRGGBB, not premultiplied.
using Argb = uint32_t;

// Source-over blends `glyph` in `color` with its pen position at (pen_x, baseline_y). Parts
// outside the view are clipped.
void PaintGlyph(BgraView target, const GlyphBitmap& glyph, int pen_x, int baseline_y, Argb color);

}  // namespace lethe

#endif  // LETHE_GLYPH_PAINTER_H_
