// lethe/page_description.h — the page format of Lethe's browser-like model: a tall layout of
// images (PNG/JPEG/GIF, by URL or path) and text runs, read from JSON.
//
//   {"title": "News", "width": 1024, "height": 4100, "background": "#ffffff",
//    "items": [{"type": "image", "src": "img/a.png", "x": 24, "y": 80, "width": 640, "height": 480},
//              {"type": "text", "text": "Hello", "x": 24, "y": 600, "width": 976, "size": 16,
//               "color": "#303030", "family": "serif", "bold": true}]}
//
// A text run's "family" is one of CSS's generic families ("sans-serif", the default, "serif",
// "monospace"); "bold" picks the bold face of that family.
//
// Validation is strict and every error names the field ("items[3].width: must be an integer in
// 1..16384"), because a page that half-loads hides mistakes. Image sources without a scheme are
// paths relative to the page file. Pure functions; any thread.
#ifndef LETHE_PAGE_DESCRIPTION_H_
#define LETHE_PAGE_DESCRIPTION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace lethe {

struct LayoutRect {
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
  int bottom() const { return y + height; }
  bool Intersects(const LayoutRect& other) const {
    return x < other.x + other.width && other.x < x + width && y < other.y + other.height &&
           other.y < y + height;
  }
};

struct PageImageItem {
  std::string src;  // absolute path, or a URL with a scheme (http:, https:, file:, data:)
  LayoutRect rect;
};

enum class FontFamily : uint8_t { kSansSerif, kSerif, kMonospace };
inline constexpr int kFontFamilyCount = 3;
// "sans-serif", "serif", "monospace".
const char* FontFamilyName(FontFamily family);
std::optional<FontFamily> ParseFontFamily(const std::string& name);

struct PageTextItem {
  std::string text;
  LayoutRect rect;    // height: one line (size * 1.25 px); the engine's layout sets the wrapped height
  int size = 16;      // pixels per em
  uint32_t color = 0xff000000;  // 0xAARRGGBB
  FontFamily family = FontFamily::kSansSerif;
  bool bold = false;
};

using PageItem = std::variant<PageImageItem, PageTextItem>;

struct PageDescription {
  std::string title;
  int width = 1024;
  int height = 0;
  uint32_t background = 0xffffffff;
  std::vector<PageItem> items;
};

struct PageError {
  std::string message;  // "pages/a.json: items[2].src: missing"
};

// Parses `json`. `base_directory` resolves relative image paths; `name` prefixes errors.
std::variant<PageDescription, PageError> ParsePageDescription(const std::string& json,
                                                              const std::string& base_directory,
                                                              const std::string& name);
// Reads and parses the file at `path`.
std::variant<PageDescription, PageError> LoadPageDescription(const std::string& path);

// A page made from a list of image files (for `--pages DIR` given a directory of images): images
// stacked in a column at most `page_width` wide, scaled down to fit, with a caption each.
// Image sizes are read by the caller (widths/heights parallel to `paths`).
PageDescription PageFromImages(const std::vector<std::string>& paths,
                               const std::vector<std::pair<int, int>>& sizes, int page_width);

// "#rrggbb" or "#aarrggbb" to 0xAARRGGBB.
std::optional<uint32_t> ParseColor(const std::string& text);

}  // namespace lethe

#endif  // LETHE_PAGE_DESCRIPTION_H_
