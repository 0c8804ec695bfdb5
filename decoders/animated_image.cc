// AnimatedImage: the facade, and AnimationState's composition and decode-ahead window.
#include "lethe/animated_image.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <utility>

#include "animation_state.h"

namespace lethe {
namespace internal {

static_assert(std::endian::native == std::endian::little,
              "palette words are stored as little-endian BGRA");

void AnimationState::Draw(const StoredFrame& frame, const uint8_t* indices) {
  const AnimationFrameInfo& info = frame.info;
  const std::span<const uint32_t> palette = PaletteOf(frame);
  const size_t palette_count = palette.size();
  const int transparent = info.transparent_index;
  const bool partial = frame.valid_rows < frame.source_height;
  for (uint32_t i = 0; i < info.height; ++i) {
    if (partial) {
      const uint32_t row = frame.first_row + i;
      const uint32_t storage_row =
          info.interlaced ? InterlacedStorageRow(row, frame.source_height) : row;
      if (storage_row >= frame.valid_rows) continue;
    }
    const uint8_t* source = indices + size_t{i} * info.width;
    uint8_t* out = canvas_.Row(info.y + i) + size_t{info.x} * 4;
    for (uint32_t j = 0; j < info.width; ++j) {
      const uint8_t index = source[j];
      if (index == transparent || index >= palette_count) continue;  // both show through
      std::memcpy(out + size_t{j} * 4, &palette[index], 4);
    }
  }
}

void AnimationState::Dispose(const StoredFrame& frame) {
  const AnimationFrameInfo& info = frame.info;
  if (info.disposal == FrameDisposal::kRestoreBackground) {
    for (uint32_t i = 0; i < info.height; ++i) {
      std::memset(canvas_.Row(info.y + i) + size_t{info.x} * 4, 0, size_t{info.width} * 4);
    }
  } else if (info.disposal == FrameDisposal::kRestorePrevious && !saved_rect_.empty()) {
    for (uint32_t i = 0; i < info.height; ++i) {
      std::memcpy(canvas_.Row(info.y + i) + size_t{info.x} * 4,
                  saved_rect_.data() + size_t{i} * info.width * 4, size_t{info.width} * 4);
    }
  }
}

bool AnimationState::SaveRect(const StoredFrame& frame) {
  const AnimationFrameInfo& info = frame.info;
  const size_t bytes = size_t{info.width} * info.height * 4;
  if (bytes == 0) return true;
  if (saved_rect_.size() != bytes) saved_rect_ = LetheBuffer::Allocate(bytes);
  if (saved_rect_.empty()) return false;
  for (uint32_t i = 0; i < info.height; ++i) {
    std::memcpy(saved_rect_.data() + size_t{i} * info.width * 4,
                canvas_.Row(info.y + i) + size_t{info.x} * 4, size_t{info.width} * 4);
  }
  return true;
}

DecodeResult<bool> AnimationState::DecodeFrameAgain(uint32_t k, LetheBuffer* into) {
  StoredFrame& frame = frames_[k];
  const size_t bytes = size_t{frame.info.width} * frame.info.height;
  if (bytes == 0) return true;
  *into = LetheBuffer::Allocate(bytes);
  if (into->empty()) {
    return MakeDecodeError(DecodeErrorCode::kOutOfMemory, "gif: out of memory for frame indices");
  }
  reader_->Seek(frame.descriptor_offset);
  GifFrameRecord record;
  if (reader_->ReadToNextFrame(&record) != GifReader::Next::kFrame) {
    into->Reset();  // never resident without its pixels
    return MakeDecodeError(reader_->error_code(), reader_->error());
  }
  if (frame.info.local_palette && !AssignOrFail(&frame.local_palette, record.local_palette)) {
    into->Reset();
    return MakeDecodeError(DecodeErrorCode::kOutOfMemory, "gif: out of memory for a palette");
  }
  const ClippedRect clip = {frame.info.x, frame.info.y, frame.info.width, frame.info.height};
  reader_->ReadPixels(record, clip, into->data());
  return true;
}

void AnimationState::ReleaseFrame(StoredFrame* frame) {
  frame->indices.Reset();
  Palette().swap(frame->local_palette);
}

DecodeResult<const uint8_t*> AnimationState::IndicesOf(uint32_t k, LetheBuffer* scratch) {
  StoredFrame& frame = frames_[k];
  if (!frame.indices.empty() || frame.info.width == 0 || frame.info.height == 0) {
    return static_cast<const uint8_t*>(frame.indices.data());
  }
  DecodeResult<bool> decoded = DecodeFrameAgain(k, scratch);
  if (!decoded) return decoded.error();
  return static_cast<const uint8_t*>(scratch->data());
}

bool AnimationState::InWindow(uint32_t k, uint32_t start) const {
  const uint32_t count = static_cast<uint32_t>(frames_.size());
  return (k + count - start) % count < window_frames_;
}

// O(window): only the frames of the old window and of the new one are visited, so that playing an
// animation of thousands of frames costs the same per frame as playing a short one.
DecodeResult<bool> AnimationState::SlideWindow(uint32_t n) {
  const uint32_t count = static_cast<uint32_t>(frames_.size());
  const uint32_t span = std::min(window_frames_, count);
  for (uint32_t i = 0; i < span; ++i) {
    const uint32_t k = (window_start_ + i) % count;
    if (!InWindow(k, n)) ReleaseFrame(&frames_[k]);
  }
  window_start_ = n;
  for (uint32_t i = 0; i < span; ++i) {
    StoredFrame& frame = frames_[(n + i) % count];
    if (!frame.indices.empty() || frame.info.width == 0 || frame.info.height == 0) continue;
    DecodeResult<bool> decoded = DecodeFrameAgain((n + i) % count, &frame.indices);
    if (!decoded) return decoded.error();  // the frames still missing are decoded when drawn
  }
  return true;
}

DecodeResult<const Surface*> AnimationState::Compose(uint32_t n) {
  if (n >= frames_.size()) {
    return MakeDecodeError(DecodeErrorCode::kInvalidArgument,
                           "frame " + std::to_string(n) + " of " + std::to_string(frames_.size()));
  }
  if (canvas_.empty()) {
    DecodeResult<Surface> canvas = Surface::Create(width_, height_, limits_);
    if (!canvas) return canvas.error();
    canvas_ = std::move(*canvas);
    last_composed_ = -1;
  }
  if (last_composed_ == static_cast<int64_t>(n)) return &canvas_;
  if (windowed_) {
    DecodeResult<bool> slid = SlideWindow(n);
    if (!slid) return slid.error();
  }
  if (last_composed_ < 0 || static_cast<int64_t>(n) < last_composed_) {
    canvas_.Clear();
    last_composed_ = -1;
  }
  LetheBuffer scratch;
  for (uint32_t k = static_cast<uint32_t>(last_composed_ + 1); k <= n; ++k) {
    if (k > 0) Dispose(frames_[k - 1]);
    last_composed_ = -1;  // until frame k is fully drawn
    if (frames_[k].info.disposal == FrameDisposal::kRestorePrevious && !SaveRect(frames_[k])) {
      return MakeDecodeError(DecodeErrorCode::kOutOfMemory, "gif: out of memory for the saved rect");
    }
    DecodeResult<const uint8_t*> indices = IndicesOf(k, &scratch);
    if (!indices) return indices.error();
    Draw(frames_[k], *indices);
    // A frame drawn from the scratch buffer keeps no palette either: a replay from frame 0
    // through a long animation must not gather every frame's palette.
    if (windowed_ && frames_[k].indices.empty()) ReleaseFrame(&frames_[k]);
    last_composed_ = k;
  }
  canvas_.set_complete(complete_ || n + 1 < frames_.size());
  return &canvas_;
}

AnimationMemory AnimationState::Memory() const {
  AnimationMemory memory;
  memory.bytes_frames = HeapBytesOf(frames_) + HeapBytesOf(global_palette_);
  for (const StoredFrame& frame : frames_) {
    memory.bytes_frames += frame.indices.MemoryBytes() + HeapBytesOf(frame.local_palette);
    const bool empty_rect = frame.info.width == 0 || frame.info.height == 0;
    if (!frame.indices.empty() || empty_rect) ++memory.frames_held;
  }
  memory.bytes_canvas = canvas_.MemoryBytes() + saved_rect_.MemoryBytes();
  memory.bytes_compressed = compressed_.MemoryBytes();
  memory.bytes_32bpp = uint64_t{width_} * height_ * 4 * frames_.size();
  return memory;
}

AnimationState& StateOf(AnimatedImage& image) {
  LETHE_CHECK(image.state_ != nullptr, "StateOf an empty AnimatedImage");
  return *image.state_;
}

}  // namespace internal

AnimatedImage::AnimatedImage() = default;
AnimatedImage::AnimatedImage(std::unique_ptr<internal::AnimationState> state)
    : state_(std::move(state)) {}
AnimatedImage::AnimatedImage(AnimatedImage&& other) noexcept = default;
AnimatedImage& AnimatedImage::operator=(AnimatedImage&& other) noexcept = default;
AnimatedImage::~AnimatedImage() = default;

uint32_t AnimatedImage::width() const { return state_ ? state_->width_ : 0; }
uint32_t AnimatedImage::height() const { return state_ ? state_->height_ : 0; }
uint32_t AnimatedImage::FrameCount() const {
  return state_ ? static_cast<uint32_t>(state_->frames_.size()) : 0;
}
const AnimationFrameInfo& AnimatedImage::Frame(uint32_t n) const {
  LETHE_CHECK(state_ && n < state_->frames_.size(), "AnimatedImage::Frame out of range");
  return state_->frames_[n].info;
}
int32_t AnimatedImage::LoopCount() const { return state_ ? state_->loop_count_ : -1; }
bool AnimatedImage::complete() const { return state_ && state_->complete_; }
bool AnimatedImage::windowed() const { return state_ && state_->windowed_; }

DecodeResult<const Surface*> AnimatedImage::Compose(uint32_t n) {
  if (!state_) return MakeDecodeError(DecodeErrorCode::kInvalidArgument, "empty animation");
  return state_->Compose(n);
}

AnimationMemory AnimatedImage::Memory() const {
  return state_ ? state_->Memory() : AnimationMemory();
}

void AnimatedImage::DiscardCanvas() {
  if (!state_) return;
  state_->canvas_ = Surface();
  state_->saved_rect_.Reset();
  state_->last_composed_ = -1;
}

}  // namespace lethe
