// The interim decode step of lethe-demo (see demo_decode.h): real decoding with the codec
// libraries called directly, into buffers of Lethe's allocator.
#include "demo_decode.h"

#include <gif_lib.h>
#include <jpeglib.h>
#include <png.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <vector>

#include "lethe/alloc.h"
#include "lethe/image_format.h"

namespace lethe::demo {
namespace {

constexpr uint64_t kMaxPixels = uint64_t{64} << 20;  // guards against decompression bombs
constexpr int kMaxFrames = 4096;

// One block of Lethe's allocator, freed with the object.
class LetheBlock {
 public:
  LetheBlock() = default;
  explicit LetheBlock(size_t bytes) : data_(static_cast<uint8_t*>(lethe_malloc(bytes))) {}
  // Takes ownership of a block from lethe_malloc.
  static LetheBlock Adopt(uint8_t* block) {
    LetheBlock adopted;
    adopted.data_ = block;
    return adopted;
  }
  LetheBlock(LetheBlock&& other) noexcept : data_(std::exchange(other.data_, nullptr)) {}
  LetheBlock& operator=(LetheBlock&& other) noexcept {
    std::swap(data_, other.data_);
    return *this;
  }
  ~LetheBlock() { lethe_free(data_); }
  uint8_t* get() const { return data_; }
  size_t usable_bytes() const { return lethe_usable_size(data_); }

 private:
  uint8_t* data_ = nullptr;
};

class BgraSurface : public CachedSurface {
 public:
  BgraSurface(uint32_t width, uint32_t height, LetheBlock pixels)
      : width_(width), height_(height), pixels_(std::move(pixels)) {}
  size_t MemoryBytes() const override { return pixels_.usable_bytes(); }
  uint32_t width() const { return width_; }
  uint32_t height() const { return height_; }

 private:
  uint32_t width_;
  uint32_t height_;
  LetheBlock pixels_;
};

void Premultiply(uint8_t* bgra, size_t pixel_count) {
  for (size_t i = 0; i < pixel_count; ++i, bgra += 4) {
    unsigned alpha = bgra[3];
    if (alpha == 255) continue;
    for (int c = 0; c < 3; ++c) bgra[c] = static_cast<uint8_t>((bgra[c] * alpha + 127) / 255);
  }
}

DecodedImage DecodePng(std::span<const uint8_t> bytes) {
  DecodedImage result;
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size())) {
    result.error = std::string("PNG: ") + image.message;
    return result;
  }
  if (static_cast<uint64_t>(image.width) * image.height > kMaxPixels) {
    png_image_free(&image);
    result.error = "PNG: too many pixels";
    return result;
  }
  image.format = PNG_FORMAT_BGRA;
  LetheBlock pixels(PNG_IMAGE_SIZE(image));
  if (pixels.get() == nullptr) {
    png_image_free(&image);
    result.error = "PNG: out of memory";
    return result;
  }
  if (!png_image_finish_read(&image, nullptr, pixels.get(), 0, nullptr)) {
    result.error = std::string("PNG: ") + image.message;
    return result;
  }
  Premultiply(pixels.get(), static_cast<size_t>(image.width) * image.height);
  result.header = ImageHeaderInfo{ImageFormat::kPng, image.width, image.height, 1};
  result.full_canvas_bgra_bytes = uint64_t{image.width} * image.height * 4;
  result.surface = std::make_shared<BgraSurface>(image.width, image.height, std::move(pixels));
  return result;
}

struct JpegError {
  jpeg_error_mgr manager;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void JpegSilent(j_common_ptr) {}  // warnings are counted (num_warnings), not printed

[[noreturn]] void JpegErrorExit(j_common_ptr cinfo) {
  auto* error = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, error->message);
  std::longjmp(error->jump, 1);
}

// Plain-C style on purpose: longjmp must not skip C++ destructors, so nothing with one lives here.
uint8_t* DecodeJpegPixels(std::span<const uint8_t> bytes, uint32_t* width, uint32_t* height,
                          char* message) {
  jpeg_decompress_struct cinfo;
  JpegError error;
  uint8_t* volatile pixels = nullptr;
  cinfo.err = jpeg_std_error(&error.manager);
  error.manager.error_exit = JpegErrorExit;
  error.manager.output_message = JpegSilent;
  if (setjmp(error.jump) != 0) {
    std::snprintf(message, JMSG_LENGTH_MAX, "%s", error.message);
    jpeg_destroy_decompress(&cinfo);
    lethe_free(pixels);
    return nullptr;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = JCS_EXT_BGRA;
  jpeg_start_decompress(&cinfo);
  if (static_cast<uint64_t>(cinfo.output_width) * cinfo.output_height > kMaxPixels) {
    std::snprintf(message, JMSG_LENGTH_MAX, "too many pixels");
    jpeg_destroy_decompress(&cinfo);
    return nullptr;
  }
  size_t stride = static_cast<size_t>(cinfo.output_width) * 4;
  pixels = static_cast<uint8_t*>(lethe_malloc(stride * cinfo.output_height));
  if (pixels == nullptr) {
    std::snprintf(message, JMSG_LENGTH_MAX, "out of memory");
    jpeg_destroy_decompress(&cinfo);
    return nullptr;
  }
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = pixels + stride * cinfo.output_scanline;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  if (error.manager.num_warnings > 0) {
    // libjpeg pads truncated or corrupt data with grey and only warns: never pass that off as whole.
    std::snprintf(message, JMSG_LENGTH_MAX, "truncated or corrupt data");
    jpeg_destroy_decompress(&cinfo);
    lethe_free(pixels);
    return nullptr;
  }
  *width = cinfo.output_width;
  *height = cinfo.output_height;
  jpeg_destroy_decompress(&cinfo);
  return pixels;
}

DecodedImage DecodeJpeg(std::span<const uint8_t> bytes) {
  DecodedImage result;
  uint32_t width = 0, height = 0;
  char message[JMSG_LENGTH_MAX] = {};
  uint8_t* pixels = DecodeJpegPixels(bytes, &width, &height, message);
  if (pixels == nullptr) {
    result.error = std::string("JPEG: ") + message;
    return result;
  }
  result.surface = std::make_shared<BgraSurface>(width, height, LetheBlock::Adopt(pixels));
  result.header = ImageHeaderInfo{ImageFormat::kJpeg, width, height, 1};
  result.full_canvas_bgra_bytes = uint64_t{width} * height * 4;
  return result;
}

// ---- GIF ---------------------------------------------------------------------------------------

// giflib returns NULL for codes it has no text for (a failed DGifSlurp may leave Error at 0).
std::string GifError(int code) {
  const char* text = GifErrorString(code);
  return text != nullptr ? text : "malformed data (giflib error " + std::to_string(code) + ")";
}

struct GifReader {
  std::span<const uint8_t> bytes;
  size_t offset = 0;
};

int ReadGif(GifFileType* gif, GifByteType* out, int length) {
  auto* reader = static_cast<GifReader*>(gif->UserData);
  size_t n = std::min(static_cast<size_t>(length), reader->bytes.size() - reader->offset);
  std::memcpy(out, reader->bytes.data() + reader->offset, n);
  reader->offset += n;
  return static_cast<int>(n);
}

struct PalettedFrame {
  uint32_t left = 0, top = 0, width = 0, height = 0;
  int transparent = -1;
  LetheBlock indices;  // width * height
  LetheBlock palette;  // 256 x BGRA
};

class PalettedAnimation : public DemoAnimation {
 public:
  PalettedAnimation(uint32_t width, uint32_t height, std::vector<PalettedFrame> frames,
                    LetheBlock canvas)
      : width_(width), height_(height), frames_(std::move(frames)), canvas_(std::move(canvas)) {}

  size_t MemoryBytes() const override {
    size_t bytes = canvas_.usable_bytes();
    for (const PalettedFrame& frame : frames_) {
      bytes += frame.indices.usable_bytes() + frame.palette.usable_bytes();
    }
    return bytes;
  }
  uint32_t frame_count() const override { return static_cast<uint32_t>(frames_.size()); }
  uint32_t width() const { return width_; }
  uint32_t height() const { return height_; }

  void Compose(uint32_t index) override {
    index %= frame_count();
    if (index < composed_) composed_ = 0;  // a jump back: replay from the first frame
    for (; composed_ <= index; ++composed_) Apply(frames_[composed_]);
  }

 private:
  void Apply(const PalettedFrame& frame) {
    const uint8_t* palette = frame.palette.get();
    for (uint32_t y = 0; y < frame.height; ++y) {
      const uint8_t* src = frame.indices.get() + static_cast<size_t>(y) * frame.width;
      uint8_t* dst = canvas_.get() + (static_cast<size_t>(frame.top + y) * width_ + frame.left) * 4;
      for (uint32_t x = 0; x < frame.width; ++x, dst += 4) {
        if (src[x] == frame.transparent) continue;
        std::memcpy(dst, palette + src[x] * 4, 4);
      }
    }
  }

  uint32_t width_;
  uint32_t height_;
  std::vector<PalettedFrame> frames_;
  LetheBlock canvas_;
  uint32_t composed_ = 0;
};

// Frame i of a slurped GIF as palette indices clipped to the canvas.
bool MakeFrame(GifFileType* gif, int i, PalettedFrame* out, std::string* error) {
  const SavedImage& image = gif->SavedImages[i];
  const GifImageDesc& desc = image.ImageDesc;
  const ColorMapObject* map = desc.ColorMap != nullptr ? desc.ColorMap : gif->SColorMap;
  if (map == nullptr) {
    *error = "GIF: frame without a palette";
    return false;
  }
  int left = std::clamp(desc.Left, 0, gif->SWidth), top = std::clamp(desc.Top, 0, gif->SHeight);
  int width = std::clamp(desc.Width, 0, gif->SWidth - left);
  int height = std::clamp(desc.Height, 0, gif->SHeight - top);
  out->left = static_cast<uint32_t>(left);
  out->top = static_cast<uint32_t>(top);
  out->width = static_cast<uint32_t>(width);
  out->height = static_cast<uint32_t>(height);
  GraphicsControlBlock gcb{};
  if (DGifSavedExtensionToGCB(gif, i, &gcb) == GIF_OK) out->transparent = gcb.TransparentColor;
  out->indices = LetheBlock(std::max<size_t>(1, static_cast<size_t>(width) * height));
  out->palette = LetheBlock(256 * 4);
  if (out->indices.get() == nullptr || out->palette.get() == nullptr) {
    *error = "GIF: out of memory";
    return false;
  }
  for (int y = 0; y < height; ++y) {
    std::memcpy(out->indices.get() + static_cast<size_t>(y) * width,
                image.RasterBits + static_cast<size_t>(y) * desc.Width, static_cast<size_t>(width));
  }
  std::memset(out->palette.get(), 0, 256 * 4);
  for (int c = 0; c < map->ColorCount && c < 256; ++c) {
    uint8_t* bgra = out->palette.get() + c * 4;
    bgra[0] = map->Colors[c].Blue;
    bgra[1] = map->Colors[c].Green;
    bgra[2] = map->Colors[c].Red;
    bgra[3] = 255;
  }
  return true;
}

DecodedImage DecodeGif(std::span<const uint8_t> bytes) {
  DecodedImage result;
  GifReader reader{bytes};
  int error_code = 0;
  GifFileType* gif = DGifOpen(&reader, ReadGif, &error_code);
  if (gif == nullptr) {
    result.error = "GIF: " + GifError(error_code);
    return result;
  }
  if (static_cast<uint64_t>(gif->SWidth) * gif->SHeight > kMaxPixels) {
    DGifCloseFile(gif, &error_code);
    result.error = "GIF: too many pixels";
    return result;
  }
  if (DGifSlurp(gif) != GIF_OK || gif->ImageCount < 1 || gif->ImageCount > kMaxFrames) {
    if (gif->ImageCount > kMaxFrames) {
      result.error = "GIF: too many frames";
    } else if (gif->ImageCount < 1 && gif->Error == 0) {
      result.error = "GIF: no frames";
    } else {
      result.error = "GIF: " + GifError(gif->Error);
    }
    DGifCloseFile(gif, &error_code);
    return result;
  }
  const uint32_t width = static_cast<uint32_t>(gif->SWidth);
  const uint32_t height = static_cast<uint32_t>(gif->SHeight);
  std::vector<PalettedFrame> frames(static_cast<size_t>(gif->ImageCount));
  for (int i = 0; i < gif->ImageCount; ++i) {
    if (!MakeFrame(gif, i, &frames[static_cast<size_t>(i)], &result.error)) {
      DGifCloseFile(gif, &error_code);
      return result;
    }
  }
  DGifCloseFile(gif, &error_code);
  LetheBlock canvas(std::max<size_t>(4, size_t{width} * height * 4));
  if (canvas.get() == nullptr) {
    result.error = "GIF: out of memory";
    return result;
  }
  std::memset(canvas.get(), 0, size_t{width} * height * 4);
  auto animation = std::make_shared<PalettedAnimation>(width, height, std::move(frames),
                                                       std::move(canvas));
  animation->Compose(0);
  result.header = ImageHeaderInfo{ImageFormat::kGif, width, height, animation->frame_count()};
  result.full_canvas_bgra_bytes = uint64_t{width} * height * 4 * animation->frame_count();
  result.surface = std::move(animation);
  return result;
}

}  // namespace

const char* DecoderName() {
  return "interim: libpng/libjpeg-turbo/giflib called directly (tools/demo/demo_decode.cc), "
         "not lethe::decoders yet";
}

DecodedImage DecodeImage(std::span<const uint8_t> bytes) {
  switch (DetectImageFormat(bytes)) {
    case ImageFormat::kPng: return DecodePng(bytes);
    case ImageFormat::kJpeg: return DecodeJpeg(bytes);
    case ImageFormat::kGif: return DecodeGif(bytes);
    case ImageFormat::kUnknown: break;
  }
  DecodedImage result;
  result.error = "not a PNG, JPEG or GIF";
  return result;
}

}  // namespace lethe::demo
