#include "direct_sink.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "orientation.h"

namespace lethe::internal {
namespace {

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

std::unique_ptr<RowSink> MakeDirectSink(uint32_t width, uint32_t height, int orientation,
                                        Surface surface) {
  return std::make_unique<DirectSink>(width, height, orientation, std::move(surface));
}

}  // namespace lethe::internal
