// engine/url.h — the URLs a page names: resolved against the document's base (the file it came
// from, or its <base href>), and the schemes the engine can read: plain paths, file: and data:
// (base64 or percent-encoded). Every other scheme (http:, https:, ...) is remote: the engine has no
// network, so such an image is broken at once, never waited for.
// Pure functions; any thread.
#ifndef LETHE_ENGINE_URL_H_
#define LETHE_ENGINE_URL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lethe::internal {

enum class UrlKind : uint8_t { kPath, kFile, kData, kRemote };

// kPath for a string without a scheme; a one-letter "scheme" is not one (no drive letters here).
UrlKind KindOf(std::string_view url);

// `url` resolved against `base` (a path or file: URL of a document or a directory ending in '/'):
// absolute paths, file: and data: and remote URLs stay as they are (file: becomes its path);
// relative paths are joined to the base's directory and normalized ("a/../b" -> "b").
std::string ResolveUrl(std::string_view base, std::string_view url);

// The bytes of a data: URL ("data:image/png;base64,...."); false with *error when it is not one,
// or its base64 is malformed, or it decodes to more than `max_bytes`.
bool DecodeDataUrl(std::string_view url, size_t max_bytes, std::vector<uint8_t>* bytes,
                   std::string* error);

}  // namespace lethe::internal

#endif  // LETHE_ENGINE_URL_H_
