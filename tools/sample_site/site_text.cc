#include "site_text.h"

#include <algorithm>
#include <cctype>
#include <iterator>

namespace lethe::sample_site {

namespace {

const char* const kCommonWords[] = {
    "the", "a", "of", "and", "to", "in", "is", "was", "for", "on", "with", "as", "at", "by", "it",
    "from", "that", "this", "when", "while", "again", "after", "every", "each", "over", "under",
    "memory", "surface", "picture", "window", "page", "cache", "frame", "timer", "history", "light",
    "river", "valley", "morning", "evening", "city", "road", "mountain", "garden", "market", "season"};

const char* const kSyllables[] = {"ka", "lo", "mir", "ten", "sa", "vor", "el", "ri", "dun", "po",
                                  "an", "bel", "ce", "dra", "fi", "gan", "ho", "is", "jun", "ku"};

// A made-up word of two to four syllables.
std::string MadeUpWord(Random& random) {
  std::string word;
  const int syllables = random.Range(2, 4);
  for (int i = 0; i < syllables; ++i) word += kSyllables[random.Next() % std::size(kSyllables)];
  return word;
}

std::string Word(Random& random) {
  if (random.Range(0, 9) < 7) return kCommonWords[random.Next() % std::size(kCommonWords)];
  return MadeUpWord(random);
}

}  // namespace

std::string Sentence(Random& random, int word_count) {
  std::string text;
  for (int i = 0; i < word_count; ++i) {
    if (i > 0) text += ' ';
    text += Word(random);
  }
  text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  return text + ".";
}

std::string Paragraph(Random& random, int max_chars) {
  std::string text = Sentence(random, random.Range(3, 6));
  for (;;) {
    std::string next = Sentence(random, random.Range(6, 16));
    if (text.size() + 1 + next.size() > static_cast<size_t>(max_chars)) return text;
    text += ' ' + next;
  }
}

int TextHeight(const std::string& text, int width, int size) {
  // Glyphs average about 0.55 em across; a wrapped line also loses up to one long word.
  const int chars_per_line = std::max(1, width * 100 / (size * 55) - 14);
  const int lines = (static_cast<int>(text.size()) + chars_per_line - 1) / chars_per_line;
  return std::max(1, lines) * size * 5 / 4 + size / 2;
}

}  // namespace lethe::sample_site
