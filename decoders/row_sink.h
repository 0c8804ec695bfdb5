// row_sink.h (internal) — the interface a decoder puts its rows through: the output Surface in
// displayed orientation, filled directly (direct_sink.h) or through the row-by-row downscaler
// (downscaler.h). row_sink_factory.h chooses the size and makes the sink; decoders include that.
//
// A decoder produces premultiplied BGRA pixels of the *stored* image, row by row (or, for PNG Adam7
// at a reduced size, as the sparse pixels of each pass). The sink maps them to the displayed
// orientation and the requested size. The full-size pixels exist only when the output is full
// size. One decode call owns one sink; single thread.
//
// Dependencies point one way: orientation <- row_sink <- direct_sink, downscaler <- factory.
#ifndef LETHE_DECODERS_ROW_SINK_H_
#define LETHE_DECODERS_ROW_SINK_H_

#include <cstdint>

#include "lethe/surface.h"

namespace lethe::internal {

// The output of one decode, computed once (ChooseOutputSize) and passed down unchanged:
//   width x height               in displayed orientation: the Surface's size;
//   stored_width x stored_height the same size in stored orientation (swapped for EXIF 5..8):
//                                what the downscaler's bins and the JPEG scale work in.
struct OutputSize {
  uint32_t width, height;
  uint32_t stored_width, stored_height;
};

class RowSink {
 public:
  virtual ~RowSink() = default;
  // `count` premultiplied BGRA pixels of stored row y, at columns x0, x0 + step, ...
  virtual void PutPixels(uint32_t y, uint32_t x0, uint32_t step, const uint8_t* bgra,
                         uint32_t count) = 0;
  // A whole stored row (source_width pixels).
  void PutRow(uint32_t y, const uint8_t* bgra) { PutPixels(y, 0, 1, bgra, source_width_); }
  // The finished output; `complete` marks it whole or partial. Call once.
  virtual Surface Finish(bool complete) = 0;

  // The output surface when it is the full-size stored image in orientation 1, so that a decoder
  // may write rows into it in place; nullptr otherwise.
  virtual Surface* DirectSurface() { return nullptr; }

  uint32_t source_width() const { return source_width_; }
  uint32_t source_height() const { return source_height_; }

 protected:
  RowSink(uint32_t source_width, uint32_t source_height)
      : source_width_(source_width), source_height_(source_height) {}

 private:
  uint32_t source_width_;
  uint32_t source_height_;
};

// Premultiplies `count` straight-alpha BGRA pixels in place: c' = (c * a + 127) / 255. A decoder
// whose pixels are all opaque (no alpha channel, no tRNS) skips it: it would change nothing.
void PremultiplyBgra(uint8_t* bgra, uint32_t count);

}  // namespace lethe::internal

#endif  // LETHE_DECODERS_ROW_SINK_H_
