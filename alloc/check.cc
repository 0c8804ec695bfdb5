// Failure reporting for LETHE_CHECK. Everything here must work with a corrupt heap and inside the
// allocator's own locks: no malloc, no stdio, no locale. Output goes straight to fd 2 with write(2).
#include "lethe/check.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace {

void WriteAll(const char* text, size_t length) {
  while (length > 0) {
    ssize_t written = write(STDERR_FILENO, text, length);
    if (written <= 0) return;  // Nothing better to do while dying.
    text += written;
    length -= static_cast<size_t>(written);
  }
}

void WriteString(const char* text) {
  if (text != nullptr) WriteAll(text, std::strlen(text));
}

// Decimal without allocation; buffer holds any int.
void WriteInt(int value) {
  char buffer[16];
  char* end = buffer + sizeof(buffer);
  char* cursor = end;
  unsigned magnitude = value < 0 ? 0u - static_cast<unsigned>(value) : static_cast<unsigned>(value);
  do {
    *--cursor = static_cast<char>('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude != 0 && cursor > buffer + 1);
  if (value < 0) *--cursor = '-';
  WriteAll(cursor, static_cast<size_t>(end - cursor));
}

void WriteHex(const void* pointer) {
  char buffer[2 + 2 * sizeof(void*)];
  auto value = reinterpret_cast<unsigned long long>(pointer);
  char* end = buffer + sizeof(buffer);
  char* cursor = end;
  do {
    *--cursor = "0123456789abcdef"[value & 0xf];
    value >>= 4;
  } while (value != 0);
  *--cursor = 'x';
  *--cursor = '0';
  WriteAll(cursor, static_cast<size_t>(end - cursor));
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void lethe_check_failed(const char* file, int line, const char* condition,
                                   const char* message) {
  WriteString("lethe: CHECK failed: ");
  WriteString(condition);
  if (message != nullptr && message[0] != '\0') {
    WriteString(": ");
    WriteString(message);
  }
  WriteString(" (");
  WriteString(file);
  WriteString(":");
  WriteInt(line);
  WriteString(")\n");
  std::abort();
}

extern "C" __attribute__((visibility("default"))) void lethe_fatal_pointer(const char* prefix, const void* pointer, const char* suffix) {
  WriteString("lethe: ");
  WriteString(prefix);
  WriteHex(pointer);
  WriteString(suffix);
  WriteString("\n");
  std::abort();
}
