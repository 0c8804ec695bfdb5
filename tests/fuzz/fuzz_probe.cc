// Fuzzes Probe() and the format-dispatching Decode().
#include <cstddef>
#include <cstdint>

#include "fuzz_limits.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  lethe::DecodeResult<lethe::ImageInfo> info = lethe::Probe(bytes);
  (void)info;
  lethe::DecodeResult<lethe::DecodedImage> image = lethe::Decode(bytes, lethe::fuzz::FuzzOptions());
  if (image) (void)lethe::IsComplete(*image);
  return 0;
}
