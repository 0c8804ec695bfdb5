// random.h — the sample site's deterministic random numbers (xorshift32). Every picture and every
// page seeds its own generator from the site's seed and its own name, so the site is the same on
// every run and one image does not change when another is added. Not for anything but pictures.
#ifndef LETHE_TOOLS_SAMPLE_SITE_RANDOM_H_
#define LETHE_TOOLS_SAMPLE_SITE_RANDOM_H_

#include <cstdint>

namespace lethe::sample_site {

class Random {
 public:
  // Mixes the parts (site seed, page, image index...) into a non-zero state.
  explicit Random(uint32_t seed, uint32_t a = 0, uint32_t b = 0)
      : state_(Mix(Mix(Mix(seed) ^ a) ^ (b * 0x9e3779b9u)) | 1u) {}

  uint32_t Next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 17;
    state_ ^= state_ << 5;
    return state_;
  }
  // Uniform in [low, high] (both included); high >= low.
  int Range(int low, int high) {
    return low + static_cast<int>(Next() % static_cast<uint32_t>(high - low + 1));
  }
  double Unit() { return (Next() & 0xffffff) / double{0x1000000}; }  // [0, 1)
  bool OneIn(int n) { return Next() % static_cast<uint32_t>(n) == 0; }

 private:
  // A 32-bit finaliser (avalanches every bit), so neighbouring seeds give unrelated sequences.
  static uint32_t Mix(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
  }
  uint32_t state_;
};

}  // namespace lethe::sample_site

#endif  // LETHE_TOOLS_SAMPLE_SITE_RANDOM_H_
