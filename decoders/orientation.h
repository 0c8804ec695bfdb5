// orientation.h (internal) — EXIF orientation 1..8: where a pixel of the stored image appears when
// the image is displayed. The bottom of the row-sink stack (orientation <- row_sink <- direct_sink,
// downscaler <- row_sink_factory): it knows nothing of sinks. Pure functions, any thread.
#ifndef LETHE_DECODERS_ORIENTATION_H_
#define LETHE_DECODERS_ORIENTATION_H_

#include <cstdint>

namespace lethe::internal {

// (x, y) of a stored image of width x height to its displayed position under EXIF orientation
// 1..8 (other values act as 1).
struct Oriented {
  uint32_t x, y;
};
Oriented OrientPoint(uint32_t x, uint32_t y, uint32_t width, uint32_t height, int orientation);

// True for the orientations (5..8) that display a stored W x H image as H x W.
bool OrientationSwapsAxes(int orientation);

}  // namespace lethe::internal

#endif  // LETHE_DECODERS_ORIENTATION_H_
