// Options shared by the fuzz targets: limits small enough that one input stays well inside the
// 2 GiB RSS limit and the 5 s timeout, large enough to reach every code path.
#ifndef LETHE_TESTS_FUZZ_FUZZ_LIMITS_H_
#define LETHE_TESTS_FUZZ_FUZZ_LIMITS_H_

#include "lethe/decode.h"

namespace lethe::fuzz {

inline DecodeOptions FuzzOptions() {
  DecodeOptions options;
  options.limits.max_frame_pixels = 4u << 20;
  options.limits.max_image_pixels = 4u << 20;
  options.limits.max_frame_count = 256;
  options.limits.max_decoded_bytes = 64u << 20;
  options.animation.frame_budget_bytes = 256u << 10;
  return options;
}

}  // namespace lethe::fuzz

#endif  // LETHE_TESTS_FUZZ_FUZZ_LIMITS_H_
