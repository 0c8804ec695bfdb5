// Decode(): picks the decoder by signature; a single-frame GIF becomes whichever of a Surface and a
// one-frame AnimatedImage costs less at rest (an AnimatedImage's canvas can be dropped between
// draws with DiscardCanvas(), so its cost at rest is its stored frame), or a Surface when a
// smaller target size is asked for.
#include "lethe/decode.h"

#include "gif_frame_surface.h"
#include "lethe/alloc.h"
#include "row_sink_factory.h"

namespace lethe {

DecodeResult<DecodedImage> Decode(std::span<const uint8_t> bytes, const DecodeOptions& options) {
  switch (DetectImageFormat(bytes)) {
    case ImageFormat::kPng: {
      DecodeResult<Surface> surface = DecodePng(bytes, options);
      if (!surface) return surface.error();
      return DecodedImage(std::move(*surface));
    }
    case ImageFormat::kJpeg: {
      DecodeResult<Surface> surface = DecodeJpeg(bytes, options);
      if (!surface) return surface.error();
      return DecodedImage(std::move(*surface));
    }
    case ImageFormat::kGif: {
      DecodeResult<AnimatedImage> animation = DecodeGif(bytes, options);
      if (!animation) return animation.error();
      if (animation->FrameCount() != 1) return DecodedImage(std::move(*animation));
      const internal::OutputSize output = internal::ChooseOutputSize(
          animation->width(), animation->height(), 1, options.target_width, options.target_height);
      const bool reduced = internal::IsReduced(output, animation->width(), animation->height());
      const uint64_t surface_bytes = lethe_good_size(size_t{output.width} * output.height * 4);
      if (!reduced && animation->Memory().bytes_frames <= surface_bytes) {
        return DecodedImage(std::move(*animation));
      }
      // From the frame already decoded: the file is not decoded a second time.
      DecodeResult<Surface> surface =
          internal::SurfaceOfOnlyFrame(*animation, output, options.limits);
      if (!surface) return surface.error();
      return DecodedImage(std::move(*surface));
    }
    case ImageFormat::kUnknown:
      break;
  }
  return MakeDecodeError(DecodeErrorCode::kUnsupported, "unknown image format (not PNG, JPEG or GIF)");
}

bool IsComplete(const DecodedImage& image) {
  if (const Surface* surface = std::get_if<Surface>(&image)) return surface->complete();
  return std::get<AnimatedImage>(image).complete();
}

}  // namespace lethe
