#include "lethe/image_format.h"

#include <gtest/gtest.h>

#include <vector>

namespace lethe {
namespace {

std::vector<uint8_t> Bytes(std::initializer_list<int> values) {
  std::vector<uint8_t> bytes;
  for (int value : values) bytes.push_back(static_cast<uint8_t>(value));
  return bytes;
}

TEST(ImageFormat, DetectsEachSignature) {
  EXPECT_EQ(DetectImageFormat(Bytes({0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0})), ImageFormat::kPng);
  EXPECT_EQ(DetectImageFormat(Bytes({0xFF, 0xD8, 0xFF, 0xE0})), ImageFormat::kJpeg);
  EXPECT_EQ(DetectImageFormat(Bytes({'G', 'I', 'F', '8', '7', 'a'})), ImageFormat::kGif);
  EXPECT_EQ(DetectImageFormat(Bytes({'G', 'I', 'F', '8', '9', 'a'})), ImageFormat::kGif);
}

TEST(ImageFormat, RejectsTruncatedAndForeignSignatures) {
  EXPECT_EQ(DetectImageFormat({}), ImageFormat::kUnknown);
  EXPECT_EQ(DetectImageFormat(Bytes({0x89, 'P', 'N', 'G', '\r', '\n', 0x1a})), ImageFormat::kUnknown);
  EXPECT_EQ(DetectImageFormat(Bytes({0xFF, 0xD8})), ImageFormat::kUnknown);
  EXPECT_EQ(DetectImageFormat(Bytes({'G', 'I', 'F', '8', '8', 'a'})), ImageFormat::kUnknown);
  EXPECT_EQ(DetectImageFormat(Bytes({'B', 'M', 0, 0, 0, 0, 0, 0})), ImageFormat::kUnknown);
}

TEST(ImageFormat, NamesEachFormat) {
  EXPECT_EQ(ImageFormatName(ImageFormat::kPng), "png");
  EXPECT_EQ(ImageFormatName(ImageFormat::kJpeg), "jpeg");
  EXPECT_EQ(ImageFormatName(ImageFormat::kGif), "gif");
  EXPECT_EQ(ImageFormatName(ImageFormat::kUnknown), "unknown");
}

}  // namespace
}  // namespace lethe
