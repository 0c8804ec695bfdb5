// GIF through giflib, record by record (gif_reader.h), into an AnimatedImage of paletted frames
// (animated_image.h documents the policies), or its first frame into a Surface.
//
// Step 1: the screen descriptor, checked against the limits before anything is allocated.
// Step 2: each record in turn: extensions (graphic control, NETSCAPE2.0 loop count), then the frame:
//         palette (local, else global, else the record is corrupt), rectangle clipped to the
//         screen, indices decoded into a buffer of the clipped size. A damaged record stops the
//         walk; the frames before it stay and the image is marked incomplete.
// Step 3: the budget: once the stored indices would pass options.animation.frame_budget_bytes
//         (and at least min_window_frames are held), the image copies the compressed bytes and
//         keeps only the window; the remaining frames are still decoded once, to validate them and
//         learn where the file ends, into a scratch buffer.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "animation_state.h"
#include "gif_frame_surface.h"
#include "gif_reader.h"
#include "lethe/decode.h"
#include "lethe/probe.h"
#include "row_sink_factory.h"

namespace lethe {
namespace {

using internal::AnimationState;
using internal::AssignOrFail;
using internal::ClippedRect;
using internal::GifFrameRecord;
using internal::GifReader;
using internal::LetheBuffer;
using internal::LetheVector;
using internal::StoredFrame;

constexpr uint32_t kMinimumDelayMs = 10;   // delays at or below this...
constexpr uint32_t kClampedDelayMs = 100;  // ...play at this, as browsers do

ClippedRect Clip(const GifFrameRecord& record, uint32_t screen_width, uint32_t screen_height) {
  const uint64_t x0 = std::min<uint64_t>(record.left, screen_width);
  const uint64_t y0 = std::min<uint64_t>(record.top, screen_height);
  const uint64_t x1 = std::min<uint64_t>(uint64_t{record.left} + record.width, screen_width);
  const uint64_t y1 = std::min<uint64_t>(uint64_t{record.top} + record.height, screen_height);
  return {static_cast<uint32_t>(x0), static_cast<uint32_t>(y0), static_cast<uint32_t>(x1 - x0),
          static_cast<uint32_t>(y1 - y0)};
}

AnimationFrameInfo InfoOf(const GifFrameRecord& record, const ClippedRect& clip) {
  AnimationFrameInfo info;
  info.x = clip.x;
  info.y = clip.y;
  info.width = clip.width;
  info.height = clip.height;
  const uint32_t delay_ms = record.delay_centiseconds * 10;
  info.delay_ms = delay_ms <= kMinimumDelayMs ? kClampedDelayMs : delay_ms;
  info.transparent_index = static_cast<int16_t>(record.transparent_index);
  info.disposal = static_cast<FrameDisposal>(std::clamp(record.disposal, 0, 3));
  info.interlaced = record.interlaced;
  info.local_palette = !record.local_palette.empty();
  return info;
}

class GifDecode {
 public:
  GifDecode(std::span<const uint8_t> bytes, const DecodeOptions& options)
      : bytes_(bytes), options_(options) {}

  DecodeResult<AnimatedImage> Run();

 private:
  // Reads one frame record into state_; false when the walk must stop (error_ says why).
  bool ReadFrame(const GifFrameRecord& record);
  bool StopWith(DecodeErrorCode code, std::string reason) {
    error_ = MakeDecodeError(code, std::move(reason));
    return false;
  }
  bool EnterWindowedMode();
  bool ReserveFrames(uint64_t capacity);
  bool ReserveFrame();

  std::span<const uint8_t> bytes_;
  const DecodeOptions& options_;
  std::unique_ptr<GifReader> reader_;
  std::unique_ptr<AnimationState> state_;
  uint64_t held_bytes_ = 0;
  LetheBuffer scratch_;
  DecodeError error_;
};

bool GifDecode::EnterWindowedMode() {
  state_->windowed_ = true;
  state_->window_frames_ = std::max<uint32_t>(options_.animation.min_window_frames,
                                              static_cast<uint32_t>(state_->frames_.size()));
  state_->compressed_ = LetheBuffer::Allocate(bytes_.size());
  if (state_->compressed_.empty()) {
    return StopWith(DecodeErrorCode::kOutOfMemory, "gif: out of memory for the compressed copy");
  }
  std::memcpy(state_->compressed_.data(), bytes_.data(), bytes_.size());
  DecodeResult<std::unique_ptr<GifReader>> reader = GifReader::Open(
      {state_->compressed_.data(), state_->compressed_.size()});
  if (!reader) return StopWith(reader.error().code, reader.error().reason);
  state_->reader_ = std::move(*reader);
  return true;
}

// Makes the frame table hold `capacity` frames: the table, the canvas and the frames held must stay
// within max_decoded_bytes, checked before the table grows (a GIF of millions of tiny frames is a
// bomb: kTooLarge, nothing large allocated).
bool GifDecode::ReserveFrames(uint64_t capacity) {
  LetheVector<StoredFrame>& frames = state_->frames_;
  if (capacity <= frames.capacity()) return true;
  const uint64_t canvas_bytes = uint64_t{state_->width_} * state_->height_ * 4;
  if (capacity > SIZE_MAX / sizeof(StoredFrame) ||
      held_bytes_ + canvas_bytes + capacity * sizeof(StoredFrame) >
          options_.limits.max_decoded_bytes) {
    return StopWith(DecodeErrorCode::kTooLarge,
                    "gif: the frame table of " + std::to_string(capacity) +
                        " frames exceeds the decode limits");
  }
  try {
    frames.reserve(static_cast<size_t>(capacity));
  } catch (const std::bad_alloc&) {
    return StopWith(DecodeErrorCode::kOutOfMemory, "gif: out of memory for the frame table");
  }
  return true;
}

// Room for one more frame: sized from Probe's count at the start, the table grows (doubling) only
// when the file holds more frames than the walk of its blocks found.
bool GifDecode::ReserveFrame() {
  const LetheVector<StoredFrame>& frames = state_->frames_;
  if (frames.size() < frames.capacity()) return true;
  return ReserveFrames(std::max<uint64_t>(16, uint64_t{frames.capacity()} * 2));
}

bool GifDecode::ReadFrame(const GifFrameRecord& record) {
  const size_t index = state_->frames_.size();
  if (record.width == 0 || record.height == 0) {
    return StopWith(DecodeErrorCode::kCorrupt, "gif: frame " + std::to_string(index) + " has zero size");
  }
  if (uint64_t{record.width} * record.height > options_.limits.max_frame_pixels) {
    return StopWith(DecodeErrorCode::kTooLarge,
                    "gif: frame " + std::to_string(index) + " exceeds the decode limits");
  }
  if (record.local_palette.empty() && state_->global_palette_.empty()) {
    return StopWith(DecodeErrorCode::kCorrupt,
                    "gif: frame " + std::to_string(index) + " has no palette");
  }
  if (!ReserveFrame()) return false;
  StoredFrame frame;
  const ClippedRect clip = Clip(record, state_->width_, state_->height_);
  frame.info = InfoOf(record, clip);
  frame.descriptor_offset = record.descriptor_offset;
  frame.source_height = record.height;
  frame.first_row = clip.y - std::min(clip.y, record.top);
  const size_t bytes = size_t{clip.width} * clip.height;
  const uint64_t palette_bytes = record.local_palette.size() * sizeof(uint32_t);
  // Held indices and palettes, the canvas and the frame table together stay within
  // max_decoded_bytes, whatever the budget.
  const uint64_t fixed_bytes = uint64_t{state_->width_} * state_->height_ * 4 +
                               state_->frames_.capacity() * sizeof(StoredFrame);
  const bool within_limits =
      held_bytes_ + bytes + palette_bytes + fixed_bytes <= options_.limits.max_decoded_bytes;
  const uint32_t min_window = options_.animation.min_window_frames;
  if (!within_limits && index < min_window) {
    return StopWith(DecodeErrorCode::kTooLarge, "gif: the smallest frame window exceeds the decode limits");
  }
  // Past the budget or the held-frame count, the rest play through the decode-ahead window.
  const bool within_budget =
      held_bytes_ + bytes + palette_bytes <= options_.animation.frame_budget_bytes &&
      index < options_.limits.max_frame_count;
  const bool hold = !state_->windowed_ && within_limits && (within_budget || index < min_window);
  if (!hold && !state_->windowed_ && !EnterWindowedMode()) return false;
  if (hold && !record.local_palette.empty() &&
      !AssignOrFail(&frame.local_palette, record.local_palette)) {
    return StopWith(DecodeErrorCode::kOutOfMemory, "gif: out of memory for a palette");
  }
  LetheBuffer* target = hold ? &frame.indices : &scratch_;
  if (bytes > 0 && target->size() != bytes) {
    *target = LetheBuffer::Allocate(bytes);
    if (target->empty()) return StopWith(DecodeErrorCode::kOutOfMemory, "gif: out of memory for frame indices");
  }
  frame.valid_rows = reader_->ReadPixels(record, clip, bytes > 0 ? target->data() : nullptr);
  if (hold) held_bytes_ += bytes + palette_bytes;
  if (frame.valid_rows < record.height) {
    if (frame.valid_rows == 0) return StopWith(reader_->error_code(), reader_->error());
    // A partly decoded frame is kept (its missing rows stay transparent) and ends the walk.
    state_->frames_.push_back(std::move(frame));
    return StopWith(reader_->error_code(), reader_->error());
  }
  state_->frames_.push_back(std::move(frame));
  return true;
}

DecodeResult<AnimatedImage> GifDecode::Run() {
  if (bytes_.size() > options_.limits.max_input_bytes) {
    return MakeDecodeError(DecodeErrorCode::kTooLarge, "gif: input exceeds the decode limits");
  }
  DecodeResult<std::unique_ptr<GifReader>> opened = GifReader::Open(bytes_);
  if (!opened) return opened.error();
  reader_ = std::move(*opened);
  const uint32_t width = reader_->screen_width();
  const uint32_t height = reader_->screen_height();
  if (width == 0 || height == 0) {
    return MakeDecodeError(DecodeErrorCode::kCorrupt, "gif: logical screen of zero size");
  }
  const uint64_t canvas_bytes = uint64_t{width} * height * 4;
  if (uint64_t{width} * height > options_.limits.max_image_pixels ||
      canvas_bytes > options_.limits.max_decoded_bytes) {
    return MakeDecodeError(DecodeErrorCode::kTooLarge,
                           "gif: screen " + std::to_string(width) + "x" + std::to_string(height) +
                               " exceeds the decode limits");
  }
  state_ = std::make_unique<AnimationState>(width, height, options_.limits, options_.animation);
  if (!AssignOrFail(&state_->global_palette_, reader_->global_palette())) {
    return MakeDecodeError(DecodeErrorCode::kOutOfMemory, "gif: out of memory for the palette");
  }
  // The frame table sized once, from a walk of the file's blocks (no pixels decoded): it then
  // never holds an old and a new array at once while growing, and a bomb of millions of tiny
  // frames is refused here, before the table is allocated. A partial last frame is one more.
  if (const DecodeResult<ImageInfo> blocks = Probe(bytes_); blocks) {
    if (!ReserveFrames(uint64_t{blocks->frame_count} + 1)) return error_;
  }
  bool ok = true;
  for (;;) {
    GifFrameRecord record;
    const GifReader::Next next = reader_->ReadToNextFrame(&record);
    if (next == GifReader::Next::kEnd) break;
    if (next == GifReader::Next::kError) {
      ok = StopWith(reader_->error_code(), reader_->error());
      break;
    }
    if (!ReadFrame(record)) {
      ok = false;
      break;
    }
  }
  state_->loop_count_ = reader_->loop_count();
  if (state_->frames_.empty()) {
    if (ok) return MakeDecodeError(DecodeErrorCode::kCorrupt, "gif: no frames");
    return error_;
  }
  if (!ok && (error_.code == DecodeErrorCode::kTooLarge || error_.code == DecodeErrorCode::kOutOfMemory)) {
    return error_;  // a bomb or a refused allocation is an error, not a partial image
  }
  state_->complete_ = ok;
  // Only when the walk counted far more frames than were kept (a damaged record): the copy is then
  // small beside what it frees.
  if (state_->frames_.size() < state_->frames_.capacity() / 2) state_->frames_.shrink_to_fit();
  return AnimatedImage(std::move(state_));
}

}  // namespace

DecodeResult<AnimatedImage> DecodeGif(std::span<const uint8_t> bytes, const DecodeOptions& options) {
  GifDecode decode(bytes, options);
  return decode.Run();
}

namespace {

// Frame 0 of a GIF as indices over its clipped rectangle, with its palette.
struct FirstFrame {
  StoredFrame frame;
  std::vector<uint32_t> palette;
};

DecodeResult<FirstFrame> ReadFirstFrame(GifReader& reader, const DecodeLimits& limits) {
  FirstFrame first;
  GifFrameRecord record;
  const GifReader::Next next = reader.ReadToNextFrame(&record);
  if (next == GifReader::Next::kEnd) return MakeDecodeError(DecodeErrorCode::kCorrupt, "gif: no frames");
  if (next == GifReader::Next::kError) return MakeDecodeError(reader.error_code(), reader.error());
  if (record.width == 0 || record.height == 0) {
    return MakeDecodeError(DecodeErrorCode::kCorrupt, "gif: frame 0 has zero size");
  }
  if (uint64_t{record.width} * record.height > limits.max_frame_pixels) {
    return MakeDecodeError(DecodeErrorCode::kTooLarge, "gif: frame 0 exceeds the decode limits");
  }
  first.palette = record.local_palette.empty() ? reader.global_palette() : record.local_palette;
  if (first.palette.empty()) return MakeDecodeError(DecodeErrorCode::kCorrupt, "gif: frame 0 has no palette");
  const ClippedRect clip = Clip(record, reader.screen_width(), reader.screen_height());
  StoredFrame& frame = first.frame;
  frame.info = InfoOf(record, clip);
  frame.source_height = record.height;
  frame.first_row = clip.y - std::min(clip.y, record.top);
  frame.indices = LetheBuffer::Allocate(size_t{clip.width} * clip.height);
  if (clip.width > 0 && clip.height > 0 && frame.indices.empty()) {
    return MakeDecodeError(DecodeErrorCode::kOutOfMemory, "gif: out of memory for frame indices");
  }
  frame.valid_rows = reader.ReadPixels(record, clip, frame.indices.data());
  if (frame.valid_rows == 0) return MakeDecodeError(reader.error_code(), reader.error());
  return first;
}

}  // namespace

// Frame 0 is kept as 8-bit indices over its rectangle and drawn through the row sink
// (gif_frame_surface.h).
DecodeResult<Surface> DecodeGifToSurface(std::span<const uint8_t> bytes,
                                         const DecodeOptions& options) {
  if (bytes.size() > options.limits.max_input_bytes) {
    return MakeDecodeError(DecodeErrorCode::kTooLarge, "gif: input exceeds the decode limits");
  }
  DecodeResult<std::unique_ptr<GifReader>> opened = GifReader::Open(bytes);
  if (!opened) return opened.error();
  GifReader& reader = **opened;
  const uint32_t width = reader.screen_width();
  const uint32_t height = reader.screen_height();
  if (width == 0 || height == 0) {
    return MakeDecodeError(DecodeErrorCode::kCorrupt, "gif: logical screen of zero size");
  }
  if (uint64_t{width} * height > options.limits.max_image_pixels) {
    return MakeDecodeError(DecodeErrorCode::kTooLarge, "gif: screen exceeds the decode limits");
  }
  DecodeResult<FirstFrame> first = ReadFirstFrame(reader, options.limits);
  if (!first) return first.error();
  const internal::OutputSize output =
      internal::ChooseOutputSize(width, height, 1, options.target_width, options.target_height);
  // Complete when frame 0 decoded whole (later records are not this surface's concern).
  const StoredFrame& frame = first->frame;
  return internal::SurfaceOfFrame(frame, frame.indices.data(), first->palette, width, height,
                                  output, options.limits, frame.valid_rows == frame.source_height);
}

}  // namespace lethe
