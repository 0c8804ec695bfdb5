// FontFace: FreeType + HarfBuzz behind one small class. FreeType is given its own FT_Library per
// face, with an FT_Memory that allocates through lethe_malloc and counts usable sizes, so a face's
// bytes are exact and freeing the face returns all of them (the FontCache relies on that when it
// expires fonts).
#include "lethe/font_face.h"

#include <ft2build.h>
#include FT_FREETYPE_H
#include FT_MODULE_H
#include <hb-ft.h>
#include <hb.h>

#include <atomic>
#include <cstring>

#include "lethe/alloc.h"

namespace lethe {

// FreeType's allocator hook. FT_MemoryRec_ must stay first: FreeType passes it back to us.
struct FontFace::Memory {
  FT_MemoryRec_ record{};
  std::atomic<size_t> bytes{0};

  Memory() {
    record.user = this;
    record.alloc = [](FT_Memory memory, long size) -> void* {
      void* block = lethe_malloc(static_cast<size_t>(size));
      if (block != nullptr) Self(memory)->bytes += lethe_usable_size(block);
      return block;
    };
    record.free = [](FT_Memory memory, void* block) {
      if (block == nullptr) return;
      Self(memory)->bytes -= lethe_usable_size(block);
      lethe_free(block);
    };
    record.realloc = [](FT_Memory memory, long, long new_size, void* block) -> void* {
      size_t old_usable = lethe_usable_size(block);
      void* grown = lethe_realloc(block, static_cast<size_t>(new_size));
      if (grown == nullptr) return nullptr;  // FreeType keeps the old block.
      Self(memory)->bytes += lethe_usable_size(grown);
      Self(memory)->bytes -= old_usable;
      return grown;
    };
  }
  static Memory* Self(FT_Memory memory) { return static_cast<Memory*>(memory->user); }
};

namespace {

std::string FreeTypeErrorText(FT_Error error) {
  const char* text = FT_Error_String(error);
  return text != nullptr ? text : "FreeType error " + std::to_string(error);
}

}  // namespace

FontFace::FontFace(std::string path, int pixel_size, bool oblique)
    : path_(std::move(path)),
      pixel_size_(pixel_size),
      oblique_(oblique),
      memory_(std::make_unique<Memory>()) {}

std::unique_ptr<FontFace> FontFace::Open(const std::string& path, int pixel_size,
                                         std::string* error, bool oblique) {
  if (pixel_size < 4 || pixel_size > 512) {
    *error = "font size " + std::to_string(pixel_size) + " px is outside 4..512";
    return nullptr;
  }
  std::unique_ptr<FontFace> face(new FontFace(path, pixel_size, oblique));
  if (!face->Init(error)) return nullptr;
  return face;
}

bool FontFace::Init(std::string* error) {
  FT_Library library = nullptr;
  FT_Error status = FT_New_Library(&memory_->record, &library);
  if (status != 0) {
    *error = "cannot start FreeType: " + FreeTypeErrorText(status);
    return false;
  }
  library_ = library;
  FT_Add_Default_Modules(library);
  FT_Face face = nullptr;
  status = FT_New_Face(library, path_.c_str(), 0, &face);
  if (status != 0) {
    *error = "cannot open font '" + path_ + "': " + FreeTypeErrorText(status);
    return false;
  }
  face_ = face;
  status = FT_Set_Pixel_Sizes(face, 0, static_cast<FT_UInt>(pixel_size_));
  if (status != 0) {
    *error = "font '" + path_ + "' has no size " + std::to_string(pixel_size_) + " px: " +
             FreeTypeErrorText(status);
    return false;
  }
  // 26.6 fixed point to whole pixels, rounding outwards so glyphs never clip.
  metrics_.ascent = static_cast<int>((face->size->metrics.ascender + 63) >> 6);
  metrics_.descent = static_cast<int>((-face->size->metrics.descender + 63) >> 6);
  metrics_.line_height = static_cast<int>((face->size->metrics.height + 63) >> 6);
  if (oblique_) {
    // x' = x + 0.2126 y (16.16 fixed point): the slant FreeType's own FT_GlyphSlot_Oblique uses.
    // A shear keeps every horizontal advance, so HarfBuzz's shaping stays that of the upright face.
    FT_Matrix shear{0x10000, 0x0366A, 0, 0x10000};
    FT_Set_Transform(face, &shear, nullptr);
  }
  hb_font_ = hb_ft_font_create_referenced(face);
  return true;
}

FontFace::~FontFace() {
  if (hb_font_ != nullptr) hb_font_destroy(static_cast<hb_font_t*>(hb_font_));
  // hb_ft_font_create_referenced took a reference on the face; FT_Done_Library drops the rest.
  if (face_ != nullptr) FT_Done_Face(static_cast<FT_Face>(face_));
  if (library_ != nullptr) FT_Done_Library(static_cast<FT_Library>(library_));
}

bool FontFace::RasterizeGlyph(uint32_t glyph_id, GlyphBitmap* out) {
  auto* face = static_cast<FT_Face>(face_);
  if (FT_Load_Glyph(face, glyph_id, FT_LOAD_RENDER | FT_LOAD_TARGET_NORMAL) != 0) return false;
  const FT_Bitmap& bitmap = face->glyph->bitmap;
  if (bitmap.pixel_mode != FT_PIXEL_MODE_GRAY && bitmap.width != 0) return false;
  out->width = static_cast<int>(bitmap.width);
  out->height = static_cast<int>(bitmap.rows);
  out->left = face->glyph->bitmap_left;
  out->top = -face->glyph->bitmap_top;
  out->coverage.assign(static_cast<size_t>(out->width) * static_cast<size_t>(out->height), 0);
  for (int row = 0; row < out->height; ++row) {
    const unsigned char* source = bitmap.buffer + static_cast<ptrdiff_t>(row) * bitmap.pitch;
    std::memcpy(out->coverage.data() + static_cast<size_t>(row) * static_cast<size_t>(out->width),
                source, static_cast<size_t>(out->width));
  }
  return true;
}

size_t FontFace::MemoryBytes() const {
  // HarfBuzz allocates with the system malloc and publishes no size; its font object plus the
  // shaper plan cache are a few KiB per face. Counted as a fixed estimate so reports do not hide it.
  constexpr size_t kHarfBuzzFontEstimateBytes = 4096;
  return sizeof(*this) + sizeof(Memory) + memory_->bytes.load() + kHarfBuzzFontEstimateBytes;
}

}  // namespace lethe
