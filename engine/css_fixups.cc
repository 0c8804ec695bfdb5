#include "css_fixups.h"

#include <algorithm>
#include <cctype>

namespace lethe::internal {
namespace {

bool IsIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

bool EqualsIgnoringCase(std::string_view text, size_t at, std::string_view word) {
  if (text.size() - at < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[at + i])) != word[i]) return false;
  }
  return true;
}

// The end of an angle ("10deg", "-0.5turn") that starts after spaces at `at`, or `at` if none.
size_t SkipAngle(std::string_view css, size_t at) {
  size_t pos = at;
  while (pos < css.size() && IsSpace(css[pos])) ++pos;
  size_t number = pos;
  if (pos < css.size() && (css[pos] == '-' || css[pos] == '+')) ++pos;
  size_t digits = pos;
  while (pos < css.size() && (std::isdigit(static_cast<unsigned char>(css[pos])) || css[pos] == '.')) {
    ++pos;
  }
  if (pos == digits || number == at) return at;  // no number, or no space before it
  for (std::string_view unit : {"deg", "grad", "rad", "turn"}) {
    if (EqualsIgnoringCase(css, pos, unit) &&
        (pos + unit.size() == css.size() || !IsIdentifierChar(css[pos + unit.size()]))) {
      return pos + unit.size();
    }
  }
  return at;
}

// Whether `text` holds "oblique" in any case: the cheap test before a rewrite.
bool ContainsOblique(std::string_view text) {
  for (size_t pos = text.find_first_of("oO"); pos != std::string_view::npos;
       pos = text.find_first_of("oO", pos + 1)) {
    if (EqualsIgnoringCase(text, pos, "oblique")) return true;
  }
  return false;
}

}  // namespace

void AppendObliqueAsItalic(std::string_view css, std::string* out) {
  constexpr std::string_view kOblique = "oblique";
  if (!ContainsOblique(css)) {
    out->append(css);
    return;
  }
  char quote = 0;
  for (size_t pos = 0; pos < css.size();) {
    const char c = css[pos];
    if (quote != 0) {
      if (c == '\\' && pos + 1 < css.size()) *out += css[pos++];
      else if (c == quote) quote = 0;
      *out += css[pos++];
    } else if (c == '"' || c == '\'') {
      quote = c;
      *out += css[pos++];
    } else if (EqualsIgnoringCase(css, pos, kOblique) &&
               (pos == 0 || !IsIdentifierChar(css[pos - 1])) &&
               (pos + kOblique.size() == css.size() || !IsIdentifierChar(css[pos + kOblique.size()]))) {
      *out += "italic";
      pos = SkipAngle(css, pos + kOblique.size());
    } else {
      *out += css[pos++];
    }
  }
}

void AppendTagObliqueAsItalic(std::string_view tag, std::string* out) {
  if (!ContainsOblique(tag)) {
    out->append(tag);
    return;
  }
  // Walk the attributes: NAME, optional = and a quoted or bare value.
  size_t pos = 1;
  while (pos < tag.size() && !IsSpace(tag[pos]) && tag[pos] != '>' && tag[pos] != '/') ++pos;
  while (pos < tag.size()) {
    while (pos < tag.size() && (IsSpace(tag[pos]) || tag[pos] == '/')) ++pos;
    const size_t name = pos;
    while (pos < tag.size() && !IsSpace(tag[pos]) && tag[pos] != '=' && tag[pos] != '>' &&
           tag[pos] != '/') {
      ++pos;
    }
    if (pos == name) break;  // '>' or the end
    const bool is_style = pos - name == 5 && EqualsIgnoringCase(tag, name, "style");
    while (pos < tag.size() && IsSpace(tag[pos])) ++pos;
    if (pos >= tag.size() || tag[pos] != '=') continue;  // an attribute without a value
    ++pos;
    while (pos < tag.size() && IsSpace(tag[pos])) ++pos;
    size_t value = pos;
    size_t value_end;
    if (pos < tag.size() && (tag[pos] == '"' || tag[pos] == '\'')) {
      const char quote = tag[pos];
      value = pos + 1;
      value_end = std::min(tag.find(quote, value), tag.size());
      pos = value_end + 1;
    } else {
      while (pos < tag.size() && !IsSpace(tag[pos]) && tag[pos] != '>') ++pos;
      value_end = pos;
    }
    if (is_style) {
      out->append(tag.substr(0, value));
      AppendObliqueAsItalic(tag.substr(value, value_end - value), out);
      out->append(tag.substr(value_end));
      return;
    }
  }
  out->append(tag);
}

}  // namespace lethe::internal
