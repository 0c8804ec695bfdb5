// site_text.h — the sample site's prose: titles, captions and paragraphs from a vocabulary of
// common English words and made-up words (syllables), so pages share their short words, as real
// text does, and each has a tail of its own (which the font's shaped-word cache sees). Pure
// functions of their Random; any thread.
#ifndef LETHE_TOOLS_SAMPLE_SITE_SITE_TEXT_H_
#define LETHE_TOOLS_SAMPLE_SITE_SITE_TEXT_H_

#include <string>

#include "random.h"

namespace lethe::sample_site {

// A sentence of `word_count` words (>= 1), capitalised, ending with a full stop.
std::string Sentence(Random& random, int word_count);
// Whole sentences, at most `max_chars` characters in all (at least one short sentence).
std::string Paragraph(Random& random, int max_chars);
// The estimated height in pixels of `text` wrapped at `width` pixels at `size` px a line (the
// engine wraps at word boundaries; this errs on the tall side so that items never overlap).
int TextHeight(const std::string& text, int width, int size);

}  // namespace lethe::sample_site

#endif  // LETHE_TOOLS_SAMPLE_SITE_SITE_TEXT_H_
