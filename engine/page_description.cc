#include "lethe/page_description.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace lethe {

namespace {

using Json = nlohmann::json;

constexpr int kMaxPageWidth = 16384;
constexpr int kMaxPageHeight = 1 << 20;  // a very long page, but not an overflow

// Collects the first error; later checks are skipped once one failed.
class Checker {
 public:
  explicit Checker(std::string name) : name_(std::move(name)) {}
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  void Fail(const std::string& field, const std::string& problem) {
    if (ok()) error_ = name_ + ": " + field + ": " + problem;
  }

  // An integer field in [low, high]; `required` decides whether absence is an error.
  int Int(const Json& object, const std::string& prefix, const char* key, int low, int high,
          bool required, int fallback) {
    auto found = object.find(key);
    if (found == object.end()) {
      if (required) Fail(prefix + key, "missing");
      return fallback;
    }
    if (!found->is_number_integer() || found->get<int64_t>() < low || found->get<int64_t>() > high) {
      Fail(prefix + key, "must be an integer in " + std::to_string(low) + ".." + std::to_string(high));
      return fallback;
    }
    return found->get<int>();
  }

  std::string String(const Json& object, const std::string& prefix, const char* key, bool required) {
    auto found = object.find(key);
    if (found == object.end()) {
      if (required) Fail(prefix + key, "missing");
      return {};
    }
    if (!found->is_string()) {
      Fail(prefix + key, "must be a string");
      return {};
    }
    return found->get<std::string>();
  }

  uint32_t Color(const Json& object, const std::string& prefix, const char* key, uint32_t fallback) {
    if (!object.contains(key)) return fallback;
    std::string text = String(object, prefix, key, true);
    std::optional<uint32_t> color = ParseColor(text);
    if (!color) Fail(prefix + key, "must be a colour like #rrggbb or #aarrggbb, not '" + text + "'");
    return color.value_or(fallback);
  }

  FontFamily Family(const Json& object, const std::string& prefix, const char* key) {
    if (!object.contains(key)) return FontFamily::kSansSerif;
    std::string name = String(object, prefix, key, true);
    std::optional<FontFamily> family = ParseFontFamily(name);
    if (!family && ok()) {
      Fail(prefix + key, "must be \"sans-serif\", \"serif\" or \"monospace\", not \"" + name + "\"");
    }
    return family.value_or(FontFamily::kSansSerif);
  }

  bool Bool(const Json& object, const std::string& prefix, const char* key, bool fallback) {
    auto found = object.find(key);
    if (found == object.end()) return fallback;
    if (!found->is_boolean()) {
      Fail(prefix + key, "must be true or false");
      return fallback;
    }
    return found->get<bool>();
  }

 private:
  std::string name_;
  std::string error_;
};

bool HasScheme(const std::string& src) {
  for (const char* scheme : {"http:", "https:", "file:", "data:"})
    if (src.rfind(scheme, 0) == 0) return true;
  return false;
}

std::string ResolveSource(const std::string& src, const std::string& base_directory) {
  if (HasScheme(src) || src.empty() || src[0] == '/') return src;
  return (std::filesystem::path(base_directory) / src).lexically_normal().string();
}

void ParseItem(const Json& item, size_t index, const std::string& base_directory,
               const PageDescription& page, Checker& check, std::vector<PageItem>& items) {
  const std::string prefix = "items[" + std::to_string(index) + "].";
  if (!item.is_object()) {
    check.Fail("items[" + std::to_string(index) + "]", "must be an object");
    return;
  }
  std::string type = check.String(item, prefix, "type", true);
  LayoutRect rect;
  rect.x = check.Int(item, prefix, "x", -kMaxPageWidth, kMaxPageWidth, true, 0);
  rect.y = check.Int(item, prefix, "y", 0, kMaxPageHeight, true, 0);
  rect.width = check.Int(item, prefix, "width", 1, kMaxPageWidth, true, 1);
  if (type == "image") {
    rect.height = check.Int(item, prefix, "height", 1, kMaxPageHeight, true, 1);
    std::string src = check.String(item, prefix, "src", true);
    if (check.ok() && src.empty()) check.Fail(prefix + "src", "must not be empty");
    items.push_back(PageImageItem{ResolveSource(src, base_directory), rect});
  } else if (type == "text") {
    PageTextItem text;
    text.text = check.String(item, prefix, "text", true);
    text.size = check.Int(item, prefix, "size", 4, 512, false, 16);
    text.color = check.Color(item, prefix, "color", 0xff000000);
    text.family = check.Family(item, prefix, "family");
    text.bold = check.Bool(item, prefix, "bold", false);
    rect.height = text.size * 5 / 4;
    text.rect = rect;
    items.push_back(std::move(text));
  } else if (check.ok()) {
    check.Fail(prefix + "type", "must be \"image\" or \"text\", not \"" + type + "\"");
  }
  if (check.ok() && rect.y >= page.height) {
    check.Fail(prefix + "y", "is below the page's height " + std::to_string(page.height));
  }
}

}  // namespace

const char* FontFamilyName(FontFamily family) {
  switch (family) {
    case FontFamily::kSansSerif: return "sans-serif";
    case FontFamily::kSerif: return "serif";
    case FontFamily::kMonospace: return "monospace";
  }
  return "sans-serif";
}

std::optional<FontFamily> ParseFontFamily(const std::string& name) {
  for (FontFamily family : {FontFamily::kSansSerif, FontFamily::kSerif, FontFamily::kMonospace}) {
    if (name == FontFamilyName(family)) return family;
  }
  return std::nullopt;
}

std::optional<uint32_t> ParseColor(const std::string& text) {
  if ((text.size() != 7 && text.size() != 9) || text[0] != '#') return std::nullopt;
  uint32_t value = 0;
  for (size_t i = 1; i < text.size(); ++i) {
    char c = text[i];
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (digit < 0) return std::nullopt;
    value = value << 4 | static_cast<uint32_t>(digit);
  }
  return text.size() == 7 ? 0xff000000u | value : value;
}

std::variant<PageDescription, PageError> ParsePageDescription(const std::string& json,
                                                              const std::string& base_directory,
                                                              const std::string& name) {
  Json document = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return PageError{name + ": not valid JSON"};
  if (!document.is_object()) return PageError{name + ": the page must be a JSON object"};
  Checker check(name);
  PageDescription page;
  page.title = check.String(document, "", "title", false);
  page.width = check.Int(document, "", "width", 1, kMaxPageWidth, false, 1024);
  page.height = check.Int(document, "", "height", 1, kMaxPageHeight, true, 1);
  page.background = check.Color(document, "", "background", 0xffffffff);
  auto items = document.find("items");
  if (items == document.end()) check.Fail("items", "missing");
  else if (!items->is_array()) check.Fail("items", "must be an array");
  for (size_t i = 0; check.ok() && i < items->size(); ++i) {
    ParseItem((*items)[i], i, base_directory, page, check, page.items);
  }
  if (!check.ok()) return PageError{check.error()};
  return page;
}

std::variant<PageDescription, PageError> LoadPageDescription(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return PageError{path + ": cannot open"};
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) return PageError{path + ": read error"};
  return ParsePageDescription(text.str(), std::filesystem::path(path).parent_path().string(), path);
}

PageDescription PageFromImages(const std::vector<std::string>& paths,
                               const std::vector<std::pair<int, int>>& sizes, int page_width) {
  constexpr int kMargin = 24;
  constexpr int kCaptionSize = 14;
  PageDescription page;
  page.title = "Images";
  page.width = page_width;
  int y = kMargin;
  for (size_t i = 0; i < paths.size() && i < sizes.size(); ++i) {
    auto [natural_width, natural_height] = sizes[i];
    if (natural_width <= 0 || natural_height <= 0) continue;
    int width = std::min(natural_width, page_width - 2 * kMargin);
    int height = std::max(1, static_cast<int>(int64_t{natural_height} * width / natural_width));
    page.items.push_back(PageTextItem{std::filesystem::path(paths[i]).filename().string(),
                                      {kMargin, y, page_width - 2 * kMargin, kCaptionSize * 5 / 4},
                                      kCaptionSize, 0xff404040});
    y += kCaptionSize * 2;
    page.items.push_back(PageImageItem{paths[i], {kMargin, y, width, height}});
    y += height + kMargin;
  }
  page.height = y;
  return page;
}

}  // namespace lethe
