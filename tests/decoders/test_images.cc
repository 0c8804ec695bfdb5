#include "test_images.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <gif_lib.h>
#include <jpeglib.h>
#include <png.h>

namespace lethe::test {

Pixels PixelsOf(const Surface& surface) {
  Pixels pixels;
  pixels.width = surface.width();
  pixels.height = surface.height();
  pixels.bgra.resize(size_t{pixels.width} * pixels.height * 4);
  for (uint32_t y = 0; y < pixels.height; ++y) {
    std::memcpy(&pixels.bgra[size_t{y} * pixels.width * 4], surface.Row(y), size_t{pixels.width} * 4);
  }
  return pixels;
}

std::string Compare(const Pixels& expected, const Pixels& actual) {
  if (expected.width != actual.width || expected.height != actual.height) {
    return "size " + std::to_string(actual.width) + "x" + std::to_string(actual.height) +
           ", expected " + std::to_string(expected.width) + "x" + std::to_string(expected.height);
  }
  if (expected.bgra == actual.bgra) return "";
  for (uint32_t y = 0; y < expected.height; ++y) {
    for (uint32_t x = 0; x < expected.width; ++x) {
      const uint8_t* e = expected.At(x, y);
      const uint8_t* a = actual.At(x, y);
      if (std::memcmp(e, a, 4) != 0) {
        char text[160];
        std::snprintf(text, sizeof(text), "pixel (%u,%u): BGRA %u,%u,%u,%u, expected %u,%u,%u,%u", x,
                      y, a[0], a[1], a[2], a[3], e[0], e[1], e[2], e[3]);
        return text;
      }
    }
  }
  return "";
}

namespace {

uint32_t Hash(uint32_t x, uint32_t y, uint32_t c, uint32_t seed) {
  uint32_t h = x * 0x9E3779B1u ^ y * 0x85EBCA77u ^ c * 0xC2B2AE3Du ^ seed * 0x27D4EB2Fu;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return h;
}

void WriteToVector(png_structp png, png_bytep data, size_t length) {
  auto* out = static_cast<Bytes*>(png_get_io_ptr(png));
  out->insert(out->end(), data, data + length);
}

void FlushNothing(png_structp) {}

int ChannelsOf(int color_type) {
  switch (color_type) {
    case PNG_COLOR_TYPE_GRAY_ALPHA: return 2;
    case PNG_COLOR_TYPE_RGB: return 3;
    case PNG_COLOR_TYPE_RGB_ALPHA: return 4;
    default: return 1;
  }
}

}  // namespace

Bytes EncodePng(const PngSpec& spec) {
  Bytes out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  png_set_write_fn(png, &out, WriteToVector, FlushNothing);
  png_set_IHDR(png, info, spec.width, spec.height, spec.bit_depth, spec.color_type,
               spec.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  const uint32_t max_sample = (1u << spec.bit_depth) - 1;
  const uint32_t palette_size =
      spec.palette_size != 0 ? spec.palette_size : (1u << spec.bit_depth);
  if (spec.color_type == PNG_COLOR_TYPE_PALETTE) {
    std::vector<png_color> palette(palette_size);
    for (uint32_t i = 0; i < palette_size; ++i) {
      palette[i] = {static_cast<png_byte>(Hash(i, 0, 0, spec.seed)),
                    static_cast<png_byte>(Hash(i, 0, 1, spec.seed)),
                    static_cast<png_byte>(Hash(i, 0, 2, spec.seed))};
    }
    png_set_PLTE(png, info, palette.data(), static_cast<int>(palette_size));
  }
  const int channels = ChannelsOf(spec.color_type);
  auto sample = [&](uint32_t x, uint32_t y, int c) -> uint32_t {
    if (spec.color_type == PNG_COLOR_TYPE_PALETTE) return Hash(x, y, 7, spec.seed) % palette_size;
    if ((x + y) % 5 == 0 && c < 3) return Hash(0, 0, static_cast<uint32_t>(c), spec.seed) & max_sample;
    return Hash(x, y, static_cast<uint32_t>(c), spec.seed) & max_sample;
  };
  if (spec.trns) {
    if (spec.color_type == PNG_COLOR_TYPE_PALETTE) {
      std::vector<png_byte> alpha(palette_size);
      for (uint32_t i = 0; i < palette_size; ++i) alpha[i] = static_cast<png_byte>(Hash(i, 1, 3, spec.seed));
      png_set_tRNS(png, info, alpha.data(), static_cast<int>(palette_size), nullptr);
    } else {
      png_color_16 key = {};
      key.gray = static_cast<png_uint_16>(sample(0, 0, 0));
      key.red = static_cast<png_uint_16>(sample(0, 0, 0));
      key.green = static_cast<png_uint_16>(sample(0, 0, 1));
      key.blue = static_cast<png_uint_16>(sample(0, 0, 2));
      png_set_tRNS(png, info, nullptr, 0, &key);
    }
  }
  if (spec.gamma != 0) png_set_gAMA_fixed(png, info, static_cast<png_fixed_point>(spec.gamma));
  png_write_info(png, info);
  if (spec.bit_depth < 8) png_set_packing(png);
  const int passes = png_set_interlace_handling(png);
  const size_t bytes_per_sample = spec.bit_depth == 16 ? 2 : 1;
  std::vector<png_byte> row(size_t{spec.width} * channels * bytes_per_sample);
  for (int pass = 0; pass < passes; ++pass) {
    for (uint32_t y = 0; y < spec.height; ++y) {
      size_t at = 0;
      for (uint32_t x = 0; x < spec.width; ++x) {
        for (int c = 0; c < channels; ++c) {
          const uint32_t value = sample(x, y, c);
          if (bytes_per_sample == 2) row[at++] = static_cast<png_byte>(value >> 8);
          row[at++] = static_cast<png_byte>(value);
        }
      }
      png_write_row(png, row.data());
    }
  }
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  return out;
}

Pixels ReferencePng(const Bytes& bytes) {
  png_image image;
  std::memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  Pixels pixels;
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size())) return pixels;
  image.format = PNG_FORMAT_BGRA;
  std::vector<uint8_t> buffer(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, buffer.data(), 0, nullptr)) {
    png_image_free(&image);
    return pixels;
  }
  pixels.width = image.width;
  pixels.height = image.height;
  for (size_t i = 0; i < buffer.size(); i += 4) {
    const uint32_t a = buffer[i + 3];
    for (int c = 0; c < 3; ++c) buffer[i + c] = static_cast<uint8_t>((buffer[i + c] * a + 127) / 255);
  }
  pixels.bgra = std::move(buffer);
  return pixels;
}

Bytes EncodeJpeg(const JpegSpec& spec) {
  jpeg_compress_struct cinfo;
  jpeg_error_mgr error;
  cinfo.err = jpeg_std_error(&error);
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = spec.width;
  cinfo.image_height = spec.height;
  cinfo.input_components = spec.components;
  cinfo.in_color_space = spec.components == 1 ? JCS_GRAYSCALE
                         : spec.components == 3 ? JCS_RGB
                                                : JCS_CMYK;
  jpeg_set_defaults(&cinfo);
  if (spec.components == 4 && spec.ycck) jpeg_set_colorspace(&cinfo, JCS_YCCK);
  jpeg_set_quality(&cinfo, spec.quality, TRUE);
  if (spec.progressive) jpeg_simple_progression(&cinfo);
  if (spec.arithmetic) cinfo.arith_code = TRUE;
  cinfo.restart_interval = static_cast<unsigned>(spec.restart_interval);
  jpeg_start_compress(&cinfo, TRUE);
  if (spec.orientation != 0) {
    const uint8_t exif[] = {'E', 'x', 'i', 'f', 0, 0, 'M', 'M', 0, 42, 0, 0, 0, 8, 0, 1,
                            0x01, 0x12, 0, 3, 0, 0, 0, 1, 0,
                            static_cast<uint8_t>(spec.orientation), 0, 0, 0, 0, 0, 0};
    jpeg_write_marker(&cinfo, JPEG_APP0 + 1, exif, sizeof(exif));
  }
  std::vector<uint8_t> row(size_t{spec.width} * spec.components);
  while (cinfo.next_scanline < cinfo.image_height) {
    const uint32_t y = cinfo.next_scanline;
    for (uint32_t x = 0; x < spec.width; ++x) {
      for (int c = 0; c < spec.components; ++c) {
        const uint32_t smooth = (x * 255 / spec.width + y * 3 + static_cast<uint32_t>(c) * 60) & 255;
        row[size_t{x} * spec.components + c] =
            static_cast<uint8_t>((smooth + (Hash(x, y, static_cast<uint32_t>(c), spec.seed) & 31)) & 255);
      }
    }
    JSAMPROW pointer = row.data();
    jpeg_write_scanlines(&cinfo, &pointer, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  Bytes out(buffer, buffer + size);
  std::free(buffer);
  return out;
}

Pixels ReferenceJpeg(const Bytes& bytes, unsigned scale_denom) {
  jpeg_decompress_struct cinfo;
  jpeg_error_mgr error;
  cinfo.err = jpeg_std_error(&error);
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, bytes.data(), bytes.size());
  jpeg_read_header(&cinfo, TRUE);
  const bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_EXT_BGRX;
  cinfo.scale_num = 1;
  cinfo.scale_denom = scale_denom;
  jpeg_start_decompress(&cinfo);
  Pixels pixels;
  pixels.width = cinfo.output_width;
  pixels.height = cinfo.output_height;
  pixels.bgra.resize(size_t{pixels.width} * pixels.height * 4);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = &pixels.bgra[size_t{cinfo.output_scanline} * pixels.width * 4];
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  const bool inverted = cinfo.saw_Adobe_marker != 0;
  for (size_t i = 0; i < pixels.bgra.size(); i += 4) {
    uint8_t* p = &pixels.bgra[i];
    if (cmyk) {
      uint32_t c = p[0], m = p[1], y = p[2], k = p[3];
      if (!inverted) c = 255 - c, m = 255 - m, y = 255 - y, k = 255 - k;
      p[0] = static_cast<uint8_t>((y * k + 127) / 255);
      p[1] = static_cast<uint8_t>((m * k + 127) / 255);
      p[2] = static_cast<uint8_t>((c * k + 127) / 255);
    }
    p[3] = 255;
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return pixels;
}

namespace {

int WriteGifBytes(GifFileType* gif, const GifByteType* data, int length) {
  auto* out = static_cast<Bytes*>(gif->UserData);
  out->insert(out->end(), data, data + length);
  return length;
}

ColorMapObject* MapOf(const std::vector<GifColor>& palette) {
  if (palette.empty()) return nullptr;
  std::vector<GifColorType> colors;
  for (const GifColor& color : palette) colors.push_back({color.r, color.g, color.b});
  return GifMakeMapObject(static_cast<int>(colors.size()), colors.data());
}

uint32_t InterlacedRowOf(uint32_t storage_row, uint32_t height) {
  std::vector<uint32_t> order;
  for (uint32_t y = 0; y < height; y += 8) order.push_back(y);
  for (uint32_t y = 4; y < height; y += 8) order.push_back(y);
  for (uint32_t y = 2; y < height; y += 4) order.push_back(y);
  for (uint32_t y = 1; y < height; y += 2) order.push_back(y);
  return order[storage_row];
}

}  // namespace

Bytes EncodeGif(const GifSpec& spec, std::vector<size_t>* descriptor_offsets) {
  Bytes out;
  int error = 0;
  GifFileType* gif = EGifOpen(&out, WriteGifBytes, &error);
  EGifSetGifVersion(gif, true);
  ColorMapObject* global = MapOf(spec.global_palette);
  EGifPutScreenDesc(gif, static_cast<int>(spec.width), static_cast<int>(spec.height), 8, 0, global);
  GifFreeMapObject(global);
  if (spec.loop_count >= 0) {
    EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE);
    EGifPutExtensionBlock(gif, 11, "NETSCAPE2.0");
    const uint8_t loop[3] = {1, static_cast<uint8_t>(spec.loop_count & 0xFF),
                             static_cast<uint8_t>(spec.loop_count >> 8)};
    EGifPutExtensionBlock(gif, 3, loop);
    EGifPutExtensionTrailer(gif);
  }
  for (const GifFrameSpec& frame : spec.frames) {
    if (frame.control_block) {
      GraphicsControlBlock control = {};
      control.DisposalMode = frame.disposal;
      control.DelayTime = frame.delay_centiseconds;
      control.TransparentColor = frame.transparent_index;
      GifByteType extension[4];
      EGifGCBToExtension(&control, extension);
      EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, extension);
    }
    if (descriptor_offsets != nullptr) descriptor_offsets->push_back(out.size());
    // giflib 5.2.1's EGifPutImageDesc overwrites the previous frame's copy of its local map
    // without freeing it: free it here.
    if (gif->Image.ColorMap != nullptr) {
      GifFreeMapObject(gif->Image.ColorMap);
      gif->Image.ColorMap = nullptr;
    }
    ColorMapObject* local = MapOf(frame.local_palette);
    EGifPutImageDesc(gif, static_cast<int>(frame.left), static_cast<int>(frame.top),
                     static_cast<int>(frame.width), static_cast<int>(frame.height), frame.interlaced,
                     local);
    GifFreeMapObject(local);
    std::vector<GifPixelType> line(frame.width);
    for (uint32_t s = 0; s < frame.height; ++s) {
      const uint32_t y = frame.interlaced ? InterlacedRowOf(s, frame.height) : s;
      std::memcpy(line.data(), &frame.indices[size_t{y} * frame.width], frame.width);
      EGifPutLine(gif, line.data(), static_cast<int>(frame.width));
    }
  }
  if (gif->Image.ColorMap != nullptr) {
    GifFreeMapObject(gif->Image.ColorMap);
    gif->Image.ColorMap = nullptr;
  }
  EGifCloseFile(gif, &error);
  return out;
}

GifFrameSpec MakeGifFrame(uint32_t left, uint32_t top, uint32_t width, uint32_t height,
                          uint32_t index_limit, uint32_t seed) {
  GifFrameSpec frame;
  frame.left = left;
  frame.top = top;
  frame.width = width;
  frame.height = height;
  frame.indices.resize(size_t{width} * height);
  for (uint32_t y = 0; y < height; ++y) {
    for (uint32_t x = 0; x < width; ++x) {
      frame.indices[size_t{y} * width + x] = static_cast<uint8_t>(Hash(x / 3, y / 2, 5, seed) % index_limit);
    }
  }
  return frame;
}

std::vector<GifColor> MakeGifPalette(uint32_t count, uint32_t seed) {
  std::vector<GifColor> palette;
  for (uint32_t i = 0; i < count; ++i) {
    palette.push_back({static_cast<uint8_t>(Hash(i, 1, 0, seed)), static_cast<uint8_t>(Hash(i, 1, 1, seed)),
                       static_cast<uint8_t>(Hash(i, 1, 2, seed))});
  }
  return palette;
}

ReferenceGifPlayer::ReferenceGifPlayer(const GifSpec& spec) : spec_(spec) {
  canvas_.width = spec.width;
  canvas_.height = spec.height;
  canvas_.bgra.assign(size_t{spec.width} * spec.height * 4, 0);
}

const Pixels& ReferenceGifPlayer::Next() {
  auto for_each_visible = [&](const GifFrameSpec& frame, auto&& visit) {
    for (uint32_t fy = 0; fy < frame.height; ++fy) {
      for (uint32_t fx = 0; fx < frame.width; ++fx) {
        const uint64_t cx = uint64_t{frame.left} + fx, cy = uint64_t{frame.top} + fy;
        if (cx < spec_.width && cy < spec_.height) {
          visit(&canvas_.bgra[(cy * spec_.width + cx) * 4], frame.indices[size_t{fy} * frame.width + fx]);
        }
      }
    }
  };
  if (next_ > 0) {  // dispose of the previous frame
    const GifFrameSpec& previous = spec_.frames[next_ - 1];
    if (previous.disposal == 2) {
      for_each_visible(previous, [](uint8_t* p, uint8_t) { std::memset(p, 0, 4); });
    } else if (previous.disposal == 3) {
      canvas_.bgra = before_;
    }
  }
  const GifFrameSpec& frame = spec_.frames[next_++];
  if (frame.disposal == 3) before_ = canvas_.bgra;
  const std::vector<GifColor>& palette =
      frame.local_palette.empty() ? spec_.global_palette : frame.local_palette;
  for_each_visible(frame, [&](uint8_t* p, uint8_t index) {
    if (static_cast<int>(index) == frame.transparent_index || index >= palette.size()) return;
    p[0] = palette[index].b, p[1] = palette[index].g, p[2] = palette[index].r, p[3] = 255;
  });
  return canvas_;
}

Pixels ReferenceGifFrame(const GifSpec& spec, uint32_t n) {
  ReferenceGifPlayer player(spec);
  for (uint32_t k = 0; k < n; ++k) player.Next();
  return player.Next();
}

namespace {

struct SlurpInput {
  const Bytes* bytes;
  size_t at;
};

int ReadSlurp(GifFileType* gif, GifByteType* out, int length) {
  auto* input = static_cast<SlurpInput*>(gif->UserData);
  const size_t count = std::min(static_cast<size_t>(length), input->bytes->size() - input->at);
  std::memcpy(out, input->bytes->data() + input->at, count);
  input->at += count;
  return static_cast<int>(count);
}

std::vector<GifColor> ColorsOf(const ColorMapObject* map) {
  std::vector<GifColor> colors;
  if (map == nullptr) return colors;
  for (int i = 0; i < map->ColorCount; ++i) {
    colors.push_back({map->Colors[i].Red, map->Colors[i].Green, map->Colors[i].Blue});
  }
  return colors;
}

}  // namespace

bool SlurpGif(const Bytes& bytes, GifSpec* spec) {
  SlurpInput input = {&bytes, 0};
  int error = 0;
  GifFileType* gif = DGifOpen(&input, ReadSlurp, &error);
  if (gif == nullptr) return false;
  if (DGifSlurp(gif) != GIF_OK) {
    DGifCloseFile(gif, &error);
    return false;
  }
  *spec = GifSpec();
  spec->width = static_cast<uint32_t>(gif->SWidth);
  spec->height = static_cast<uint32_t>(gif->SHeight);
  spec->global_palette = ColorsOf(gif->SColorMap);
  for (int i = 0; i < gif->ImageCount; ++i) {
    const SavedImage& image = gif->SavedImages[i];
    GifFrameSpec frame;
    frame.left = static_cast<uint32_t>(image.ImageDesc.Left);
    frame.top = static_cast<uint32_t>(image.ImageDesc.Top);
    frame.width = static_cast<uint32_t>(image.ImageDesc.Width);
    frame.height = static_cast<uint32_t>(image.ImageDesc.Height);
    frame.local_palette = ColorsOf(image.ImageDesc.ColorMap);
    GraphicsControlBlock control;
    if (DGifSavedExtensionToGCB(gif, i, &control) == GIF_OK) {
      frame.transparent_index = control.TransparentColor;
      frame.disposal = control.DisposalMode;
      frame.delay_centiseconds = control.DelayTime;
    }
    frame.indices.assign(image.RasterBits, image.RasterBits + size_t{frame.width} * frame.height);
    spec->frames.push_back(std::move(frame));
  }
  DGifCloseFile(gif, &error);
  return true;
}

Pixels Orient(const Pixels& stored, int orientation) {
  const bool swap = orientation >= 5;
  Pixels out;
  out.width = swap ? stored.height : stored.width;
  out.height = swap ? stored.width : stored.height;
  out.bgra.resize(stored.bgra.size());
  const uint32_t w = stored.width, h = stored.height;
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t x = 0; x < w; ++x) {
      uint32_t ox = x, oy = y;
      switch (orientation) {
        case 2: ox = w - 1 - x; break;
        case 3: ox = w - 1 - x; oy = h - 1 - y; break;
        case 4: oy = h - 1 - y; break;
        case 5: ox = y; oy = x; break;
        case 6: ox = h - 1 - y; oy = x; break;
        case 7: ox = h - 1 - y; oy = w - 1 - x; break;
        case 8: ox = y; oy = w - 1 - x; break;
        default: break;
      }
      std::memcpy(&out.bgra[(size_t{oy} * out.width + ox) * 4], stored.At(x, y), 4);
    }
  }
  return out;
}

Pixels BoxDownscale(const Pixels& source, uint32_t width, uint32_t height) {
  std::vector<uint64_t> sums(size_t{width} * height * 5, 0);
  for (uint32_t y = 0; y < source.height; ++y) {
    for (uint32_t x = 0; x < source.width; ++x) {
      const size_t bin = (size_t{y} * height / source.height) * width + size_t{x} * width / source.width;
      for (int c = 0; c < 4; ++c) sums[bin * 5 + c] += source.At(x, y)[c];
      sums[bin * 5 + 4] += 1;
    }
  }
  Pixels out;
  out.width = width;
  out.height = height;
  out.bgra.resize(size_t{width} * height * 4);
  for (size_t bin = 0; bin < size_t{width} * height; ++bin) {
    const uint64_t count = sums[bin * 5 + 4];
    for (int c = 0; c < 4; ++c) {
      out.bgra[bin * 4 + c] = count == 0 ? 0 : static_cast<uint8_t>((sums[bin * 5 + c] + count / 2) / count);
    }
  }
  return out;
}

}  // namespace lethe::test
