#include "lethe/text_shaper.h"

#include <hb.h>

#include <memory>

namespace lethe {

namespace {

struct BufferDeleter {
  void operator()(hb_buffer_t* buffer) const { hb_buffer_destroy(buffer); }
};

// HarfBuzz positions are in 26.6 fixed point when the font comes from FreeType.
int ToPixels(hb_position_t value) { return static_cast<int>((value + 32) >> 6); }

}  // namespace

ShapedWord ShapeWord(FontFace& face, std::string_view utf8) {
  std::unique_ptr<hb_buffer_t, BufferDeleter> buffer(hb_buffer_create());
  hb_buffer_add_utf8(buffer.get(), utf8.data(), static_cast<int>(utf8.size()), 0,
                     static_cast<int>(utf8.size()));
  hb_buffer_guess_segment_properties(buffer.get());
  hb_shape(static_cast<hb_font_t*>(face.harfbuzz_font()), buffer.get(), nullptr, 0);

  unsigned int count = 0;
  const hb_glyph_info_t* infos = hb_buffer_get_glyph_infos(buffer.get(), &count);
  const hb_glyph_position_t* positions = hb_buffer_get_glyph_positions(buffer.get(), &count);
  ShapedWord word;
  word.glyphs.reserve(count);
  for (unsigned int i = 0; i < count; ++i) {
    ShapedGlyph glyph;
    glyph.glyph_id = infos[i].codepoint;  // after shaping, codepoint holds the glyph index
    glyph.x_offset = ToPixels(positions[i].x_offset);
    glyph.y_offset = -ToPixels(positions[i].y_offset);
    glyph.x_advance = ToPixels(positions[i].x_advance);
    word.advance += glyph.x_advance;
    word.glyphs.push_back(glyph);
  }
  return word;
}

std::vector<WordSpan> SplitWords(std::string_view run) {
  std::vector<WordSpan> words;
  size_t position = 0;
  while (position < run.size() && run[position] == ' ') ++position;  // leading spaces dropped
  while (position < run.size()) {
    size_t end = run.find(' ', position);
    if (end == std::string_view::npos) end = run.size();
    WordSpan span{run.substr(position, end - position), 0};
    position = end;
    while (position < run.size() && run[position] == ' ') {
      ++span.trailing_spaces;
      ++position;
    }
    words.push_back(span);
  }
  return words;
}

}  // namespace lethe
