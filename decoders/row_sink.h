// row_sink.h (internal) — where a decoder puts its rows: straight into the output Surface, or
// through the row-by-row downscaler; either way with the EXIF orientation applied.
//
// A decoder produces premultiplied BGRA pixels of the *stored* image, row by row (or, for PNG Adam7
// at a reduced size, as the sparse pixels of each pass). The sink maps them to the displayed
// orientation and the requested size. The full-size pixels exist only when the output is full
// size. One decode call owns one sink; single thread.
#ifndef LETHE_DECODERS_ROW_SINK_H_
#define LETHE_DECODERS_ROW_SINK_H_

#include <cstdint>
#include <memory>

#include "lethe/decode_error.h"
#include "lethe/decode_limits.h"
#include "lethe/surface.h"

namespace lethe::internal {

// (x, y) of a stored image of width x height to its displayed position under EXIF orientation
// 1..8 (other values act as 1).
struct Oriented {
  uint32_t x, y;
};
Oriented OrientPoint(uint32_t x, uint32_t y, uint32_t width, uint32_t height, int orientation);
bool OrientationSwapsAxes(int orientation);

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

// The output size for a stored source_width x source_height image under `orientation` and a target
// (0 x 0 = natural; otherwise each dimension clamped to natural and at least 1).
struct OutputSize {
  uint32_t width, height;
};
OutputSize ChooseOutputSize(uint32_t source_width, uint32_t source_height, int orientation,
                            uint32_t target_width, uint32_t target_height);

// A sink for a stored image of source_width x source_height, producing `output` (displayed
// orientation). Allocates the output surface (and the downscaler's accumulators) now, checked
// against `limits`.
DecodeResult<std::unique_ptr<RowSink>> MakeRowSink(uint32_t source_width, uint32_t source_height,
                                                   int orientation, OutputSize output,
                                                   const DecodeLimits& limits,
                                                   bool rows_in_order = true);

// Premultiplies `count` straight-alpha BGRA pixels in place: c' = (c * a + 127) / 255.
void PremultiplyBgra(uint8_t* bgra, uint32_t count);

}  // namespace lethe::internal

#endif  // LETHE_DECODERS_ROW_SINK_H_
