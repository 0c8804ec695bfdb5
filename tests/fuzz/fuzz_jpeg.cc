// Fuzzes DecodeJpeg: at natural size, and at a size taken from the input (the downscaler path).
#include <cstddef>
#include <cstdint>

#include "fuzz_limits.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  lethe::DecodeOptions options = lethe::fuzz::FuzzOptions();
  lethe::DecodeResult<lethe::Surface> surface = lethe::DecodeJpeg(bytes, options);
  if (surface && size > 0) {
    options.target_width = 1 + data[size - 1] % 97;
    options.target_height = 1 + data[size / 2] % 89;
    options.apply_exif_orientation = (data[0] & 1) != 0;
    lethe::DecodeResult<lethe::Surface> scaled = lethe::DecodeJpeg(bytes, options);
    (void)scaled;
  }
  return 0;
}
