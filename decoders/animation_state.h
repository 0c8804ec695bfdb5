// animation_state.h (internal) — what an AnimatedImage holds, and its composition.
//
// Invariants:
//   frames_.size() == FrameCount();
//   frame.indices.size() == frame.info.width * frame.info.height when resident, empty otherwise;
//   frame.info.local_palette => frame.local_palette is non-empty whenever its indices are
//                  resident (the palette comes and goes with them); global_palette_ serves the rest;
//   !windowed_  => every frame is resident;
//   windowed_   => compressed_ holds a copy of the file, and resident frames are among the
//                  window_frames_ frames from window_start_ on (mod FrameCount): all of them once
//                  a Compose() succeeds (after an out-of-memory failure some may be missing; those
//                  are decoded into a scratch buffer when drawn);
//   last_composed_ == -1 or the canvas shows frames 0..last_composed_ composed in order.
// Memory past the budget, whatever the frame count: the window's frames and palettes, the canvas,
// the compressed copy and the frame table (one StoredFrame a frame, on Lethe's allocator and
// counted against max_decoded_bytes before it grows).
#ifndef LETHE_DECODERS_ANIMATION_STATE_H_
#define LETHE_DECODERS_ANIMATION_STATE_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "gif_reader.h"
#include "lethe/animated_image.h"
#include "lethe/decode_limits.h"
#include "lethe/surface.h"
#include "lethe_buffer.h"
#include "lethe_vector.h"

namespace lethe::internal {

using Palette = LetheVector<uint32_t>;  // premultiplied BGRA words

struct StoredFrame {
  AnimationFrameInfo info;      // rect clipped to the canvas
  size_t descriptor_offset = 0; // for decoding it again (windowed)
  // Frame geometry as stored, for partial frames: the canvas row info.y shows frame row
  // first_row; storage rows >= valid_rows were never decoded (drawn as transparent).
  uint32_t source_height = 0;
  uint32_t first_row = 0;
  uint32_t valid_rows = 0;
  LetheBuffer indices;
  Palette local_palette;  // when info.local_palette: held with the indices
};

class AnimationState {
 public:
  AnimationState(uint32_t width, uint32_t height, const DecodeLimits& limits,
                 const AnimationOptions& options)
      : width_(width), height_(height), limits_(limits), options_(options) {}

  uint32_t width_, height_;
  DecodeLimits limits_;
  AnimationOptions options_;
  int32_t loop_count_ = -1;
  bool complete_ = true;
  LetheVector<StoredFrame> frames_;
  Palette global_palette_;

  // Windowed mode.
  bool windowed_ = false;
  uint32_t window_frames_ = 0;
  uint32_t window_start_ = 0;  // the frames held at decode are 0 .. window_frames_ - 1
  LetheBuffer compressed_;
  std::unique_ptr<GifReader> reader_;

  // Composition.
  Surface canvas_;
  int64_t last_composed_ = -1;
  LetheBuffer saved_rect_;  // canvas pixels under the frame being shown, if its disposal is 3

  DecodeResult<const Surface*> Compose(uint32_t n);
  AnimationMemory Memory() const;
  // Frame k's indices: its own when held, else decoded again into *scratch (windowed mode).
  DecodeResult<const uint8_t*> IndicesOf(uint32_t k, LetheBuffer* scratch);
  std::span<const uint32_t> PaletteOf(const StoredFrame& frame) const {
    return frame.info.local_palette ? frame.local_palette : global_palette_;
  }

 private:
  // Decodes frame k's indices into *into (and its local palette into the frame) from the copy.
  DecodeResult<bool> DecodeFrameAgain(uint32_t k, LetheBuffer* into);
  // Drops a windowed frame's indices and palette.
  static void ReleaseFrame(StoredFrame* frame);
  DecodeResult<bool> SlideWindow(uint32_t n);
  bool InWindow(uint32_t k, uint32_t start) const;
  void Draw(const StoredFrame& frame, const uint8_t* indices);
  void Dispose(const StoredFrame& frame);
  bool SaveRect(const StoredFrame& frame);
};

}  // namespace lethe::internal

#endif  // LETHE_DECODERS_ANIMATION_STATE_H_
