// gif_frame_surface.h (internal) — one GIF frame, kept as 8-bit indices, drawn on a transparent
// screen into a Surface through the row sink: the 32-bit rows are made one at a time, so a reduced
// output never holds full-size 32-bit rows. Used for a GIF's first frame (DecodeGifToSurface) and
// for a single-frame GIF that Decode() already decoded into an AnimatedImage, which is thus never
// decoded twice. Single thread, like the decode that calls it.
#ifndef LETHE_DECODERS_GIF_FRAME_SURFACE_H_
#define LETHE_DECODERS_GIF_FRAME_SURFACE_H_

#include <cstdint>
#include <span>

#include "animation_state.h"
#include "lethe/animated_image.h"
#include "lethe/decode_error.h"
#include "lethe/decode_limits.h"
#include "row_sink.h"

namespace lethe::internal {

// `frame` with its `indices` (its clipped rectangle's, or nullptr when that is empty) and
// `palette`, on a screen_width x screen_height transparent screen, at `output` (ChooseOutputSize
// for the screen); `complete` marks the surface whole or partial.
DecodeResult<Surface> SurfaceOfFrame(const StoredFrame& frame, const uint8_t* indices,
                                     std::span<const uint32_t> palette, uint32_t screen_width,
                                     uint32_t screen_height, const OutputSize& output,
                                     const DecodeLimits& limits, bool complete);

// The Surface of a one-frame animation at `output`, from the frame it holds (decoded again from
// its compressed copy only if a zero-frame window left it out). Complete when the animation is.
DecodeResult<Surface> SurfaceOfOnlyFrame(AnimatedImage& animation, const OutputSize& output,
                                         const DecodeLimits& limits);

}  // namespace lethe::internal

#endif  // LETHE_DECODERS_GIF_FRAME_SURFACE_H_
