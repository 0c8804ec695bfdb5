// engine/painter.h — the compositor's pixel operations on a premultiplied BGRA8 Surface: fill,
// and source-over blits of a surface scaled to a destination rectangle.
// Pure functions over caller-owned surfaces; one writer per target.
#ifndef LETHE_ENGINE_PAINTER_H_
#define LETHE_ENGINE_PAINTER_H_

#include <cstdint>

#include "lethe/glyph_painter.h"
#include "lethe/page_description.h"
#include "lethe/surface.h"

namespace lethe::internal {

BgraView ViewOf(Surface& surface);

// Fills `rect` (target coordinates, clipped) with `color` (0xAARRGGBB, source-over).
void FillRect(Surface& target, const LayoutRect& rect, uint32_t color);
// The same, drawing only inside `clip` (target coordinates).
void FillRect(Surface& target, const LayoutRect& rect, uint32_t color, const LayoutRect& clip);

// Draws `source` scaled to `rect` (target coordinates, clipped), source-over. `smooth` samples
// bilinearly (for a tiny placeholder blown up); otherwise nearest pixel (surfaces are decoded at
// their layout size, so that is mostly a 1:1 copy).
void BlitScaled(Surface& target, const Surface& source, const LayoutRect& rect, bool smooth);
// The same, drawing only inside `clip` (target coordinates).
void BlitScaled(Surface& target, const Surface& source, const LayoutRect& rect, bool smooth,
                const LayoutRect& clip);

// `a` and `b`'s overlap (width or height 0 when they do not meet).
LayoutRect Intersect(const LayoutRect& a, const LayoutRect& b);
// A view of `rect` of `surface` (clipped to it); pixels outside the view are never written.
BgraView ClippedView(Surface& surface, const LayoutRect& rect);

}  // namespace lethe::internal

#endif  // LETHE_ENGINE_PAINTER_H_
