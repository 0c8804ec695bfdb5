// engine/box_painter.h — CSS boxes painted into a Surface: rounded corners (border-radius) for
// backgrounds, borders and clipped images, and the border styles (solid, dotted, dashed, double,
// groove, ridge, inset, outset; none and hidden paint nothing).
//
// Geometry: a pixel belongs to a shape when its centre does (no anti-aliasing, as the rest of the
// compositor). Each corner is a quarter ellipse of radii (x, y); radii that do not fit their box are
// scaled down together as CSS says (css-backgrounds-3, "corner overlap"). A border's inner edge is
// the box inset by the side widths, its corners the outer radii less those widths.
//
// Patterns, along each side from the box's left (top, bottom) or top (left, right) edge, w being the
// side's width:
//   dashed  dashes of 3w, gaps of 3w (at least 1 px each);
//   dotted  dots every 2w: round (diameter w) when w >= 3, else w x w squares;
//   double  two lines of round(w / 3) with the gap between (solid below 3 px);
//   inset / outset  top and left darker (inset) or lighter (outset) than bottom and right;
//   groove / ridge  the outer half as inset (outset), the inner half the other way.
// A pixel of a corner belongs to the side whose border it is deepest in relative to its width (the
// diagonal split through the corner).
#ifndef LETHE_ENGINE_BOX_PAINTER_H_
#define LETHE_ENGINE_BOX_PAINTER_H_

#include <cstdint>
#include <vector>

#include "lethe/page_description.h"
#include "lethe/surface.h"

namespace lethe::internal {

struct CornerRadii {
  int top_left_x = 0, top_left_y = 0;
  int top_right_x = 0, top_right_y = 0;
  int bottom_right_x = 0, bottom_right_y = 0;
  int bottom_left_x = 0, bottom_left_y = 0;
  bool any() const {
    return (top_left_x > 0 && top_left_y > 0) || (top_right_x > 0 && top_right_y > 0) ||
           (bottom_right_x > 0 && bottom_right_y > 0) || (bottom_left_x > 0 && bottom_left_y > 0);
  }
};

enum class BorderStyle : uint8_t { kNone, kSolid, kDotted, kDashed, kDouble, kGroove, kRidge, kInset, kOutset };

struct BorderSide {
  int width = 0;
  BorderStyle style = BorderStyle::kNone;
  uint32_t color = 0;  // 0xAARRGGBB
  bool visible() const { return width > 0 && style != BorderStyle::kNone && (color >> 24) != 0; }
};

struct BoxBorders {
  BorderSide left, top, right, bottom;
  CornerRadii radii;
};

// A box with rounded corners, radii already scaled to fit.
class RoundedBox {
 public:
  RoundedBox(const LayoutRect& rect, const CornerRadii& radii);
  // The pixels [x0, x1) of row `y` whose centres are inside; false when none.
  bool RowSpan(int y, int* x0, int* x1) const;
  const LayoutRect& rect() const { return rect_; }
  const CornerRadii& radii() const { return radii_; }
  // The box inset by the widths, with the radii less those widths (a border's inner edge).
  RoundedBox Inset(int left, int top, int right, int bottom) const;

 private:
  LayoutRect rect_;
  CornerRadii radii_;
};

// Fills the part of `area` inside `shape` with `color` (source-over), only inside `clip`.
void FillRounded(Surface& target, const RoundedBox& shape, const LayoutRect& area, uint32_t color,
                 const LayoutRect& clip);

// Paints the borders of the box `rect` (its border box), only inside `clip`.
void PaintBorders(Surface& target, const LayoutRect& rect, const BoxBorders& borders,
                  const LayoutRect& clip);

// Keeps what is under the corners of `shape` while something square (an image) is drawn over it:
// the constructor saves the pixels of `area` (clipped) in rows a corner reaches, Restore() puts
// back those outside the shape, so the drawing ends up clipped to the rounded box.
class RoundedCornerGuard {
 public:
  RoundedCornerGuard(Surface& target, const RoundedBox& shape, const LayoutRect& area);
  void Restore();

 private:
  Surface& target_;
  const RoundedBox& shape_;
  LayoutRect area_;
  std::vector<int> rows_;          // the saved rows' y
  std::vector<uint32_t> pixels_;   // area_.width per saved row
};

}  // namespace lethe::internal

#endif  // LETHE_ENGINE_BOX_PAINTER_H_
