// lethe/font_face.h — one font file at one pixel size: a FreeType face for glyph bitmaps and a
// HarfBuzz font for shaping, with every byte FreeType allocates counted.
//
// Threading: a FontFace is used by one thread at a time (FreeType faces are not thread-safe); the
// engine shapes and draws on its main thread. The FontCache (cache/) owns faces and ages them.
// Memory: FreeType allocates through lethe_malloc via its FT_Memory hook, so MemoryBytes() is the
// sum of the usable sizes FreeType holds for this face (its library, face, size and glyph slot),
// plus the HarfBuzz font object's estimate. Glyph bitmaps returned by RasterizeGlyph() are owned
// by the caller and report their own bytes.
#ifndef LETHE_FONT_FACE_H_
#define LETHE_FONT_FACE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lethe {

// The faces a text run can ask for besides the regular sans-serif one (EngineOptions::font_path):
// "family" and "bold" in the page description, and CSS's font-style for HTML. Defaults: DejaVu
// (Debian's fonts-dejavu-core). A file that cannot be opened falls back to font_path, logged once
// per style; an italic one to the upright face of its style (else font_path) with a synthesized
// oblique slant, as browsers do for a family without an italic face.
struct FontFiles {
  std::string sans_serif_bold = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf";
  std::string serif = "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf";
  std::string serif_bold = "/usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf";
  std::string monospace = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf";
  std::string monospace_bold = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf";
  std::string sans_serif_italic = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Oblique.ttf";
  std::string sans_serif_bold_italic = "/usr/share/fonts/truetype/dejavu/DejaVuSans-BoldOblique.ttf";
  std::string serif_italic = "/usr/share/fonts/truetype/dejavu/DejaVuSerif-Italic.ttf";
  std::string serif_bold_italic = "/usr/share/fonts/truetype/dejavu/DejaVuSerif-BoldItalic.ttf";
  std::string monospace_italic = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Oblique.ttf";
  std::string monospace_bold_italic =
      "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-BoldOblique.ttf";
};

// An 8-bit coverage bitmap of one glyph; left/top are offsets from the pen position on the
// baseline to the bitmap's top-left corner (y grows downwards).
struct GlyphBitmap {
  int width = 0;
  int height = 0;
  int left = 0;
  int top = 0;
  std::vector<uint8_t> coverage;  // width * height, row-major
  size_t MemoryBytes() const { return sizeof(*this) + coverage.capacity(); }
};

struct FontMetrics {
  int ascent = 0;       // pixels above the baseline
  int descent = 0;      // pixels below the baseline (positive)
  int line_height = 0;  // baseline-to-baseline distance
};

class FontFace {
 public:
  // Opens `path` at `pixel_size` (pixels per em, 4..512). On failure returns nullptr and sets
  // *error to a readable reason ("cannot open font '/x.ttf': cannot open resource").
  // `oblique`: glyphs are slanted (FreeType's transform, about 12 degrees), for a style that asks
  // for italic when no italic file opens. Advances (and so shaping) are unchanged by the slant.
  static std::unique_ptr<FontFace> Open(const std::string& path, int pixel_size, std::string* error,
                                        bool oblique = false);

  ~FontFace();
  FontFace(const FontFace&) = delete;
  FontFace& operator=(const FontFace&) = delete;

  const std::string& path() const { return path_; }
  int pixel_size() const { return pixel_size_; }
  bool oblique() const { return oblique_; }
  FontMetrics metrics() const { return metrics_; }

  // Renders glyph `glyph_id` (a HarfBuzz/FreeType glyph index) anti-aliased. A glyph with no
  // outline (a space) gives an empty bitmap; false only when FreeType fails.
  bool RasterizeGlyph(uint32_t glyph_id, GlyphBitmap* out);

  // Bytes held by FreeType for this face plus the HarfBuzz font's estimated size.
  size_t MemoryBytes() const;

  // For the shaper: the HarfBuzz font (hb_font_t*), owned by this face.
  void* harfbuzz_font() const { return hb_font_; }

 private:
  struct Memory;
  FontFace(std::string path, int pixel_size, bool oblique);
  bool Init(std::string* error);

  std::string path_;
  int pixel_size_;
  bool oblique_;
  FontMetrics metrics_;
  std::unique_ptr<Memory> memory_;  // FreeType's allocator hook and its byte counter
  void* library_ = nullptr;         // FT_Library
  void* face_ = nullptr;            // FT_Face
  void* hb_font_ = nullptr;         // hb_font_t*
};

}  // namespace lethe

#endif  // LETHE_FONT_FACE_H_
