#include "png_writer.h"

#include <png.h>

#include <string_view>
#include <vector>

#include "lethe/atomic_file.h"

namespace lethe::internal {

std::string WritePng(const Surface& surface, const std::string& path) {
  if (surface.empty()) return "cannot write " + path + ": nothing drawn";
  const uint32_t width = surface.width();
  const uint32_t height = surface.height();
  // Straight (not premultiplied) RGBA, as PNG stores it.
  std::vector<uint8_t> rgba(size_t{width} * height * 4);
  for (uint32_t y = 0; y < height; ++y) {
    const uint8_t* in = surface.Row(y);
    uint8_t* out = rgba.data() + size_t{y} * width * 4;
    for (uint32_t x = 0; x < width; ++x, in += 4, out += 4) {
      uint32_t alpha = in[3];
      for (int c = 0; c < 3; ++c) {
        uint32_t value = alpha == 0 ? 0 : (in[2 - c] * 255u + alpha / 2) / alpha;
        out[c] = static_cast<uint8_t>(value > 255 ? 255 : value);
      }
      out[3] = static_cast<uint8_t>(alpha);
    }
  }
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = width;
  image.height = height;
  image.format = PNG_FORMAT_RGBA;
  png_alloc_size_t size = 0;
  if (!png_image_write_get_memory_size(image, size, 0, rgba.data(), 0, nullptr)) {
    std::string error = "cannot encode " + path + ": " + image.message;
    png_image_free(&image);
    return error;
  }
  std::vector<uint8_t> encoded(size);
  if (!png_image_write_to_memory(&image, encoded.data(), &size, 0, rgba.data(), 0, nullptr)) {
    std::string error = "cannot encode " + path + ": " + image.message;
    png_image_free(&image);
    return error;
  }
  std::string error;
  if (!WriteFileAtomically(
          path, std::string_view(reinterpret_cast<const char*>(encoded.data()), size), &error)) {
    return error.empty() ? "cannot write " + path : error;
  }
  return "";
}

}  // namespace lethe::internal
