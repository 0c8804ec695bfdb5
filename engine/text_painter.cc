#include "text_painter.h"

#include <algorithm>

#include "lethe/glyph_painter.h"
#include "painter.h"

namespace lethe::internal {

const std::string& TextPainter::FileFor(FontFamily family, bool bold, bool italic) const {
  const FontFiles& f = font_files_;
  switch (family) {
    case FontFamily::kSansSerif:
      if (italic) return bold ? f.sans_serif_bold_italic : f.sans_serif_italic;
      return bold ? f.sans_serif_bold : font_path_;
    case FontFamily::kSerif:
      if (italic) return bold ? f.serif_bold_italic : f.serif_italic;
      return bold ? f.serif_bold : f.serif;
    case FontFamily::kMonospace:
      if (italic) return bold ? f.monospace_bold_italic : f.monospace_italic;
      return bold ? f.monospace_bold : f.monospace;
  }
  return font_path_;
}

std::unique_ptr<FontFace> TextPainter::OpenFace(const TextStyle& text, uint32_t key,
                                                std::string* error) {
  const std::string& path = FileFor(text.family, text.bold, text.italic);
  std::unique_ptr<FontFace> face = FontFace::Open(path, text.size, error);
  if (face != nullptr) return face;
  const std::string first_error = *error;
  // Italic without its file: the upright face of the style, slanted (a synthesized oblique).
  std::string fallback = font_path_;
  if (text.italic) {
    const std::string& upright = FileFor(text.family, text.bold, false);
    if (upright != path) face = FontFace::Open(upright, text.size, error, true);
    if (face != nullptr) fallback = upright;
  }
  if (face == nullptr && path != font_path_) face = FontFace::Open(font_path_, text.size, error, text.italic);
  const uint32_t style_bit = 1u << (key >> 16);
  if (face != nullptr && (reported_fallback_styles_ & style_bit) == 0 && log_) {
    log_(first_error + "; drawing " + FontFamilyName(text.family) + (text.bold ? " bold" : "") +
         (text.italic ? " italic" : "") + " with " + fallback + (text.italic ? " slanted" : ""));
  }
  reported_fallback_styles_ |= style_bit;
  return face;
}

EngineFontCache::Handle TextPainter::Face(const TextStyle& text, uint32_t key) {
  EngineFontCache::Handle handle = fonts_.Lookup(key);
  if (handle) return handle;
  std::string error;
  std::unique_ptr<FontFace> face = OpenFace(text, key, &error);
  if (face == nullptr) {
    if (!reported_font_error_ && log_) log_(error);
    reported_font_error_ = true;
    return handle;
  }
  auto font = std::make_unique<CachedFont>(std::move(face), glyph_table_max_bytes_, &glyphs_);
  uint64_t cost = font->MemoryBytes();
  return fonts_.Insert(key, std::move(font), cost);
}

int TextPainter::Word(CachedFont& font, uint32_t face_key, std::string_view word,
                      const BgraView* target, int pen_x, int baseline, uint32_t color) {
  const ShapedWord* shaped = words_.Lookup(face_key, word);
  ShapedWord fresh;
  if (shaped == nullptr) {
    fresh = ShapeWord(*font.face, word);
    ++shape_count_;
    shaped = &fresh;
  }
  int advance = shaped->advance;
  if (target != nullptr) {
    const BgraView& view = *target;
    GlyphBitmap scratch;
    int x = pen_x;
    for (const ShapedGlyph& glyph : shaped->glyphs) {
      const GlyphBitmap* bitmap = font.glyphs.Get(*font.face, glyph.glyph_id, &scratch);
      if (bitmap != nullptr && !bitmap->coverage.empty()) {
        PaintGlyph(view, *bitmap, x + glyph.x_offset, baseline + glyph.y_offset, color);
      }
      x += glyph.x_advance;
    }
  }
  if (shaped == &fresh) {
    uint64_t cost = fresh.MemoryBytes();
    (void)words_.Insert(face_key, word, std::move(fresh), cost);  // too long: simply not cached
  }
  return advance;
}

int TextPainter::Layout(Surface* target, const PageTextItem& text, int dx, int dy) {
  const uint32_t key = FaceKey(text.size, text.family, text.bold);
  EngineFontCache::Handle face = Face(TextStyle{text.size, text.family, text.bold}, key);
  if (!face) return 0;
  FontMetrics metrics = face->face->metrics();
  const int line_height = std::max(metrics.line_height, 1);
  const int left = text.rect.x + dx;
  const int right = left + text.rect.width;
  int pen_x = left;
  int top = text.rect.y + dy;
  int space = Word(*face, key, " ", nullptr, 0, 0, 0);
  BgraView view = target != nullptr ? ViewOf(*target) : BgraView{};
  for (const WordSpan& span : SplitWords(text.text)) {
    int advance = Word(*face, key, span.word, nullptr, 0, 0, 0);
    if (pen_x > left && pen_x + advance > right) {  // wrap before a word that does not fit
      pen_x = left;
      top += line_height;
    }
    // Skip drawing lines wholly outside the target.
    bool visible = target != nullptr && top + line_height > 0 &&
                   top < static_cast<int>(target->height());
    if (visible) Word(*face, key, span.word, &view, pen_x, top + metrics.ascent, text.color);
    pen_x += advance + space * static_cast<int>(span.trailing_spaces);
  }
  // The glyph table (and FreeType's glyph slot) may have grown: the FontCache counts it.
  fonts_.SetCost(face, face->MemoryBytes());
  return top + line_height - (text.rect.y + dy);
}

int TextPainter::Draw(Surface& target, const PageTextItem& text, int dx, int dy) {
  return Layout(&target, text, dx, dy);
}

int TextPainter::Measure(const PageTextItem& text) { return Layout(nullptr, text, 0, 0); }

namespace {

TextStyle Clamped(TextStyle style) {
  style.size = std::clamp(style.size, 4, 512);
  return style;
}

}  // namespace

FontMetrics TextPainter::Metrics(const TextStyle& style) {
  TextStyle clamped = Clamped(style);
  EngineFontCache::Handle face = Face(clamped, FaceKey(clamped.size, clamped.family, clamped.bold, clamped.italic));
  return face ? face->face->metrics() : FontMetrics{};
}

int TextPainter::Width(const TextStyle& style, std::string_view word) {
  TextStyle clamped = Clamped(style);
  const uint32_t key = FaceKey(clamped.size, clamped.family, clamped.bold, clamped.italic);
  EngineFontCache::Handle face = Face(clamped, key);
  return face ? Word(*face, key, word, nullptr, 0, 0, 0) : 0;
}

void TextPainter::DrawWord(Surface& target, const TextStyle& style, std::string_view word, int x,
                           int baseline, uint32_t color, const LayoutRect& clip) {
  TextStyle clamped = Clamped(style);
  const uint32_t key = FaceKey(clamped.size, clamped.family, clamped.bold, clamped.italic);
  EngineFontCache::Handle face = Face(clamped, key);
  BgraView view = ClippedView(target, clip);
  if (!face || view.pixels == nullptr) return;
  const LayoutRect area = Intersect(clip, {0, 0, static_cast<int>(target.width()),
                                           static_cast<int>(target.height())});
  Word(*face, key, word, &view, x - area.x, baseline - area.y, color);
  fonts_.SetCost(face, face->MemoryBytes());
}

}  // namespace lethe::internal
