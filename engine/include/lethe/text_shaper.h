// lethe/text_shaper.h — shaping text runs word by word with HarfBuzz, and splitting a run into the
// words that the ShapedWordCache keys on.
//
// Browsers shape by words because the same words recur across a page and across pages: a shaped
// word is cached (ShapedWordCache, cache/) and reused, so only new words cost a HarfBuzz call.
// Main thread only (it uses a FontFace).
#ifndef LETHE_TEXT_SHAPER_H_
#define LETHE_TEXT_SHAPER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "lethe/font_face.h"

namespace lethe {

struct ShapedGlyph {
  uint32_t glyph_id = 0;
  int x_offset = 0;   // pixels, from the pen position
  int y_offset = 0;   // pixels, positive = down
  int x_advance = 0;  // pixels the pen moves after this glyph
};

struct ShapedWord {
  std::vector<ShapedGlyph> glyphs;
  int advance = 0;  // total width in pixels
  size_t MemoryBytes() const { return sizeof(*this) + glyphs.capacity() * sizeof(ShapedGlyph); }
};

// Shapes `utf8` (left-to-right, script and language guessed by HarfBuzz) with `face`.
// Invalid UTF-8 is replaced by U+FFFD by HarfBuzz; never fails.
ShapedWord ShapeWord(FontFace& face, std::string_view utf8);

// A word of a run and the spaces that follow it (the space is shaped separately once and reused).
struct WordSpan {
  std::string_view word;
  size_t trailing_spaces = 0;
};

// Splits at ASCII spaces; words keep their punctuation. "a  b" -> {"a", 2}, {"b", 0}.
std::vector<WordSpan> SplitWords(std::string_view run);

}  // namespace lethe

#endif  // LETHE_TEXT_SHAPER_H_
