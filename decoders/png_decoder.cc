// PNG through libpng's progressive-free row API, with the transforms that libpng's simplified API
// applies for 8-bit sRGB BGRA output (so that pixels match png_image_finish_read exactly):
//   expand (palette, tRNS, low bit depths) -> gray to RGB -> default file gamma (sRGB for 8-bit
//   data, linear for 16-bit data without gAMA) -> scale 16 to 8 -> opaque filler -> gamma to sRGB
//   -> BGR order; then Lethe premultiplies each row (when the image has alpha or tRNS).
//
// Error handling: libpng reports errors by calling our handler, which records the message and
// longjmps back to the setjmp in one of the small Step functions below. Those functions hold no
// C++ object with a destructor, so nothing is skipped by the longjmp; every resource lives in a
// PngSession (destroyed normally) or in the RowSink. Warnings are dropped, never printed, but one:
// a chunk beyond the chunk allocation cap (OnPngWarning).
//
// libpng allocates its state (the structs, zlib's window, row buffers, chunk data) through
// lethe_malloc: it is counted in the allocator's statistics and peak like the surface, and
// lethe_fail_after reaches it. Any refused allocation ends the decode in kOutOfMemory, even one
// libpng could shrug off (an optional chunk), so that a decode under memory failure never returns
// a partial image as if the file were short.
#include <png.h>

#include <csetjmp>
#include <cstring>
#include <memory>
#include <string>

#include "lethe/alloc.h"
#include "lethe/decode.h"
#include "row_sink_factory.h"

namespace lethe {
namespace {

constexpr size_t kIdatReadBytes = 4096;
constexpr png_alloc_size_t kChunkMallocMaxBytes = 8 << 20;  // iCCP and friends

struct PngSession {
  png_structp png = nullptr;
  png_infop info = nullptr;
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t offset = 0;
  bool ran_out_of_input = false;
  bool out_of_memory = false;  // an allocation libpng asked for was refused
  char message[256] = {};
  // Progress of the row loop, read after a longjmp.
  uint64_t rows_read = 0;
  uint8_t* row_buffer = nullptr;  // lethe_malloc'd when rows go through the downscaler
  // The image has an alpha channel or tRNS: rows need premultiplying (else every alpha is 255).
  bool has_alpha = false;

  ~PngSession() {
    if (png != nullptr) png_destroy_read_struct(&png, &info, nullptr);
    lethe_free(row_buffer);
  }
};

PngSession* SessionOf(png_structp png) { return static_cast<PngSession*>(png_get_error_ptr(png)); }

void OnPngError(png_structp png, png_const_charp message) {
  PngSession* session = SessionOf(png);
  std::snprintf(session->message, sizeof(session->message), "%s", message);
  png_longjmp(png, 1);
}

// libpng reports a chunk longer than png_set_chunk_malloc_max as a benign error, which benign
// errors being allowed turns into this warning, and then allocates and zeroes the chunk's declared
// length all the same: a 4.6 KB file declaring a 1.9 GB sCAL took 1.9 GB and 30 s (found by the
// fuzzing campaign). Past the cap, a chunk other than IDAT (which libpng streams, never allocates
// whole) ends the decode like an error. Other warnings are dropped.
void OnPngWarning(png_structp png, png_const_charp message) {
  if (std::strstr(message, "chunk data is too large") != nullptr &&
      std::strncmp(message, "IDAT", 4) != 0) {
    OnPngError(png, message);
  }
}

// libpng's allocator hooks. The mem pointer is the session (set at creation; libpng passes its
// creation-time struct while it allocates the real one, with the same mem pointer).
png_voidp OnPngMalloc(png_structp png, png_alloc_size_t size) {
  void* block = lethe_malloc(size);
  if (block == nullptr) static_cast<PngSession*>(png_get_mem_ptr(png))->out_of_memory = true;
  return block;
}

void OnPngFree(png_structp, png_voidp block) { lethe_free(block); }

void OnPngRead(png_structp png, png_bytep out, size_t byte_count) {
  auto* session = static_cast<PngSession*>(png_get_io_ptr(png));
  if (session->size - session->offset < byte_count) {
    session->ran_out_of_input = true;
    png_error(png, "the data ends before the image does");
  }
  std::memcpy(out, session->data + session->offset, byte_count);
  session->offset += byte_count;
}

// Step 1: signature and every chunk up to the first IDAT.
bool StepReadInfo(PngSession* session) {
  if (setjmp(png_jmpbuf(session->png))) return false;
  png_set_benign_errors(session->png, 1);
  // Text and metadata chunks never affect pixels: skip them unread (no inflating of zTXt bombs),
  // and cap what any chunk may allocate.
  static const png_byte kChunksToSkip[] = {'t', 'E', 'X', 't', 0, 'z', 'T', 'X', 't', 0,
                                           'i', 'T', 'X', 't', 0, 's', 'P', 'L', 'T', 0,
                                           'e', 'X', 'I', 'f', 0};
  png_set_keep_unknown_chunks(session->png, PNG_HANDLE_CHUNK_NEVER, kChunksToSkip,
                              static_cast<int>(sizeof(kChunksToSkip) / 5));
  png_set_chunk_malloc_max(session->png, kChunkMallocMaxBytes);
  png_read_info(session->png, session->info);
  return true;
}

// Step 2: the simplified API's transforms for 8-bit sRGB BGRA. Returns the number of passes the
// row loop must make (1, or 7 with libpng combining Adam7 passes into full rows).
int StepSetTransforms(PngSession* session, bool combine_passes) {
  if (setjmp(png_jmpbuf(session->png))) return 0;
  png_structp png = session->png;
  png_infop info = session->info;
  const int color_type = png_get_color_type(png, info);
  const int bit_depth = png_get_bit_depth(png, info);
  const bool has_alpha = (color_type & PNG_COLOR_MASK_ALPHA) != 0 ||
                         png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  session->has_alpha = has_alpha;
  png_set_expand(png);
  if ((color_type & PNG_COLOR_MASK_COLOR) == 0) png_set_gray_to_rgb(png);
  png_set_alpha_mode_fixed(png, PNG_ALPHA_PNG,
                           bit_depth == 16 ? PNG_GAMMA_LINEAR : PNG_DEFAULT_sRGB);
  if (bit_depth == 16) png_set_scale_16(png);
  if (!has_alpha) png_set_add_alpha(png, 0xFF, PNG_FILLER_AFTER);
  png_set_alpha_mode_fixed(png, PNG_ALPHA_PNG, PNG_DEFAULT_sRGB);
  png_set_bgr(png);
  // Like the simplified API: ignore every ancillary chunk after the image data but these.
  static const png_byte kChunksToKeep[] = {'b', 'K', 'G', 'D', 0, 'c', 'H', 'R', 'M', 0,
                                           'g', 'A', 'M', 'A', 0, 'i', 'C', 'C', 'P', 0,
                                           's', 'B', 'I', 'T', 0, 's', 'R', 'G', 'B', 0};
  png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, nullptr, -1);
  png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_AS_DEFAULT, kChunksToKeep,
                              static_cast<int>(sizeof(kChunksToKeep) / 5));
  const int passes = combine_passes ? png_set_interlace_handling(png) : 1;
  png_read_update_info(png, info);
  if (png_get_rowbytes(png, info) != size_t{png_get_image_width(png, info)} * 4) {
    png_error(png, "unexpected row size after transforms");
  }
  return passes;
}

// Step 3a: full size, in place: libpng writes straight-alpha rows into the surface (for Adam7 it
// combines each pass into the rows already there); premultiplied afterwards.
bool StepReadRowsInPlace(PngSession* session, Surface* surface, int passes) {
  if (setjmp(png_jmpbuf(session->png))) return false;
  for (int pass = 0; pass < passes; ++pass) {
    for (uint32_t y = 0; y < surface->height(); ++y) {
      png_read_row(session->png, surface->Row(y), nullptr);
      ++session->rows_read;
      if (passes == 1 && session->has_alpha) {
        internal::PremultiplyBgra(surface->Row(y), surface->width());
      }
    }
  }
  return true;
}

// Step 3b: reduced size: each row (or each Adam7 pass row, placed where its pixels belong) goes
// through the downscaler.
bool StepReadRowsScaled(PngSession* session, internal::RowSink* sink, bool interlaced) {
  if (setjmp(png_jmpbuf(session->png))) return false;
  const uint32_t width = sink->source_width();
  const uint32_t height = sink->source_height();
  for (int pass = 0; pass < (interlaced ? 7 : 1); ++pass) {
    const uint32_t columns = interlaced ? PNG_PASS_COLS(width, pass) : width;
    const uint32_t rows = interlaced ? PNG_PASS_ROWS(height, pass) : height;
    if (columns == 0 || rows == 0) continue;  // libpng skips empty passes too
    for (uint32_t r = 0; r < rows; ++r) {
      png_read_row(session->png, session->row_buffer, nullptr);
      ++session->rows_read;
      if (session->has_alpha) internal::PremultiplyBgra(session->row_buffer, columns);
      if (interlaced) {
        sink->PutPixels(PNG_PASS_START_ROW(pass) + (r << PNG_PASS_ROW_SHIFT(pass)),
                        PNG_PASS_START_COL(pass), 1u << PNG_PASS_COL_SHIFT(pass),
                        session->row_buffer, columns);
      } else {
        sink->PutRow(r, session->row_buffer);
      }
    }
  }
  return true;
}

// Step 4: the chunks after the image data, to IEND. A failure here (a cut or damaged file after
// the last row) keeps the pixels but marks them incomplete, as libpng's own readers report it.
bool StepReadEnd(PngSession* session) {
  if (setjmp(png_jmpbuf(session->png))) return false;
  png_read_end(session->png, nullptr);
  return true;
}

DecodeError SessionError(const PngSession& session, std::string_view stage) {
  DecodeErrorCode code = DecodeErrorCode::kCorrupt;
  const std::string message = session.message;
  if (session.out_of_memory) {
    code = DecodeErrorCode::kOutOfMemory;
  } else if (session.ran_out_of_input) {
    code = DecodeErrorCode::kTruncated;
  } else if (message.find("user limit") != std::string::npos ||
             message.find("too large") != std::string::npos) {
    code = DecodeErrorCode::kTooLarge;
  } else if (message.find("memory") != std::string::npos) {
    code = DecodeErrorCode::kOutOfMemory;
  }
  return MakeDecodeError(code, "png " + std::string(stage) + ": " + message);
}

}  // namespace

DecodeResult<Surface> DecodePng(std::span<const uint8_t> bytes, const DecodeOptions& options) {
  if (bytes.size() > options.limits.max_input_bytes) {
    return MakeDecodeError(DecodeErrorCode::kTooLarge, "png: input exceeds the decode limits");
  }
  PngSession session;
  session.data = bytes.data();
  session.size = bytes.size();
  session.png = png_create_read_struct_2(PNG_LIBPNG_VER_STRING, &session, OnPngError, OnPngWarning,
                                         &session, OnPngMalloc, OnPngFree);
  if (session.png != nullptr) session.info = png_create_info_struct(session.png);
  if (session.png == nullptr || session.info == nullptr) {
    return MakeDecodeError(DecodeErrorCode::kOutOfMemory, "png: out of memory for libpng state");
  }
  png_set_read_fn(session.png, &session, OnPngRead);
  // Read the image data in small pieces so that a truncated file still yields the rows before the
  // cut (libpng needs a whole read satisfied or fails it).
  png_set_compression_buffer_size(session.png, kIdatReadBytes);
  if (!StepReadInfo(&session)) return SessionError(session, "header");

  const uint32_t width = png_get_image_width(session.png, session.info);
  const uint32_t height = png_get_image_height(session.png, session.info);
  const bool interlaced = png_get_interlace_type(session.png, session.info) != PNG_INTERLACE_NONE;
  if (uint64_t{width} * height > options.limits.max_frame_pixels) {
    return MakeDecodeError(DecodeErrorCode::kTooLarge,
                           "png: " + std::to_string(width) + "x" + std::to_string(height) +
                               " exceeds the decode limits");
  }
  const internal::OutputSize output = internal::ChooseOutputSize(
      width, height, 1, options.target_width, options.target_height);
  DecodeResult<std::unique_ptr<internal::RowSink>> sink =
      internal::MakeRowSink(width, height, 1, output, options.limits, !interlaced);
  if (!sink) return sink.error();
  Surface* in_place = (*sink)->DirectSurface();

  const int passes = StepSetTransforms(&session, in_place != nullptr);
  if (passes == 0) return SessionError(session, "setup");

  bool finished = false;
  if (in_place != nullptr) {
    finished = StepReadRowsInPlace(&session, in_place, passes);
    if (passes > 1 && session.has_alpha) {
      for (uint32_t y = 0; y < in_place->height(); ++y) {
        internal::PremultiplyBgra(in_place->Row(y), in_place->width());
      }
    }
  } else {
    session.row_buffer = static_cast<uint8_t*>(lethe_malloc(size_t{width} * 4));
    if (session.row_buffer == nullptr) {
      return MakeDecodeError(DecodeErrorCode::kOutOfMemory, "png: out of memory for a row");
    }
    finished = StepReadRowsScaled(&session, sink->get(), interlaced);
  }
  if (session.out_of_memory) {
    return MakeDecodeError(DecodeErrorCode::kOutOfMemory, "png: out of memory inside libpng");
  }
  if (!finished && session.rows_read == 0) return SessionError(session, "image data");
  const bool complete = finished && StepReadEnd(&session);
  if (session.out_of_memory) {  // at the end chunks
    return MakeDecodeError(DecodeErrorCode::kOutOfMemory, "png: out of memory inside libpng");
  }
  return (*sink)->Finish(complete);
}

}  // namespace lethe
