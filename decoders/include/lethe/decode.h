// lethe/decode.h — compressed bytes to pixels: the decoders' entry points.
//
//   DecodeResult<DecodedImage> image = lethe::Decode(bytes, options);
//
// Decode() picks the decoder by signature. PNG and JPEG give a Surface; a GIF gives an
// AnimatedImage, except a single-frame GIF, which gives whichever of a Surface and a one-frame
// AnimatedImage is smaller. The per-format functions are there for callers that know the format.
//
// Target size: with options.target_width/height set (both or neither), the image is decoded
// straight to that size (never larger than natural): JPEG through libjpeg's DCT scaling to the
// smallest scale not below the target, then every format through a row-by-row area-average
// downscale; the full-size pixels never exist at once. Animations ignore the target size (frames
// are stored paletted at natural size); a single-frame GIF decoded to a Surface honours it.
//
// Orientation: JPEG EXIF orientation is applied by default (as browsers do), the result has the
// displayed width and height; options.apply_exif_orientation = false keeps the stored layout.
//
// Errors: DecodeError (see decode_error.h). A truncated or damaged image that still yields pixels
// is returned with complete() == false rather than as an error.
//
// Any thread; each call is independent (libpng/libjpeg/giflib state is per call). Output memory
// comes from lethe_malloc.
#ifndef LETHE_DECODE_H_
#define LETHE_DECODE_H_

#include <cstdint>
#include <span>
#include <variant>

#include "lethe/animated_image.h"
#include "lethe/decode_error.h"
#include "lethe/decode_limits.h"
#include "lethe/image_format.h"
#include "lethe/probe.h"
#include "lethe/surface.h"

namespace lethe {

struct DecodeOptions {
  DecodeLimits limits;
  // 0 x 0: natural size. Otherwise the output size in displayed orientation, clamped to natural.
  uint32_t target_width = 0;
  uint32_t target_height = 0;
  bool apply_exif_orientation = true;
  AnimationOptions animation;
};

DecodeResult<Surface> DecodePng(std::span<const uint8_t> bytes, const DecodeOptions& options = {});
DecodeResult<Surface> DecodeJpeg(std::span<const uint8_t> bytes, const DecodeOptions& options = {});
DecodeResult<AnimatedImage> DecodeGif(std::span<const uint8_t> bytes,
                                      const DecodeOptions& options = {});
// A GIF's first frame composited into a Surface (honours the target size).
DecodeResult<Surface> DecodeGifToSurface(std::span<const uint8_t> bytes,
                                         const DecodeOptions& options = {});

using DecodedImage = std::variant<Surface, AnimatedImage>;

DecodeResult<DecodedImage> Decode(std::span<const uint8_t> bytes, const DecodeOptions& options = {});

// complete() of either alternative.
bool IsComplete(const DecodedImage& image);

}  // namespace lethe

#endif  // LETHE_DECODE_H_
