// LETHE_OPTIONS parsing (see options.h). Runs inside the first malloc: no allocation, no stdio.
#include "options.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

extern char** environ;

namespace lethe::internal {

constinit Options g_options{};

namespace {

void Complain(const char* text, size_t length) {
  static const char kPrefix[] = "lethe: LETHE_OPTIONS: ignoring '";
  ssize_t ignored = write(STDERR_FILENO, kPrefix, sizeof(kPrefix) - 1);
  ignored = write(STDERR_FILENO, text, length);
  ignored = write(STDERR_FILENO, "'\n", 2);
  (void)ignored;
}

bool ParseNumber(const char* text, size_t length, uint64_t* value) {
  if (length == 0 || length > 18) return false;
  uint64_t result = 0;
  for (size_t i = 0; i < length; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    result = result * 10 + static_cast<uint64_t>(text[i] - '0');
  }
  *value = result;
  return true;
}

bool KeyIs(const char* key, size_t length, const char* name) {
  return std::strlen(name) == length && std::memcmp(key, name, length) == 0;
}

// One "key:value" item.
bool ApplyItem(const char* item, size_t length, Options* options) {
  const char* colon = static_cast<const char*>(std::memchr(item, ':', length));
  if (colon == nullptr) return false;
  auto key_length = static_cast<size_t>(colon - item);
  uint64_t value = 0;
  if (!ParseNumber(colon + 1, length - key_length - 1, &value)) return false;
  // decay_ms: at most 2^32 ms (49 days), so that its nanoseconds times the longest adapted decay
  // (decay_adaptation.h) stay far from overflowing.
  if (KeyIs(item, key_length, "decay_ms") && value <= (uint64_t{1} << 32)) {
    options->decay_ms = value;
  } else if (KeyIs(item, key_length, "decay_thread") && value <= 1) {
    options->decay_thread = value != 0;
  } else if (KeyIs(item, key_length, "dirty_percent") && value <= 100) {
    options->dirty_percent = static_cast<uint32_t>(value);
  } else if (KeyIs(item, key_length, "oom_reserve_kb") && value <= (uint64_t{1} << 32)) {
    options->oom_reserve_kb = value;
  } else if (KeyIs(item, key_length, "huge_cache_kb") && value <= (uint64_t{1} << 32)) {
    options->huge_cache_kb = value;
  } else if (KeyIs(item, key_length, "tcache") && value <= 1) {
    options->tcache = value != 0;
  } else if (KeyIs(item, key_length, "arenas") && value >= 1 && value <= kMaxArenas) {
    options->arenas = static_cast<unsigned>(value);
  } else if (KeyIs(item, key_length, "stats_print") && value <= 1) {
    options->stats_print = value != 0;
  } else if (KeyIs(item, key_length, "slop") && value <= 1) {
    options->slop = value != 0;
  } else {
    return false;
  }
  return true;
}

}  // namespace

bool ParseOptions(const char* text, Options* options) {
  if (text == nullptr) return true;
  bool all_good = true;
  while (*text != '\0') {
    const char* end = std::strchr(text, ',');
    size_t length = end == nullptr ? std::strlen(text) : static_cast<size_t>(end - text);
    if (length > 0 && !ApplyItem(text, length, options)) {
      Complain(text, length);
      all_good = false;
    }
    text += length;
    if (*text == ',') ++text;
  }
  return all_good;
}

// Before libc has set up environ (a malloc from the dynamic loader), the initial environment is
// read from /proc/self/environ into a stack buffer instead.
namespace {
void LoadFromProc() {
  int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char buffer[16384];
  size_t length = 0;
  ssize_t got;
  while (length < sizeof(buffer) - 1 &&
         (got = read(fd, buffer + length, sizeof(buffer) - 1 - length)) > 0) {
    length += static_cast<size_t>(got);
  }
  close(fd);
  buffer[length] = '\0';
  static const char kName[] = "LETHE_OPTIONS=";
  for (size_t at = 0; at < length; at += std::strlen(buffer + at) + 1) {
    if (std::strncmp(buffer + at, kName, sizeof(kName) - 1) == 0) {
      ParseOptions(buffer + at + sizeof(kName) - 1, &g_options);
      return;
    }
  }
}
}  // namespace

void LoadOptionsFromEnvironment() {
  if (environ == nullptr) {
    LoadFromProc();
    return;
  }
  static const char kName[] = "LETHE_OPTIONS=";
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, kName, sizeof(kName) - 1) == 0) {
      ParseOptions(*entry + sizeof(kName) - 1, &g_options);
      return;
    }
  }
}

}  // namespace lethe::internal
