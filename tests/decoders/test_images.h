// Test images made with the encoders (libpng, libjpeg-turbo, giflib), and the reference decodes
// the decoders are compared with (libpng's simplified API, libjpeg-turbo to BGRX).
#ifndef LETHE_TESTS_DECODERS_TEST_IMAGES_H_
#define LETHE_TESTS_DECODERS_TEST_IMAGES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lethe/surface.h"

namespace lethe::test {

using Bytes = std::vector<uint8_t>;

// Premultiplied BGRA, width x height, tightly packed (stride 4 x width).
struct Pixels {
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<uint8_t> bgra;
  const uint8_t* At(uint32_t x, uint32_t y) const { return &bgra[(size_t{y} * width + x) * 4]; }
};

Pixels PixelsOf(const Surface& surface);
// First differing pixel as text, or "" when equal.
std::string Compare(const Pixels& expected, const Pixels& actual);

struct PngSpec {
  uint32_t width = 13;
  uint32_t height = 11;
  int color_type = 2;  // PNG_COLOR_TYPE_*
  int bit_depth = 8;
  bool interlaced = false;
  bool trns = false;            // tRNS chunk (palette: alpha per entry; gray/rgb: one key colour)
  uint32_t gamma = 0;           // gAMA value x 100000, 0 = no chunk
  uint32_t palette_size = 0;    // 0 = 1 << bit_depth
  uint32_t seed = 1;
};
Bytes EncodePng(const PngSpec& spec);
// libpng simplified API to BGRA, then premultiplied like Lethe ((c * a + 127) / 255).
Pixels ReferencePng(const Bytes& png);

struct JpegSpec {
  uint32_t width = 37;
  uint32_t height = 23;
  int components = 3;       // 1 gray, 3 YCbCr, 4 CMYK
  bool ycck = false;        // with components == 4
  bool progressive = false;
  bool arithmetic = false;
  int restart_interval = 0;  // in MCU rows... in MCUs
  int quality = 90;
  int orientation = 0;      // EXIF orientation tag, 0 = no APP1
  uint32_t seed = 1;
};
Bytes EncodeJpeg(const JpegSpec& spec);
// libjpeg-turbo to BGRX at 1/scale_denom (alpha forced to 255); CMYK converted the way Lethe
// documents (Adobe inverted). No orientation.
Pixels ReferenceJpeg(const Bytes& jpeg, unsigned scale_denom = 1);

struct GifColor {
  uint8_t r, g, b;
};
struct GifFrameSpec {
  uint32_t left = 0, top = 0, width = 0, height = 0;
  bool interlaced = false;
  std::vector<GifColor> local_palette;  // power-of-two size, or empty
  int transparent_index = -1;
  int disposal = 0;
  int delay_centiseconds = 10;
  bool control_block = true;      // write a graphic control extension
  std::vector<uint8_t> indices;   // width x height, row-major in display order
};
struct GifSpec {
  uint32_t width = 0, height = 0;
  std::vector<GifColor> global_palette;  // power-of-two size, or empty
  int loop_count = -1;                   // -1: no NETSCAPE2.0 extension
  std::vector<GifFrameSpec> frames;
};
// Encodes with giflib's EGif*; `descriptor_offsets` receives where each image descriptor starts.
Bytes EncodeGif(const GifSpec& spec, std::vector<size_t>* descriptor_offsets = nullptr);
// A frame of w x h with indices from a hash (values below `index_limit`).
GifFrameSpec MakeGifFrame(uint32_t left, uint32_t top, uint32_t width, uint32_t height,
                          uint32_t index_limit, uint32_t seed);
std::vector<GifColor> MakeGifPalette(uint32_t count, uint32_t seed);
// The straightforward reference compositor: replays frames 0..n on a full RGBA canvas, saving the
// whole canvas for restore-previous; out-of-palette and transparent indices show through;
// disposal 2 clears to transparent; everything clipped to the screen. Premultiplied BGRA out.
Pixels ReferenceGifFrame(const GifSpec& spec, uint32_t n);
// The same compositor, frame after frame (for long animations).
class ReferenceGifPlayer {
 public:
  explicit ReferenceGifPlayer(const GifSpec& spec);
  const Pixels& Next();  // frame 0, then 1, ...

 private:
  const GifSpec& spec_;
  Pixels canvas_;
  std::vector<uint8_t> before_;
  uint32_t next_ = 0;
};
// The frames of a real GIF as giflib's DGifSlurp reads them. False when giflib fails.
bool SlurpGif(const Bytes& gif, GifSpec* spec);

// Applies EXIF orientation 1..8 to a stored image.
Pixels Orient(const Pixels& stored, int orientation);
// Area-average downscale by bins (x * w / sw), the documented algorithm, written plainly.
Pixels BoxDownscale(const Pixels& source, uint32_t width, uint32_t height);

}  // namespace lethe::test

#endif  // LETHE_TESTS_DECODERS_TEST_IMAGES_H_
