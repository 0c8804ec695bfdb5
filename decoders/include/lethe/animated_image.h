// lethe/animated_image.h — a GIF animation kept as 8-bit palette indices, composited on demand.
//
// Storage: each frame holds the palette indices of ITS OWN rectangle (clipped to the logical
// screen), a reference to its palette (the global one, shared, or its own local one), its
// transparent index, delay and disposal. Only the frame on screen exists at 32 bits: Compose(n)
// draws it into one canvas Surface that is reused frame after frame.
//
// Compose(n) after Compose(n-1) costs O(frame rectangles): it applies the previous frame's
// disposal (2: clear its rect to transparent; 3: put back the rect saved before drawing it, the
// only part of the canvas ever saved) and draws frame n. Any other n replays from frame 0.
//
// Budget: when the stored frames would exceed `frame_budget_bytes` (default 8 MiB, never fewer than
// 3 frames), the image keeps a copy of the compressed bytes and a window of decoded frames from the
// one shown onwards, decoding further frames as Compose() advances and dropping those behind (a
// frame's own palette comes and goes with its indices). A GIF of thousands of frames thus plays
// every frame within its budget plus the window instead of reaching gigabytes; what grows with the
// frame count is one table entry a frame (about 100 bytes) and the compressed copy.
//
// Policies (tested): frames reaching beyond the logical screen are clipped to it; a frame with no
// palette at all is corrupt (earlier frames kept, the image is marked incomplete); pixel indices
// beyond the palette are transparent; the background colour is never drawn (disposal 2 clears to
// transparent, as browsers do); delays of 10 ms or less play at 100 ms.
//
// Move-only. Not thread-safe: one thread at a time (Compose mutates the canvas and the window).
#ifndef LETHE_ANIMATED_IMAGE_H_
#define LETHE_ANIMATED_IMAGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "lethe/decode_error.h"
#include "lethe/decode_limits.h"
#include "lethe/surface.h"

namespace lethe {

enum class FrameDisposal : uint8_t {
  kUnspecified = 0,      // treated as kNone
  kNone = 1,             // leave the frame in place
  kRestoreBackground = 2,  // clear the frame's rectangle to transparent
  kRestorePrevious = 3,  // put back what the rectangle held before the frame
};

struct AnimationFrameInfo {
  uint32_t x = 0, y = 0, width = 0, height = 0;  // rectangle on the canvas, clipped to it
  uint32_t delay_ms = 100;                       // after the browsers' clamp
  int16_t transparent_index = -1;                // -1: none
  FrameDisposal disposal = FrameDisposal::kUnspecified;
  bool interlaced = false;
  bool local_palette = false;
};

struct AnimationMemory {
  uint64_t bytes_frames = 0;      // stored frames now: indices, palettes, per-frame metadata
  uint64_t bytes_canvas = 0;      // the 32-bit canvas and the restore-previous rectangle
  uint64_t bytes_compressed = 0;  // compressed bytes kept for decode-ahead (0 unless windowed)
  uint64_t bytes_32bpp = 0;       // what every frame as a full 32-bit canvas would cost
  uint32_t frames_held = 0;       // frames whose indices are in memory now
};

struct AnimationOptions {
  uint64_t frame_budget_bytes = uint64_t{8} << 20;
  uint32_t min_window_frames = 3;
};

class AnimatedImage;
namespace internal {
class AnimationState;
// The state behind an image, for the decoders' own use (a one-frame GIF's Surface is built from
// the frame Decode() already holds). Requires a non-empty image.
AnimationState& StateOf(AnimatedImage& image);
}  // namespace internal

class AnimatedImage {
 public:
  AnimatedImage();
  explicit AnimatedImage(std::unique_ptr<internal::AnimationState> state);
  AnimatedImage(AnimatedImage&& other) noexcept;
  AnimatedImage& operator=(AnimatedImage&& other) noexcept;
  ~AnimatedImage();

  uint32_t width() const;   // logical screen = canvas
  uint32_t height() const;
  uint32_t FrameCount() const;
  const AnimationFrameInfo& Frame(uint32_t n) const;
  // NETSCAPE2.0 loop count: 0 = forever; -1 when the file has no loop extension (play once).
  int32_t LoopCount() const;
  // False when decoding stopped at a damaged record; the frames before it are all there.
  bool complete() const;
  // True when the frames exceed the budget and a decode-ahead window is in use.
  bool windowed() const;

  // Renders frame n (< FrameCount()) into the canvas and returns it; the pointer stays valid until
  // the next Compose() or the image's destruction. Errors only in windowed mode (out of memory, or
  // a frame that decoded on the first pass and fails now) and for n out of range.
  DecodeResult<const Surface*> Compose(uint32_t n);

  AnimationMemory Memory() const;

  // Frees the canvas (the next Compose() replays from frame 0). For a cache shedding memory.
  void DiscardCanvas();

 private:
  friend internal::AnimationState& internal::StateOf(AnimatedImage& image);
  std::unique_ptr<internal::AnimationState> state_;
};

}  // namespace lethe

#endif  // LETHE_ANIMATED_IMAGE_H_
