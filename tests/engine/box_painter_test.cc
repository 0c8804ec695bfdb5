// The box painter on its own: rounded-box row spans (the corner-overlap rule included) and the
// 3-D border styles' shading, on a small Surface with expected pixels computed here.
#include "box_painter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "painter.h"

namespace lethe::internal {
namespace {

CornerRadii Uniform(int r) { return {r, r, r, r, r, r, r, r}; }

TEST(RoundedBox, RowSpansFollowTheCornerCircles) {
  const RoundedBox box({10, 20, 100, 60}, Uniform(20));
  for (int y = 20; y < 80; ++y) {
    int x0 = 0, x1 = 0;
    ASSERT_TRUE(box.RowSpan(y, &x0, &x1)) << y;
    // The circle of radius 20 around (30, 30) (or (30, 70) below) at this row's centre.
    const double cy = y + 0.5;
    const double dy = cy < 40 ? 40 - cy : (cy > 60 ? cy - 60 : 0);
    const double indent = 20 - std::sqrt(std::max(0.0, 400 - dy * dy));
    EXPECT_NEAR(x0, 10 + indent, 1.0) << y;
    EXPECT_NEAR(x1, 110 - indent, 1.0) << y;
  }
  int x0 = 0, x1 = 0;
  EXPECT_FALSE(box.RowSpan(19, &x0, &x1));
  EXPECT_FALSE(box.RowSpan(80, &x0, &x1));
}

TEST(RoundedBox, RadiiThatDoNotFitAreScaledDownTogether) {
  // 40 x 20 with radii 30: the sides need 60 along x and 60 along y; the factor is 20/60.
  const RoundedBox box({0, 0, 40, 20}, Uniform(30));
  EXPECT_EQ(box.radii().top_left_x, 10);
  EXPECT_EQ(box.radii().top_left_y, 10);
  EXPECT_EQ(box.radii().bottom_right_y, 10);
  // Negative radii count as none.
  const RoundedBox square({0, 0, 40, 20}, Uniform(-5));
  EXPECT_FALSE(square.radii().any());
  int x0 = 0, x1 = 0;
  ASSERT_TRUE(square.RowSpan(0, &x0, &x1));
  EXPECT_EQ(x0, 0);
  EXPECT_EQ(x1, 40);
}

uint32_t Pixel(const Surface& surface, int x, int y) {
  const uint8_t* p = surface.Row(static_cast<uint32_t>(y)) + x * 4;
  return uint32_t{p[3]} << 24 | uint32_t{p[2]} << 16 | uint32_t{p[1]} << 8 | p[0];
}

int Brightness(uint32_t c) { return (c & 0xff) + ((c >> 8) & 0xff) + ((c >> 16) & 0xff); }

TEST(PaintBorders, ThreeDStylesShadeTheirSidesAndHalves) {
  auto surface = Surface::Create(60, 60);
  ASSERT_TRUE(surface);
  Surface& target = *surface;
  const LayoutRect all{0, 0, 60, 60};
  const uint32_t color = 0xff808080;
  auto paint = [&](BorderStyle style) {
    FillRect(target, all, 0xffffffff);
    const BorderSide side{8, style, color};
    PaintBorders(target, {0, 0, 60, 60}, {side, side, side, side, {}}, all);
  };
  paint(BorderStyle::kOutset);  // top lighter than bottom
  EXPECT_GT(Brightness(Pixel(target, 30, 1)), Brightness(Pixel(target, 30, 58)));
  EXPECT_EQ(Pixel(target, 1, 30), Pixel(target, 30, 1));  // left as top
  paint(BorderStyle::kInset);
  EXPECT_LT(Brightness(Pixel(target, 30, 1)), Brightness(Pixel(target, 30, 58)));
  paint(BorderStyle::kGroove);  // outer half as inset, inner half as outset
  EXPECT_LT(Brightness(Pixel(target, 30, 1)), Brightness(Pixel(target, 30, 6)));
  EXPECT_GT(Brightness(Pixel(target, 30, 58)), Brightness(Pixel(target, 30, 53)));
  paint(BorderStyle::kRidge);
  EXPECT_GT(Brightness(Pixel(target, 30, 1)), Brightness(Pixel(target, 30, 6)));
  EXPECT_EQ(Pixel(target, 30, 30), 0xffffffffu);  // inside the border: untouched
  paint(BorderStyle::kNone);
  EXPECT_EQ(Pixel(target, 30, 1), 0xffffffffu);
}

TEST(RoundedCornerGuard, PutsBackWhatASquareDrawingCoveredOutsideTheCorners) {
  auto surface = Surface::Create(40, 40);
  ASSERT_TRUE(surface);
  Surface& target = *surface;
  FillRect(target, {0, 0, 40, 40}, 0xffffffff);
  const RoundedBox shape({0, 0, 40, 40}, Uniform(10));
  RoundedCornerGuard guard(target, shape, {0, 0, 40, 40});
  FillRect(target, {0, 0, 40, 40}, 0xffff0000);  // the "image", square
  guard.Restore();
  EXPECT_EQ(Pixel(target, 0, 0), 0xffffffffu);
  EXPECT_EQ(Pixel(target, 39, 39), 0xffffffffu);
  EXPECT_EQ(Pixel(target, 20, 0), 0xffff0000u);
  EXPECT_EQ(Pixel(target, 10, 10), 0xffff0000u);
  EXPECT_EQ(Pixel(target, 0, 20), 0xffff0000u);
}

}  // namespace
}  // namespace lethe::internal
