// tools/demo/demo_decode.h — the demo's one decode step: lethe::decoders' Decode(), its results
// adapted to what the SurfaceCache stores (CachedSurface).
//
// What it produces: still images as a lethe::Surface (premultiplied BGRA8, one block of Lethe's
// allocator); animated GIFs as a lethe::AnimatedImage (8-bit palette indices over each frame's own
// rectangle plus one 32-bit canvas that Compose() draws frames onto, the paletted layout DESIGN.md
// describes). MemoryBytes() is what the decoders report the object holds (usable sizes), read by
// the cache once at insert; the canvas is composed before that, so it is counted.
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
  // Draws frame `index` (modulo the frame count) onto the 32-bit canvas.
  virtual void Compose(uint32_t index) = 0;
  bool IsAnimated() const override { return true; }
};

struct DecodedImage {
  std::shared_ptr<CachedSurface> surface;  // nullptr on failure
  ImageHeaderInfo header;
  uint64_t full_canvas_bgra_bytes = 0;  // the same image as one 32-bit canvas per frame
  std::string error;                    // why it failed, for a person
};

// Which decoders produced the figures (printed by the demo).
const char* DecoderName();

// Decodes `bytes` (PNG, JPEG or GIF by signature) at natural size. Never throws; bad input returns
// an error. A damaged image that decodes only partly (the decoders' complete() == false) is an
// error here too: the demo reports it per file and never draws it as if it were whole.
DecodedImage DecodeImage(std::span<const uint8_t> bytes);

}  // namespace lethe::demo

#endif  // LETHE_TOOLS_DEMO_DEMO_DECODE_H_
