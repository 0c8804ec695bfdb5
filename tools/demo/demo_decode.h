// tools/demo/demo_decode.h — the demo's one decode step, behind one function.
//
// Until the decoders branch (lethe::decoders: Surface, AnimatedImage, Probe, DecodeLimits) is
// merged, DecodeImage() decodes for real by calling libpng's simplified API, libjpeg-turbo and
// giflib directly (demo_decode.cc). The demo prints DecoderName() so that nobody takes these
// figures for lethe::decoders'. Switching to the real decoders means reimplementing this one
// function (and the two CachedSurface adapters) on top of them; nothing else in the demo changes.
//
// What it produces: still images as premultiplied BGRA8 (4 bytes per pixel); animated GIFs as
// 8-bit palette indices over each frame's own rectangle plus its palette, with one 32-bit canvas
// that Compose() draws frames onto (the paletted layout DESIGN.md describes). Every buffer comes
// from Lethe's allocator; MemoryBytes() is the sum of their usable sizes.
// Threads: DecodeImage may run on any thread; the surfaces are used by one thread at a time.
#ifndef LETHE_TOOLS_DEMO_DEMO_DECODE_H_
#define LETHE_TOOLS_DEMO_DEMO_DECODE_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "lethe/cached_surface.h"
#include "lethe/image_cache.h"

namespace lethe::demo {

// A decoded animation (paletted frames) that can be drawn frame by frame.
class DemoAnimation : public CachedSurface {
 public:
  virtual uint32_t frame_count() const = 0;
  // Draws frame `index` onto the 32-bit canvas (frames apply in order; a jump back restarts).
  virtual void Compose(uint32_t index) = 0;
  bool IsAnimated() const override { return true; }
};

struct DecodedImage {
  std::shared_ptr<CachedSurface> surface;  // nullptr on failure
  ImageHeaderInfo header;
  uint64_t full_canvas_bgra_bytes = 0;  // the same image as one 32-bit canvas per frame
  std::string error;                    // why it failed, for a person
};

// "interim: libpng/libjpeg-turbo/giflib, called directly" until lethe::decoders is used.
const char* DecoderName();

// Decodes `bytes` (PNG, JPEG or GIF by signature). Never throws; bad input returns an error.
DecodedImage DecodeImage(std::span<const uint8_t> bytes);

}  // namespace lethe::demo

#endif  // LETHE_TOOLS_DEMO_DEMO_DECODE_H_
