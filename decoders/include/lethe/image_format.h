// lethe/image_format.h — which codec a byte string is, by its signature (never by file name).
// Pure function, any thread.
#ifndef LETHE_IMAGE_FORMAT_H_
#define LETHE_IMAGE_FORMAT_H_

#include <cstdint>
#include <span>
#include <string_view>

namespace lethe {

enum class ImageFormat { kUnknown, kPng, kJpeg, kGif };

// Looks only at the first bytes: PNG's 8-byte signature, JPEG's SOI + marker, "GIF87a"/"GIF89a".
ImageFormat DetectImageFormat(std::span<const uint8_t> bytes);

// "png", "jpeg", "gif" or "unknown".
std::string_view ImageFormatName(ImageFormat format);

}  // namespace lethe

#endif  // LETHE_IMAGE_FORMAT_H_
