// row_sink_factory.h (internal) — what a decoder includes: the output size of a decode, chosen once,
// and the sink that produces it (direct_sink.h at full size, downscaler.h below it). The top of the
// row-sink stack: orientation <- row_sink <- direct_sink, downscaler <- row_sink_factory.
#ifndef LETHE_DECODERS_ROW_SINK_FACTORY_H_
#define LETHE_DECODERS_ROW_SINK_FACTORY_H_

#include <cstdint>
#include <memory>

#include "lethe/decode_error.h"
#include "lethe/decode_limits.h"
#include "row_sink.h"

namespace lethe::internal {

// The output for a stored source_width x source_height image under `orientation` and a target in
// displayed orientation (0 x 0 = natural; otherwise each dimension clamped to natural and at least
// 1), in both orientations. The one place where the axes are swapped.
OutputSize ChooseOutputSize(uint32_t source_width, uint32_t source_height, int orientation,
                            uint32_t target_width, uint32_t target_height);

// True when `output` is smaller than the source in either dimension: the decode downscales.
inline bool IsReduced(const OutputSize& output, uint32_t source_width, uint32_t source_height) {
  return output.stored_width != source_width || output.stored_height != source_height;
}

// A sink for a stored image of source_width x source_height (a JPEG's after its DCT scaling),
// producing `output`: the direct sink when output.stored_* equals the source, else the downscaler.
// Allocates the output surface (and the downscaler's accumulators) now, checked against `limits`.
DecodeResult<std::unique_ptr<RowSink>> MakeRowSink(uint32_t source_width, uint32_t source_height,
                                                   int orientation, const OutputSize& output,
                                                   const DecodeLimits& limits,
                                                   bool rows_in_order = true);

}  // namespace lethe::internal

#endif  // LETHE_DECODERS_ROW_SINK_FACTORY_H_
