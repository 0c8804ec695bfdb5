// JPEG through libjpeg-turbo's scanline API: baseline, extended, progressive, arithmetic, restart
// markers; grayscale and YCbCr straight to BGRA (libjpeg-turbo's JCS_EXT_BGRA), CMYK and YCCK to
// CMYK and then to BGRA here (Adobe files store inverted CMYK, as Photoshop writes it).
//
// Decode at a requested size: libjpeg's DCT scaling picks the smallest of 1/1, 1/2, 1/4, 1/8 whose
// output is not smaller than the target, then the row sink downscales row by row (and applies the
// EXIF orientation, read from the APP1 segment).
//
// Error handling: libjpeg calls error_exit, which formats the message into the session and longjmps
// to the setjmp of the Step function running; those hold no C++ object with a destructor. Warnings
// (corrupt data, premature end) are counted and the first kept, never printed; any warning marks
// the result incomplete. A progress monitor stops files with absurd numbers of progressive scans.
#include <algorithm>
#include <climits>
#include <csetjmp>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include <jpeglib.h>  // needs size_t and FILE declared first
#include <jerror.h>
#include <memory>
#include <string>

#include "exif.h"
#include "lethe/alloc.h"
#include "lethe/decode.h"
#include "row_sink_factory.h"

namespace lethe {
namespace {

constexpr int kMaxProgressiveScans = 1000;

struct JpegSession {
  jpeg_decompress_struct cinfo = {};
  jpeg_error_mgr error_manager = {};
  jpeg_progress_mgr progress = {};
  jmp_buf jump = {};
  bool created = false;
  int error_code = 0;  // libjpeg's J_MESSAGE_CODE of the fatal error
  char message[JMSG_LENGTH_MAX] = {};
  int warning_count = 0;
  char first_warning[JMSG_LENGTH_MAX] = {};
  uint64_t rows_read = 0;
  uint8_t* row_buffer = nullptr;

  ~JpegSession() {
    if (created) jpeg_destroy_decompress(&cinfo);
    lethe_free(row_buffer);
  }
};

JpegSession* SessionOf(j_common_ptr cinfo) { return static_cast<JpegSession*>(cinfo->client_data); }

void OnJpegError(j_common_ptr cinfo) {
  JpegSession* session = SessionOf(cinfo);
  session->error_code = cinfo->err->msg_code;
  (*cinfo->err->format_message)(cinfo, session->message);
  std::longjmp(session->jump, 1);
}

void OnJpegMessage(j_common_ptr cinfo, int level) {
  if (level >= 0) return;  // trace messages
  JpegSession* session = SessionOf(cinfo);
  if (session->warning_count++ == 0) (*cinfo->err->format_message)(cinfo, session->first_warning);
}

void OnJpegOutputMessage(j_common_ptr) {}

void OnJpegProgress(j_common_ptr cinfo) {
  auto* dinfo = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (dinfo->input_scan_number > kMaxProgressiveScans) {
    JpegSession* session = SessionOf(cinfo);
    session->error_code = JERR_IMAGE_TOO_BIG;
    std::snprintf(session->message, sizeof(session->message),
                  "more than %d progressive scans", kMaxProgressiveScans);
    std::longjmp(session->jump, 1);
  }
}

// max_memory_to_use for a byte limit: 0 would mean "no limit" to libjpeg, and a long must not wrap.
long LibjpegMemoryLimit(uint64_t bytes) {
  return static_cast<long>(std::clamp<uint64_t>(bytes, 1, static_cast<uint64_t>(LONG_MAX)));
}

// Step 1: create the decompressor and read the header (saving APP1 for EXIF).
bool StepReadHeader(JpegSession* session, std::span<const uint8_t> bytes, uint64_t memory_limit) {
  if (setjmp(session->jump)) return false;
  session->cinfo.err = jpeg_std_error(&session->error_manager);
  session->error_manager.error_exit = OnJpegError;
  session->error_manager.emit_message = OnJpegMessage;
  session->error_manager.output_message = OnJpegOutputMessage;
  session->cinfo.client_data = session;
  jpeg_create_decompress(&session->cinfo);
  session->created = true;
  session->cinfo.mem->max_memory_to_use = LibjpegMemoryLimit(memory_limit);
  session->progress.progress_monitor = OnJpegProgress;
  session->cinfo.progress = &session->progress;
  jpeg_mem_src(&session->cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_save_markers(&session->cinfo, JPEG_APP0 + 1, 0xFFFF);
  jpeg_read_header(&session->cinfo, TRUE);
  return true;
}

bool IsCmyk(const jpeg_decompress_struct& cinfo) {
  return cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
}

// Step 2: output colour space and scale, then start (a progressive file is read whole here).
bool StepStart(JpegSession* session, unsigned scale_denom) {
  if (setjmp(session->jump)) return false;
  jpeg_decompress_struct& cinfo = session->cinfo;
  cinfo.out_color_space = IsCmyk(cinfo) ? JCS_CMYK : JCS_EXT_BGRA;
  cinfo.scale_num = 1;
  cinfo.scale_denom = scale_denom;
  jpeg_start_decompress(&cinfo);
  return true;
}

// CMYK (inverted when `inverted`, as Adobe writes it) to opaque BGRA, in place.
void CmykToBgra(uint8_t* pixels, uint32_t count, bool inverted) {
  for (uint32_t i = 0; i < count; ++i, pixels += 4) {
    uint32_t c = pixels[0], m = pixels[1], y = pixels[2], k = pixels[3];
    if (!inverted) {
      c = 255 - c, m = 255 - m, y = 255 - y, k = 255 - k;
    }
    pixels[0] = static_cast<uint8_t>((y * k + 127) / 255);
    pixels[1] = static_cast<uint8_t>((m * k + 127) / 255);
    pixels[2] = static_cast<uint8_t>((c * k + 127) / 255);
    pixels[3] = 255;
  }
}

// Step 3: every scanline, into the surface in place or through the sink.
bool StepReadRows(JpegSession* session, internal::RowSink* sink) {
  if (setjmp(session->jump)) return false;
  jpeg_decompress_struct& cinfo = session->cinfo;
  Surface* in_place = sink->DirectSurface();
  const bool cmyk = cinfo.out_color_space == JCS_CMYK;
  while (cinfo.output_scanline < cinfo.output_height) {
    const uint32_t y = cinfo.output_scanline;
    JSAMPROW row = in_place != nullptr ? in_place->Row(y) : session->row_buffer;
    if (jpeg_read_scanlines(&cinfo, &row, 1) != 1) break;
    ++session->rows_read;
    if (cmyk) CmykToBgra(row, cinfo.output_width, cinfo.saw_Adobe_marker != 0);
    if (in_place == nullptr) sink->PutRow(y, row);
  }
  return true;
}

// Step 4: the rest of the file to EOI; an error or a warning there marks the result incomplete.
bool StepFinish(JpegSession* session) {
  if (setjmp(session->jump)) return false;
  jpeg_finish_decompress(&session->cinfo);
  return true;
}

int OrientationOf(const jpeg_decompress_struct& cinfo) {
  for (jpeg_saved_marker_ptr marker = cinfo.marker_list; marker != nullptr; marker = marker->next) {
    if (marker->marker != JPEG_APP0 + 1) continue;
    const int orientation = internal::ExifOrientation({marker->data, marker->data_length});
    if (orientation != 1) return orientation;
  }
  return 1;
}

DecodeError SessionError(const JpegSession& session, std::string_view stage) {
  DecodeErrorCode code = DecodeErrorCode::kCorrupt;
  switch (session.error_code) {
    case JERR_BAD_PRECISION:
    case JERR_SOF_UNSUPPORTED:
    case JERR_NOT_COMPILED:
    case JERR_ARITH_NOTIMPL:
    case JERR_CONVERSION_NOTIMPL:
      code = DecodeErrorCode::kUnsupported;
      break;
    case JERR_OUT_OF_MEMORY:
      code = DecodeErrorCode::kOutOfMemory;
      break;
    case JERR_IMAGE_TOO_BIG:
    case JERR_NO_BACKING_STORE:
      code = DecodeErrorCode::kTooLarge;
      break;
    case JERR_INPUT_EMPTY:
    case JERR_INPUT_EOF:
      code = DecodeErrorCode::kTruncated;
      break;
    default:
      break;
  }
  return MakeDecodeError(code, "jpeg " + std::string(stage) + ": " + session.message);
}

// The largest DCT scale denominator (1, 2, 4, 8) whose output still covers `want` x `want_h`.
unsigned ChooseScaleDenom(uint32_t width, uint32_t height, uint32_t want_w, uint32_t want_h) {
  unsigned chosen = 1;
  for (unsigned denom = 2; denom <= 8; denom *= 2) {
    const uint32_t scaled_w = (width + denom - 1) / denom;
    const uint32_t scaled_h = (height + denom - 1) / denom;
    if (scaled_w < want_w || scaled_h < want_h) break;
    chosen = denom;
  }
  return chosen;
}

}  // namespace

DecodeResult<Surface> DecodeJpeg(std::span<const uint8_t> bytes, const DecodeOptions& options) {
  if (bytes.size() > options.limits.max_input_bytes) {
    return MakeDecodeError(DecodeErrorCode::kTooLarge, "jpeg: input exceeds the decode limits");
  }
  auto session = std::make_unique<JpegSession>();
  if (!StepReadHeader(session.get(), bytes, options.limits.max_decoded_bytes)) {
    return SessionError(*session, "header");
  }
  jpeg_decompress_struct& cinfo = session->cinfo;
  const uint32_t width = cinfo.image_width;
  const uint32_t height = cinfo.image_height;
  if (uint64_t{width} * height > options.limits.max_frame_pixels) {
    return MakeDecodeError(DecodeErrorCode::kTooLarge,
                           "jpeg: " + std::to_string(width) + "x" + std::to_string(height) +
                               " exceeds the decode limits");
  }
  const int orientation = options.apply_exif_orientation ? OrientationOf(cinfo) : 1;
  const internal::OutputSize output = internal::ChooseOutputSize(
      width, height, orientation, options.target_width, options.target_height);
  // The output size in stored orientation decides the DCT scale.
  const unsigned denom = ChooseScaleDenom(width, height, output.stored_width, output.stored_height);
  // libjpeg's whole-image buffers (a progressive file's coefficients: 3 to 6 bytes a pixel, in
  // its own memory) and the output surface together stay within max_decoded_bytes: libjpeg fails
  // with JERR_NO_BACKING_STORE (kTooLarge) rather than allocate past what the surface leaves.
  const uint64_t surface_bytes = uint64_t{output.width} * output.height * Surface::kBytesPerPixel;
  if (surface_bytes > options.limits.max_decoded_bytes) {
    return MakeDecodeError(DecodeErrorCode::kTooLarge,
                           "jpeg: output " + std::to_string(output.width) + "x" +
                               std::to_string(output.height) + " exceeds the decode limits");
  }
  cinfo.mem->max_memory_to_use = LibjpegMemoryLimit(options.limits.max_decoded_bytes - surface_bytes);
  if (!StepStart(session.get(), denom)) return SessionError(*session, "start");

  DecodeResult<std::unique_ptr<internal::RowSink>> sink = internal::MakeRowSink(
      cinfo.output_width, cinfo.output_height, orientation, output, options.limits);
  if (!sink) return sink.error();
  if ((*sink)->DirectSurface() == nullptr) {
    session->row_buffer = static_cast<uint8_t*>(lethe_malloc(size_t{cinfo.output_width} * 4));
    if (session->row_buffer == nullptr) {
      return MakeDecodeError(DecodeErrorCode::kOutOfMemory, "jpeg: out of memory for a row");
    }
  }
  const bool finished = StepReadRows(session.get(), sink->get());
  if (!finished && session->rows_read == 0) return SessionError(*session, "image data");
  const bool complete = finished && session->rows_read == cinfo.output_height &&
                        StepFinish(session.get()) && session->warning_count == 0;
  return (*sink)->Finish(complete);
}

}  // namespace lethe
