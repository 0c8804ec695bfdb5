// Fuzzes DecodeGif and composes every frame in order; also the first frame to a Surface.
#include <cstddef>
#include <cstdint>

#include "fuzz_limits.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  const lethe::DecodeOptions options = lethe::fuzz::FuzzOptions();
  lethe::DecodeResult<lethe::AnimatedImage> animation = lethe::DecodeGif(bytes, options);
  if (animation) {
    for (uint32_t n = 0; n < animation->FrameCount(); ++n) (void)animation->Compose(n);
    (void)animation->Memory();
  }
  lethe::DecodeResult<lethe::Surface> surface = lethe::DecodeGifToSurface(bytes, options);
  (void)surface;
  return 0;
}
