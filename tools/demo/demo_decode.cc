// The demo's decode step (see demo_decode.h): lethe::Decode, adapted to CachedSurface.
#include "demo_decode.h"

#include <string>
#include <utility>
#include <variant>

#include "lethe/decode.h"

namespace lethe::demo {
namespace {

class StillSurface : public CachedSurface {
 public:
  explicit StillSurface(Surface surface) : surface_(std::move(surface)) {}
  size_t MemoryBytes() const override { return surface_.MemoryBytes(); }

 private:
  Surface surface_;
};

class Animation : public DemoAnimation {
 public:
  explicit Animation(AnimatedImage image) : image_(std::move(image)) {}
  size_t MemoryBytes() const override {
    AnimationMemory memory = image_.Memory();
    return static_cast<size_t>(memory.bytes_frames + memory.bytes_canvas + memory.bytes_compressed);
  }
  uint32_t frame_count() const override { return image_.FrameCount(); }
  void Compose(uint32_t index) override {
    // A frame that fails now (windowed mode, out of memory) leaves the previous picture; the demo
    // only measures memory, so it goes on.
    (void)image_.Compose(index % image_.FrameCount());
  }
  AnimationMemory Memory() const { return image_.Memory(); }
  uint32_t width() const { return image_.width(); }
  uint32_t height() const { return image_.height(); }

 private:
  AnimatedImage image_;
};

std::string Describe(const DecodeError& error) {
  return std::string(DecodeErrorCodeName(error.code)) + ": " + error.reason;
}

}  // namespace

const char* DecoderName() { return "lethe::decoders (libpng, libjpeg-turbo, giflib underneath)"; }

DecodedImage DecodeImage(std::span<const uint8_t> bytes) {
  DecodedImage result;
  DecodeResult<lethe::DecodedImage> decoded = Decode(bytes);
  if (!decoded) {
    result.error = Describe(decoded.error());
    return result;
  }
  if (!IsComplete(*decoded)) {
    result.error = "damaged: only part of the image decodes (truncated or corrupt data)";
    return result;
  }
  ImageFormat format = DetectImageFormat(bytes);
  if (auto* surface = std::get_if<Surface>(&*decoded)) {
    result.header = ImageHeaderInfo{format, surface->width(), surface->height(), 1};
    result.full_canvas_bgra_bytes = surface->MemoryBytes();
    result.surface = std::make_shared<StillSurface>(std::move(*surface));
    return result;
  }
  auto animation = std::make_shared<Animation>(std::move(std::get<AnimatedImage>(*decoded)));
  // The canvas exists from the first frame on: compose it now so that MemoryBytes(), read once by
  // the cache at insert, already counts it.
  animation->Compose(0);
  AnimationMemory memory = animation->Memory();
  result.header = ImageHeaderInfo{format, animation->width(), animation->height(), animation->frame_count()};
  result.full_canvas_bgra_bytes = memory.bytes_32bpp;
  result.surface = animation;
  return result;
}

}  // namespace lethe::demo
