// image_writers.h — writing PNG, JPEG and GIF files with the reference encoders (libpng,
// libjpeg-turbo, giflib), for the generated sample site. Each returns false and sets *error on
// failure (a readable reason naming the file); nothing is printed.
#ifndef LETHE_TOOLS_SAMPLE_SITE_IMAGE_WRITERS_H_
#define LETHE_TOOLS_SAMPLE_SITE_IMAGE_WRITERS_H_

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace lethe::sample_site {

enum class PngKind { kRgba, kRgb, kGray, kPalette };

// `rgba` holds width*height pixels, 4 bytes each (not premultiplied). For kPalette the picture is
// quantised to at most 256 colours (exact when it has no more); alpha becomes tRNS.
bool WritePng(const std::string& path, int width, int height, const std::vector<uint8_t>& rgba,
              PngKind kind, bool interlaced, std::string* error);

// Fills row `y` of a picture being written: width * 4 bytes, RGBA (the alpha is ignored). Rows
// are asked for in order, top to bottom, once each.
using RowPainter = std::function<void(int y, uint8_t* rgba)>;

// Encodes the rows `paint_row` gives, one at a time (no whole picture in memory). quality 1..100.
bool WriteJpeg(const std::string& path, int width, int height, const RowPainter& paint_row,
               int quality, bool progressive, std::string* error);

struct GifFrame {
  int left = 0, top = 0, width = 0, height = 0;  // the frame's own rectangle on the screen
  std::vector<uint8_t> indices;                  // width*height palette indices
  std::vector<std::array<uint8_t, 3>> local_palette;  // empty = use the global palette
  int transparent_index = -1;                    // -1 = none
  int delay_centiseconds = 10;
  int disposal = 0;                              // 0..3 as in the GIF spec
  bool interlaced = false;
};

// Writes a GIF89a with a global palette (2..256 colours, padded to a power of two) and, when
// loop_count >= 0, a NETSCAPE2.0 loop extension (0 = forever).
bool WriteGif(const std::string& path, int screen_width, int screen_height,
              const std::vector<std::array<uint8_t, 3>>& global_palette,
              const std::vector<GifFrame>& frames, int loop_count, std::string* error);

}  // namespace lethe::sample_site

#endif  // LETHE_TOOLS_SAMPLE_SITE_IMAGE_WRITERS_H_
