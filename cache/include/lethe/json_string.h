// lethe/json_string.h — text as a JSON string literal, for the few places that write JSON by hand
// (memory reports, control-channel replies, tool output) where a JSON library would be overkill.
//
// Any thread. Escapes the quote, the backslash and every control character (U+0000..U+001F);
// other bytes pass through unchanged, so UTF-8 stays UTF-8 (the input is assumed to be UTF-8).
#ifndef LETHE_JSON_STRING_H_
#define LETHE_JSON_STRING_H_

#include <string>
#include <string_view>

namespace lethe {

// Appends `text` to `out` as a JSON string literal, quotes included.
void AppendJsonString(std::string& out, std::string_view text);

// `text` as a JSON string literal, quotes included.
std::string JsonString(std::string_view text);

}  // namespace lethe

#endif  // LETHE_JSON_STRING_H_
