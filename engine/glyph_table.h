// engine/glyph_table.h — one face's rasterized glyph bitmaps, keyed by glyph id, so a glyph is
// rasterized once per face (font file + pixel size) instead of at every draw; and CachedFont, the
// FontCache's value: the face with its table.
//
// Loop thread only. The table lives inside the FontCache entry of its face: it ages, expires and
// is dropped by pressure with the face, and the face's FontCache cost includes it (TextPainter
// calls FontCache::SetCost after each run). A table is capped (max_bytes): when a new glyph would
// pass the cap the table is emptied first (a page that cycles through more glyphs than the cap
// rasterizes again; a bitmap larger than the cap alone is never kept). Bytes are the bitmaps'
// capacities plus the hash map's nodes and buckets (libstdc++ layout; the C++ heap, which is
// Lethe's when the malloc replacement is linked). Totals over every table live in GlyphTotals, kept
// by the tables themselves, so a table destroyed with an expired face leaves the totals right.
#ifndef LETHE_ENGINE_GLYPH_TABLE_H_
#define LETHE_ENGINE_GLYPH_TABLE_H_

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>

#include "lethe/font_face.h"

namespace lethe::internal {

// Sums over every live GlyphTable; must outlive them (the engine declares it before its FontCache).
struct GlyphTotals {
  uint64_t bytes = 0;
  uint64_t glyph_count = 0;
  uint64_t rasterize_count = 0;  // cumulative: glyphs rasterized by FreeType
  uint64_t clear_count = 0;      // cumulative: tables emptied for their cap
};

class GlyphTable {
 public:
  GlyphTable(uint64_t max_bytes, GlyphTotals* totals);
  ~GlyphTable();
  GlyphTable(const GlyphTable&) = delete;
  GlyphTable& operator=(const GlyphTable&) = delete;

  // The cached bitmap of `glyph_id`, or nullptr.
  const GlyphBitmap* Find(uint32_t glyph_id) const;
  // The bitmap of `glyph_id`, rasterized with `face` on a miss and kept. nullptr when FreeType
  // fails. `scratch` holds a bitmap too large to keep (the returned pointer then points at it).
  const GlyphBitmap* Get(FontFace& face, uint32_t glyph_id, GlyphBitmap* scratch);
  void Clear();

  uint64_t used_bytes() const { return used_bytes_; }
  size_t glyph_count() const { return glyphs_.size(); }
  uint64_t max_bytes() const { return max_bytes_; }
  // What keeping `bitmap` costs: its node (next pointer, key, GlyphBitmap) and its coverage.
  static uint64_t CostOf(const GlyphBitmap& bitmap);

 private:
  // libstdc++ keeps a lone bucket inside the map object (no allocation); more are one array.
  uint64_t BucketBytes() const {
    return glyphs_.bucket_count() > 1 ? glyphs_.bucket_count() * sizeof(void*) : 0;
  }
  // Recomputes used_bytes_ from entry_bytes_ and the buckets, moving the totals by the difference.
  void Account();

  uint64_t max_bytes_;
  GlyphTotals* totals_;
  std::unordered_map<uint32_t, GlyphBitmap> glyphs_;
  uint64_t entry_bytes_ = 0;  // sum of CostOf over glyphs_
  uint64_t used_bytes_ = 0;   // entry_bytes_ + BucketBytes(), as last accounted
};

// The FontCache's value: a face and its glyph table.
struct CachedFont {
  CachedFont(std::unique_ptr<FontFace> face_in, uint64_t glyph_max_bytes, GlyphTotals* totals)
      : face(std::move(face_in)), glyphs(glyph_max_bytes, totals) {}
  // The FontCache cost: FreeType's and HarfBuzz's bytes for the face plus the glyph table.
  uint64_t MemoryBytes() const { return sizeof(*this) + face->MemoryBytes() + glyphs.used_bytes(); }

  std::unique_ptr<FontFace> face;
  GlyphTable glyphs;
};

}  // namespace lethe::internal

#endif  // LETHE_ENGINE_GLYPH_TABLE_H_
