#include "row_sink.h"

#include <bit>
#include <cstddef>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace lethe::internal {

// For x = c * a in [0, 255 * 255], with t = x + 128: (t + (t >> 8)) >> 8 == (x + 127) / 255, the
// division's rounding exactly (the test checks every c and a). t <= 65153 and t + (t >> 8) <= 65407
// fit in 16 bits, so the SSE2 path works on 16-bit lanes (two pixels a register) and the scalar
// path puts B and R side by side in 16-bit lanes of one word without carries. Branch-free; an
// opaque pixel comes out unchanged.
namespace {

uint32_t PremultiplyWord(uint32_t pixel) {
  const uint32_t alpha = pixel >> 24;
  uint32_t blue_red = (pixel & 0x00FF00FFu) * alpha + 0x00800080u;
  blue_red = ((blue_red + ((blue_red >> 8) & 0x00FF00FFu)) >> 8) & 0x00FF00FFu;
  uint32_t green = ((pixel >> 8) & 0xFFu) * alpha + 0x80u;
  green = (green + (green >> 8)) >> 8;
  return (pixel & 0xFF000000u) | blue_red | (green << 8);
}

#if defined(__SSE2__)
// Two pixels as 16-bit lanes B G R A B G R A; alpha's lane comes out wrong and is restored later.
__m128i PremultiplyLanes(__m128i lanes) {
  __m128i alpha = _mm_shufflelo_epi16(lanes, _MM_SHUFFLE(3, 3, 3, 3));
  alpha = _mm_shufflehi_epi16(alpha, _MM_SHUFFLE(3, 3, 3, 3));
  const __m128i t = _mm_add_epi16(_mm_mullo_epi16(lanes, alpha), _mm_set1_epi16(128));
  return _mm_srli_epi16(_mm_add_epi16(t, _mm_srli_epi16(t, 8)), 8);
}
#endif

}  // namespace

void PremultiplyBgra(uint8_t* bgra, uint32_t count) {
  static_assert(std::endian::native == std::endian::little, "B is the low byte of a pixel word");
  uint32_t i = 0;
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128();
  const __m128i alpha_mask = _mm_set1_epi32(static_cast<int>(0xFF000000u));
  for (; i + 4 <= count; i += 4) {
    auto* at = reinterpret_cast<__m128i*>(bgra + size_t{i} * 4);
    const __m128i pixels = _mm_loadu_si128(at);
    const __m128i low = PremultiplyLanes(_mm_unpacklo_epi8(pixels, zero));
    const __m128i high = PremultiplyLanes(_mm_unpackhi_epi8(pixels, zero));
    const __m128i colours = _mm_andnot_si128(alpha_mask, _mm_packus_epi16(low, high));
    _mm_storeu_si128(at, _mm_or_si128(colours, _mm_and_si128(alpha_mask, pixels)));
  }
#endif
  for (; i < count; ++i) {
    uint32_t pixel;
    std::memcpy(&pixel, bgra + size_t{i} * 4, 4);
    pixel = PremultiplyWord(pixel);
    std::memcpy(bgra + size_t{i} * 4, &pixel, 4);
  }
}

}  // namespace lethe::internal
