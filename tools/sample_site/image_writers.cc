#include "image_writers.h"

#include <gif_lib.h>
#include <jpeglib.h>
#include <png.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <map>
#include <memory>

namespace lethe::sample_site {

namespace {

struct FileCloser {
  void operator()(FILE* file) const { std::fclose(file); }
};
using File = std::unique_ptr<FILE, FileCloser>;

// Palette of at most 256 colours for a picture; false when it has more.
bool BuildPalette(const std::vector<uint8_t>& rgba, std::vector<png_color>* colors,
                  std::vector<png_byte>* alphas, std::vector<uint8_t>* indices) {
  std::map<uint32_t, uint8_t> lookup;
  indices->resize(rgba.size() / 4);
  for (size_t i = 0; i < indices->size(); ++i) {
    const uint8_t* p = &rgba[4 * i];
    uint32_t key = uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
    auto found = lookup.find(key);
    if (found == lookup.end()) {
      if (lookup.size() == 256) return false;
      found = lookup.emplace(key, static_cast<uint8_t>(lookup.size())).first;
      colors->push_back(png_color{p[0], p[1], p[2]});
      alphas->push_back(p[3]);
    }
    (*indices)[i] = found->second;
  }
  return true;
}

// Reduces each channel to 6x7x6 levels so any picture fits a palette.
std::vector<uint8_t> Posterize(const std::vector<uint8_t>& rgba) {
  std::vector<uint8_t> out(rgba);
  for (size_t i = 0; i < out.size(); i += 4) {
    out[i] = static_cast<uint8_t>(out[i] / 51 * 51);
    out[i + 1] = static_cast<uint8_t>(out[i + 1] / 43 * 42);
    out[i + 2] = static_cast<uint8_t>(out[i + 2] / 51 * 51);
    out[i + 3] = out[i + 3] < 128 ? 0 : 255;
  }
  return out;
}

struct PngHeader {
  int width, height, color_type;
  bool interlaced;
};

// The libpng calls, isolated so that the longjmp on error skips no destructor and clobbers no
// local of the caller. Returns false when libpng reported an error.
bool EncodePng(png_structp png, png_infop info, FILE* file, const PngHeader& header,
               const std::vector<png_color>& colors, const std::vector<png_byte>& alphas,
               png_bytep* rows) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_init_io(png, file);
  png_set_IHDR(png, info, static_cast<png_uint_32>(header.width), static_cast<png_uint_32>(header.height), 8,
               header.color_type, header.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (header.color_type == PNG_COLOR_TYPE_PALETTE) {
    png_set_PLTE(png, info, colors.data(), static_cast<int>(colors.size()));
    bool any_transparent = std::any_of(alphas.begin(), alphas.end(), [](png_byte a) { return a != 255; });
    if (any_transparent) png_set_tRNS(png, info, alphas.data(), static_cast<int>(alphas.size()), nullptr);
  }
  png_write_info(png, info);
  png_write_image(png, rows);
  png_write_end(png, nullptr);
  return true;
}

}  // namespace

bool WritePng(const std::string& path, int width, int height, const std::vector<uint8_t>& rgba,
              PngKind kind, bool interlaced, std::string* error) {
  File file(std::fopen(path.c_str(), "wb"));
  if (!file) {
    *error = path + ": cannot create";
    return false;
  }
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    *error = path + ": out of memory";
    return false;
  }
  // Everything the longjmp can skip is built before setjmp or owned by vectors declared here.
  std::vector<uint8_t> rows;
  std::vector<png_color> colors;
  std::vector<png_byte> alphas;
  std::vector<uint8_t> indices;
  int channels = 4;
  int color_type = PNG_COLOR_TYPE_RGBA;
  switch (kind) {
    case PngKind::kRgba: break;
    case PngKind::kRgb: channels = 3; color_type = PNG_COLOR_TYPE_RGB; break;
    case PngKind::kGray: channels = 1; color_type = PNG_COLOR_TYPE_GRAY; break;
    case PngKind::kPalette:
      channels = 1;
      color_type = PNG_COLOR_TYPE_PALETTE;
      if (!BuildPalette(rgba, &colors, &alphas, &indices)) {
        colors.clear(); alphas.clear();
        BuildPalette(Posterize(rgba), &colors, &alphas, &indices);
      }
      break;
  }
  rows.resize(static_cast<size_t>(width) * static_cast<size_t>(height) * static_cast<size_t>(channels));
  for (size_t i = 0, n = static_cast<size_t>(width) * static_cast<size_t>(height); i < n; ++i) {
    const uint8_t* p = &rgba[4 * i];
    uint8_t* out = &rows[i * static_cast<size_t>(channels)];
    if (kind == PngKind::kPalette) out[0] = indices[i];
    else if (kind == PngKind::kGray) out[0] = static_cast<uint8_t>((p[0] * 77 + p[1] * 150 + p[2] * 29) >> 8);
    else for (int c = 0; c < channels; ++c) out[c] = p[c];
  }
  std::vector<png_bytep> row_pointers(static_cast<size_t>(height));
  for (int y = 0; y < height; ++y) {
    row_pointers[static_cast<size_t>(y)] =
        &rows[static_cast<size_t>(y) * static_cast<size_t>(width) * static_cast<size_t>(channels)];
  }
  PngHeader header{width, height, color_type, interlaced};
  bool encoded = EncodePng(png, info, file.get(), header, colors, alphas, row_pointers.data());
  png_destroy_write_struct(&png, &info);
  if (!encoded) {
    *error = path + ": libpng failed to write";
    return false;
  }
  if (std::fflush(file.get()) != 0) {
    *error = path + ": write failed";
    return false;
  }
  return true;
}

namespace {

struct JpegErrorManager {
  jpeg_error_mgr base;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void JpegErrorExit(j_common_ptr info) {
  auto* manager = reinterpret_cast<JpegErrorManager*>(info->err);
  (*info->err->format_message)(info, manager->message);
  std::longjmp(manager->jump, 1);
}

// The libjpeg calls, isolated as the libpng ones are: the longjmp on error skips no destructor
// and no local of this function is used after it. False on a libjpeg error (errors->message).
bool CompressRows(jpeg_compress_struct* info, JpegErrorManager* errors, FILE* file, int width,
                  int height, const RowPainter& paint_row, int quality, bool progressive,
                  uint8_t* row_buffer) {
  if (setjmp(errors->jump)) return false;
  jpeg_create_compress(info);
  jpeg_stdio_dest(info, file);
  info->image_width = static_cast<JDIMENSION>(width);
  info->image_height = static_cast<JDIMENSION>(height);
  info->input_components = 4;
  info->in_color_space = JCS_EXT_RGBA;  // libjpeg-turbo's extension: no RGB copy of each row
  jpeg_set_defaults(info);
  jpeg_set_quality(info, quality, TRUE);
  if (progressive) jpeg_simple_progression(info);
  jpeg_start_compress(info, TRUE);
  while (info->next_scanline < info->image_height) {
    paint_row(static_cast<int>(info->next_scanline), row_buffer);
    JSAMPROW row = row_buffer;
    jpeg_write_scanlines(info, &row, 1);
  }
  jpeg_finish_compress(info);
  return true;
}

}  // namespace

bool WriteJpeg(const std::string& path, int width, int height, const RowPainter& paint_row,
               int quality, bool progressive, std::string* error) {
  File file(std::fopen(path.c_str(), "wb"));
  if (!file) {
    *error = path + ": cannot create";
    return false;
  }
  std::vector<uint8_t> rgba(static_cast<size_t>(width) * 4);
  jpeg_compress_struct info{};
  JpegErrorManager errors{};
  info.err = jpeg_std_error(&errors.base);
  errors.base.error_exit = JpegErrorExit;
  bool written = CompressRows(&info, &errors, file.get(), width, height, paint_row, quality,
                              progressive, rgba.data());
  jpeg_destroy_compress(&info);
  if (!written) {
    *error = path + ": libjpeg: " + errors.message;
    return false;
  }
  return std::fflush(file.get()) == 0 || (*error = path + ": write failed", false);
}

namespace {

// giflib wants a power-of-two colour count.
ColorMapObject* MakeColorMap(const std::vector<std::array<uint8_t, 3>>& palette) {
  int count = 2;
  while (count < static_cast<int>(palette.size())) count *= 2;
  std::vector<GifColorType> colors(static_cast<size_t>(count), GifColorType{0, 0, 0});
  for (size_t i = 0; i < palette.size(); ++i) colors[i] = GifColorType{palette[i][0], palette[i][1], palette[i][2]};
  return GifMakeMapObject(count, colors.data());
}

bool PutFrame(GifFileType* gif, const GifFrame& frame) {
  GraphicsControlBlock control{};
  control.DisposalMode = frame.disposal;
  control.DelayTime = frame.delay_centiseconds;
  control.TransparentColor = frame.transparent_index;
  GifByteType extension[4];
  size_t length = EGifGCBToExtension(&control, extension);
  if (EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, static_cast<int>(length), extension) != GIF_OK) return false;
  ColorMapObject* local = frame.local_palette.empty() ? nullptr : MakeColorMap(frame.local_palette);
  int status = EGifPutImageDesc(gif, frame.left, frame.top, frame.width, frame.height, frame.interlaced, local);
  GifFreeMapObject(local);
  if (status != GIF_OK) return false;
  // Interlaced frames are written in pass order: rows 0,8,..; 4,12,..; 2,6,..; 1,3,..
  static constexpr int kStart[] = {0, 4, 2, 1};
  static constexpr int kStep[] = {8, 8, 4, 2};
  std::vector<GifPixelType> row(static_cast<size_t>(frame.width));
  auto put_row = [&](int y) {
    const uint8_t* source = &frame.indices[static_cast<size_t>(y) * static_cast<size_t>(frame.width)];
    std::copy(source, source + frame.width, row.begin());
    return EGifPutLine(gif, row.data(), frame.width) == GIF_OK;
  };
  bool ok = true;
  if (frame.interlaced) {
    for (int pass = 0; ok && pass < 4; ++pass)
      for (int y = kStart[pass]; ok && y < frame.height; y += kStep[pass]) ok = put_row(y);
  } else {
    for (int y = 0; ok && y < frame.height; ++y) ok = put_row(y);
  }
  // giflib 5.2 keeps its own copy of a local palette and frees it only when the next frame brings
  // one too; the palette is already written, so release it now.
  if (gif->Image.ColorMap != nullptr) {
    GifFreeMapObject(gif->Image.ColorMap);
    gif->Image.ColorMap = nullptr;
  }
  return ok;
}

}  // namespace

bool WriteGif(const std::string& path, int screen_width, int screen_height,
              const std::vector<std::array<uint8_t, 3>>& global_palette,
              const std::vector<GifFrame>& frames, int loop_count, std::string* error) {
  int status = 0;
  GifFileType* gif = EGifOpenFileName(path.c_str(), false, &status);
  if (gif == nullptr) {
    *error = path + ": cannot create (" + GifErrorString(status) + ")";
    return false;
  }
  EGifSetGifVersion(gif, true);
  ColorMapObject* colors = MakeColorMap(global_palette);
  bool ok = EGifPutScreenDesc(gif, screen_width, screen_height, 8, 0, colors) == GIF_OK;
  GifFreeMapObject(colors);
  if (ok && loop_count >= 0) {
    static const GifByteType kNetscape[] = {'N', 'E', 'T', 'S', 'C', 'A', 'P', 'E', '2', '.', '0'};
    const GifByteType loop[] = {1, static_cast<GifByteType>(loop_count & 0xff),
                                static_cast<GifByteType>((loop_count >> 8) & 0xff)};
    ok = EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_OK &&
         EGifPutExtensionBlock(gif, sizeof(kNetscape), kNetscape) == GIF_OK &&
         EGifPutExtensionBlock(gif, sizeof(loop), loop) == GIF_OK &&
         EGifPutExtensionTrailer(gif) == GIF_OK;
  }
  for (size_t i = 0; ok && i < frames.size(); ++i) ok = PutFrame(gif, frames[i]);
  int write_error = ok ? 0 : gif->Error;
  if (EGifCloseFile(gif, &status) != GIF_OK && ok) {
    ok = false;
    write_error = status;
  }
  if (!ok) *error = path + ": giflib: " + GifErrorString(write_error);
  return ok;
}

}  // namespace lethe::sample_site
