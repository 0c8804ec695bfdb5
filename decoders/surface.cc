#include "lethe/surface.h"

#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "lethe/alloc.h"

namespace lethe {

DecodeResult<Surface> Surface::Create(uint32_t width, uint32_t height, const DecodeLimits& limits) {
  if (width == 0 || height == 0) {
    return MakeDecodeError(DecodeErrorCode::kInvalidArgument,
                           "surface of zero size " + std::to_string(width) + "x" +
                               std::to_string(height));
  }
  const uint64_t pixel_count = uint64_t{width} * height;
  const uint64_t byte_count = pixel_count * kBytesPerPixel;
  if (pixel_count > limits.max_image_pixels || byte_count > limits.max_decoded_bytes ||
      byte_count > std::numeric_limits<size_t>::max() / 2) {
    return MakeDecodeError(DecodeErrorCode::kTooLarge,
                           "surface " + std::to_string(width) + "x" + std::to_string(height) +
                               " exceeds the decode limits");
  }
  // Ask for the whole size class so the block has no unusable tail. Zeroed by calloc, which
  // skips pages that come fresh (or purged) from the OS: a memset here wrote every byte of
  // every surface once more before the decoder wrote it (lethe-stress: 11% of its samples,
  // most of them in JPEG and PNG decodes).
  const size_t request_bytes = lethe_good_size(static_cast<size_t>(byte_count));
  void* block = lethe_calloc(1, request_bytes);
  if (block == nullptr) {
    return MakeDecodeError(DecodeErrorCode::kOutOfMemory,
                           "out of memory for a " + std::to_string(byte_count) + "-byte surface");
  }
  Surface surface;
  surface.pixels_ = static_cast<uint8_t*>(block);
  surface.width_ = width;
  surface.height_ = height;
  surface.stride_ = size_t{width} * kBytesPerPixel;
  return surface;
}

Surface::Surface(Surface&& other) noexcept
    : pixels_(std::exchange(other.pixels_, nullptr)),
      width_(std::exchange(other.width_, 0)),
      height_(std::exchange(other.height_, 0)),
      stride_(std::exchange(other.stride_, 0)),
      complete_(std::exchange(other.complete_, true)) {}

Surface& Surface::operator=(Surface&& other) noexcept {
  if (this != &other) {
    lethe_free(pixels_);
    pixels_ = std::exchange(other.pixels_, nullptr);
    width_ = std::exchange(other.width_, 0);
    height_ = std::exchange(other.height_, 0);
    stride_ = std::exchange(other.stride_, 0);
    complete_ = std::exchange(other.complete_, true);
  }
  return *this;
}

Surface::~Surface() { lethe_free(pixels_); }

size_t Surface::MemoryBytes() const { return lethe_usable_size(pixels_); }

void Surface::Clear() {
  if (pixels_ != nullptr) std::memset(pixels_, 0, stride_ * height_);
}

}  // namespace lethe
