// Probe(): headers only, parsed here with bounds checks (no codec library state, no pixel
// allocation). The decoders re-validate everything; Probe is for cache bookkeeping and tools.
#include "lethe/probe.h"

#include <cstring>
#include <string>

#include "exif.h"

namespace lethe {
namespace {

uint32_t Big32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
uint32_t Big16(const uint8_t* p) { return uint32_t{p[0]} << 8 | p[1]; }
uint32_t Little16(const uint8_t* p) { return uint32_t{p[0]} | uint32_t{p[1]} << 8; }

DecodeError Truncated(const char* what) {
  return MakeDecodeError(DecodeErrorCode::kTruncated, std::string(what) + ": header cut short");
}

DecodeResult<ImageInfo> ProbePng(std::span<const uint8_t> bytes) {
  if (bytes.size() < 8 + 8 + 13) return Truncated("png");
  const uint8_t* ihdr = bytes.data() + 8;
  if (Big32(ihdr) != 13 || std::memcmp(ihdr + 4, "IHDR", 4) != 0) {
    return MakeDecodeError(DecodeErrorCode::kCorrupt, "png: first chunk is not IHDR");
  }
  ImageInfo info;
  info.format = ImageFormat::kPng;
  info.width = Big32(ihdr + 8);
  info.height = Big32(ihdr + 12);
  const uint8_t color_type = ihdr[8 + 9];
  info.interlaced = ihdr[8 + 12] != 0;
  info.frame_count = 1;
  if (info.width == 0 || info.height == 0 || info.width > 0x7FFFFFFF || info.height > 0x7FFFFFFF) {
    return MakeDecodeError(DecodeErrorCode::kCorrupt, "png: invalid dimensions in IHDR");
  }
  info.has_alpha = (color_type & 4) != 0;
  // Walk the chunks before the image data for tRNS.
  size_t at = 8 + 8 + 13 + 4;
  while (!info.has_alpha && at < bytes.size() && bytes.size() - at >= 8) {
    const uint32_t length = Big32(bytes.data() + at);
    const uint8_t* type = bytes.data() + at + 4;
    if (std::memcmp(type, "IDAT", 4) == 0) break;
    if (std::memcmp(type, "tRNS", 4) == 0) info.has_alpha = true;
    if (length > bytes.size()) break;
    at += size_t{length} + 12;
  }
  return info;
}

DecodeResult<ImageInfo> ProbeJpeg(std::span<const uint8_t> bytes) {
  ImageInfo info;
  info.format = ImageFormat::kJpeg;
  info.frame_count = 1;
  size_t at = 2;
  bool have_frame = false;
  while (at + 4 <= bytes.size()) {
    if (bytes[at] != 0xFF) {  // garbage between segments: resynchronise as libjpeg does
      ++at;
      continue;
    }
    const uint8_t marker = bytes[at + 1];
    if (marker == 0xFF) {  // fill byte
      ++at;
      continue;
    }
    if (marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7) || marker == 0x01) {
      at += 2;
      continue;
    }
    if (marker == 0xDA || marker == 0xD9) break;  // start of scan / end of image
    const size_t length = Big16(bytes.data() + at + 2);
    if (length < 2) return MakeDecodeError(DecodeErrorCode::kCorrupt, "jpeg: bad segment length");
    if (at + 2 + length > bytes.size()) break;
    const uint8_t* payload = bytes.data() + at + 4;
    const size_t payload_size = length - 2;
    const bool is_sof = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 &&
                        marker != 0xCC;
    if (is_sof && payload_size >= 6 && !have_frame) {
      have_frame = true;
      info.height = Big16(payload + 1);
      info.width = Big16(payload + 3);
      info.progressive = marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE;
    } else if (marker == 0xE1 && info.exif_orientation == 1) {
      info.exif_orientation = static_cast<uint8_t>(internal::ExifOrientation({payload, payload_size}));
    }
    at += 2 + length;
  }
  if (!have_frame) return Truncated("jpeg");
  if (info.width == 0 || info.height == 0) {
    return MakeDecodeError(DecodeErrorCode::kCorrupt, "jpeg: zero dimension in the frame header");
  }
  return info;
}

// Skips GIF data sub-blocks from `at`; returns the offset after the terminator, or 0 if cut short.
size_t SkipSubBlocks(std::span<const uint8_t> bytes, size_t at) {
  while (at < bytes.size()) {
    const uint8_t size = bytes[at];
    at += 1 + size;
    if (size == 0) return at;
  }
  return 0;
}

DecodeResult<ImageInfo> ProbeGif(std::span<const uint8_t> bytes) {
  if (bytes.size() < 13) return Truncated("gif");
  ImageInfo info;
  info.format = ImageFormat::kGif;
  info.width = Little16(bytes.data() + 6);
  info.height = Little16(bytes.data() + 8);
  const uint8_t flags = bytes[10];
  size_t at = 13;
  if (flags & 0x80) at += 3u << ((flags & 7) + 1);
  while (at < bytes.size()) {
    const uint8_t introducer = bytes[at];
    if (introducer == 0x3B) break;  // trailer
    if (introducer == 0x21) {       // extension
      if (at + 2 > bytes.size()) break;
      if (bytes[at + 1] == 0xF9 && at + 4 <= bytes.size() && (bytes[at + 3] & 1)) {
        info.has_alpha = true;
      }
      at = SkipSubBlocks(bytes, at + 2);
    } else if (introducer == 0x2C) {  // image descriptor
      if (at + 10 > bytes.size()) break;
      const uint8_t image_flags = bytes[at + 9];
      if (image_flags & 0x40) info.interlaced = true;
      at += 10;
      if (image_flags & 0x80) at += 3u << ((image_flags & 7) + 1);
      if (at >= bytes.size()) break;
      at = SkipSubBlocks(bytes, at + 1);  // after the LZW minimum code size
      if (at == 0) break;
      ++info.frame_count;
    } else {
      break;  // unknown record: the decoder stops here too
    }
    if (at == 0) break;
  }
  return info;
}

}  // namespace

DecodeResult<ImageInfo> Probe(std::span<const uint8_t> bytes) {
  switch (DetectImageFormat(bytes)) {
    case ImageFormat::kPng: return ProbePng(bytes);
    case ImageFormat::kJpeg: return ProbeJpeg(bytes);
    case ImageFormat::kGif: return ProbeGif(bytes);
    case ImageFormat::kUnknown: break;
  }
  return MakeDecodeError(DecodeErrorCode::kUnsupported, "unknown image format");
}

}  // namespace lethe
