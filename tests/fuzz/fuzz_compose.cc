// Fuzzes AnimatedImage::Compose: the first 8 bytes choose a frame budget (to force the
// decode-ahead window) and an order of frames to compose (sequential, jumps, repeats); the rest is
// the GIF.
#include <cstddef>
#include <cstdint>

#include "fuzz_limits.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  lethe::DecodeOptions options = lethe::fuzz::FuzzOptions();
  options.animation.frame_budget_bytes = uint64_t{data[0]} << (data[1] % 16);
  options.animation.min_window_frames = 1 + data[2] % 5;
  lethe::DecodeResult<lethe::AnimatedImage> animation =
      lethe::DecodeGif(std::span<const uint8_t>(data + 8, size - 8), options);
  if (!animation || animation->FrameCount() == 0) return 0;
  const uint32_t count = animation->FrameCount();
  for (int step = 0; step < 64; ++step) {
    const uint8_t choice = data[3 + step % 5] ^ static_cast<uint8_t>(step * 37);
    const uint32_t n = (choice & 0x80) ? choice % count : static_cast<uint32_t>(step) % count;
    (void)animation->Compose(n);
    if (choice == 0x55) animation->DiscardCanvas();
  }
  (void)animation->Memory();
  return 0;
}
