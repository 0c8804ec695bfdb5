#include "box_painter.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "painter.h"

namespace lethe::internal {

namespace {

LayoutRect WholeOf(const Surface& target) {
  return {0, 0, static_cast<int>(target.width()), static_cast<int>(target.height())};
}

// CSS's corner overlap rule: one factor for every radius, so that adjacent radii fit their side.
CornerRadii Fitted(CornerRadii r, const LayoutRect& rect) {
  for (int* v : {&r.top_left_x, &r.top_left_y, &r.top_right_x, &r.top_right_y, &r.bottom_right_x,
                 &r.bottom_right_y, &r.bottom_left_x, &r.bottom_left_y}) {
    *v = std::max(0, *v);
  }
  double factor = 1.0;
  auto fit = [&](int side, int a, int b) {
    if (a + b > 0) factor = std::min(factor, static_cast<double>(std::max(0, side)) / (a + b));
  };
  fit(rect.width, r.top_left_x, r.top_right_x);
  fit(rect.width, r.bottom_left_x, r.bottom_right_x);
  fit(rect.height, r.top_left_y, r.bottom_left_y);
  fit(rect.height, r.top_right_y, r.bottom_right_y);
  if (factor < 1.0) {
    for (int* v : {&r.top_left_x, &r.top_left_y, &r.top_right_x, &r.top_right_y, &r.bottom_right_x,
                   &r.bottom_right_y, &r.bottom_left_x, &r.bottom_left_y}) {
      *v = static_cast<int>(std::floor(*v * factor));
    }
  }
  return r;
}

// How far in from a corner's straight edge the quarter ellipse (rx, ry) is at `dy` from its centre
// row (dy in 0..ry): rx - rx * sqrt(1 - (dy / ry)^2).
double CornerIndent(int rx, int ry, double dy) {
  if (rx <= 0 || ry <= 0 || dy <= 0) return 0;
  const double t = std::min(1.0, dy / ry);
  return rx - rx * std::sqrt(1.0 - t * t);
}

uint32_t Scaled(uint32_t color, double factor) {
  uint32_t out = color & 0xff000000u;
  for (int shift = 0; shift < 24; shift += 8) {
    const double channel = (color >> shift) & 0xff;
    const double value = factor <= 1.0 ? channel * factor : channel + (255 - channel) * (factor - 1.0);
    out |= static_cast<uint32_t>(std::lround(std::clamp(value, 0.0, 255.0))) << shift;
  }
  return out;
}

enum class Side { kLeft, kTop, kRight, kBottom };

// Whether the pixel at `along` (from the side's start) and `depth` (0 at the outer edge) of a side
// of width `w` is painted in `style`; *color is shaded for the 3-D styles.
bool Painted(BorderStyle style, Side side, int w, int along, int depth, uint32_t* color) {
  const bool top_left = side == Side::kTop || side == Side::kLeft;
  switch (style) {
    case BorderStyle::kNone:
      return false;
    case BorderStyle::kSolid:
      return true;
    case BorderStyle::kDashed: {
      const int dash = std::max(1, 3 * w);
      return (along % (2 * dash)) < dash;
    }
    case BorderStyle::kDotted: {
      const int period = std::max(2, 2 * w);
      const int at = along % period;
      if (w < 3) return at < std::max(1, w);
      const double dx = at + 0.5 - w / 2.0;
      const double dy = depth + 0.5 - w / 2.0;
      return dx * dx + dy * dy <= (w / 2.0) * (w / 2.0);
    }
    case BorderStyle::kDouble: {
      if (w < 3) return true;
      const int line = (w + 1) / 3;
      return depth < line || depth >= w - line;
    }
    case BorderStyle::kInset:
    case BorderStyle::kOutset: {
      const bool dark = (style == BorderStyle::kInset) == top_left;
      *color = Scaled(*color, dark ? 0.6 : 1.4);
      return true;
    }
    case BorderStyle::kGroove:
    case BorderStyle::kRidge: {
      const bool outer = depth < w / 2;
      const bool inset_like = (style == BorderStyle::kGroove) == outer;
      *color = Scaled(*color, inset_like == top_left ? 0.6 : 1.4);
      return true;
    }
  }
  return false;
}

// Paints one border pixel: finds its side (the one it is deepest in relative to the width) and
// applies that side's style. Returns the colour painted, 0 for none.
uint32_t BorderPixel(const LayoutRect& rect, const BoxBorders& b, int px, int py) {
  const double cx = px + 0.5;
  const double cy = py + 0.5;
  struct Candidate {
    Side side;
    const BorderSide* border;
    double depth;
  };
  const Candidate candidates[] = {{Side::kLeft, &b.left, cx - rect.x},
                                  {Side::kTop, &b.top, cy - rect.y},
                                  {Side::kRight, &b.right, rect.x + rect.width - cx},
                                  {Side::kBottom, &b.bottom, rect.y + rect.height - cy}};
  const Candidate* best = nullptr;
  double best_ratio = std::numeric_limits<double>::max();
  for (const Candidate& c : candidates) {
    if (!c.border->visible()) continue;
    const double ratio = c.depth / c.border->width;
    if (ratio < best_ratio) best_ratio = ratio, best = &c;
  }
  if (best == nullptr) return 0;
  const int w = best->border->width;
  const int depth = std::clamp(static_cast<int>(best->depth), 0, w - 1);
  const bool horizontal = best->side == Side::kTop || best->side == Side::kBottom;
  const int along = horizontal ? px - rect.x : py - rect.y;
  uint32_t color = best->border->color;
  return Painted(best->border->style, best->side, w, std::max(0, along), depth, &color) ? color : 0;
}

}  // namespace

RoundedBox::RoundedBox(const LayoutRect& rect, const CornerRadii& radii)
    : rect_(rect), radii_(Fitted(radii, rect)) {}

RoundedBox RoundedBox::Inset(int left, int top, int right, int bottom) const {
  LayoutRect inner{rect_.x + left, rect_.y + top, std::max(0, rect_.width - left - right),
                   std::max(0, rect_.height - top - bottom)};
  CornerRadii r = radii_;
  r.top_left_x -= left, r.top_left_y -= top;
  r.top_right_x -= right, r.top_right_y -= top;
  r.bottom_right_x -= right, r.bottom_right_y -= bottom;
  r.bottom_left_x -= left, r.bottom_left_y -= bottom;
  return RoundedBox(inner, r);
}

bool RoundedBox::RowSpan(int y, int* x0, int* x1) const {
  const double cy = y + 0.5;
  const int top = rect_.y;
  const int bottom = rect_.y + rect_.height;
  if (rect_.width <= 0 || cy < top || cy >= bottom) return false;
  const CornerRadii& r = radii_;
  double left = rect_.x;
  double right = rect_.x + rect_.width;
  if (cy < top + r.top_left_y) left += CornerIndent(r.top_left_x, r.top_left_y, top + r.top_left_y - cy);
  if (cy > bottom - r.bottom_left_y) {
    left = std::max(left, rect_.x + CornerIndent(r.bottom_left_x, r.bottom_left_y,
                                                 cy - (bottom - r.bottom_left_y)));
  }
  if (cy < top + r.top_right_y) {
    right -= CornerIndent(r.top_right_x, r.top_right_y, top + r.top_right_y - cy);
  }
  if (cy > bottom - r.bottom_right_y) {
    right = std::min(right, rect_.x + rect_.width - CornerIndent(r.bottom_right_x, r.bottom_right_y,
                                                                 cy - (bottom - r.bottom_right_y)));
  }
  // Pixel px is inside when its centre px + 0.5 lies in [left, right).
  *x0 = static_cast<int>(std::ceil(left - 0.5));
  *x1 = static_cast<int>(std::ceil(right - 0.5));
  return *x0 < *x1;
}

void FillRounded(Surface& target, const RoundedBox& shape, const LayoutRect& area, uint32_t color,
                 const LayoutRect& clip) {
  if ((color >> 24) == 0) return;
  const LayoutRect rows = Intersect(Intersect(area, shape.rect()), Intersect(clip, WholeOf(target)));
  for (int y = rows.y; y < rows.bottom(); ++y) {
    int x0 = 0, x1 = 0;
    if (!shape.RowSpan(y, &x0, &x1)) continue;
    FillRect(target, {x0, y, x1 - x0, 1}, color, rows);
  }
}

void PaintBorders(Surface& target, const LayoutRect& rect, const BoxBorders& borders,
                  const LayoutRect& clip) {
  auto width = [](const BorderSide& side) { return side.visible() ? side.width : 0; };
  const RoundedBox outer(rect, borders.radii);
  const RoundedBox inner = outer.Inset(width(borders.left), width(borders.top),
                                       width(borders.right), width(borders.bottom));
  const LayoutRect area = Intersect(rect, Intersect(clip, WholeOf(target)));
  // Runs of one colour along a row, flushed as one FillRect.
  auto paint_segment = [&](int y, int from, int to) {
    from = std::max(from, area.x);
    to = std::min(to, area.x + area.width);
    int run_start = from;
    uint32_t run_color = 0;
    for (int x = from; x <= to; ++x) {
      const uint32_t color = x < to ? BorderPixel(rect, borders, x, y) : 0;
      if (x < to && color == run_color) continue;
      if (run_color != 0) FillRect(target, {run_start, y, x - run_start, 1}, run_color, area);
      run_start = x;
      run_color = color;
    }
  };
  for (int y = area.y; y < area.bottom(); ++y) {
    int a = 0, b = 0, c = 0, d = 0;
    if (!outer.RowSpan(y, &a, &b)) continue;
    if (!inner.RowSpan(y, &c, &d)) {
      paint_segment(y, a, b);
      continue;
    }
    paint_segment(y, a, std::min(b, c));
    paint_segment(y, std::max(a, d), b);
  }
}

RoundedCornerGuard::RoundedCornerGuard(Surface& target, const RoundedBox& shape,
                                       const LayoutRect& area)
    : target_(target), shape_(shape), area_(Intersect(area, WholeOf(target))) {
  const CornerRadii& r = shape.radii();
  const int top_reach = shape.rect().y + std::max(r.top_left_y, r.top_right_y);
  const int bottom_reach = shape.rect().bottom() - std::max(r.bottom_left_y, r.bottom_right_y);
  for (int y = area_.y; y < area_.bottom(); ++y) {
    if (y >= top_reach && y < bottom_reach) continue;  // no corner reaches this row
    rows_.push_back(y);
    const size_t at = pixels_.size();
    pixels_.resize(at + static_cast<size_t>(area_.width));
    std::memcpy(pixels_.data() + at, target_.Row(static_cast<uint32_t>(y)) + area_.x * 4,
                static_cast<size_t>(area_.width) * 4);
  }
}

void RoundedCornerGuard::Restore() {
  for (size_t i = 0; i < rows_.size(); ++i) {
    const int y = rows_[i];
    int x0 = area_.x, x1 = area_.x;  // an empty span: the whole row is outside
    if (!shape_.RowSpan(y, &x0, &x1)) x0 = x1 = area_.x;
    uint8_t* row = target_.Row(static_cast<uint32_t>(y));
    const uint32_t* saved = pixels_.data() + i * static_cast<size_t>(area_.width);
    for (int x = area_.x; x < area_.x + area_.width; ++x) {
      if (x >= x0 && x < x1) continue;
      std::memcpy(row + x * 4, saved + (x - area_.x), 4);
    }
  }
}

}  // namespace lethe::internal
