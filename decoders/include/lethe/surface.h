// lethe/surface.h — a decoded still image: premultiplied BGRA8 pixels owned through Lethe's allocator.
//
// Layout: `height` rows of `stride` bytes (stride = 4 x width), pixel = B, G, R, A bytes with the
// colour premultiplied by alpha. The buffer comes from lethe_malloc, asked for lethe_good_size()
// bytes so that it fills its size class exactly (no "clownshoes" slack); MemoryBytes() is the
// allocator's usable size of that block, i.e. what the surface really costs.
//
// Colour management (ICC profiles, cICP) is out of scope: pixels are the file's values (PNG gamma is
// corrected to sRGB the way libpng's simplified API does).
//
// Move-only; owned by whoever holds it (a SurfaceCache entry, an AnimatedImage's canvas). Not
// thread-safe: one thread at a time.
#ifndef LETHE_SURFACE_H_
#define LETHE_SURFACE_H_

#include <cstddef>
#include <cstdint>

#include "lethe/decode_error.h"
#include "lethe/decode_limits.h"

namespace lethe {

class Surface {
 public:
  static constexpr size_t kBytesPerPixel = 4;

  // A surface of width x height transparent-black pixels. kInvalidArgument for a zero dimension,
  // kTooLarge beyond `limits` (or size_t), kOutOfMemory when the allocator refuses.
  static DecodeResult<Surface> Create(uint32_t width, uint32_t height,
                                      const DecodeLimits& limits = DecodeLimits());

  Surface() = default;  // empty: no pixels
  Surface(Surface&& other) noexcept;
  Surface& operator=(Surface&& other) noexcept;
  Surface(const Surface&) = delete;
  Surface& operator=(const Surface&) = delete;
  ~Surface();

  uint32_t width() const { return width_; }
  uint32_t height() const { return height_; }
  size_t stride() const { return stride_; }  // bytes per row
  bool empty() const { return pixels_ == nullptr; }

  uint8_t* pixels() { return pixels_; }
  const uint8_t* pixels() const { return pixels_; }
  uint8_t* Row(uint32_t y) { return pixels_ + size_t{y} * stride_; }
  const uint8_t* Row(uint32_t y) const { return pixels_ + size_t{y} * stride_; }

  // False when the decoder stopped early (truncated or corrupt data after some pixels): the rows it
  // could not decode are transparent. Browsers show such images; callers may decode again later.
  bool complete() const { return complete_; }
  void set_complete(bool complete) { complete_ = complete; }

  // Bytes this surface holds in the allocator (its block's usable size), 0 when empty.
  size_t MemoryBytes() const;

  // Sets every pixel to transparent black.
  void Clear();

 private:
  uint8_t* pixels_ = nullptr;
  uint32_t width_ = 0;
  uint32_t height_ = 0;
  size_t stride_ = 0;
  bool complete_ = true;
};

}  // namespace lethe

#endif  // LETHE_SURFACE_H_
