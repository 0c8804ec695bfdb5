// direct_sink.h (internal) — the sink for a full-size output: each stored pixel lands on exactly
// one output pixel, moved to its displayed position. In orientation 1 the decoder may write rows
// into the surface itself (DirectSurface()).
#ifndef LETHE_DECODERS_DIRECT_SINK_H_
#define LETHE_DECODERS_DIRECT_SINK_H_

#include <memory>

#include "row_sink.h"

namespace lethe::internal {

// `surface` is the allocated output: width x height, axes swapped for orientations 5..8.
std::unique_ptr<RowSink> MakeDirectSink(uint32_t width, uint32_t height, int orientation,
                                        Surface surface);

}  // namespace lethe::internal

#endif  // LETHE_DECODERS_DIRECT_SINK_H_
