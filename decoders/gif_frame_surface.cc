#include "gif_frame_surface.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include "lethe_buffer.h"
#include "row_sink_factory.h"

namespace lethe::internal {
namespace {

// Canvas row y of `frame` on a transparent screen of `width`, as premultiplied BGRA (palette words
// are). Rows the frame never decoded (a partial frame) stay transparent, as Compose() draws them.
void CanvasRow(const StoredFrame& frame, const uint8_t* indices,
               std::span<const uint32_t> palette, uint32_t y, uint32_t width, uint8_t* row) {
  std::memset(row, 0, size_t{width} * 4);
  const AnimationFrameInfo& info = frame.info;
  if (indices == nullptr || y < info.y || y >= info.y + info.height) return;
  const uint32_t frame_row = frame.first_row + (y - info.y);
  const uint32_t storage_row =
      info.interlaced ? InterlacedStorageRow(frame_row, frame.source_height) : frame_row;
  if (storage_row >= frame.valid_rows) return;
  const uint8_t* source = indices + size_t{y - info.y} * info.width;
  for (uint32_t j = 0; j < info.width; ++j) {
    const uint8_t index = source[j];
    if (index == info.transparent_index || index >= palette.size()) continue;
    std::memcpy(row + (size_t{info.x} + j) * 4, &palette[index], 4);
  }
}

}  // namespace

DecodeResult<Surface> SurfaceOfFrame(const StoredFrame& frame, const uint8_t* indices,
                                     std::span<const uint32_t> palette, uint32_t screen_width,
                                     uint32_t screen_height, const OutputSize& output,
                                     const DecodeLimits& limits, bool complete) {
  DecodeResult<std::unique_ptr<RowSink>> sink =
      MakeRowSink(screen_width, screen_height, 1, output, limits);
  if (!sink) return sink.error();
  LetheBuffer row = LetheBuffer::Allocate(size_t{screen_width} * 4);
  if (row.empty()) return MakeDecodeError(DecodeErrorCode::kOutOfMemory, "gif: out of memory for a row");
  for (uint32_t y = 0; y < screen_height; ++y) {
    CanvasRow(frame, indices, palette, y, screen_width, row.data());
    (*sink)->PutRow(y, row.data());
  }
  return (*sink)->Finish(complete);
}

DecodeResult<Surface> SurfaceOfOnlyFrame(AnimatedImage& animation, const OutputSize& output,
                                         const DecodeLimits& limits) {
  AnimationState& state = StateOf(animation);
  LetheBuffer scratch;
  DecodeResult<const uint8_t*> indices = state.IndicesOf(0, &scratch);
  if (!indices) return indices.error();
  const StoredFrame& frame = state.frames_[0];
  return SurfaceOfFrame(frame, *indices, state.PaletteOf(frame), state.width_, state.height_,
                        output, limits, state.complete_);
}

}  // namespace lethe::internal
