// engine/css_fixups.h — CSS text made fit for litehtml 0.6 before it parses it.
//
// litehtml 0.6 knows two font styles, normal and italic: `font-style: oblique` (and `oblique` in
// the `font` shorthand) is an unknown value to it, and the text is drawn upright. CSS's font
// matching falls back from oblique to an italic face when the family has no oblique one (CSS
// Fonts 4, font-style matching), which is every family the engine has; so `oblique`, with its
// optional angle, is rewritten as `italic` in the page's stylesheets (<style>, style attributes,
// imported files). Quoted strings and longer identifiers (`obliques`, `-oblique`) are left alone.
// Pure functions; any thread.
#ifndef LETHE_ENGINE_CSS_FIXUPS_H_
#define LETHE_ENGINE_CSS_FIXUPS_H_

#include <string>
#include <string_view>

namespace lethe::internal {

// Whether `text` holds "oblique" in any case: the cheap test before a rewrite.
bool ContainsOblique(std::string_view text);

// `css` with every `oblique [ANGLE]` keyword as `italic`.
std::string ObliqueAsItalic(std::string_view css);

// An HTML start tag (from '<' to '>') whose style attribute's value has had ObliqueAsItalic
// applied; the tag's other attributes are unchanged.
std::string ObliqueAsItalicInStyleAttribute(std::string_view tag);

}  // namespace lethe::internal

#endif  // LETHE_ENGINE_CSS_FIXUPS_H_
