// HTML painting through litehtml on the engine: italic text slanted (its italic face, or the
// upright face slanted when the italic file is missing), border styles (dashed, dotted, double,
// hidden, the 3-D ones) and border-radius on backgrounds, borders and background images. The
// expected pixels are computed here from the box geometry and the documented patterns
// (engine/box_painter.h), never compared to committed images.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine_test_pages.h"
#include "lethe/engine.h"

namespace lethe {
namespace {

using testing::PixelAt;

constexpr uint32_t kWhite = 0xffffffff;
constexpr uint32_t kBlack = 0xff000000;
constexpr uint32_t kRed = 0xffff0000;
constexpr uint32_t kBlue = 0xff0000ff;

class HtmlPaintTest : public testing::HtmlEngineTest {
 protected:
  // Shows `body` in a page with a 10 px padding, its images decoded.
  void Show(const std::string& body) {
    ShowHtml("<html><body style=\"margin:0; padding:10px\">" + body + "</body></html>", "paint");
    engine_->WaitForDecodes();
  }

  // How far right the ink of the top third of the rows [y0, y1) sits from that of the bottom third
  // (mean x of dark pixels): about 0 for upright stems, a fifth of the height apart for a slant.
  double Slant(int y0, int y1) {
    const Framebuffer& frame = Frame();
    int top = -1, bottom = -1;
    for (int y = y0; y < y1; ++y) {
      for (uint32_t x = 0; x < 400; ++x) {
        if ((PixelAt(frame, x, static_cast<uint32_t>(y)) & 0xff) < 128) {
          if (top < 0) top = y;
          bottom = y;
        }
      }
    }
    if (top < 0) return 0;
    const int third = (bottom - top + 1) / 3;
    auto mean_x = [&](int from, int to) {
      double sum = 0;
      int count = 0;
      for (int y = from; y < to; ++y) {
        for (uint32_t x = 0; x < 400; ++x) {
          if ((PixelAt(frame, x, static_cast<uint32_t>(y)) & 0xff) < 128) sum += x, ++count;
        }
      }
      return count > 0 ? sum / count : 0.0;
    };
    return mean_x(top, top + third) - mean_x(bottom + 1 - third, bottom + 1);
  }
};

const char kStems[] =
    R"(<p style="margin:0; height:60px; font-size:40px; font-style:%s">IIIIIIII</p>)";

std::string Stems(const char* style) {
  std::string html = kStems;
  html.replace(html.find("%s"), 2, style);
  return html;
}

TEST_F(HtmlPaintTest, ItalicTextIsSlantedAndUprightTextIsNot) {
  Show(Stems("normal") + Stems("italic"));
  const double upright = Slant(10, 70);
  const double italic = Slant(70, 130);
  EXPECT_LT(std::abs(upright), 1.0);
  // DejaVu Sans Oblique slants about 11 degrees: the top third's ink sits ~4 px right of the
  // bottom third's on 29 px capitals.
  EXPECT_GT(italic, 2.5);
}

TEST_F(HtmlPaintTest, ItalicWithoutAnItalicFileIsTheUprightFaceSlanted) {
  EngineOptions options = testing::TestOptions(&log_);
  options.font_files.sans_serif_italic = "/nonexistent/Italic.ttf";
  Start(options);
  Show(Stems("normal") + Stems("italic"));
  EXPECT_LT(std::abs(Slant(10, 70)), 1.0);
  EXPECT_GT(Slant(70, 130), 2.5);
  std::string all;
  for (const std::string& line : log_) all += line + "\n";
  EXPECT_NE(all.find("/nonexistent/Italic.ttf"), std::string::npos) << all;
  EXPECT_NE(all.find("slanted"), std::string::npos) << all;
}

// litehtml 0.6 knows no oblique; the engine gives it the italic face (css_fixups.h): from a <style>
// rule, a style attribute's shorthand with an angle, and an imported stylesheet.
TEST_F(HtmlPaintTest, ObliqueTextIsSlantedLikeItalic) {
  testing::WriteFile(site_.dir().File("oblique.css"), ".o { font-style: oblique 12deg }");
  Show(R"(<link rel="stylesheet" href="oblique.css"><style>.s { font-style: oblique }</style>)" +
       Stems("normal") + R"(<div class="s">)" + Stems("inherit") + "</div>" +
       R"(<p style="margin:0; height:60px; font: oblique 14deg 40px sans-serif">IIIIIIII</p>)" +
       R"(<div class="o">)" + Stems("inherit") + "</div>");
  EXPECT_LT(std::abs(Slant(10, 70)), 1.0);
  EXPECT_GT(Slant(70, 130), 2.5);
  EXPECT_GT(Slant(130, 190), 2.5);
  EXPECT_GT(Slant(190, 250), 2.5);
}

// The first box is at (10, 10) (the body's padding): its border box is 10 .. 10 + 100 + 2w wide,
// 10 .. 10 + 20 + 2w high; each next one 10 px below the last.
std::string Box(const std::string& style) {
  return R"(<div style="margin:0 0 10px 0; width:100px; height:20px; )" + style + R"("></div>)";
}

TEST_F(HtmlPaintTest, DashedBorderHasGapsEveryThreeWidths) {
  Show(Box("border: 2px dashed black"));
  const Framebuffer& frame = Frame();
  // Top side, along = x - 10: dashes of 6, gaps of 6 (away from the corners' diagonal split).
  for (uint32_t x = 12; x < 112; ++x) {
    const bool dash = (x - 10) % 12 < 6;
    for (uint32_t y = 10; y < 12; ++y) {
      ASSERT_EQ(PixelAt(frame, x, y), dash ? kBlack : kWhite) << x << "," << y;
    }
    EXPECT_EQ(PixelAt(frame, x, 12), kWhite) << x;  // the content box
  }
  // Left side, along = y - 10: a dash over rows 10-15, a gap over 16-21, a dash from 22.
  EXPECT_EQ(PixelAt(frame, 10, 14), kBlack);
  EXPECT_EQ(PixelAt(frame, 10, 18), kWhite);
  EXPECT_EQ(PixelAt(frame, 11, 23), kBlack);
}

TEST_F(HtmlPaintTest, DottedBorderHasRoundDotsEveryTwoWidths) {
  Show(Box("border: 4px dotted black"));
  const Framebuffer& frame = Frame();
  // Top side: dots of diameter 4 centred at x = 10 + 8k + 2, y = 12; gaps between.
  for (uint32_t k = 1; k < 12; ++k) {
    const uint32_t centre = 10 + 8 * k + 2;
    EXPECT_EQ(PixelAt(frame, centre, 12), kBlack) << k;
    EXPECT_EQ(PixelAt(frame, centre - 1, 11), kBlack) << k;
    EXPECT_EQ(PixelAt(frame, centre + 4, 12), kWhite) << k;  // the gap
    EXPECT_EQ(PixelAt(frame, centre - 2, 10), kWhite) << k;  // the dot's corner: round, not square
  }
}

TEST_F(HtmlPaintTest, DoubleBorderIsTwoLinesWithAGap) {
  Show(Box("border: 6px double black"));
  const Framebuffer& frame = Frame();
  // Top side, rows 10-15: lines of round(6 / 3) = 2 at rows 10-11 and 14-15.
  for (uint32_t x : {30u, 60u, 100u}) {
    EXPECT_EQ(PixelAt(frame, x, 10), kBlack);
    EXPECT_EQ(PixelAt(frame, x, 11), kBlack);
    EXPECT_EQ(PixelAt(frame, x, 12), kWhite);
    EXPECT_EQ(PixelAt(frame, x, 13), kWhite);
    EXPECT_EQ(PixelAt(frame, x, 14), kBlack);
    EXPECT_EQ(PixelAt(frame, x, 15), kBlack);
    EXPECT_EQ(PixelAt(frame, x, 16), kWhite);
  }
  EXPECT_EQ(PixelAt(frame, 12, 20), kWhite);  // the left side's gap column
  EXPECT_EQ(PixelAt(frame, 10, 20), kBlack);
}

TEST_F(HtmlPaintTest, HiddenAndNoneBordersPaintNothingAndInsetShadesItsSides) {
  Show(Box("border: 4px hidden red") + Box("border-top: 4px none red") +
       Box("border: 4px inset rgb(100, 100, 200)"));
  const Framebuffer& frame = Frame();
  for (uint32_t y = 0; y < 80; ++y) {
    for (uint32_t x = 0; x < 130; ++x) ASSERT_NE(PixelAt(frame, x, y), kRed) << x << "," << y;
  }
  // The inset box is the last: find its top-left by the first non-white pixel below row 60.
  uint32_t top = 0;
  for (uint32_t y = 60; y < 200 && top == 0; ++y) {
    if (PixelAt(frame, 60, y) != kWhite) top = y;
  }
  ASSERT_NE(top, 0u);
  const uint32_t top_color = PixelAt(frame, 60, top + 1);
  const uint32_t bottom_color = PixelAt(frame, 60, top + 4 + 20 + 1);
  auto brightness = [](uint32_t c) { return (c & 0xff) + ((c >> 8) & 0xff) + ((c >> 16) & 0xff); };
  EXPECT_NE(top_color, kWhite);
  EXPECT_NE(bottom_color, kWhite);
  EXPECT_LT(brightness(top_color), brightness(bottom_color)) << "inset: the top is the darker";
  EXPECT_EQ(PixelAt(frame, 11, top + 10), top_color) << "the left side shades as the top";
}

// Whether the centre of pixel (x, y) is inside the quarter circle of radius r whose centre is
// (cx, cy), with a margin so that the test does not depend on rounding at the edge itself.
enum class Where { kInside, kOutside, kEdge };
Where AgainstCircle(uint32_t x, uint32_t y, double cx, double cy, double r) {
  const double d = std::hypot(x + 0.5 - cx, y + 0.5 - cy);
  if (d < r - 0.75) return Where::kInside;
  if (d > r + 0.75) return Where::kOutside;
  return Where::kEdge;
}

TEST_F(HtmlPaintTest, BorderRadiusRoundsABackgroundsCorners) {
  Show(R"(<div style="margin:0; width:100px; height:60px; background:red;
                      border-radius:20px"></div>)");
  const Framebuffer& frame = Frame();
  // Each corner's 20 x 20 square: red inside the circle of radius 20, the page outside.
  const struct {
    uint32_t x0, y0;
    double cx, cy;
  } corners[] = {{10, 10, 30, 30}, {90, 10, 90, 30}, {10, 50, 30, 50}, {90, 50, 90, 50}};
  int outside = 0;
  for (const auto& c : corners) {
    for (uint32_t y = c.y0; y < c.y0 + 20; ++y) {
      for (uint32_t x = c.x0; x < c.x0 + 20; ++x) {
        const Where where = AgainstCircle(x, y, c.cx, c.cy, 20);
        if (where == Where::kEdge) continue;
        outside += where == Where::kOutside;
        ASSERT_EQ(PixelAt(frame, x, y), where == Where::kInside ? kRed : kWhite) << x << "," << y;
      }
    }
  }
  EXPECT_GT(outside, 4 * 60);  // (1 - pi / 4) * 400 = 86 per corner, less the edge band
  EXPECT_EQ(PixelAt(frame, 60, 10), kRed);  // the straight edges stay square
  EXPECT_EQ(PixelAt(frame, 10, 40), kRed);
}

TEST_F(HtmlPaintTest, BorderRadiusRoundsASolidBorderAndABackgroundImage) {
  Show(R"html(<div style="margin:0; width:92px; height:52px; border:4px solid blue;
                          border-radius:20px"></div>
              <div style="margin:10px; width:100px; height:60px; border-radius:20px;
                          background-image:url(img/red.gif)"></div>)html");
  const Framebuffer& frame = Frame();
  // The border box is (10, 10) 100 x 60; the ring lies between radius 20 and radius 16 around
  // (30, 30) at the top-left corner.
  for (uint32_t y = 10; y < 30; ++y) {
    for (uint32_t x = 10; x < 30; ++x) {
      const Where outer = AgainstCircle(x, y, 30, 30, 20);
      const Where inner = AgainstCircle(x, y, 30, 30, 16);
      if (outer == Where::kEdge || inner == Where::kEdge) continue;
      const bool ring = outer == Where::kInside && inner == Where::kOutside;
      ASSERT_EQ(PixelAt(frame, x, y), ring ? kBlue : kWhite) << x << "," << y;
    }
  }
  EXPECT_EQ(PixelAt(frame, 60, 11), kBlue);  // the straight top side
  EXPECT_EQ(PixelAt(frame, 60, 14), kWhite);
  // The image tiles are clipped to the rounded box (80 .. 140 high): corners show the page.
  EXPECT_EQ(PixelAt(frame, 10, 80), kWhite);
  EXPECT_EQ(PixelAt(frame, 12, 82), kWhite);
  EXPECT_EQ(PixelAt(frame, 30, 100), kRed);
  EXPECT_EQ(PixelAt(frame, 60, 80), kRed);
  EXPECT_EQ(PixelAt(frame, 109, 139), kWhite);
  EXPECT_EQ(PixelAt(frame, 100, 130), kRed);
}

TEST_F(HtmlPaintTest, OverflowHiddenWithBorderRadiusClipsTheChildrenToTheRoundedBox) {
  Show(R"(<div style="margin:0; width:100px; height:60px; overflow:hidden; border-radius:20px">
            <div style="width:100px; height:60px; background:red"></div></div>)");
  const Framebuffer& frame = Frame();
  for (uint32_t y = 10; y < 30; ++y) {
    for (uint32_t x = 10; x < 30; ++x) {
      const Where where = AgainstCircle(x, y, 30, 30, 20);
      if (where == Where::kEdge) continue;
      ASSERT_EQ(PixelAt(frame, x, y), where == Where::kInside ? kRed : kWhite) << x << "," << y;
    }
  }
  EXPECT_EQ(PixelAt(frame, 109, 69), kWhite);  // the bottom-right corner too
  EXPECT_EQ(PixelAt(frame, 60, 40), kRed);
}

}  // namespace
}  // namespace lethe
