// FontFace, ShapeWord, SplitWords and PaintGlyph against Debian's DejaVu Sans.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "lethe/font_face.h"
#include "lethe/glyph_painter.h"
#include "lethe/text_shaper.h"

namespace lethe {
namespace {

constexpr char kDejaVuSans[] = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

std::unique_ptr<FontFace> OpenSans(int size = 16) {
  std::string error;
  auto face = FontFace::Open(kDejaVuSans, size, &error);
  EXPECT_NE(face, nullptr) << error;
  return face;
}

TEST(FontFace, OpensAFontAndReportsMetricsAndBytes) {
  auto face = OpenSans(20);
  ASSERT_NE(face, nullptr);
  FontMetrics metrics = face->metrics();
  EXPECT_GT(metrics.ascent, 10);
  EXPECT_GT(metrics.descent, 0);
  EXPECT_GE(metrics.line_height, metrics.ascent + metrics.descent - 1);
  // FreeType maps the font file itself; its heap structures for a face (several KiB) are counted
  // through lethe_malloc on top of the fixed 4 KiB HarfBuzz estimate.
  EXPECT_GT(face->MemoryBytes(), 4096u + 4096u);
}

TEST(FontFace, MissingFileGivesAReadableError) {
  std::string error;
  EXPECT_EQ(FontFace::Open("/nonexistent/font.ttf", 16, &error), nullptr);
  EXPECT_NE(error.find("cannot open font '/nonexistent/font.ttf'"), std::string::npos) << error;
}

TEST(FontFace, NonFontFileGivesAReadableError) {
  std::string error;
  EXPECT_EQ(FontFace::Open("/etc/hostname", 16, &error), nullptr);
  EXPECT_NE(error.find("cannot open font"), std::string::npos) << error;
}

TEST(FontFace, RejectsAbsurdSizes) {
  std::string error;
  EXPECT_EQ(FontFace::Open(kDejaVuSans, 0, &error), nullptr);
  EXPECT_NE(error.find("outside 4..512"), std::string::npos) << error;
  EXPECT_EQ(FontFace::Open(kDejaVuSans, 100000, &error), nullptr);
}

TEST(FontFace, RasterizesAGlyphWithInkAndAnEmptySpace) {
  auto face = OpenSans(24);
  ASSERT_NE(face, nullptr);
  ShapedWord word = ShapeWord(*face, "H");
  ASSERT_EQ(word.glyphs.size(), 1u);
  GlyphBitmap bitmap;
  ASSERT_TRUE(face->RasterizeGlyph(word.glyphs[0].glyph_id, &bitmap));
  EXPECT_GT(bitmap.width, 5);
  EXPECT_GT(bitmap.height, 10);
  EXPECT_LT(bitmap.top, 0);  // drawn above the baseline
  EXPECT_EQ(*std::max_element(bitmap.coverage.begin(), bitmap.coverage.end()), 255);

  ShapedWord space = ShapeWord(*face, " ");
  ASSERT_EQ(space.glyphs.size(), 1u);
  GlyphBitmap empty;
  ASSERT_TRUE(face->RasterizeGlyph(space.glyphs[0].glyph_id, &empty));
  EXPECT_TRUE(empty.coverage.empty());
  EXPECT_GT(space.advance, 0);
}

TEST(ShapeWord, ShapesEachLetterAndSumsAdvances) {
  auto face = OpenSans();
  ASSERT_NE(face, nullptr);
  ShapedWord word = ShapeWord(*face, "Hello");
  ASSERT_EQ(word.glyphs.size(), 5u);
  int sum = 0;
  for (const ShapedGlyph& glyph : word.glyphs) sum += glyph.x_advance;
  EXPECT_EQ(word.advance, sum);
  EXPECT_GT(word.advance, 20);
  // The two l's are the same glyph.
  EXPECT_EQ(word.glyphs[2].glyph_id, word.glyphs[3].glyph_id);
  EXPECT_NE(word.glyphs[0].glyph_id, word.glyphs[1].glyph_id);
}

TEST(ShapeWord, LongerWordsAreWider) {
  auto face = OpenSans();
  ASSERT_NE(face, nullptr);
  EXPECT_LT(ShapeWord(*face, "mm").advance, ShapeWord(*face, "mmmm").advance);
}

TEST(ShapeWord, InvalidUtf8DoesNotCrash) {
  auto face = OpenSans();
  ASSERT_NE(face, nullptr);
  ShapedWord word = ShapeWord(*face, std::string_view("\xff\xfe\xc3", 3));
  EXPECT_FALSE(word.glyphs.empty());
}

TEST(SplitWords, SplitsAtSpacesAndCountsTrailingSpaces) {
  std::vector<WordSpan> words = SplitWords("  one two   three ");
  ASSERT_EQ(words.size(), 3u);
  EXPECT_EQ(words[0].word, "one");
  EXPECT_EQ(words[0].trailing_spaces, 1u);
  EXPECT_EQ(words[1].word, "two");
  EXPECT_EQ(words[1].trailing_spaces, 3u);
  EXPECT_EQ(words[2].word, "three");
  EXPECT_EQ(words[2].trailing_spaces, 1u);
  EXPECT_TRUE(SplitWords("").empty());
  EXPECT_TRUE(SplitWords("   ").empty());
}

TEST(PaintGlyph, BlendsCoverageSourceOverAndClips) {
  GlyphBitmap glyph;
  glyph.width = 2;
  glyph.height = 1;
  glyph.left = 0;
  glyph.top = -1;
  glyph.coverage = {255, 128};
  std::vector<uint8_t> pixels(4 * 3 * 2, 0);
  BgraView view{pixels.data(), 3, 2, 12};
  PaintGlyph(view, glyph, 1, 1, 0xff0000ffu);  // opaque blue at (1,0) and (2,0)
  EXPECT_EQ(pixels[4 + 0], 255);   // B at x=1
  EXPECT_EQ(pixels[4 + 3], 255);   // A
  EXPECT_EQ(pixels[8 + 0], 128);   // half coverage at x=2
  EXPECT_EQ(pixels[8 + 3], 128);
  EXPECT_EQ(pixels[0], 0);         // x=0 untouched
  // Entirely outside: nothing written, no out-of-bounds access (ASan checks).
  PaintGlyph(view, glyph, -10, 1, 0xffffffffu);
  PaintGlyph(view, glyph, 2, 100, 0xffffffffu);
  EXPECT_EQ(pixels[0], 0);
  // Clipped at the right edge: only x=2 gets the first coverage value.
  PaintGlyph(view, glyph, 2, 2, 0xffff0000u);
  EXPECT_EQ(pixels[12 + 8 + 2], 255);  // R at (2,1)
}

}  // namespace
}  // namespace lethe
