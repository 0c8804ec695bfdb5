// Glyph bitmaps kept per face (engine/glyph_table.h) and through the Engine: drawn once, aged and
// flushed with their face, capped, counted in the fonts report, same pixels as rasterizing at
// every draw. Simulated time only.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "engine_test_pages.h"
#include "glyph_table.h"
#include "lethe/engine.h"

namespace lethe {
namespace {

using internal::GlyphTable;
using internal::GlyphTotals;
using std::chrono::seconds;
using testing::TestOptions;

std::unique_ptr<FontFace> OpenSans(int size) {
  std::string error;
  auto face = FontFace::Open(kDefaultFontPath, size, &error);
  EXPECT_NE(face, nullptr) << error;
  return face;
}

TEST(GlyphTable, KeepsEachGlyphOnceAndCountsItsBytes) {
  GlyphTotals totals;
  auto face = OpenSans(16);
  {
    GlyphTable table(1 << 20, &totals);
    GlyphBitmap scratch;
    uint64_t entries = 0;
    for (uint32_t id = 1; id <= 40; ++id) {
      const GlyphBitmap* bitmap = table.Get(*face, id, &scratch);
      ASSERT_NE(bitmap, nullptr);
      EXPECT_NE(bitmap, &scratch);
      entries += GlyphTable::CostOf(*bitmap);
    }
    EXPECT_EQ(totals.rasterize_count, 40u);
    for (uint32_t id = 1; id <= 40; ++id) EXPECT_EQ(table.Get(*face, id, &scratch), table.Find(id));
    EXPECT_EQ(totals.rasterize_count, 40u);  // all hits
    EXPECT_EQ(table.glyph_count(), 40u);
    EXPECT_EQ(totals.glyph_count, 40u);
    // The entries plus the bucket array (one pointer per bucket, at least one bucket per glyph).
    EXPECT_GE(table.used_bytes(), entries + 40 * sizeof(void*));
    EXPECT_LE(table.used_bytes(), entries + 4 * 40 * sizeof(void*));
    EXPECT_EQ(totals.bytes, table.used_bytes());
  }
  // A table destroyed with its face takes its bytes out of the totals.
  EXPECT_EQ(totals.bytes, 0u);
  EXPECT_EQ(totals.glyph_count, 0u);
}

TEST(GlyphTable, EmptiesItselfAtItsCapAndNeverKeepsAGlyphLargerThanTheCap) {
  GlyphTotals totals;
  auto face = OpenSans(24);
  GlyphBitmap scratch;
  const uint64_t cap = 4096;
  GlyphTable table(cap, &totals);
  for (uint32_t id = 1; id <= 200; ++id) {
    ASSERT_NE(table.Get(*face, id, &scratch), nullptr);
    // The cap holds for the entries; the bucket array may add one growth step.
    EXPECT_LE(table.used_bytes(), cap + 64 * sizeof(void*)) << id;
  }
  EXPECT_GT(totals.clear_count, 0u);
  EXPECT_GT(table.glyph_count(), 0u);
  EXPECT_LT(table.glyph_count(), 200u);

  GlyphTable tiny(8, &totals);  // smaller than any glyph's node
  const GlyphBitmap* bitmap = tiny.Get(*face, 36, &scratch);
  EXPECT_EQ(bitmap, &scratch);
  EXPECT_EQ(tiny.glyph_count(), 0u);
}

TEST(GlyphTable, AGlyphFreeTypeCannotLoadIsNotKept) {
  GlyphTotals totals;
  auto face = OpenSans(16);
  GlyphTable table(1 << 20, &totals);
  GlyphBitmap scratch;
  EXPECT_EQ(table.Get(*face, 0x7fffffff, &scratch), nullptr);
  EXPECT_EQ(table.glyph_count(), 0u);
}

class GlyphCacheTest : public ::testing::Test {
 protected:
  std::unique_ptr<Engine> Make(EngineOptions options) { return testing::MakeEngine(std::move(options)); }
  // A page of two text runs at two sizes (two faces) and nothing else.
  static PageDescription TextPage() {
    PageDescription page;
    page.height = 300;
    page.background = 0xffffffff;
    page.items.push_back(PageTextItem{"The quick brown fox jumps over the lazy dog, again and again.",
                                      {10, 10, 380, 60}, 16, 0xff000000});
    page.items.push_back(PageTextItem{"Glyphs are kept per face: 0123456789 @#%&", {10, 120, 380, 80},
                                      22, 0xff2040a0});
    return page;
  }
  WindowId OpenTextPage(Engine& engine) {
    WindowId tab = engine.OpenWindow();
    EXPECT_TRUE(engine.Load(tab, TextPage(), "memory:text").ok());
    return tab;
  }
  static std::vector<uint8_t> Pixels(const Framebuffer& frame) {
    std::vector<uint8_t> out;
    for (uint32_t y = 0; y < frame.height(); ++y) {
      out.insert(out.end(), frame.Row(y), frame.Row(y) + 4 * size_t{frame.width()});
    }
    return out;
  }

  std::vector<std::string> log_;
};

TEST_F(GlyphCacheTest, ASecondDrawOfTheSameTextRasterizesNothingNew) {
  auto engine = Make(TestOptions(&log_));
  OpenTextPage(*engine);
  std::vector<uint8_t> first = Pixels(engine->DrawFrame());
  uint64_t rasterized = engine->stats().glyph_rasterize_count;
  EXPECT_GT(rasterized, 20u);
  // Every glyph rasterized was kept (a repeated letter is rasterized once).
  EXPECT_EQ(engine->Memory().glyph_count, rasterized);
  EXPECT_EQ(Pixels(engine->DrawFrame()), first);
  EXPECT_EQ(engine->stats().glyph_rasterize_count, rasterized);
}

TEST_F(GlyphCacheTest, KeptGlyphsDrawTheSamePixelsAsRasterizingAtEveryDraw) {
  auto cached = Make(TestOptions(&log_));
  EngineOptions uncached_options = TestOptions(&log_);
  uncached_options.glyph_table_max_bytes = 0;  // nothing kept: FreeType at every draw
  auto uncached = Make(uncached_options);
  OpenTextPage(*cached);
  OpenTextPage(*uncached);
  std::vector<uint8_t> reference = Pixels(uncached->DrawFrame());
  EXPECT_EQ(Pixels(cached->DrawFrame()), reference);
  EXPECT_EQ(Pixels(cached->DrawFrame()), reference);  // from the tables this time
  EXPECT_EQ(uncached->Memory().glyph_count, 0u);
  uint64_t once = uncached->stats().glyph_rasterize_count;
  uncached->DrawFrame();
  EXPECT_EQ(uncached->stats().glyph_rasterize_count, 2 * once);
  // Ink is there at all (the comparison is not between two blank frames).
  size_t dark = 0;
  for (size_t i = 0; i < reference.size(); i += 4) dark += reference[i + 1] < 128 ? 1 : 0;
  EXPECT_GT(dark, 100u);
}

TEST_F(GlyphCacheTest, ACappedTableDrawsTheSamePixelsAndCountsItsClears) {
  auto reference_engine = Make(TestOptions(&log_));
  EngineOptions capped_options = TestOptions(&log_);
  capped_options.glyph_table_max_bytes = 1024;
  auto capped = Make(capped_options);
  OpenTextPage(*reference_engine);
  OpenTextPage(*capped);
  EXPECT_EQ(Pixels(capped->DrawFrame()), Pixels(reference_engine->DrawFrame()));
  MemoryReport report = capped->CollectMemoryReport();
  EXPECT_GT(report.Amount("lethe-counters/fonts/glyph-table-clears"), 0);
  EXPECT_LE(capped->Memory().glyph_bytes, 2 * (1024 + 64 * sizeof(void*)));  // two faces
}

TEST_F(GlyphCacheTest, GlyphsExpireWithTheirFaceAfterTheAgingPeriod) {
  auto engine = Make(TestOptions(&log_));
  WindowId tab = OpenTextPage(*engine);
  engine->DrawFrame();
  uint64_t rasterized = engine->stats().glyph_rasterize_count;
  ASSERT_GT(engine->Memory().glyph_count, 0u);
  // Nothing draws text for 19 s: the faces (20-30 s after their last use) and glyphs stay.
  engine->RunFor(seconds(19));
  EXPECT_EQ(engine->Memory().glyph_count, rasterized);
  engine->DrawFrame();  // a use restarts the faces' aging
  EXPECT_EQ(engine->stats().glyph_rasterize_count, rasterized);
  engine->RunFor(seconds(31));
  EXPECT_EQ(engine->Memory().glyph_count, 0u);
  EXPECT_EQ(engine->Memory().glyph_bytes, 0u);
  EXPECT_EQ(engine->Memory().fonts_bytes, 0u);
  // Drawn again: rasterized again, once.
  engine->ScrollTo(tab, 0);
  engine->DrawFrame();
  EXPECT_EQ(engine->stats().glyph_rasterize_count, 2 * rasterized);
  engine->DrawFrame();
  EXPECT_EQ(engine->stats().glyph_rasterize_count, 2 * rasterized);
}

TEST_F(GlyphCacheTest, CriticalPressureFlushesTheGlyphsWithTheirFaces) {
  auto engine = Make(TestOptions(&log_));
  OpenTextPage(*engine);
  engine->DrawFrame();
  MemorySnapshot before = engine->Memory();
  ASSERT_GT(before.glyph_bytes, 0u);
  PressureOutcome outcome = engine->OnMemoryPressure(MemoryPressureLevel::kCritical);
  EXPECT_GE(outcome.freed_bytes, before.fonts_bytes);
  EXPECT_EQ(engine->Memory().glyph_count, 0u);
  EXPECT_EQ(engine->Memory().glyph_bytes, 0u);
  EXPECT_EQ(engine->Memory().fonts_bytes, 0u);
}

TEST_F(GlyphCacheTest, ModeratePressureKeepsTheGlyphsOfFacesUsedMomentsAgo) {
  auto engine = Make(TestOptions(&log_));
  OpenTextPage(*engine);
  engine->DrawFrame();
  uint64_t count = engine->Memory().glyph_count;
  // Moderate ages the faces one generation (of three): faces just drawn with stay, glyphs too.
  (void)engine->OnMemoryPressure(MemoryPressureLevel::kModerate);
  EXPECT_EQ(engine->Memory().glyph_count, count);
  engine->DrawFrame();
  EXPECT_EQ(engine->stats().glyph_rasterize_count, count);
}

TEST_F(GlyphCacheTest, TheFontsReportCountsTheGlyphsHeld) {
  auto engine = Make(TestOptions(&log_));
  OpenTextPage(*engine);
  engine->DrawFrame();
  MemorySnapshot memory = engine->Memory();
  MemoryReport report = engine->CollectMemoryReport();
  EXPECT_EQ(report.Amount("explicit/fonts"), static_cast<int64_t>(memory.fonts_bytes));
  EXPECT_EQ(report.Amount("fonts-glyph-tables"), static_cast<int64_t>(memory.glyph_bytes));
  EXPECT_EQ(report.Amount("engine/glyphs"), static_cast<int64_t>(memory.glyph_count));
  EXPECT_EQ(report.Amount("lethe-counters/fonts/glyph-rasterizations"),
            static_cast<int64_t>(engine->stats().glyph_rasterize_count));
  // The glyphs are inside the fonts' bytes, beside two faces' FreeType and HarfBuzz bytes.
  EXPECT_GT(memory.glyph_bytes, memory.glyph_count * GlyphTable::CostOf(GlyphBitmap{}));
  EXPECT_GT(memory.fonts_bytes, memory.glyph_bytes + 2 * 4096);
  // After expiry the report says zero for both.
  engine->RunFor(seconds(31));
  report = engine->CollectMemoryReport();
  EXPECT_EQ(report.Amount("explicit/fonts"), 0);
  EXPECT_EQ(report.Amount("fonts-glyph-tables"), 0);
}

}  // namespace
}  // namespace lethe
