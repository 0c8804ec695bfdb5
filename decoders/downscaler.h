// downscaler.h (internal) — area-average downscaling, row by row, as the rows are decoded.
//
// Algorithm: the stored image (sw x sh) is divided into an aw x ah grid of bins (aw x ah = the
// output size in stored orientation, OutputSize::stored_*); source pixel (x, y) falls in bin (x*aw/sw, y*ah/sh). Each bin
// sums the premultiplied B, G, R, A of its pixels and counts them; the output pixel is the rounded
// mean (averaging premultiplied values is what keeps edges of transparent areas right). Bins that
// received no pixel (a truncated image) stay transparent.
//
// Memory: a bin is 20 bytes (32-bit sums; 40 with 64-bit sums, used only when one bin covers more
// than 16 Mpx). When rows arrive in order (every decoder but PNG Adam7) only one row of bins exists
// at a time, flushed to the output when the first row of the next bin row arrives: 20 bytes x aw
// on top of the output surface. Adam7 delivers rows pass by pass, so it keeps the whole grid (20
// bytes per output pixel: less than the full-size image, 4 bytes per source pixel, once the output
// has fewer than a fifth of the source pixels; checked against max_decoded_bytes either way).
#ifndef LETHE_DECODERS_DOWNSCALER_H_
#define LETHE_DECODERS_DOWNSCALER_H_

#include <memory>

#include "lethe/decode_error.h"
#include "lethe/decode_limits.h"
#include "row_sink.h"

namespace lethe::internal {

// `size` is the output chosen by ChooseOutputSize (size.stored_* are the bins, smaller than the
// source in at least one dimension); `output` is its allocated surface, size.width x size.height.
// rows_in_order: the decoder delivers stored rows top to bottom.
DecodeResult<std::unique_ptr<RowSink>> MakeDownscaler(uint32_t source_width,
                                                      uint32_t source_height, int orientation,
                                                      const OutputSize& size, Surface output,
                                                      const DecodeLimits& limits,
                                                      bool rows_in_order);

}  // namespace lethe::internal

#endif  // LETHE_DECODERS_DOWNSCALER_H_
