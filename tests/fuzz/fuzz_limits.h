// Options shared by the fuzz targets: limits small enough that one input stays well inside the
// 2 GiB RSS limit and the 5 s timeout, large enough to reach every code path. One megapixel, as
// libjpeg-turbo's own fuzzers cap it: a 4 Mpx cap made fuzz_jpeg 3.3x slower (46 vs 155 runs/s,
// both on the same loaded machine), while the paths that depend on size (the limit checks, windowed
// playback past its 256 KiB budget, the downscaler) are all reached below it.
#ifndef LETHE_TESTS_FUZZ_FUZZ_LIMITS_H_
#define LETHE_TESTS_FUZZ_FUZZ_LIMITS_H_

#include "lethe/decode.h"

namespace lethe::fuzz {

inline DecodeOptions FuzzOptions() {
  DecodeOptions options;
  options.limits.max_frame_pixels = 1u << 20;
  options.limits.max_image_pixels = 1u << 20;
  options.limits.max_frame_count = 256;
  options.limits.max_decoded_bytes = 64u << 20;
  options.animation.frame_budget_bytes = 256u << 10;
  return options;
}

}  // namespace lethe::fuzz

#endif  // LETHE_TESTS_FUZZ_FUZZ_LIMITS_H_
