// gif_reader.h (internal) — giflib's low-level reader over bytes in memory, record by record.
//
// Not DGifSlurp: each image record is read on its own, so a damaged record late in a file leaves
// the frames before it intact, and a frame can be decoded again later from its record offset
// (the decode-ahead window of AnimatedImage). giflib's per-image bookkeeping (SavedImages) is
// emptied after every descriptor so that thousands of frames do not accumulate there.
//
// One reader per decode or per windowed animation; single thread.
#ifndef LETHE_DECODERS_GIF_READER_H_
#define LETHE_DECODERS_GIF_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lethe/animated_image.h"
#include "lethe/decode_error.h"
#include "lethe_buffer.h"

struct GifFileType;

namespace lethe::internal {

// A frame record as the file states it, before clipping.
struct GifFrameRecord {
  size_t descriptor_offset = 0;  // offset of the 0x2C introducer
  uint32_t left = 0, top = 0, width = 0, height = 0;
  bool interlaced = false;
  std::vector<uint32_t> local_palette;  // opaque premultiplied BGRA; empty when none
  // From the graphic control extension before it (if any).
  int transparent_index = -1;
  int disposal = 0;
  uint32_t delay_centiseconds = 0;
};

// Where the indices of a frame go: the frame's clipped rectangle (row-major, `width` per row).
struct ClippedRect {
  uint32_t x = 0, y = 0, width = 0, height = 0;  // on the canvas
};

class GifReader {
 public:
  enum class Next { kFrame, kEnd, kError };

  // Opens `bytes` (which must outlive the reader) and reads the screen descriptor and global
  // palette. kCorrupt / kTruncated / kOutOfMemory on failure.
  static DecodeResult<std::unique_ptr<GifReader>> Open(std::span<const uint8_t> bytes);
  ~GifReader();

  uint32_t screen_width() const;
  uint32_t screen_height() const;
  const std::vector<uint32_t>& global_palette() const { return global_palette_; }
  int32_t loop_count() const { return loop_count_; }  // -1 until a NETSCAPE2.0 block is seen
  const std::string& error() const { return error_; }
  DecodeErrorCode error_code() const { return error_code_; }

  // Reads extensions up to and including the next image descriptor.
  Next ReadToNextFrame(GifFrameRecord* record);
  // After ReadToNextFrame: decodes the frame's rows, storing the part inside `clip` (which lies
  // within the frame) into `indices` (clip.width x clip.height), or only consuming the data when
  // `indices` is null or clip is empty. Returns the storage rows decoded; < record.height when the
  // data is damaged (error() says why).
  uint32_t ReadPixels(const GifFrameRecord& record, const ClippedRect& clip, uint8_t* indices);
  // Positions the reader on a descriptor found earlier, for ReadToNextFrame.
  void Seek(size_t offset) { position_ = offset; }

 private:
  explicit GifReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  static int Read(GifFileType* gif, uint8_t* out, int length);
  void Fail(const char* what);

  std::span<const uint8_t> bytes_;
  size_t position_ = 0;
  GifFileType* gif_ = nullptr;
  std::vector<uint32_t> global_palette_;
  std::vector<uint8_t> line_;  // one storage row of the current frame
  int32_t loop_count_ = -1;
  std::string error_;
  DecodeErrorCode error_code_ = DecodeErrorCode::kCorrupt;
};

// The row of an interlaced frame of `height` rows that storage row `storage_row` holds, and back.
uint32_t InterlacedRow(uint32_t storage_row, uint32_t height);
uint32_t InterlacedStorageRow(uint32_t row, uint32_t height);

}  // namespace lethe::internal

#endif  // LETHE_DECODERS_GIF_READER_H_
