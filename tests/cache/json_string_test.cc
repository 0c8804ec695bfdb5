#include "lethe/json_string.h"

#include <gtest/gtest.h>

#include <string>

namespace lethe {
namespace {

TEST(JsonString, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(JsonString("a\"b\\c\nd\x01\t\r\x1f"), "\"a\\\"b\\\\c\\nd\\u0001\\t\\r\\u001f\"");
}

TEST(JsonString, LeavesUtf8AndPrintableAsciiAlone) {
  EXPECT_EQ(JsonString("/tmp/ünïcode"), "\"/tmp/ünïcode\"");
  EXPECT_EQ(JsonString(""), "\"\"");
}

TEST(JsonString, KeepsAnEmbeddedNulAsAnEscape) {
  EXPECT_EQ(JsonString(std::string("a\0b", 3)), "\"a\\u0000b\"");
}

TEST(AppendJsonString, AppendsAfterWhatIsThere) {
  std::string out = "{\"k\":";
  AppendJsonString(out, "v");
  EXPECT_EQ(out, "{\"k\":\"v\"");
}

}  // namespace
}  // namespace lethe
