#include "lethe/surface.h"

#include <gtest/gtest.h>

#include <utility>

#include "lethe/alloc.h"

namespace lethe {
namespace {

TEST(Surface, StartsTransparentWithRowsOfFourBytesPerPixel) {
  DecodeResult<Surface> surface = Surface::Create(7, 3);
  ASSERT_TRUE(surface);
  EXPECT_EQ(surface->stride(), 28u);
  EXPECT_TRUE(surface->complete());
  for (uint32_t y = 0; y < 3; ++y) {
    for (size_t i = 0; i < 28; ++i) EXPECT_EQ(surface->Row(y)[i], 0);
  }
  EXPECT_GE(surface->MemoryBytes(), lethe_good_size(7 * 3 * 4));
}

TEST(Surface, RejectsZeroSizesAndSizesBeyondTheLimits) {
  DecodeResult<Surface> surface = Surface::Create(0, 5);
  ASSERT_FALSE(surface);
  EXPECT_EQ(surface.error().code, DecodeErrorCode::kInvalidArgument);
  DecodeLimits limits;
  limits.max_image_pixels = 99;
  surface = Surface::Create(10, 10, limits);
  ASSERT_FALSE(surface);
  EXPECT_EQ(surface.error().code, DecodeErrorCode::kTooLarge);
  surface = Surface::Create(0xFFFFFFFFu, 0xFFFFFFFFu);
  ASSERT_FALSE(surface);
  EXPECT_EQ(surface.error().code, DecodeErrorCode::kTooLarge);
}

TEST(Surface, ReportsOutOfMemory) {
  lethe_fail_after(1);
  DecodeResult<Surface> surface = Surface::Create(4, 4);
  lethe_fail_after(0);
  ASSERT_FALSE(surface);
  EXPECT_EQ(surface.error().code, DecodeErrorCode::kOutOfMemory);
}

TEST(Surface, MovesItsPixelsAndFreesThemOnce) {
  lethe_stats_t before;
  lethe_stats(&before);
  {
    DecodeResult<Surface> created = Surface::Create(16, 16);
    ASSERT_TRUE(created);
    Surface moved = std::move(*created);
    EXPECT_TRUE(created->empty());
    EXPECT_EQ(created->MemoryBytes(), 0u);
    Surface assigned;
    assigned = std::move(moved);
    EXPECT_EQ(assigned.width(), 16u);
    EXPECT_FALSE(assigned.empty());
  }
  lethe_stats_t after;
  lethe_stats(&after);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_EQ(after.allocation_count - before.allocation_count, after.free_count - before.free_count);
}

TEST(DecodeResult, HoldsAValueOrAnErrorWithAReadableCode) {
  DecodeResult<int> value = 5;
  EXPECT_TRUE(value);
  EXPECT_EQ(*value, 5);
  DecodeResult<int> error = MakeDecodeError(DecodeErrorCode::kTruncated, "cut");
  EXPECT_FALSE(error);
  EXPECT_EQ(error.error().reason, "cut");
  EXPECT_EQ(DecodeErrorCodeName(DecodeErrorCode::kTooLarge), "too_large");
  EXPECT_EQ(DecodeErrorCodeName(DecodeErrorCode::kOutOfMemory), "out_of_memory");
}

TEST(DecodeResultDeathTest, ValueOfAnErrorIsAContractViolation) {
  DecodeResult<int> error = MakeDecodeError(DecodeErrorCode::kCorrupt, "bad");
  EXPECT_DEATH((void)error.value(), "DecodeResult::value\\(\\) on an error");
}

}  // namespace
}  // namespace lethe
