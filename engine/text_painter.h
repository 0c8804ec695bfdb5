// engine/text_painter.h — draws a page's text runs: faces from the FontCache (one per pixel size,
// opened on a miss), words shaped through the ShapedWordCache (HarfBuzz only on a miss), lines
// wrapped at the run's width, glyphs rasterized by FreeType once per face (kept in the face's
// GlyphTable, inside its FontCache entry) and blended by PaintGlyph.
//
// Loop thread only (FontFace and both caches are single-threaded). A face is referenced only while
// a run is being drawn, so fonts nobody draws age out of the FontCache (20-30 s), their glyph
// tables with them.
#ifndef LETHE_ENGINE_TEXT_PAINTER_H_
#define LETHE_ENGINE_TEXT_PAINTER_H_

#include <cstdint>
#include <string>

#include "glyph_table.h"
#include "lethe/font_cache.h"
#include "lethe/font_face.h"
#include "lethe/page_description.h"
#include "lethe/pressure_source.h"
#include "lethe/shaped_word_cache.h"
#include "lethe/surface.h"
#include "lethe/text_shaper.h"

namespace lethe::internal {

using EngineFontCache = FontCache<int, CachedFont>;          // key: pixels per em
using EngineWordCache = ShapedWordCache<ShapedWord, char>;   // font key: pixels per em

class TextPainter {
 public:
  // `glyphs` (not owned) must outlive `fonts`' entries; each face's table keeps at most
  // `glyph_table_max_bytes`.
  TextPainter(EngineFontCache& fonts, EngineWordCache& words, GlyphTotals& glyphs,
              uint64_t glyph_table_max_bytes, std::string font_path, LogFunction log)
      : fonts_(fonts),
        words_(words),
        glyphs_(glyphs),
        glyph_table_max_bytes_(glyph_table_max_bytes),
        font_path_(std::move(font_path)),
        log_(std::move(log)) {}

  // Draws `text` with its top-left at (text.rect.x + dx, text.rect.y + dy) in `target`. Returns
  // the height the wrapped lines take (0 when the font cannot be opened).
  int Draw(Surface& target, const PageTextItem& text, int dx, int dy);
  // The height `text` takes when wrapped at its width, without drawing.
  int Measure(const PageTextItem& text);

  uint64_t shape_count() const { return shape_count_; }
  const GlyphTotals& glyphs() const { return glyphs_; }

 private:
  // Returns the face for `size`, opening it on a miss; an empty handle if it cannot be opened.
  EngineFontCache::Handle Face(int size);
  // Lays out (and optionally draws) the run; returns its height.
  int Layout(Surface* target, const PageTextItem& text, int dx, int dy);
  // The advance of `word` shaped with `face`, drawing it at (pen_x, baseline) when `target`.
  int Word(CachedFont& font, int size, std::string_view word, Surface* target, int pen_x,
           int baseline, uint32_t color);

  EngineFontCache& fonts_;
  EngineWordCache& words_;
  GlyphTotals& glyphs_;
  uint64_t glyph_table_max_bytes_;
  std::string font_path_;
  LogFunction log_;
  bool reported_font_error_ = false;
  uint64_t shape_count_ = 0;
};

}  // namespace lethe::internal

#endif  // LETHE_ENGINE_TEXT_PAINTER_H_
