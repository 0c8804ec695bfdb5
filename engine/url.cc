#include "url.h"

#include <cctype>
#include <filesystem>

namespace lethe::internal {

namespace {

// The scheme's length (before ':'), or 0 when `url` has none.
size_t SchemeLength(std::string_view url) {
  size_t i = 0;
  while (i < url.size() && (std::isalnum(static_cast<unsigned char>(url[i])) || url[i] == '+' ||
                            url[i] == '-' || url[i] == '.')) {
    ++i;
  }
  if (i < 2 || i >= url.size() || url[i] != ':') return 0;
  return std::isalpha(static_cast<unsigned char>(url[0])) ? i : 0;
}

bool SchemeIs(std::string_view url, std::string_view scheme) {
  if (SchemeLength(url) != scheme.size()) return false;
  for (size_t i = 0; i < scheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(url[i])) != scheme[i]) return false;
  }
  return true;
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

bool DecodeBase64(std::string_view text, size_t max_bytes, std::vector<uint8_t>* bytes) {
  uint32_t bits = 0;
  int bit_count = 0;
  bool padding = false;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    int value = Base64Value(c);
    if (value < 0 || padding) return false;
    bits = (bits << 6) | static_cast<uint32_t>(value);
    bit_count += 6;
    if (bit_count >= 8) {
      bit_count -= 8;
      if (bytes->size() >= max_bytes) return false;
      bytes->push_back(static_cast<uint8_t>(bits >> bit_count));
    }
  }
  return true;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

bool DecodePercent(std::string_view text, size_t max_bytes, std::vector<uint8_t>* bytes) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (bytes->size() >= max_bytes) return false;
    if (text[i] == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 &&
        HexValue(text[i + 2]) >= 0) {
      bytes->push_back(static_cast<uint8_t>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2])));
      i += 2;
    } else {
      bytes->push_back(static_cast<uint8_t>(text[i]));
    }
  }
  return true;
}

}  // namespace

UrlKind KindOf(std::string_view url) {
  if (SchemeLength(url) == 0) return UrlKind::kPath;
  if (SchemeIs(url, "file")) return UrlKind::kFile;
  if (SchemeIs(url, "data")) return UrlKind::kData;
  return UrlKind::kRemote;
}

std::string ResolveUrl(std::string_view base, std::string_view url) {
  while (!url.empty() && std::isspace(static_cast<unsigned char>(url.front()))) url.remove_prefix(1);
  while (!url.empty() && std::isspace(static_cast<unsigned char>(url.back()))) url.remove_suffix(1);
  switch (KindOf(url)) {
    case UrlKind::kData:
    case UrlKind::kRemote:
      return std::string(url);
    case UrlKind::kFile: {
      std::string_view path = url.substr(5);
      // file:///a/b and file:/a/b both name /a/b (no hosts here).
      if (path.rfind("//", 0) == 0) path.remove_prefix(2);
      return std::filesystem::path(path).lexically_normal().string();
    }
    case UrlKind::kPath:
      break;
  }
  if (!url.empty() && url.front() == '/') return std::filesystem::path(url).lexically_normal().string();
  std::string base_path(base);
  if (KindOf(base) == UrlKind::kFile) base_path = ResolveUrl("", base);
  std::filesystem::path directory = std::filesystem::path(base_path);
  if (!base_path.empty() && base_path.back() != '/') directory = directory.parent_path();
  std::filesystem::path joined = directory / std::filesystem::path(url);
  return joined.lexically_normal().string();
}

bool DecodeDataUrl(std::string_view url, size_t max_bytes, std::vector<uint8_t>* bytes,
                   std::string* error) {
  bytes->clear();
  if (KindOf(url) != UrlKind::kData) {
    *error = "not a data: URL";
    return false;
  }
  size_t comma = url.find(',');
  if (comma == std::string_view::npos) {
    *error = "data: URL without ','";
    return false;
  }
  std::string_view header = url.substr(5, comma - 5);
  std::string_view payload = url.substr(comma + 1);
  bool base64 = header.size() >= 7 && header.substr(header.size() - 7) == ";base64";
  bool ok = base64 ? DecodeBase64(payload, max_bytes, bytes) : DecodePercent(payload, max_bytes, bytes);
  if (!ok) {
    *error = bytes->size() >= max_bytes ? "data: URL larger than " + std::to_string(max_bytes) +
                                              " bytes"
                                        : "data: URL: malformed base64";
    bytes->clear();
    return false;
  }
  return true;
}

}  // namespace lethe::internal
