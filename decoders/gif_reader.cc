#include "gif_reader.h"

#include <gif_lib.h>

#include <algorithm>
#include <cstring>

namespace lethe::internal {
namespace {

std::vector<uint32_t> PaletteOf(const ColorMapObject* map) {
  std::vector<uint32_t> palette;
  if (map == nullptr || map->Colors == nullptr) return palette;
  const int count = std::clamp(map->ColorCount, 0, 256);
  palette.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    const GifColorType& color = map->Colors[i];
    // Little-endian BGRA in one word: B | G << 8 | R << 16 | A << 24, opaque.
    palette.push_back(uint32_t{color.Blue} | uint32_t{color.Green} << 8 |
                      uint32_t{color.Red} << 16 | 0xFF000000u);
  }
  return palette;
}

}  // namespace

uint32_t InterlacedRow(uint32_t storage_row, uint32_t height) {
  const uint32_t pass1 = (height + 7) / 8, pass2 = (height + 3) / 8, pass3 = (height + 1) / 4;
  if (storage_row < pass1) return storage_row * 8;
  storage_row -= pass1;
  if (storage_row < pass2) return 4 + storage_row * 8;
  storage_row -= pass2;
  if (storage_row < pass3) return 2 + storage_row * 4;
  return 1 + (storage_row - pass3) * 2;
}

uint32_t InterlacedStorageRow(uint32_t row, uint32_t height) {
  const uint32_t pass1 = (height + 7) / 8, pass2 = (height + 3) / 8, pass3 = (height + 1) / 4;
  if (row % 8 == 0) return row / 8;
  if (row % 8 == 4) return pass1 + row / 8;
  if (row % 4 == 2) return pass1 + pass2 + row / 4;
  return pass1 + pass2 + pass3 + row / 2;
}

int GifReader::Read(GifFileType* gif, uint8_t* out, int length) {
  auto* reader = static_cast<GifReader*>(gif->UserData);
  if (length <= 0 || reader->position_ >= reader->bytes_.size()) return 0;
  const size_t count = std::min(static_cast<size_t>(length), reader->bytes_.size() - reader->position_);
  std::memcpy(out, reader->bytes_.data() + reader->position_, count);
  reader->position_ += count;
  return static_cast<int>(count);
}

DecodeResult<std::unique_ptr<GifReader>> GifReader::Open(std::span<const uint8_t> bytes) {
  std::unique_ptr<GifReader> reader(new GifReader(bytes));
  int error = 0;
  reader->gif_ = DGifOpen(reader.get(), &GifReader::Read, &error);
  if (reader->gif_ == nullptr) {
    const char* text = GifErrorString(error);
    std::string reason = std::string("gif header: ") + (text != nullptr ? text : "unknown error");
    if (error == D_GIF_ERR_NOT_ENOUGH_MEM) {
      return MakeDecodeError(DecodeErrorCode::kOutOfMemory, reason);
    }
    if (error == D_GIF_ERR_READ_FAILED && bytes.size() < 13) {
      return MakeDecodeError(DecodeErrorCode::kTruncated, reason);
    }
    return MakeDecodeError(DecodeErrorCode::kCorrupt, reason);
  }
  reader->global_palette_ = PaletteOf(reader->gif_->SColorMap);
  return reader;
}

GifReader::~GifReader() {
  if (gif_ != nullptr) DGifCloseFile(gif_, nullptr);
}

uint32_t GifReader::screen_width() const { return static_cast<uint32_t>(gif_->SWidth); }
uint32_t GifReader::screen_height() const { return static_cast<uint32_t>(gif_->SHeight); }

void GifReader::Fail(const char* what) {
  const char* text = GifErrorString(gif_->Error);
  error_ = std::string("gif ") + what + ": " + (text != nullptr ? text : "unknown error");
  error_code_ = gif_->Error == D_GIF_ERR_NOT_ENOUGH_MEM ? DecodeErrorCode::kOutOfMemory
                : position_ >= bytes_.size()          ? DecodeErrorCode::kTruncated
                                                      : DecodeErrorCode::kCorrupt;
}

GifReader::Next GifReader::ReadToNextFrame(GifFrameRecord* record) {
  *record = GifFrameRecord();
  for (;;) {
    const size_t record_offset = position_;
    GifRecordType type = UNDEFINED_RECORD_TYPE;
    if (DGifGetRecordType(gif_, &type) == GIF_ERROR) {
      Fail("record");
      return Next::kError;
    }
    if (type == TERMINATE_RECORD_TYPE) return Next::kEnd;
    if (type == IMAGE_DESC_RECORD_TYPE) {
      if (DGifGetImageDesc(gif_) == GIF_ERROR) {
        Fail("image descriptor");
        return Next::kError;
      }
      const GifImageDesc& image = gif_->Image;
      record->descriptor_offset = record_offset;
      record->left = static_cast<uint32_t>(image.Left);
      record->top = static_cast<uint32_t>(image.Top);
      record->width = static_cast<uint32_t>(image.Width);
      record->height = static_cast<uint32_t>(image.Height);
      record->interlaced = image.Interlace;
      record->local_palette = PaletteOf(image.ColorMap);
      // giflib appends every descriptor to SavedImages; keep it from growing with the frames.
      GifFreeSavedImages(gif_);
      gif_->ImageCount = 0;
      return Next::kFrame;
    }
    if (type != EXTENSION_RECORD_TYPE) {
      gif_->Error = D_GIF_ERR_WRONG_RECORD;
      Fail("record");
      return Next::kError;
    }
    int code = 0;
    GifByteType* block = nullptr;
    if (DGifGetExtension(gif_, &code, &block) == GIF_ERROR) {
      Fail("extension");
      return Next::kError;
    }
    bool netscape = false;
    if (block != nullptr && code == GRAPHICS_EXT_FUNC_CODE && block[0] >= 4) {
      GraphicsControlBlock control;
      if (DGifExtensionToGCB(block[0], block + 1, &control) == GIF_OK) {
        record->transparent_index = control.TransparentColor;
        record->disposal = control.DisposalMode;
        record->delay_centiseconds = static_cast<uint32_t>(std::max(control.DelayTime, 0));
      }
    } else if (block != nullptr && code == APPLICATION_EXT_FUNC_CODE && block[0] == 11) {
      netscape = std::memcmp(block + 1, "NETSCAPE2.0", 11) == 0 ||
                 std::memcmp(block + 1, "ANIMEXTS1.0", 11) == 0;
    }
    while (block != nullptr) {
      if (DGifGetExtensionNext(gif_, &block) == GIF_ERROR) {
        Fail("extension");
        return Next::kError;
      }
      if (netscape && block != nullptr && block[0] >= 3 && block[1] == 1) {
        loop_count_ = block[2] | block[3] << 8;
        netscape = false;
      }
    }
  }
}

uint32_t GifReader::ReadPixels(const GifFrameRecord& record, const ClippedRect& clip,
                               uint8_t* indices) {
  if (indices == nullptr || clip.width == 0 || clip.height == 0) {  // nullptr only with an empty clip
    // Nothing visible: walk the compressed blocks without decompressing them.
    int code_size = 0;
    GifByteType* block = nullptr;
    if (DGifGetCode(gif_, &code_size, &block) == GIF_ERROR) {
      Fail("image data");
      return 0;
    }
    while (block != nullptr) {
      if (DGifGetCodeNext(gif_, &block) == GIF_ERROR) {
        Fail("image data");
        return 0;
      }
    }
    return record.height;
  }
  line_.resize(record.width);
  for (uint32_t storage_row = 0; storage_row < record.height; ++storage_row) {
    if (DGifGetLine(gif_, line_.data(), static_cast<int>(record.width)) == GIF_ERROR) {
      Fail("image data");
      return storage_row;
    }
    const uint32_t row = record.interlaced ? InterlacedRow(storage_row, record.height) : storage_row;
    const uint64_t canvas_y = uint64_t{record.top} + row;
    if (canvas_y < clip.y || canvas_y >= uint64_t{clip.y} + clip.height) continue;
    std::memcpy(indices + (canvas_y - clip.y) * clip.width, line_.data() + (clip.x - record.left),
                clip.width);
  }
  return record.height;
}

}  // namespace lethe::internal
