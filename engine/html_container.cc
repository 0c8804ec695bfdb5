#include "html_container.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <optional>

#include "box_painter.h"
#include "css_fixups.h"
#include "image_store.h"
#include "painter.h"
#include "url.h"

namespace lethe::internal {

namespace {

constexpr uint32_t kBrokenImageSide = 16;  // the box of a broken <img> without a declared size

uint32_t Argb(const litehtml::web_color& color) {
  return uint32_t{color.alpha} << 24 | uint32_t{color.red} << 16 | uint32_t{color.green} << 8 |
         color.blue;
}

LayoutRect RectOf(const litehtml::position& pos) { return {pos.x, pos.y, pos.width, pos.height}; }

CornerRadii RadiiOf(const litehtml::border_radiuses& r) {
  return {r.top_left_x,     r.top_left_y,     r.top_right_x,   r.top_right_y,
          r.bottom_right_x, r.bottom_right_y, r.bottom_left_x, r.bottom_left_y};
}

BorderSide SideOf(const litehtml::border& border) {
  BorderStyle style = BorderStyle::kNone;
  switch (border.style) {
    case litehtml::border_style_none:
    case litehtml::border_style_hidden: style = BorderStyle::kNone; break;
    case litehtml::border_style_dotted: style = BorderStyle::kDotted; break;
    case litehtml::border_style_dashed: style = BorderStyle::kDashed; break;
    case litehtml::border_style_solid: style = BorderStyle::kSolid; break;
    case litehtml::border_style_double: style = BorderStyle::kDouble; break;
    case litehtml::border_style_groove: style = BorderStyle::kGroove; break;
    case litehtml::border_style_ridge: style = BorderStyle::kRidge; break;
    case litehtml::border_style_inset: style = BorderStyle::kInset; break;
    case litehtml::border_style_outset: style = BorderStyle::kOutset; break;
  }
  return {border.width, style, Argb(border.color)};
}

std::string Trimmed(std::string_view text) {
  while (!text.empty() && (std::isspace(static_cast<unsigned char>(text.front())) ||
                           text.front() == '"' || text.front() == '\'')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (std::isspace(static_cast<unsigned char>(text.back())) ||
                           text.back() == '"' || text.back() == '\'')) {
    text.remove_suffix(1);
  }
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

// The engine's family for a CSS family name; nullopt for one it has no face for.
std::optional<FontFamily> FamilyFor(const std::string& name) {
  if (auto generic = ParseFontFamily(name)) return generic;
  static const std::pair<std::string_view, FontFamily> kNamed[] = {
      {"dejavu sans", FontFamily::kSansSerif},    {"arial", FontFamily::kSansSerif},
      {"helvetica", FontFamily::kSansSerif},      {"verdana", FontFamily::kSansSerif},
      {"system-ui", FontFamily::kSansSerif},      {"dejavu serif", FontFamily::kSerif},
      {"times", FontFamily::kSerif},              {"times new roman", FontFamily::kSerif},
      {"georgia", FontFamily::kSerif},            {"dejavu sans mono", FontFamily::kMonospace},
      {"courier", FontFamily::kMonospace},        {"courier new", FontFamily::kMonospace},
      {"ui-monospace", FontFamily::kMonospace}};
  for (const auto& [known, family] : kNamed) {
    if (name == known) return family;
  }
  return std::nullopt;
}

}  // namespace

HtmlContainer::HtmlContainer(HtmlServices& services, std::string url, bool detached)
    : services_(services), detached_(detached), url_(std::move(url)), base_(url_) {}

HtmlContainer::~HtmlContainer() {
  for (const auto& [url, id] : image_ids_) {
    if (id != 0) services_.store.Release(id);
  }
}

void HtmlContainer::BeginRecord(std::vector<DocumentImage>* images) {
  mode_ = Mode::kRecord;
  images_ = images;
  scroll_y_ = 0;
  placements_.clear();
  clips_.clear();
  rounded_clips_.clear();
}

void HtmlContainer::BeginPaint(Surface* target, int scroll_y, std::vector<DocumentImage>* images,
                               HtmlImagePainter* painter) {
  mode_ = Mode::kPaint;
  target_ = target;
  scroll_y_ = scroll_y;
  images_ = images;
  painter_ = painter;
  clips_.clear();
  rounded_clips_.clear();
}

void HtmlContainer::End() {
  mode_ = Mode::kIdle;
  target_ = nullptr;
  images_ = nullptr;
  painter_ = nullptr;
}

size_t HtmlContainer::MemoryBytes() const {
  size_t bytes = sizeof(*this) + url_.capacity() + base_.capacity() + title_.capacity() +
                 fonts_.capacity() * sizeof(fonts_[0]) + fonts_.size() * sizeof(HtmlFont);
  for (const auto& [url, id] : image_ids_) bytes += sizeof(id) + url.capacity() + 32;
  for (const std::string& line : broken_) bytes += sizeof(line) + line.capacity();
  for (const auto& [key, index] : placements_) bytes += std::get<0>(key).capacity() + 96;
  return bytes;
}

// ---- fonts and text ---------------------------------------------------------------------------

litehtml::uint_ptr HtmlContainer::create_font(const char* face_name, int size, int weight,
                                              litehtml::font_style italic, unsigned int decoration,
                                              litehtml::font_metrics* fm) {
  auto font = std::make_unique<HtmlFont>();
  font->style.size = std::clamp(size, 4, 512);
  font->style.bold = weight >= 600;
  font->italic = italic == litehtml::fontStyleItalic;
  font->style.italic = font->italic;
  font->decoration = decoration;
  // The first family of the list that the engine has a face for; else sans-serif (the fallback).
  std::string_view names = face_name != nullptr ? face_name : "";
  while (!names.empty()) {
    size_t comma = names.find(',');
    if (auto family = FamilyFor(Trimmed(names.substr(0, comma)))) {
      font->style.family = *family;
      break;
    }
    names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
  }
  if (detached_) {
    font->metrics = {font->style.size * 3 / 4, font->style.size / 4, font->style.size};
  } else {
    ArenaScope engine(LETHE_ARENA_NONE);  // faces and glyph tables are the FontCache's
    font->metrics = services_.text.Metrics(font->style);
  }
  if (fm != nullptr) {
    fm->ascent = font->metrics.ascent;
    fm->descent = font->metrics.descent;
    fm->height = std::max(font->metrics.line_height, font->metrics.ascent + font->metrics.descent);
    fm->x_height = std::max(1, font->metrics.ascent / 2);
    fm->draw_spaces = font->italic || decoration != 0;
  }
  fonts_.push_back(std::move(font));
  return fonts_.size();  // handle = index + 1 (0 is litehtml's "no font")
}

void HtmlContainer::delete_font(litehtml::uint_ptr font) {
  if (font >= 1 && font <= fonts_.size()) fonts_[font - 1].reset();
}

const HtmlFont* HtmlContainer::Font(litehtml::uint_ptr font) const {
  return font >= 1 && font <= fonts_.size() ? fonts_[font - 1].get() : nullptr;
}

int HtmlContainer::text_width(const char* text, litehtml::uint_ptr font) {
  const HtmlFont* html_font = Font(font);
  if (html_font == nullptr || text == nullptr) return 0;
  if (detached_) return static_cast<int>(std::strlen(text)) * html_font->style.size / 2;
  ArenaScope engine(LETHE_ARENA_NONE);  // shaped words are the ShapedWordCache's
  return services_.text.Width(html_font->style, text);
}

void HtmlContainer::draw_text(litehtml::uint_ptr, const char* text, litehtml::uint_ptr font,
                              litehtml::web_color color, const litehtml::position& pos) {
  const HtmlFont* html_font = Font(font);
  if (mode_ != Mode::kPaint || html_font == nullptr || text == nullptr) return;
  const LayoutRect clip = Clip();
  if (!RectOf(pos).Intersects(clip)) return;
  const int baseline = pos.y + pos.height - html_font->metrics.descent;
  ArenaScope engine(LETHE_ARENA_NONE);
  services_.text.DrawWord(*target_, html_font->style, text, pos.x, baseline, Argb(color), clip);
  const int thickness = std::max(1, html_font->style.size / 16);
  if (html_font->decoration & litehtml::font_decoration_underline) {
    FillBox({pos.x, baseline + 1, pos.width, thickness}, Argb(color));
  }
  if (html_font->decoration & litehtml::font_decoration_linethrough) {
    FillBox({pos.x, baseline - html_font->metrics.ascent / 3, pos.width, thickness}, Argb(color));
  }
  if (html_font->decoration & litehtml::font_decoration_overline) {
    FillBox({pos.x, pos.y, pos.width, thickness}, Argb(color));
  }
}

int HtmlContainer::pt_to_px(int pt) const { return pt * 96 / 72; }
int HtmlContainer::get_default_font_size() const { return 16; }
const char* HtmlContainer::get_default_font_name() const { return "sans-serif"; }

void HtmlContainer::transform_text(litehtml::tstring& text, litehtml::text_transform tt) {
  bool word_start = true;
  for (char& c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (tt == litehtml::text_transform_uppercase ||
        (tt == litehtml::text_transform_capitalize && word_start)) {
      c = static_cast<char>(std::toupper(u));
    } else if (tt == litehtml::text_transform_lowercase) {
      c = static_cast<char>(std::tolower(u));
    }
    word_start = std::isspace(u) != 0;
  }
}

// ---- images -----------------------------------------------------------------------------------

std::string HtmlContainer::Resolve(const char* src, const char* baseurl) const {
  const std::string base = baseurl != nullptr && *baseurl != '\0' ? std::string(baseurl) : base_;
  return ResolveUrl(base, src != nullptr ? src : "");
}

const ImageRecord* HtmlContainer::Image(const std::string& url) {
  auto found = image_ids_.find(url);
  if (found != image_ids_.end()) {
    return found->second != 0 ? services_.store.Find(found->second) : nullptr;
  }
  std::string error;
  const ImageRecord* record = nullptr;
  if (detached_) {
    error = "not loaded";
  } else if (image_ids_.size() >= services_.limits.max_image_count) {
    error = url + ": more than " + std::to_string(services_.limits.max_image_count) +
            " images on the page";
  } else {
    ArenaScope engine(LETHE_ARENA_NONE);  // compressed bytes and records are the caches'
    record = services_.store.Acquire(url, &error);
  }
  image_ids_.emplace(url, record != nullptr ? record->id : 0);
  if (record == nullptr) broken_.push_back(url_ + ": " + error);
  return record;
}

void HtmlContainer::load_image(const char* src, const char* baseurl, bool) {
  if (src == nullptr || *src == '\0') return;
  (void)Image(Resolve(src, baseurl));
}

void HtmlContainer::get_image_size(const char* src, const char* baseurl, litehtml::size& size) {
  const ImageRecord* record = src != nullptr && *src != '\0' ? Image(Resolve(src, baseurl)) : nullptr;
  if (record == nullptr) {
    size.width = size.height = kBrokenImageSide;
    return;
  }
  const int max_px = services_.limits.max_box_px;
  size.width = static_cast<int>(std::min<uint32_t>(record->header.width, max_px));
  size.height = static_cast<int>(std::min<uint32_t>(record->header.height, max_px));
}

void HtmlContainer::draw_background(litehtml::uint_ptr, const litehtml::background_paint& bg) {
  const LayoutRect area = RectOf(bg.clip_box);
  // The background is clipped to the border box with its corners rounded (and to clip_box).
  const RoundedBox shape(RectOf(bg.border_box), RadiiOf(bg.border_radius));
  const bool rounded = shape.radii().any();
  if (mode_ == Mode::kPaint && bg.color.alpha != 0) {
    if (rounded) {
      FillRounded(*target_, shape, area, Argb(bg.color), Clip());
    } else {
      FillBox(area, Argb(bg.color));
    }
  }
  if (bg.image.empty() || bg.image_size.width <= 0 || bg.image_size.height <= 0) return;
  const bool repeat_x = bg.repeat == litehtml::background_repeat_repeat ||
                        bg.repeat == litehtml::background_repeat_repeat_x;
  const bool repeat_y = bg.repeat == litehtml::background_repeat_repeat ||
                        bg.repeat == litehtml::background_repeat_repeat_y;
  const int max_px = services_.limits.max_box_px;
  const LayoutRect tile{bg.position_x, bg.position_y, std::min(bg.image_size.width, max_px),
                        std::min(bg.image_size.height, max_px)};
  if (mode_ != Mode::kPaint || !rounded) {
    PlaceImage(Resolve(bg.image.c_str(), bg.baseurl.c_str()), area, tile, repeat_x, repeat_y);
    return;
  }
  // Tiles are drawn square; what they put outside the rounded corners is put back afterwards.
  // The saved rows are the painter's scratch, not the page's: outside its arena.
  ArenaScope engine(LETHE_ARENA_NONE);
  RoundedCornerGuard corners(*target_, shape, Intersect(area, Clip()));
  ArenaScope page(engine.previous());
  PlaceImage(Resolve(bg.image.c_str(), bg.baseurl.c_str()), area, tile, repeat_x, repeat_y);
  corners.Restore();
}

void HtmlContainer::PlaceImage(const std::string& url, const LayoutRect& area,
                               const LayoutRect& tile, bool repeat_x, bool repeat_y) {
  // Page coordinates: the key of the placement in both passes.
  const PlacementKey key{url, area.x, area.y + scroll_y_, area.width, area.height,
                         tile.x, tile.y + scroll_y_, tile.width, tile.height};
  if (mode_ == Mode::kRecord) {
    if (placements_.count(key) != 0 ||
        images_->size() >= services_.limits.max_image_placement_count) {
      return;
    }
    const ImageRecord* record = Image(url);
    ArenaScope engine(LETHE_ARENA_NONE);  // the Document's list, not the DOM
    DocumentImage image;
    image.url = url;
    image.tile = tile;
    image.repeat_x = repeat_x;
    image.repeat_y = repeat_y;
    // What it covers: the whole area along a repeated axis, the tile's part of it otherwise.
    LayoutRect covered = Intersect(area, tile);
    if (repeat_x) covered.x = area.x, covered.width = area.width;
    if (repeat_y) covered.y = area.y, covered.height = area.height;
    image.rect = Intersect(area, covered);
    if (record != nullptr) {
      image.image_id = record->id;
      image.natural_width = record->header.width;
      image.natural_height = record->header.height;
      image.frame_count = record->header.frame_count;
    }
    images_->push_back(std::move(image));
    ArenaScope page(engine.previous());
    placements_.emplace(key, images_->size() - 1);
    return;
  }
  if (mode_ != Mode::kPaint) return;
  auto found = placements_.find(key);
  if (found == placements_.end()) return;  // past the placement cap
  PaintTiles((*images_)[found->second], area, tile);
}

void HtmlContainer::PaintTiles(DocumentImage& image, const LayoutRect& area, const LayoutRect& tile) {
  const LayoutRect clip = Intersect(Clip(), area);
  if (clip.width == 0 || clip.height == 0) return;
  // The first tile at or before the clip's corner along a repeated axis.
  int x0 = tile.x;
  int y0 = tile.y;
  if (image.repeat_x) x0 = clip.x - (((clip.x - tile.x) % tile.width) + tile.width) % tile.width;
  if (image.repeat_y) y0 = clip.y - (((clip.y - tile.y) % tile.height) + tile.height) % tile.height;
  const int x1 = image.repeat_x ? clip.x + clip.width : x0 + 1;
  const int y1 = image.repeat_y ? clip.y + clip.height : y0 + 1;
  ArenaScope engine(LETHE_ARENA_NONE);  // decodes and surfaces are the caches'
  for (int y = y0; y < y1; y += tile.height) {
    for (int x = x0; x < x1; x += tile.width) {
      painter_->PaintImage(image, {x, y, tile.width, tile.height}, clip);
    }
  }
}

void HtmlContainer::draw_list_marker(litehtml::uint_ptr hdc, const litehtml::list_marker& marker) {
  const LayoutRect box = RectOf(marker.pos);
  if (!marker.image.empty()) {
    PlaceImage(Resolve(marker.image.c_str(), marker.baseurl), box, box, false, false);
    return;
  }
  if (mode_ != Mode::kPaint) return;
  const uint32_t color = Argb(marker.color);
  switch (marker.marker_type) {
    case litehtml::list_style_type_square:
      FillBox(box, color);
      return;
    case litehtml::list_style_type_circle:
    case litehtml::list_style_type_disc: {
      // A disc (or ring) row by row: half-width sqrt(r^2 - dy^2), measured from the box centre.
      const double r = box.width / 2.0;
      for (int row = 0; row < box.height; ++row) {
        const double dy = row + 0.5 - box.height / 2.0;
        const int half = static_cast<int>(std::lround(std::sqrt(std::max(0.0, r * r - dy * dy))));
        const LayoutRect span{box.x + box.width / 2 - half, box.y + row, 2 * half, 1};
        if (marker.marker_type == litehtml::list_style_type_disc || row == 0 ||
            row + 1 == box.height) {
          FillBox(span, color);
        } else {
          FillBox({span.x, span.y, 1, 1}, color);
          FillBox({span.x + span.width - 1, span.y, 1, 1}, color);
        }
      }
      return;
    }
    default: {
      // Numbered styles: the index as a decimal number and a period, right-aligned on the box.
      const std::string text = std::to_string(marker.index) + ".";
      const int width = text_width(text.c_str(), marker.font);
      litehtml::position pos = marker.pos;
      pos.x = marker.pos.x + marker.pos.width - width;
      pos.width = width;
      draw_text(hdc, text.c_str(), marker.font, marker.color, pos);
      return;
    }
  }
}

// ---- boxes and clips --------------------------------------------------------------------------

LayoutRect HtmlContainer::Clip() const {
  LayoutRect clip{0, 0, target_ != nullptr ? static_cast<int>(target_->width()) : 0,
                  target_ != nullptr ? static_cast<int>(target_->height()) : 0};
  if (mode_ == Mode::kRecord) clip = {-(1 << 29), -(1 << 29), 1 << 30, 1 << 30};
  for (const LayoutRect& rect : clips_) clip = Intersect(clip, rect);
  return clip;
}

void HtmlContainer::FillBox(const LayoutRect& rect, uint32_t color) {
  if (mode_ != Mode::kPaint || (color >> 24) == 0) return;
  FillRect(*target_, rect, color, Clip());
}

void HtmlContainer::draw_borders(litehtml::uint_ptr, const litehtml::borders& borders,
                                 const litehtml::position& draw_pos, bool) {
  if (mode_ != Mode::kPaint) return;
  const BoxBorders box{SideOf(borders.left), SideOf(borders.top), SideOf(borders.right),
                       SideOf(borders.bottom), RadiiOf(borders.radius)};
  if (!box.left.visible() && !box.top.visible() && !box.right.visible() && !box.bottom.visible()) {
    return;
  }
  PaintBorders(*target_, RectOf(draw_pos), box, Clip());
}

void HtmlContainer::set_clip(const litehtml::position& pos, const litehtml::border_radiuses& radius,
                             bool valid_x, bool valid_y) {
  LayoutRect clip = RectOf(pos);
  if (!valid_x) clip.x = -(1 << 29), clip.width = 1 << 30;
  if (!valid_y) clip.y = -(1 << 29), clip.height = 1 << 30;
  std::unique_ptr<RoundedClip> rounded;
  const RoundedBox shape(RectOf(pos), RadiiOf(radius));
  if (mode_ == Mode::kPaint && valid_x && valid_y && shape.radii().any()) {
    ArenaScope engine(LETHE_ARENA_NONE);  // painter scratch, not the page's DOM
    rounded = std::make_unique<RoundedClip>(*target_, shape, Intersect(clip, Clip()));
  }
  clips_.push_back(clip);
  rounded_clips_.push_back(std::move(rounded));
}

void HtmlContainer::del_clip() {
  if (clips_.empty()) return;
  if (rounded_clips_.back() != nullptr) {
    rounded_clips_.back()->guard.Restore();
    ArenaScope engine(LETHE_ARENA_NONE);
    rounded_clips_.back().reset();
  }
  rounded_clips_.pop_back();
  clips_.pop_back();
}

void HtmlContainer::get_client_rect(litehtml::position& client) const {
  client = litehtml::position(0, 0, services_.viewport_width, services_.viewport_height);
}

// ---- the document -----------------------------------------------------------------------------

void HtmlContainer::set_caption(const char* caption) { title_ = caption != nullptr ? caption : ""; }

void HtmlContainer::set_base_url(const char* base_url) {
  if (base_url != nullptr && *base_url != '\0') base_ = ResolveUrl(url_, base_url);
}

void HtmlContainer::import_css(litehtml::tstring& text, const litehtml::tstring& url,
                               litehtml::tstring& baseurl) {
  const std::string path = ResolveUrl(baseurl.empty() ? base_ : baseurl, url);
  const UrlKind kind = KindOf(path);
  std::string why;
  std::vector<uint8_t> bytes;
  ArenaScope engine(LETHE_ARENA_NONE);  // the file's bytes are read outside; the text goes in below
  if (kind == UrlKind::kRemote || kind == UrlKind::kData) {
    why = "not a local file";
  } else if (stylesheet_count_ >= services_.limits.max_stylesheet_count) {
    why = "more than " + std::to_string(services_.limits.max_stylesheet_count) + " stylesheets";
  } else if (!ReadWholeFile(path, &bytes)) {
    why = "cannot open";
  } else if (bytes.size() > services_.limits.max_stylesheet_bytes) {
    why = "larger than " + std::to_string(services_.limits.max_stylesheet_bytes) + " bytes";
  }
  ++stylesheet_count_;
  if (!why.empty()) {
    if (services_.log) services_.log(url_ + ": stylesheet " + path + ": " + why);
    return;
  }
  ArenaScope page(engine.previous());
  text.clear();
  AppendObliqueAsItalic(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                        &text);
  baseurl = path;  // url() in the stylesheet is relative to it
}

void HtmlContainer::link(const std::shared_ptr<litehtml::document>&, const litehtml::element::ptr&) {}
void HtmlContainer::on_anchor_click(const char*, const litehtml::element::ptr&) {}
void HtmlContainer::set_cursor(const char*) {}

std::shared_ptr<litehtml::element> HtmlContainer::create_element(
    const char*, const litehtml::string_map&, const std::shared_ptr<litehtml::document>&) {
  return nullptr;  // litehtml's own elements
}

void HtmlContainer::get_media_features(litehtml::media_features& media) const {
  if (before_styles_) std::exchange(before_styles_, nullptr)();
  media.type = litehtml::media_type_screen;
  media.width = media.device_width = services_.viewport_width;
  media.height = media.device_height = services_.viewport_height;
  media.color = 8;
  media.color_index = 0;
  media.monochrome = 0;
  media.resolution = 96;
}

void HtmlContainer::get_language(litehtml::tstring& language, litehtml::tstring& culture) const {
  language = "en";
  culture.clear();
}

}  // namespace lethe::internal
