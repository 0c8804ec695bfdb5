#include "html_bounds.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <unordered_map>
#include <vector>

#include "css_fixups.h"

namespace lethe::internal {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
bool IsAlpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

template <size_t N>
bool OneOf(std::string_view name, const std::array<std::string_view, N>& names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

constexpr std::array<std::string_view, 15> kVoid = {"area", "base", "br",    "col",   "embed",
                                                    "hr",   "img",  "input", "link",  "meta",
                                                    "param", "source", "track", "wbr", "keygen"};
// Elements whose content the tokenizer reads as text up to their end tag.
constexpr std::array<std::string_view, 8> kRawText = {"script",  "style",    "textarea", "title",
                                                      "xmp",     "noembed",  "noframes", "iframe"};
// Start tags that close an open <p> (the tree builder's "close a p element").
constexpr std::array<std::string_view, 24> kClosesP = {
    "address", "article", "aside", "blockquote", "div", "dl", "fieldset", "footer",
    "form",    "h1",      "h2",    "h3",         "h4",  "h5", "h6",       "header",
    "hr",      "main",    "nav",   "ol",         "p",   "pre", "table",   "ul"};

// An open element that start tag `name` closes, and the elements that bound the search (the
// tree builder's scopes): <li> closes an open <li> inside the same list, <td>/<th> each other
// inside the same row, and so on; a block start tag closes an open <p> in its block.
struct SiblingRule {
  std::string_view name;
  std::array<std::string_view, 2> matches;
  std::array<std::string_view, 4> boundaries;
};
constexpr std::array<SiblingRule, 7> kSiblingRules = {{
    {"li", {"li", "li"}, {"ul", "ol", "menu", "div"}},
    {"dt", {"dt", "dd"}, {"dl", "dl", "dl", "div"}},
    {"dd", {"dt", "dd"}, {"dl", "dl", "dl", "div"}},
    {"td", {"td", "th"}, {"tr", "table", "tbody", "thead"}},
    {"th", {"td", "th"}, {"tr", "table", "tbody", "thead"}},
    {"tr", {"tr", "tr"}, {"table", "tbody", "thead", "tfoot"}},
    {"option", {"option", "option"}, {"select", "datalist", "optgroup", "optgroup"}},
}};
// The tags of a table's own structure: dropped, with the table, inside a flattened table.
constexpr std::array<std::string_view, 10> kTableParts = {
    "table", "caption", "colgroup", "col", "thead", "tbody", "tfoot", "tr", "td", "th"};
constexpr std::array<std::string_view, 8> kPBoundaries = {"div", "li", "td", "th",
                                                          "blockquote", "body", "table", "button"};

// How many elements to pop from the top of `open` before `name` opens (0: none).
size_t ClosedBy(std::string_view name, const std::vector<std::string>& open) {
  for (const SiblingRule& rule : kSiblingRules) {
    if (rule.name != name) continue;
    for (size_t i = open.size(); i > 0; --i) {
      const std::string& element = open[i - 1];
      if (OneOf(element, rule.matches)) return open.size() - (i - 1);
      if (OneOf(element, rule.boundaries)) return 0;
    }
    return 0;
  }
  if (!OneOf(name, kClosesP)) return 0;
  for (size_t i = open.size(); i > 0; --i) {
    const std::string& element = open[i - 1];
    if (element == "p") return open.size() - (i - 1);
    if (OneOf(element, kPBoundaries)) return 0;
  }
  return 0;
}

std::string LowerName(std::string_view text, size_t* pos) {
  std::string name;
  while (*pos < text.size() && !IsSpace(text[*pos]) && text[*pos] != '/' && text[*pos] != '>') {
    name.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(text[*pos]))));
    ++*pos;
  }
  return name;
}

// The position just past the '>' ending a tag whose attributes start at `pos` (quotes honoured),
// or text.size(). *self_closing: the tag ends in "/>".
size_t TagEnd(std::string_view text, size_t pos, bool* self_closing) {
  char quote = 0;
  for (; pos < text.size(); ++pos) {
    char c = text[pos];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '>') {
      *self_closing = pos > 0 && text[pos - 1] == '/';
      return pos + 1;
    }
  }
  *self_closing = false;
  return text.size();
}

// Where "</name" starts (case-insensitive) at or after `pos`, or text.size().
size_t FindEndTag(std::string_view text, size_t pos, std::string_view name) {
  for (size_t at = text.find("</", pos); at != std::string_view::npos; at = text.find("</", at + 2)) {
    if (at + 2 + name.size() > text.size()) break;
    bool match = true;
    for (size_t i = 0; i < name.size() && match; ++i) {
      match = std::tolower(static_cast<unsigned char>(text[at + 2 + i])) == name[i];
    }
    if (match) return at;
  }
  return text.size();
}

class Bounder {
 public:
  Bounder(std::string_view html, const HtmlLimits& limits, HtmlCuts* cuts)
      : in_(html), limits_(limits), cuts_(*cuts) {
    out_.reserve(html.size());
  }

  std::string Run() {
    while (pos_ < in_.size()) {
      if (in_[pos_] == '<' && pos_ + 1 < in_.size()) {
        char next = in_[pos_ + 1];
        if (in_.compare(pos_, 4, "<!--") == 0) {
          Comment();
          continue;
        }
        if (next == '!' || next == '?') {
          Declaration();
          continue;
        }
        if (next == '/' && pos_ + 2 < in_.size() && IsAlpha(in_[pos_ + 2])) {
          EndTag();
          continue;
        }
        if (IsAlpha(next)) {
          StartTag();
          continue;
        }
      }
      Text();
    }
    return std::move(out_);
  }

 private:
  void Comment() {  // dropped: litehtml would keep an element per comment
    size_t end = in_.find("-->", pos_ + 4);
    pos_ = end == std::string_view::npos ? in_.size() : end + 3;
  }

  void Declaration() {
    size_t end = in_.find('>', pos_);
    end = end == std::string_view::npos ? in_.size() : end + 1;
    out_.append(in_.substr(pos_, end - pos_));
    pos_ = end;
  }

  void EndTag() {
    size_t start = pos_;
    size_t at = pos_ + 2;
    std::string name = LowerName(in_, &at);
    size_t end = in_.find('>', at);
    end = end == std::string_view::npos ? in_.size() : end + 1;
    pos_ = end;
    if (flattening_ > 0 && OneOf(name, kTableParts)) {
      if (name == "table") --flattening_;
      return;
    }
    auto open = std::find(open_.rbegin(), open_.rend(), name);
    if (open != open_.rend()) {
      open_.erase(std::next(open).base(), open_.end());
    } else if (auto dropped = dropped_.find(name); dropped != dropped_.end() && dropped->second > 0) {
      --dropped->second;  // the end tag of a start tag dropped for depth
      return;
    }
    out_.append(in_.substr(start, end - start));
  }

  void StartTag() {
    size_t start = pos_;
    size_t at = pos_ + 1;
    std::string name = LowerName(in_, &at);
    bool self_closing = false;
    size_t end = TagEnd(in_, at, &self_closing);
    pos_ = end;
    if (OneOf(name, kRawText)) {
      RawText(name, in_.substr(start, end - start));
      return;
    }
    if (Flattens(name)) return;
    if (OneOf(name, kVoid)) {
      AppendTag(in_.substr(start, end - start));
      return;
    }
    open_.resize(open_.size() - ClosedBy(name, open_));
    if (static_cast<int>(open_.size()) >= limits_.max_depth) {
      ++cuts_.dropped_start_tag_count;
      ++dropped_[name];
      return;
    }
    open_.push_back(name);
    cuts_.max_depth_seen = std::max(cuts_.max_depth_seen, static_cast<int>(open_.size()));
    if (name == "table") {
      cuts_.max_table_depth_seen = std::max(cuts_.max_table_depth_seen, OpenTables());
    }
    AppendTag(in_.substr(start, end - start));
  }

  // Whether start tag `name` is dropped as part of a flattened table (counting the one it starts).
  bool Flattens(const std::string& name) {
    const bool table = name == "table";
    if (flattening_ == 0 && !(table && OpenTables() >= limits_.max_table_depth)) return false;
    if (!OneOf(name, kTableParts)) return false;
    if (table) {
      ++flattening_;
      ++cuts_.flattened_table_count;
    }
    return true;
  }

  int OpenTables() const {
    return static_cast<int>(std::count(open_.begin(), open_.end(), "table"));
  }

  // A start tag, with `oblique` in its style attribute made `italic` (css_fixups.h).
  void AppendTag(std::string_view tag) { AppendTagObliqueAsItalic(tag, &out_); }

  // A raw-text element holds no elements, so it never deepens the tree past one level.
  void RawText(const std::string& name, std::string_view start_tag) {
    size_t close = FindEndTag(in_, pos_, name);
    std::string_view content = in_.substr(pos_, close - pos_);
    if (name == "style" && content.size() > limits_.max_stylesheet_bytes) {
      cuts_.cut_style_bytes += content.size() - limits_.max_stylesheet_bytes;
      content = content.substr(0, limits_.max_stylesheet_bytes);
    }
    out_.append(start_tag);
    if (name == "style") AppendObliqueAsItalic(content, &out_);
    else out_.append(content);
    size_t end = close;
    if (close < in_.size()) {
      end = in_.find('>', close);
      end = end == std::string_view::npos ? in_.size() : end + 1;
    }
    out_.append("</").append(name).append(">");
    pos_ = end;
  }

  void Text() {
    // One character at a time up to the next '<' (a lone '<' is text too).
    size_t end = in_.find('<', pos_ + 1);
    if (end == std::string_view::npos) end = in_.size();
    for (; pos_ < end; ++pos_) {
      char c = in_[pos_];
      bool starts_word = !IsSpace(c) && (pos_ == 0 || IsSpace(in_[pos_ - 1]) || in_[pos_ - 1] == '>');
      if (starts_word) {
        if (word_count_ >= limits_.max_words) {
          ++cuts_.dropped_word_count;
          dropping_word_ = true;
        } else {
          ++word_count_;
          dropping_word_ = false;
        }
      }
      if (IsSpace(c)) dropping_word_ = false;
      if (!dropping_word_ && (word_count_ < limits_.max_words || !IsSpace(c))) out_.push_back(c);
    }
  }

  std::string_view in_;
  const HtmlLimits& limits_;
  HtmlCuts& cuts_;
  std::string out_;
  size_t pos_ = 0;
  std::vector<std::string> open_;  // at most max_depth names
  std::unordered_map<std::string, size_t> dropped_;
  size_t flattening_ = 0;  // flattened <table>s open: their structure tags are dropped
  size_t word_count_ = 0;
  bool dropping_word_ = false;
};

}  // namespace

std::string HtmlCuts::Describe(const HtmlLimits& limits) const {
  std::string text;
  auto add = [&text](const std::string& part) { text += (text.empty() ? "" : "; ") + part; };
  if (dropped_start_tag_count > 0) {
    add("nesting deeper than " + std::to_string(limits.max_depth) + ": " +
        std::to_string(dropped_start_tag_count) + " start tags dropped");
  }
  if (dropped_word_count > 0) {
    add("more than " + std::to_string(limits.max_words) + " words: " +
        std::to_string(dropped_word_count) + " dropped");
  }
  if (flattened_table_count > 0) {
    add("tables nested deeper than " + std::to_string(limits.max_table_depth) + ": " +
        std::to_string(flattened_table_count) + " flattened");
  }
  if (cut_style_bytes > 0) {
    add("a <style> longer than " + std::to_string(limits.max_stylesheet_bytes) + " bytes: " +
        std::to_string(cut_style_bytes) + " bytes cut");
  }
  return text;
}

std::string BoundHtml(std::string_view html, const HtmlLimits& limits, HtmlCuts* cuts) {
  *cuts = HtmlCuts{};
  return Bounder(html, limits, cuts).Run();
}

}  // namespace lethe::internal
