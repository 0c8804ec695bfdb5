#include "glyph_table.h"

#include "lethe/check.h"

namespace lethe::internal {

GlyphTable::GlyphTable(uint64_t max_bytes, GlyphTotals* totals) : max_bytes_(max_bytes), totals_(totals) {
  LETHE_CHECK(totals_ != nullptr, "GlyphTable needs its totals");
  Account();
}

GlyphTable::~GlyphTable() {
  totals_->bytes -= used_bytes_;
  totals_->glyph_count -= glyphs_.size();
}

uint64_t GlyphTable::CostOf(const GlyphBitmap& bitmap) {
  return sizeof(void*) + sizeof(std::pair<const uint32_t, GlyphBitmap>) + bitmap.coverage.capacity();
}

void GlyphTable::Account() {
  uint64_t now = entry_bytes_ + BucketBytes();
  totals_->bytes = totals_->bytes - used_bytes_ + now;
  used_bytes_ = now;
}

const GlyphBitmap* GlyphTable::Find(uint32_t glyph_id) const {
  auto it = glyphs_.find(glyph_id);
  return it != glyphs_.end() ? &it->second : nullptr;
}

const GlyphBitmap* GlyphTable::Get(FontFace& face, uint32_t glyph_id, GlyphBitmap* scratch) {
  if (const GlyphBitmap* cached = Find(glyph_id)) return cached;
  GlyphBitmap bitmap;
  ++totals_->rasterize_count;
  if (!face.RasterizeGlyph(glyph_id, &bitmap)) return nullptr;  // not kept: FreeType may recover
  bitmap.coverage.shrink_to_fit();
  const uint64_t cost = CostOf(bitmap);
  if (cost > max_bytes_) {  // never fits: drawn from the caller's scratch, not kept
    *scratch = std::move(bitmap);
    return scratch;
  }
  if (used_bytes_ + cost > max_bytes_) {
    Clear();
    ++totals_->clear_count;
  }
  auto [it, inserted] = glyphs_.emplace(glyph_id, std::move(bitmap));
  LETHE_DCHECK(inserted, "glyph was cached already");
  entry_bytes_ += cost;
  ++totals_->glyph_count;
  Account();
  return &it->second;
}

void GlyphTable::Clear() {
  totals_->glyph_count -= glyphs_.size();
  // Swapping with an empty map also returns the bucket array (clear() keeps it).
  std::unordered_map<uint32_t, GlyphBitmap>().swap(glyphs_);
  entry_bytes_ = 0;
  Account();
}

}  // namespace lethe::internal
