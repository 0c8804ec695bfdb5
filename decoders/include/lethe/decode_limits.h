// lethe/decode_limits.h — the limits that stop decompression bombs before any large allocation.
//
// Every decoder checks the header against these limits before it allocates pixels (a 20000x20000
// PNG of 49 KB or a GIF announcing a 65535x65535 screen end in kTooLarge with no large
// allocation). A GIF's frame count is not a limit: past the frame budget an animation plays through
// a decode-ahead window, so a GIF of 40,000 frames plays every frame in bounded memory; what grows
// with the count (one table entry a frame) counts against max_decoded_bytes before it grows. Callers may raise or lower any field; the defaults suit a browser
// showing web content. Plain value, any thread.
#ifndef LETHE_DECODE_LIMITS_H_
#define LETHE_DECODE_LIMITS_H_

#include <cstdint>

namespace lethe {

struct DecodeLimits {
  // Pixels of one frame (PNG/JPEG image; a GIF frame rectangle as the file states it, before
  // clipping to the screen, since all its rows are decompressed) and of the whole image (the output
  // surface, the GIF logical screen / canvas). A GIF frame beyond the limit ends the decode in
  // kTooLarge, like a frame count beyond max_frame_count: bombs are errors, not partial images.
  uint64_t max_frame_pixels = uint64_t{64} << 20;  // 64 Mpx (8192 x 8192)
  uint64_t max_image_pixels = uint64_t{64} << 20;
  // Frames one animation holds decoded at once. Past it, as past AnimationOptions'
  // frame_budget_bytes, the remaining frames play through the decode-ahead window.
  uint32_t max_frame_count = 10000;
  // Decoded bytes one image may hold at once: the surface, or the stored frames + canvas + frame
  // table of an animation (an animation past its frame budget switches to a decode-ahead window
  // instead of counting its frames against this), and the decoders' own row buffers.
  uint64_t max_decoded_bytes = uint64_t{512} << 20;
  // Size of the compressed input.
  uint64_t max_input_bytes = uint64_t{256} << 20;
};

}  // namespace lethe

#endif  // LETHE_DECODE_LIMITS_H_
