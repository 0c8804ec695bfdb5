// The sample site: 36 images from procedural pictures (gradients, rings, a plasma, moving balls).
//   12 PNG  (RGBA, 320..640 px wide)
//   12 JPEG (quality 85, 480..960 px wide)
//    6 GIF  still (palette of 64)
//    6 GIF  animated, 30..45 frames, each frame a moving sub-rectangle over the first one
#include "sample_site.h"

#include <gif_lib.h>
#include <jpeglib.h>
#include <png.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <vector>

namespace lethe::demo {
namespace {

constexpr double kPi = 3.14159265358979323846;

// An RGBA picture: a plasma of seed-dependent colours with rings.
std::vector<uint8_t> Picture(uint32_t width, uint32_t height, int seed) {
  std::vector<uint8_t> rgba(static_cast<size_t>(width) * height * 4);
  for (uint32_t y = 0; y < height; ++y) {
    for (uint32_t x = 0; x < width; ++x) {
      double u = x / static_cast<double>(width), v = y / static_cast<double>(height);
      double plasma = std::sin(u * (6 + seed % 5) + seed) + std::sin(v * (4 + seed % 3)) +
                      std::sin(std::hypot(u - 0.5, v - 0.5) * (20 + seed));
      uint8_t* p = &rgba[(static_cast<size_t>(y) * width + x) * 4];
      p[0] = static_cast<uint8_t>(127 + 127 * std::sin(plasma * kPi / 2));
      p[1] = static_cast<uint8_t>(127 + 127 * std::sin(plasma * kPi / 2 + 2 + seed));
      p[2] = static_cast<uint8_t>(127 + 127 * std::cos(plasma * kPi / 3 + seed));
      p[3] = static_cast<uint8_t>(seed % 3 == 0 ? 255 : 160 + (x * 95) / width);
    }
  }
  return rgba;
}

std::string WritePng(const std::string& path, uint32_t width, uint32_t height, int seed) {
  std::vector<uint8_t> rgba = Picture(width, height, seed);
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = width;
  image.height = height;
  image.format = PNG_FORMAT_RGBA;
  if (!png_image_write_to_file(&image, path.c_str(), 0, rgba.data(), 0, nullptr)) {
    return path + ": " + image.message;
  }
  return "";
}

std::string WriteJpeg(const std::string& path, uint32_t width, uint32_t height, int seed) {
  std::vector<uint8_t> rgba = Picture(width, height, seed);
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) return "cannot write " + path;
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr error{};
  cinfo.err = jpeg_std_error(&error);
  jpeg_create_compress(&cinfo);
  jpeg_stdio_dest(&cinfo, out);
  cinfo.image_width = width;
  cinfo.image_height = height;
  cinfo.input_components = 4;
  cinfo.in_color_space = JCS_EXT_RGBA;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, 85, TRUE);
  if (seed % 2 == 0) jpeg_simple_progression(&cinfo);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = &rgba[static_cast<size_t>(cinfo.next_scanline) * width * 4];
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  return std::fclose(out) == 0 ? "" : "write failed: " + path;
}

// A 64-colour palette along a hue wheel.
ColorMapObject* Palette(int seed) {
  std::vector<GifColorType> colors(64);
  for (int i = 0; i < 64; ++i) {
    double t = i / 64.0 * 2 * kPi + seed;
    colors[i].Red = static_cast<GifByteType>(127 + 127 * std::sin(t));
    colors[i].Green = static_cast<GifByteType>(127 + 127 * std::sin(t + 2.1));
    colors[i].Blue = static_cast<GifByteType>(127 + 127 * std::sin(t + 4.2));
  }
  return GifMakeMapObject(64, colors.data());
}

// Palette indices of a ring pattern whose phase moves with `frame`.
std::vector<GifByteType> Indices(int width, int height, int seed, int frame) {
  std::vector<GifByteType> indices(static_cast<size_t>(width) * height);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      double r = std::hypot(x - width / 2.0, y - height / 2.0);
      indices[static_cast<size_t>(y) * width + x] =
          static_cast<GifByteType>(static_cast<int>(r / 4 + frame * 2 + seed + (x / 32)) & 63);
    }
  }
  return indices;
}

bool PutFrame(GifFileType* gif, int left, int top, int width, int height,
              const std::vector<GifByteType>& indices, int delay_cs) {
  GraphicsControlBlock gcb{};
  gcb.DisposalMode = DISPOSE_DO_NOT;
  gcb.DelayTime = delay_cs;
  gcb.TransparentColor = NO_TRANSPARENT_COLOR;
  GifByteType extension[4];
  size_t length = EGifGCBToExtension(&gcb, extension);
  if (EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, static_cast<int>(length), extension) != GIF_OK) {
    return false;
  }
  if (EGifPutImageDesc(gif, left, top, width, height, false, nullptr) != GIF_OK) return false;
  for (int y = 0; y < height; ++y) {
    auto* row = const_cast<GifByteType*>(&indices[static_cast<size_t>(y) * width]);
    if (EGifPutLine(gif, row, width) != GIF_OK) return false;
  }
  return true;
}

std::string WriteGif(const std::string& path, int width, int height, int seed, int frame_count) {
  int error = 0;
  GifFileType* gif = EGifOpenFileName(path.c_str(), false, &error);
  if (gif == nullptr) return path + ": " + GifErrorString(error);
  ColorMapObject* palette = Palette(seed);
  bool ok = EGifPutScreenDesc(gif, width, height, 8, 0, palette) == GIF_OK;
  GifFreeMapObject(palette);
  EGifSetGifVersion(gif, true);
  if (ok && frame_count > 1) {  // loop forever
    static const GifByteType kLoop[3] = {1, 0, 0};
    ok = EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_OK &&
         EGifPutExtensionBlock(gif, 11, "NETSCAPE2.0") == GIF_OK &&
         EGifPutExtensionBlock(gif, 3, kLoop) == GIF_OK && EGifPutExtensionTrailer(gif) == GIF_OK;
  }
  if (ok) ok = PutFrame(gif, 0, 0, width, height, Indices(width, height, seed, 0), 8);
  // Later frames redraw a quarter-size window that travels across the canvas.
  const int sub_width = width / 2, sub_height = height / 2;
  for (int frame = 1; ok && frame < frame_count; ++frame) {
    double t = frame / static_cast<double>(frame_count) * 2 * kPi;
    int left = static_cast<int>((width - sub_width) * (0.5 + 0.5 * std::sin(t)));
    int top = static_cast<int>((height - sub_height) * (0.5 + 0.5 * std::cos(t)));
    ok = PutFrame(gif, left, top, sub_width, sub_height, Indices(sub_width, sub_height, seed, frame), 8);
  }
  if (EGifCloseFile(gif, &error) != GIF_OK) ok = false;
  return ok ? "" : "gif encoding failed: " + path;
}

}  // namespace

std::string GenerateSampleSite(const std::string& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) return "cannot create " + directory + ": " + error.message();
  char name[64];
  for (int i = 0; i < 12; ++i) {
    std::snprintf(name, sizeof(name), "/%02d-picture.png", i);
    std::string result = WritePng(directory + name, 320 + 32 * i, 240 + 16 * i, i);
    if (!result.empty()) return result;
  }
  for (int i = 0; i < 12; ++i) {
    std::snprintf(name, sizeof(name), "/%02d-photo.jpg", 12 + i);
    std::string result = WriteJpeg(directory + name, 480 + 40 * i, 320 + 24 * i, 20 + i);
    if (!result.empty()) return result;
  }
  for (int i = 0; i < 12; ++i) {
    bool animated = i % 2 == 1;
    std::snprintf(name, sizeof(name), animated ? "/%02d-animation.gif" : "/%02d-still.gif", 24 + i);
    std::string result = WriteGif(directory + name, 240 + 40 * i, 180 + 30 * i, 40 + i,
                                  animated ? 30 + 3 * i : 1);
    if (!result.empty()) return result;
  }
  return "";
}

}  // namespace lethe::demo
