// The row-sink stack (decoders/row_sink_factory.h): the output size computed once in both
// orientations, the direct sink chosen at full size, the downscaler below it, with orientation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "row_sink_factory.h"

namespace lethe::internal {
namespace {

TEST(ChooseOutputSize, GivesTheStoredSizeOnceWithTheAxesSwappedForOrientationsFiveToEight) {
  const OutputSize natural = ChooseOutputSize(40, 60, 6, 0, 0);
  EXPECT_EQ(natural.width, 60u);
  EXPECT_EQ(natural.height, 40u);
  EXPECT_EQ(natural.stored_width, 40u);
  EXPECT_EQ(natural.stored_height, 60u);
  const OutputSize reduced = ChooseOutputSize(40, 60, 6, 30, 20);
  EXPECT_EQ(reduced.width, 30u);
  EXPECT_EQ(reduced.height, 20u);
  EXPECT_EQ(reduced.stored_width, 20u);
  EXPECT_EQ(reduced.stored_height, 30u);
  EXPECT_TRUE(IsReduced(reduced, 40, 60));
  EXPECT_FALSE(IsReduced(natural, 40, 60));
  const OutputSize upright = ChooseOutputSize(40, 60, 1, 500, 10);  // clamped to natural
  EXPECT_EQ(upright.width, 40u);
  EXPECT_EQ(upright.height, 10u);
  EXPECT_EQ(upright.stored_width, 40u);
  EXPECT_EQ(upright.stored_height, 10u);
}

TEST(MakeRowSink, WritesInPlaceOnlyAtFullSizeUpright) {
  const DecodeLimits limits;
  auto upright = MakeRowSink(8, 4, 1, ChooseOutputSize(8, 4, 1, 0, 0), limits);
  ASSERT_TRUE(upright);
  EXPECT_NE((*upright)->DirectSurface(), nullptr);
  auto rotated = MakeRowSink(8, 4, 6, ChooseOutputSize(8, 4, 6, 0, 0), limits);
  ASSERT_TRUE(rotated);
  EXPECT_EQ((*rotated)->DirectSurface(), nullptr);
  const Surface surface = (*rotated)->Finish(true);
  EXPECT_EQ(surface.width(), 4u);
  EXPECT_EQ(surface.height(), 8u);
  auto reduced = MakeRowSink(8, 4, 1, ChooseOutputSize(8, 4, 1, 4, 2), limits);
  ASSERT_TRUE(reduced);
  EXPECT_EQ((*reduced)->DirectSurface(), nullptr);
  auto empty = MakeRowSink(0, 4, 1, ChooseOutputSize(0, 4, 1, 0, 0), limits);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code, DecodeErrorCode::kCorrupt);
}

// A stored 4 x 2 image, left half red and right half blue, rotated 90 degrees clockwise (EXIF 6)
// and reduced to 1 x 2: the top pixel shows the left half, the bottom one the right half.
TEST(MakeRowSink, DownscalesInStoredOrientationAndPlacesBinsWhereTheyAreDisplayed) {
  auto sink = MakeRowSink(4, 2, 6, ChooseOutputSize(4, 2, 6, 1, 2), DecodeLimits());
  ASSERT_TRUE(sink);
  const uint8_t red[4] = {0, 0, 255, 255}, blue[4] = {255, 0, 0, 255};
  std::vector<uint8_t> row(16);
  for (int x = 0; x < 4; ++x) std::memcpy(&row[size_t(x) * 4], x < 2 ? red : blue, 4);
  (*sink)->PutRow(0, row.data());
  (*sink)->PutRow(1, row.data());
  const Surface out = (*sink)->Finish(true);
  ASSERT_EQ(out.width(), 1u);
  ASSERT_EQ(out.height(), 2u);
  EXPECT_EQ(std::memcmp(out.Row(0), red, 4), 0);
  EXPECT_EQ(std::memcmp(out.Row(1), blue, 4), 0);
  EXPECT_TRUE(out.complete());
}

// The branch-free premultiply gives the division's rounding for every colour and alpha.
TEST(PremultiplyBgra, MatchesTheRoundedDivisionForEveryColourAndAlpha) {
  std::vector<uint8_t> pixels;
  for (uint32_t a = 0; a < 256; ++a) {
    for (uint32_t c = 0; c < 256; ++c) {
      pixels.insert(pixels.end(), {static_cast<uint8_t>(c), static_cast<uint8_t>(255 - c),
                                   static_cast<uint8_t>(c / 2), static_cast<uint8_t>(a)});
    }
  }
  // In runs of 7 pixels, so that both the 4-pixel and the one-pixel paths see every value.
  for (size_t at = 0; at < pixels.size(); at += 7 * 4) {
    PremultiplyBgra(pixels.data() + at,
                    static_cast<uint32_t>(std::min<size_t>(7, (pixels.size() - at) / 4)));
  }
  for (uint32_t a = 0, i = 0; a < 256; ++a) {
    for (uint32_t c = 0; c < 256; ++c, i += 4) {
      ASSERT_EQ(pixels[i], (c * a + 127) / 255) << "c " << c << " a " << a;
      ASSERT_EQ(pixels[i + 1], ((255 - c) * a + 127) / 255) << "c " << c << " a " << a;
      ASSERT_EQ(pixels[i + 2], (c / 2 * a + 127) / 255) << "c " << c << " a " << a;
      ASSERT_EQ(pixels[i + 3], a);
    }
  }
}

}  // namespace
}  // namespace lethe::internal
