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

// Appends `css` to *out with every `oblique [ANGLE]` keyword as `italic` (as is, with no copy
// made, when it holds no "oblique").
void AppendObliqueAsItalic(std::string_view css, std::string* out);

// Appends an HTML start tag (from '<' to '>') to *out, its style attribute's value passed through
// AppendObliqueAsItalic; the tag's other attributes are unchanged.
void AppendTagObliqueAsItalic(std::string_view tag, std::string* out);

}  // namespace lethe::internal

#endif  // LETHE_ENGINE_CSS_FIXUPS_H_
