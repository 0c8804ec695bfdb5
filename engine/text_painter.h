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
#include "lethe/glyph_painter.h"
#include "lethe/page_description.h"
#include "lethe/pressure_source.h"
#include "lethe/shaped_word_cache.h"
#include "lethe/surface.h"
#include "lethe/text_shaper.h"

namespace lethe::internal {

// A face's key in the FontCache and the ShapedWordCache: pixels per em (4..512, 16 bits) and the
// style ((family * 2 + bold) * 2 + italic) above them.
constexpr uint32_t FaceKey(int size, FontFamily family, bool bold, bool italic = false) {
  return static_cast<uint32_t>(size) |
         ((static_cast<uint32_t>(family) * 2 + (bold ? 1 : 0)) * 2 + (italic ? 1 : 0)) << 16;
}

using EngineFontCache = FontCache<uint32_t, CachedFont>;     // key: FaceKey
using EngineWordCache = ShapedWordCache<ShapedWord, char>;   // font key: FaceKey

// What a CSS font resolves to among the faces the engine has.
struct TextStyle {
  int size = 16;  // pixels per em, clamped to 4..512 where a face is opened
  FontFamily family = FontFamily::kSansSerif;
  bool bold = false;
  bool italic = false;  // CSS italic or oblique: the italic file, else a slanted upright face
};

class TextPainter {
 public:
  // `glyphs` (not owned) must outlive `fonts`' entries; each face's table keeps at most
  // `glyph_table_max_bytes`.
  TextPainter(EngineFontCache& fonts, EngineWordCache& words, GlyphTotals& glyphs,
              uint64_t glyph_table_max_bytes, std::string font_path, FontFiles font_files,
              LogFunction log)
      : fonts_(fonts),
        words_(words),
        glyphs_(glyphs),
        glyph_table_max_bytes_(glyph_table_max_bytes),
        font_path_(std::move(font_path)),
        font_files_(std::move(font_files)),
        log_(std::move(log)) {}

  // Draws `text` with its top-left at (text.rect.x + dx, text.rect.y + dy) in `target`. Returns
  // the height the wrapped lines take (0 when the font cannot be opened).
  int Draw(Surface& target, const PageTextItem& text, int dx, int dy);
  // The height `text` takes when wrapped at its width, without drawing.
  int Measure(const PageTextItem& text);

  // For a layout engine that places words itself (litehtml): the metrics of the face `style`
  // resolves to (zeros when no font opens), a word's advance, and a word drawn with its pen at
  // (x, baseline), only inside `clip`. Words are shaped once through the ShapedWordCache.
  FontMetrics Metrics(const TextStyle& style);
  int Width(const TextStyle& style, std::string_view word);
  void DrawWord(Surface& target, const TextStyle& style, std::string_view word, int x, int baseline,
                uint32_t color, const LayoutRect& clip);

  uint64_t shape_count() const { return shape_count_; }
  const GlyphTotals& glyphs() const { return glyphs_; }

 private:
  // Returns the face `text` asks for (`key` = its FaceKey), opening it on a miss (its file, else
  // font_path); an empty handle if neither can be opened.
  EngineFontCache::Handle Face(const TextStyle& style, uint32_t key);
  // The file of a style: font_path for regular sans-serif, else from font_files_.
  const std::string& FileFor(FontFamily family, bool bold, bool italic) const;
  // Opens the face of `style`: its file; for italic, else its upright file slanted; else font_path
  // (slanted for italic). nullptr with *error when none opens. Fallbacks are logged once a style.
  std::unique_ptr<FontFace> OpenFace(const TextStyle& style, uint32_t key, std::string* error);
  // Lays out (and optionally draws) the run; returns its height.
  int Layout(Surface* target, const PageTextItem& text, int dx, int dy);
  // The advance of `word` shaped with `face`, drawing it at (pen_x, baseline) when `target`.
  int Word(CachedFont& font, uint32_t face_key, std::string_view word, const BgraView* target,
           int pen_x, int baseline, uint32_t color);

  EngineFontCache& fonts_;
  EngineWordCache& words_;
  GlyphTotals& glyphs_;
  uint64_t glyph_table_max_bytes_;
  std::string font_path_;
  FontFiles font_files_;
  LogFunction log_;
  bool reported_font_error_ = false;
  uint32_t reported_fallback_styles_ = 0;  // bit (family * 2 + bold) * 2 + italic: logged
  uint64_t shape_count_ = 0;
};

}  // namespace lethe::internal

#endif  // LETHE_ENGINE_TEXT_PAINTER_H_
