// Text runs in the families and weights the page description names: each style is its own face in
// the FontCache, bold draws heavier strokes, monospace gives every letter one advance, and a face
// whose file is missing falls back to the regular one, logged once.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine_test_pages.h"
#include "lethe/engine.h"

namespace lethe {
namespace {

using testing::PixelAt;
using testing::TestOptions;
using testing::TestSite;

constexpr int kLineHeight = 50;  // rows of the test page, far apart so that they never overlap
constexpr uint32_t kWhite = 0xFFFFFFFF;

struct TextRun {
  std::string text;
  std::string style;  // extra JSON fields
};

// One run per row: row i at y = 10 + i * kLineHeight, size 20, black on white.
std::string WritePage(const TestSite& site, const std::vector<TextRun>& runs) {
  std::string items;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!items.empty()) items += ", ";
    items += R"({"type": "text", "text": ")" + runs[i].text + R"(", "x": 10, "y": )" +
             std::to_string(10 + static_cast<int>(i) * kLineHeight) +
             R"(, "width": 380, "size": 20, "color": "#000000")" + runs[i].style + "}";
  }
  std::string path = site.dir().File("fonts.json");
  testing::WriteFile(path, R"({"height": 1000, "background": "#ffffff", "items": [)" + items + "]}");
  return path;
}

// Pixels of row `row` that are not the white background.
int InkOf(const Framebuffer& frame, int row) {
  int ink = 0;
  for (uint32_t y = 10 + row * kLineHeight; y < static_cast<uint32_t>(10 + (row + 1) * kLineHeight); ++y) {
    for (uint32_t x = 0; x < frame.width(); ++x) ink += PixelAt(frame, x, y) != kWhite ? 1 : 0;
  }
  return ink;
}

// The rightmost column of row `row` with ink, or -1.
int InkRightEdge(const Framebuffer& frame, int row) {
  int right = -1;
  for (uint32_t y = 10 + row * kLineHeight; y < static_cast<uint32_t>(10 + (row + 1) * kLineHeight); ++y) {
    for (uint32_t x = 0; x < frame.width(); ++x) {
      if (PixelAt(frame, x, y) != kWhite) right = std::max(right, static_cast<int>(x));
    }
  }
  return right;
}

class FontStylesTest : public ::testing::Test {
 protected:
  // Draws `runs` in a 400 x 320 window (six rows).
  const Framebuffer& Draw(const std::vector<TextRun>& runs, EngineOptions options) {
    options.viewport_height = 320;
    engine_ = testing::MakeEngine(std::move(options));
    if (engine_ == nullptr) return empty_;
    Status loaded = engine_->Navigate(engine_->OpenWindow(), WritePage(site_, runs));
    EXPECT_TRUE(loaded.ok()) << loaded.message();
    return engine_->DrawFrame();
  }
  const Framebuffer& Draw(const std::vector<TextRun>& runs) { return Draw(runs, TestOptions(&log_)); }
  int64_t FontMisses() const {
    return engine_->CollectMemoryReport().Amount("lethe-counters/fonts/misses");
  }

  TestSite site_;
  std::vector<std::string> log_;
  std::unique_ptr<Engine> engine_;
  Framebuffer empty_;
};

TEST_F(FontStylesTest, BoldDrawsHeavierStrokesThanRegular) {
  const Framebuffer& frame = Draw({{"Lethe forgets", ""}, {"Lethe forgets", R"(, "bold": true)"}});
  const int regular = InkOf(frame, 0);
  const int bold = InkOf(frame, 1);
  ASSERT_GT(regular, 100);
  EXPECT_GT(bold, regular * 6 / 5) << "regular " << regular << ", bold " << bold;
  EXPECT_EQ(FontMisses(), 2);  // two faces: one per style
}

TEST_F(FontStylesTest, MonospaceGivesEveryLetterTheSameAdvance) {
  const Framebuffer& frame = Draw({{"iiiiiiii", R"(, "family": "monospace")"},
                                   {"mmmmmmmm", R"(, "family": "monospace")"},
                                   {"iiiiiiii", ""},
                                   {"mmmmmmmm", ""}});
  const int mono_i = InkRightEdge(frame, 0);
  const int mono_m = InkRightEdge(frame, 1);
  const int sans_i = InkRightEdge(frame, 2);
  const int sans_m = InkRightEdge(frame, 3);
  ASSERT_GT(mono_i, 10);
  ASSERT_GT(sans_i, 10);
  // Monospace: eight cells either way; the ink of the last i sits inside its cell.
  EXPECT_LT(std::abs(mono_m - mono_i), 10) << mono_i << " vs " << mono_m;
  // Proportional: eight m are far wider than eight i.
  EXPECT_GT(sans_m - sans_i, 60) << sans_i << " vs " << sans_m;
}

TEST_F(FontStylesTest, SerifIsADifferentFaceFromSansSerif) {
  const Framebuffer& frame = Draw({{"Hamburgefonts", ""}, {"Hamburgefonts", R"(, "family": "serif")"}});
  int differing = 0;
  for (uint32_t y = 10; y < 10 + kLineHeight; ++y) {
    for (uint32_t x = 0; x < frame.width(); ++x) {
      differing += PixelAt(frame, x, y) != PixelAt(frame, x, y + kLineHeight) ? 1 : 0;
    }
  }
  EXPECT_GT(differing, 100);
  EXPECT_EQ(FontMisses(), 2);
}

TEST_F(FontStylesTest, AMissingFaceFallsBackToTheRegularOneLoggedOnce) {
  EngineOptions options = TestOptions(&log_);
  options.font_files.serif = site_.dir().File("no-such-serif.ttf");
  const Framebuffer& frame = Draw({{"Fallback", ""},
                                   {"Fallback", R"(, "family": "serif")"},
                                   {"Fallback", R"(, "family": "serif")"}},
                                  std::move(options));
  // The fallback is the regular face itself: the same pixels as the sans-serif row.
  for (uint32_t y = 10; y < 10 + kLineHeight; ++y) {
    for (uint32_t x = 0; x < frame.width(); ++x) {
      ASSERT_EQ(PixelAt(frame, x, y), PixelAt(frame, x, y + kLineHeight)) << x << "," << y;
    }
  }
  EXPECT_GT(InkOf(frame, 1), 100);
  int mentions = 0;
  for (const std::string& line : log_) {
    if (line.find("no-such-serif.ttf") != std::string::npos) {
      ++mentions;
      EXPECT_NE(line.find("drawing serif with"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(mentions, 1);
}

}  // namespace
}  // namespace lethe
