// lethe/probe.h — the format and header of an image without decoding its pixels.
//
// Probe() reads signatures and headers only: PNG's IHDR (and whether a tRNS chunk comes before the
// image data), JPEG's frame header and EXIF orientation, GIF's screen descriptor with a walk over
// its records that counts frames without decompressing them. It allocates nothing large. Any
// thread; pure function.
#ifndef LETHE_PROBE_H_
#define LETHE_PROBE_H_

#include <cstdint>
#include <span>

#include "lethe/decode_error.h"
#include "lethe/image_format.h"

namespace lethe {

struct ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  // The stored dimensions (for a GIF: the logical screen). EXIF orientations 5-8 swap width and
  // height on display: see OrientedWidth()/OrientedHeight().
  uint32_t width = 0;
  uint32_t height = 0;
  // Frames: 1 for PNG and JPEG; the image records of a GIF (counted up to the first damaged
  // record); 0 if unknown.
  uint32_t frame_count = 0;
  bool has_alpha = false;    // alpha channel, tRNS, or a GIF transparent index in any frame
  bool interlaced = false;   // PNG Adam7, or any GIF frame interlaced
  bool progressive = false;  // JPEG progressive (SOF2)
  // EXIF orientation 1..8 (1 = as stored; the only value for PNG and GIF).
  uint8_t exif_orientation = 1;

  bool SwapsAxes() const { return exif_orientation >= 5 && exif_orientation <= 8; }
  uint32_t OrientedWidth() const { return SwapsAxes() ? height : width; }
  uint32_t OrientedHeight() const { return SwapsAxes() ? width : height; }
};

// The header of `bytes`. kUnsupported for an unknown signature, kTruncated when the header is cut
// short, kCorrupt when it is malformed.
DecodeResult<ImageInfo> Probe(std::span<const uint8_t> bytes);

}  // namespace lethe

#endif  // LETHE_PROBE_H_
