// Options shared by the fuzz targets: limits small enough that one input stays well inside the
// 2 GiB RSS limit and the 5 s timeout, large enough to reach every code path. One megapixel by
// default, as libjpeg-turbo's own fuzzers cap it: a 4 Mpx cap made fuzz_jpeg 3.3x slower (46 vs 155
// runs/s, both on the same loaded machine), while the paths that depend on size (the limit checks,
// windowed playback past its frame budget, the downscaler) are all reached below it.
//
// A long campaign (tools/run_fuzzers.sh --campaign) sets LETHE_FUZZ_MAX_PIXELS lower: its corpus
// grows inputs that declare a megapixel canvas in a few KiB and compose it twenty times (130 ms
// each under ASan, where one such input costs as much as a thousand small ones). The frame budget
// and the decoded-bytes limit scale with the cap, so that the same paths stay reachable: windowed
// playback starts at a quarter of the largest frame's paletted bytes, as it does at 1 Mpx.
#ifndef LETHE_TESTS_FUZZ_FUZZ_LIMITS_H_
#define LETHE_TESTS_FUZZ_FUZZ_LIMITS_H_

#include <cstdint>
#include <cstdlib>

#include "lethe/decode.h"

namespace lethe::fuzz {

// LETHE_FUZZ_MAX_PIXELS if set to a number in [256, 2^20], else 2^20. Read once.
inline uint64_t MaxPixels() {
  static const uint64_t pixels = [] {
    const char* text = std::getenv("LETHE_FUZZ_MAX_PIXELS");
    const uint64_t value = text != nullptr ? std::strtoull(text, nullptr, 10) : 0;
    return value >= 256 && value <= (uint64_t{1} << 20) ? value : uint64_t{1} << 20;
  }();
  return pixels;
}

inline DecodeOptions FuzzOptions() {
  DecodeOptions options;
  const uint64_t pixels = MaxPixels();
  options.limits.max_frame_pixels = pixels;
  options.limits.max_image_pixels = pixels;
  options.limits.max_frame_count = 256;
  options.limits.max_decoded_bytes = 64 * pixels;  // 64 MiB at 1 Mpx
  options.animation.frame_budget_bytes = pixels / 4;  // 256 KiB at 1 Mpx
  return options;
}

}  // namespace lethe::fuzz

#endif  // LETHE_TESTS_FUZZ_FUZZ_LIMITS_H_
