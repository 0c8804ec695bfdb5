#include "row_sink.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "downscaler.h"

namespace lethe::internal {

bool OrientationSwapsAxes(int orientation) { return orientation >= 5 && orientation <= 8; }

Oriented OrientPoint(uint32_t x, uint32_t y, uint32_t width, uint32_t height, int orientation) {
  switch (orientation) {
    case 2: return {width - 1 - x, y};                // mirror horizontally
    case 3: return {width - 1 - x, height - 1 - y};   // rotate 180
    case 4: return {x, height - 1 - y};               // mirror vertically
    case 5: return {y, x};                            // transpose
    case 6: return {height - 1 - y, x};               // rotate 90 clockwise
    case 7: return {height - 1 - y, width - 1 - x};   // transverse
    case 8: return {y, width - 1 - x};                // rotate 90 counter-clockwise
    default: return {x, y};
  }
}

OutputSize ChooseOutputSize(uint32_t source_width, uint32_t source_height, int orientation,
                            uint32_t target_width, uint32_t target_height) {
  OutputSize natural = {source_width, source_height};
  if (OrientationSwapsAxes(orientation)) std::swap(natural.width, natural.height);
  if (target_width == 0 || target_height == 0) return natural;
  return {std::clamp(target_width, 1u, natural.width), std::clamp(target_height, 1u, natural.height)};
}

void PremultiplyBgra(uint8_t* bgra, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i, bgra += 4) {
    const uint32_t alpha = bgra[3];
    if (alpha == 255) continue;
    bgra[0] = static_cast<uint8_t>((bgra[0] * alpha + 127) / 255);
    bgra[1] = static_cast<uint8_t>((bgra[1] * alpha + 127) / 255);
    bgra[2] = static_cast<uint8_t>((bgra[2] * alpha + 127) / 255);
  }
}

namespace {

// Full size: each stored pixel lands on exactly one output pixel.
class DirectSink final : public RowSink {
 public:
  DirectSink(uint32_t width, uint32_t height, int orientation, Surface surface)
      : RowSink(width, height), orientation_(orientation), surface_(std::move(surface)) {}

  void PutPixels(uint32_t y, uint32_t x0, uint32_t step, const uint8_t* bgra,
                 uint32_t count) override {
    if (y >= source_height()) return;
    if (orientation_ == 1 && step == 1) {
      const uint32_t n = std::min(count, source_width() - std::min(x0, source_width()));
      std::memcpy(surface_.Row(y) + size_t{x0} * 4, bgra, size_t{n} * 4);
      return;
    }
    for (uint32_t i = 0, x = x0; i < count && x < source_width(); ++i, x += step) {
      const Oriented at = OrientPoint(x, y, source_width(), source_height(), orientation_);
      std::memcpy(surface_.Row(at.y) + size_t{at.x} * 4, bgra + size_t{i} * 4, 4);
    }
  }

  Surface Finish(bool complete) override {
    surface_.set_complete(complete);
    return std::move(surface_);
  }

  Surface* DirectSurface() override { return orientation_ == 1 ? &surface_ : nullptr; }

 private:
  int orientation_;
  Surface surface_;
};

}  // namespace

DecodeResult<std::unique_ptr<RowSink>> MakeRowSink(uint32_t source_width, uint32_t source_height,
                                                   int orientation, OutputSize output,
                                                   const DecodeLimits& limits,
                                                   bool rows_in_order) {
  if (source_width == 0 || source_height == 0) {
    return MakeDecodeError(DecodeErrorCode::kCorrupt, "image of zero size");
  }
  const OutputSize natural = ChooseOutputSize(source_width, source_height, orientation, 0, 0);
  DecodeResult<Surface> surface = Surface::Create(output.width, output.height, limits);
  if (!surface) return surface.error();
  if (output.width == natural.width && output.height == natural.height) {
    return std::unique_ptr<RowSink>(
        new DirectSink(source_width, source_height, orientation, std::move(*surface)));
  }
  return MakeDownscaler(source_width, source_height, orientation, std::move(*surface), limits,
                        rows_in_order);
}

}  // namespace lethe::internal
