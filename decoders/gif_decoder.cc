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
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "animation_state.h"
#include "gif_reader.h"
#include "lethe/decode.h"
#include "row_sink.h"

namespace lethe {
namespace {

using internal::AnimationState;
using internal::ClippedRect;
using internal::GifFrameRecord;
using internal::GifReader;
using internal::LetheBuffer;
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

bool GifDecode::ReadFrame(const GifFrameRecord& record) {
  const size_t index = state_->frames_.size();
  if (index >= options_.limits.max_frame_count) {
    return StopWith(DecodeErrorCode::kTooLarge,
                    "gif: more than " + std::to_string(options_.limits.max_frame_count) + " frames");
  }
  if (record.width == 0 || record.height == 0) {
    return StopWith(DecodeErrorCode::kCorrupt, "gif: frame " + std::to_string(index) + " has zero size");
  }
  if (uint64_t{record.width} * record.height > options_.limits.max_frame_pixels) {
    return StopWith(DecodeErrorCode::kTooLarge,
                    "gif: frame " + std::to_string(index) + " exceeds the decode limits");
  }
  StoredFrame frame;
  if (!record.local_palette.empty()) {
    frame.palette_id = static_cast<uint32_t>(state_->palettes_.size());
    state_->palettes_.push_back(record.local_palette);
  } else if (state_->palettes_[0].empty()) {
    return StopWith(DecodeErrorCode::kCorrupt,
                    "gif: frame " + std::to_string(index) + " has no palette");
  }
  const ClippedRect clip = Clip(record, state_->width_, state_->height_);
  frame.info = InfoOf(record, clip);
  frame.descriptor_offset = record.descriptor_offset;
  frame.source_height = record.height;
  frame.first_row = clip.y - std::min(clip.y, record.top);
  const size_t bytes = size_t{clip.width} * clip.height;
  // Held indices and the canvas together stay within max_decoded_bytes, whatever the budget.
  const uint64_t canvas_bytes = uint64_t{state_->width_} * state_->height_ * 4;
  const bool within_limits = held_bytes_ + bytes + canvas_bytes <= options_.limits.max_decoded_bytes;
  if (!within_limits && index < options_.animation.min_window_frames) {
    return StopWith(DecodeErrorCode::kTooLarge, "gif: the smallest frame window exceeds the decode limits");
  }
  const bool hold = !state_->windowed_ && within_limits &&
                    (held_bytes_ + bytes <= options_.animation.frame_budget_bytes ||
                     index < options_.animation.min_window_frames);
  if (!hold && !state_->windowed_ && !EnterWindowedMode()) return false;
  LetheBuffer* target = hold ? &frame.indices : &scratch_;
  if (bytes > 0 && target->size() != bytes) {
    *target = LetheBuffer::Allocate(bytes);
    if (target->empty()) return StopWith(DecodeErrorCode::kOutOfMemory, "gif: out of memory for frame indices");
  }
  frame.valid_rows = reader_->ReadPixels(record, clip, bytes > 0 ? target->data() : nullptr);
  if (hold) held_bytes_ += bytes;
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
  state_->palettes_.push_back(reader_->global_palette());
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
  state_->frames_.shrink_to_fit();
  return AnimatedImage(std::move(state_));
}

}  // namespace

DecodeResult<AnimatedImage> DecodeGif(std::span<const uint8_t> bytes, const DecodeOptions& options) {
  GifDecode decode(bytes, options);
  return decode.Run();
}

namespace {

// Frame 0 of a GIF as indices over its clipped rectangle.
struct FirstFrame {
  GifFrameRecord record;
  ClippedRect clip;
  std::vector<uint32_t> palette;
  LetheBuffer indices;
  uint32_t valid_rows = 0;
};

DecodeResult<FirstFrame> ReadFirstFrame(GifReader& reader, const DecodeLimits& limits) {
  FirstFrame frame;
  const GifReader::Next next = reader.ReadToNextFrame(&frame.record);
  if (next == GifReader::Next::kEnd) return MakeDecodeError(DecodeErrorCode::kCorrupt, "gif: no frames");
  if (next == GifReader::Next::kError) return MakeDecodeError(reader.error_code(), reader.error());
  const GifFrameRecord& record = frame.record;
  if (record.width == 0 || record.height == 0) {
    return MakeDecodeError(DecodeErrorCode::kCorrupt, "gif: frame 0 has zero size");
  }
  if (uint64_t{record.width} * record.height > limits.max_frame_pixels) {
    return MakeDecodeError(DecodeErrorCode::kTooLarge, "gif: frame 0 exceeds the decode limits");
  }
  frame.palette = record.local_palette.empty() ? reader.global_palette() : record.local_palette;
  if (frame.palette.empty()) return MakeDecodeError(DecodeErrorCode::kCorrupt, "gif: frame 0 has no palette");
  frame.clip = Clip(record, reader.screen_width(), reader.screen_height());
  frame.indices = LetheBuffer::Allocate(size_t{frame.clip.width} * frame.clip.height);
  if (frame.clip.width > 0 && frame.clip.height > 0 && frame.indices.empty()) {
    return MakeDecodeError(DecodeErrorCode::kOutOfMemory, "gif: out of memory for frame indices");
  }
  frame.valid_rows = reader.ReadPixels(record, frame.clip, frame.indices.data());
  if (frame.valid_rows == 0) return MakeDecodeError(reader.error_code(), reader.error());
  return frame;
}

// Canvas row y of frame 0 on a transparent screen, as premultiplied BGRA (palette words are).
void CanvasRow(const FirstFrame& frame, uint32_t y, uint32_t width, uint8_t* row) {
  std::memset(row, 0, size_t{width} * 4);
  const ClippedRect& clip = frame.clip;
  if (y < clip.y || y >= clip.y + clip.height) return;
  const uint32_t frame_row = clip.y - std::min(clip.y, frame.record.top) + (y - clip.y);
  const uint32_t storage_row = frame.record.interlaced
                                   ? internal::InterlacedStorageRow(frame_row, frame.record.height)
                                   : frame_row;
  if (storage_row >= frame.valid_rows) return;  // never decoded: transparent
  const uint8_t* source = frame.indices.data() + size_t{y - clip.y} * clip.width;
  for (uint32_t j = 0; j < clip.width; ++j) {
    const uint8_t index = source[j];
    if (index == frame.record.transparent_index || index >= frame.palette.size()) continue;
    std::memcpy(row + (size_t{clip.x} + j) * 4, &frame.palette[index], 4);
  }
}

}  // namespace

// Frame 0 is kept as 8-bit indices over its rectangle; the 32-bit canvas rows are made one at a
// time and go straight through the row sink (so a reduced size never holds full-size 32-bit rows).
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
  DecodeResult<FirstFrame> frame = ReadFirstFrame(reader, options.limits);
  if (!frame) return frame.error();
  const internal::OutputSize output =
      internal::ChooseOutputSize(width, height, 1, options.target_width, options.target_height);
  DecodeResult<std::unique_ptr<internal::RowSink>> sink =
      internal::MakeRowSink(width, height, 1, output, options.limits);
  if (!sink) return sink.error();
  LetheBuffer row = LetheBuffer::Allocate(size_t{width} * 4);
  if (row.empty()) return MakeDecodeError(DecodeErrorCode::kOutOfMemory, "gif: out of memory for a row");
  for (uint32_t y = 0; y < height; ++y) {
    CanvasRow(*frame, y, width, row.data());
    (*sink)->PutRow(y, row.data());
  }
  // Complete when frame 0 decoded whole (later records are not this surface's concern).
  return (*sink)->Finish(frame->valid_rows == frame->record.height);
}

}  // namespace lethe
