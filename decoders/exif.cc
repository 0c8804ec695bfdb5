#include "exif.h"

#include <cstring>

namespace lethe::internal {

int ExifOrientation(std::span<const uint8_t> app1) {
  static constexpr uint8_t kExifHeader[6] = {'E', 'x', 'i', 'f', 0, 0};
  if (app1.size() < 6 + 8 || std::memcmp(app1.data(), kExifHeader, 6) != 0) return 1;
  const std::span<const uint8_t> tiff = app1.subspan(6);
  bool little_endian;
  if (tiff[0] == 'I' && tiff[1] == 'I') {
    little_endian = true;
  } else if (tiff[0] == 'M' && tiff[1] == 'M') {
    little_endian = false;
  } else {
    return 1;
  }
  auto read16 = [&](size_t at) -> uint32_t {
    return little_endian ? uint32_t{tiff[at]} | uint32_t{tiff[at + 1]} << 8
                         : uint32_t{tiff[at]} << 8 | uint32_t{tiff[at + 1]};
  };
  auto read32 = [&](size_t at) -> uint32_t {
    return little_endian ? read16(at) | read16(at + 2) << 16 : read16(at) << 16 | read16(at + 2);
  };
  if (read16(2) != 42) return 1;
  const size_t ifd = read32(4);
  if (ifd > tiff.size() || tiff.size() - ifd < 2) return 1;
  const size_t entry_count = read16(ifd);
  for (size_t i = 0; i < entry_count; ++i) {
    const size_t entry = ifd + 2 + i * 12;
    if (entry > tiff.size() || tiff.size() - entry < 12) return 1;
    if (read16(entry) != 0x0112) continue;
    const uint32_t type = read16(entry + 2);  // 3 = SHORT
    const uint32_t count = read32(entry + 4);
    if (type != 3 || count != 1) return 1;
    const uint32_t value = read16(entry + 8);
    return value >= 1 && value <= 8 ? static_cast<int>(value) : 1;
  }
  return 1;
}

}  // namespace lethe::internal
