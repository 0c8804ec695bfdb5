// exif.h (internal) — the orientation tag of a JPEG's EXIF (APP1) segment.
#ifndef LETHE_DECODERS_EXIF_H_
#define LETHE_DECODERS_EXIF_H_

#include <cstdint>
#include <span>

namespace lethe::internal {

// The payload of an APP1 segment (after its length field). Returns the Orientation tag (0x0112) of
// IFD0 when it is 1..8; 1 for anything else (not EXIF, malformed, out of range). Bounds-checked.
int ExifOrientation(std::span<const uint8_t> app1_payload);

}  // namespace lethe::internal

#endif  // LETHE_DECODERS_EXIF_H_
