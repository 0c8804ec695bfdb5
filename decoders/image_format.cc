#include "lethe/image_format.h"

#include <algorithm>
#include <array>

namespace lethe {

ImageFormat DetectImageFormat(std::span<const uint8_t> bytes) {
  static constexpr std::array<uint8_t, 8> kPngSignature = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (bytes.size() >= kPngSignature.size() &&
      std::equal(kPngSignature.begin(), kPngSignature.end(), bytes.begin())) {
    return ImageFormat::kPng;
  }
  // SOI (FF D8) followed by the first marker's FF.
  if (bytes.size() >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF) {
    return ImageFormat::kJpeg;
  }
  if (bytes.size() >= 6 && bytes[0] == 'G' && bytes[1] == 'I' && bytes[2] == 'F' &&
      bytes[3] == '8' && (bytes[4] == '7' || bytes[4] == '9') && bytes[5] == 'a') {
    return ImageFormat::kGif;
  }
  return ImageFormat::kUnknown;
}

std::string_view ImageFormatName(ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng: return "png";
    case ImageFormat::kJpeg: return "jpeg";
    case ImageFormat::kGif: return "gif";
    case ImageFormat::kUnknown: break;
  }
  return "unknown";
}

}  // namespace lethe
