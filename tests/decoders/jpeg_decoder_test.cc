#include <gtest/gtest.h>

#include <string>

#include "lethe/alloc.h"
#include "lethe/decode.h"
#include "test_images.h"

namespace lethe {
namespace {

using test::Bytes;
using test::JpegSpec;

void ExpectMatchesReference(const JpegSpec& spec, const char* what) {
  const Bytes jpeg = test::EncodeJpeg(spec);
  DecodeResult<Surface> surface = DecodeJpeg(jpeg);
  ASSERT_TRUE(surface) << what << ": " << surface.error().reason;
  EXPECT_TRUE(surface->complete()) << what;
  EXPECT_EQ(test::Compare(test::ReferenceJpeg(jpeg), test::PixelsOf(*surface)), "") << what;
}

TEST(JpegDecoder, MatchesLibjpegForEveryMode) {
  JpegSpec spec;
  ExpectMatchesReference(spec, "baseline");
  spec.progressive = true;
  ExpectMatchesReference(spec, "progressive");
  spec = JpegSpec();
  spec.components = 1;
  ExpectMatchesReference(spec, "grayscale");
  spec = JpegSpec();
  spec.arithmetic = true;
  ExpectMatchesReference(spec, "arithmetic");
  spec = JpegSpec();
  spec.restart_interval = 2;
  ExpectMatchesReference(spec, "restart markers");
  spec = JpegSpec();
  spec.components = 4;
  ExpectMatchesReference(spec, "CMYK, Adobe inverted");
  spec.ycck = true;
  ExpectMatchesReference(spec, "YCCK, Adobe inverted");
  spec = JpegSpec();
  spec.width = 1;
  spec.height = 1;
  ExpectMatchesReference(spec, "1x1");
}

TEST(JpegDecoder, AppliesEveryExifOrientationUnlessAskedNotTo) {
  for (int orientation = 1; orientation <= 8; ++orientation) {
    JpegSpec spec;
    spec.orientation = orientation;
    const Bytes jpeg = test::EncodeJpeg(spec);
    const test::Pixels stored = test::ReferenceJpeg(jpeg);
    DecodeResult<Surface> oriented = DecodeJpeg(jpeg);
    ASSERT_TRUE(oriented);
    EXPECT_EQ(test::Compare(test::Orient(stored, orientation), test::PixelsOf(*oriented)), "")
        << "orientation " << orientation;
    DecodeOptions options;
    options.apply_exif_orientation = false;
    DecodeResult<Surface> as_stored = DecodeJpeg(jpeg, options);
    ASSERT_TRUE(as_stored);
    EXPECT_EQ(test::Compare(stored, test::PixelsOf(*as_stored)), "") << "orientation " << orientation;
    DecodeResult<ImageInfo> info = Probe(jpeg);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->exif_orientation, orientation);
  }
}

TEST(JpegDecoder, UsesDctScalingForHalvesQuartersAndEighths) {
  JpegSpec spec;
  spec.width = 160;
  spec.height = 96;
  const Bytes jpeg = test::EncodeJpeg(spec);
  for (unsigned denom : {2u, 4u, 8u}) {
    DecodeOptions options;
    options.target_width = 160 / denom;
    options.target_height = 96 / denom;
    DecodeResult<Surface> surface = DecodeJpeg(jpeg, options);
    ASSERT_TRUE(surface);
    EXPECT_EQ(test::Compare(test::ReferenceJpeg(jpeg, denom), test::PixelsOf(*surface)), "")
        << "1/" << denom;
  }
}

TEST(JpegDecoder, DownscalesRowByRowAfterTheDctScale) {
  JpegSpec spec;
  spec.width = 160;
  spec.height = 96;
  spec.orientation = 6;
  const Bytes jpeg = test::EncodeJpeg(spec);
  DecodeOptions options;
  options.target_width = 30;   // displayed (rotated) size
  options.target_height = 50;  // stored 50x30: DCT 1/2 gives 80x48, then the box filter
  DecodeResult<Surface> surface = DecodeJpeg(jpeg, options);
  ASSERT_TRUE(surface);
  const test::Pixels expected =
      test::Orient(test::BoxDownscale(test::ReferenceJpeg(jpeg, 2), 50, 30), 6);
  EXPECT_EQ(test::Compare(expected, test::PixelsOf(*surface)), "");
}

TEST(JpegDecoder, EveryPrefixIsAnErrorOrMarkedPartial) {
  for (bool progressive : {false, true}) {
    JpegSpec spec;
    spec.progressive = progressive;
    const Bytes jpeg = test::EncodeJpeg(spec);
    int partial_count = 0;
    for (size_t length = 0; length < jpeg.size(); ++length) {
      DecodeResult<Surface> surface =
          DecodeJpeg(std::span<const uint8_t>(jpeg.data(), length));
      if (surface) {
        EXPECT_FALSE(surface->complete()) << "prefix of " << length << " bytes";
        ++partial_count;
      } else {
        EXPECT_FALSE(surface.error().reason.empty());
      }
    }
    EXPECT_GT(partial_count, 0);
  }
}

TEST(JpegDecoder, SurvivesBitFlips) {
  JpegSpec spec;
  spec.width = 17;
  spec.height = 9;
  const Bytes jpeg = test::EncodeJpeg(spec);
  for (size_t bit = 0; bit < jpeg.size() * 8; bit += 5) {
    Bytes flipped = jpeg;
    flipped[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    DecodeResult<Surface> surface = DecodeJpeg(flipped);
    if (!surface) {
      EXPECT_FALSE(surface.error().reason.empty());
    }
  }
}

// Finds the SOF0 segment of a libjpeg baseline file.
size_t FindSof0(const Bytes& jpeg) {
  for (size_t i = 2; i + 1 < jpeg.size(); ++i) {
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xC0) return i;
  }
  return 0;
}

TEST(JpegDecoder, ReportsTwelveBitAndLosslessAsUnsupported) {
  Bytes twelve_bit = test::EncodeJpeg(JpegSpec());
  const size_t sof = FindSof0(twelve_bit);
  ASSERT_NE(sof, 0u);
  twelve_bit[sof + 4] = 12;  // sample precision
  DecodeResult<Surface> surface = DecodeJpeg(twelve_bit);
  ASSERT_FALSE(surface);
  EXPECT_EQ(surface.error().code, DecodeErrorCode::kUnsupported) << surface.error().reason;

  Bytes lossless = test::EncodeJpeg(JpegSpec());
  lossless[sof + 1] = 0xC3;
  surface = DecodeJpeg(lossless);
  ASSERT_FALSE(surface);
  EXPECT_EQ(surface.error().code, DecodeErrorCode::kUnsupported) << surface.error().reason;
}

TEST(JpegDecoder, RejectsDimensionsBeyondTheLimitsBeforeDecoding) {
  Bytes jpeg = test::EncodeJpeg(JpegSpec());
  const size_t sof = FindSof0(jpeg);
  jpeg[sof + 5] = 0xFF, jpeg[sof + 6] = 0x00;  // height 65280
  jpeg[sof + 7] = 0xFF, jpeg[sof + 8] = 0x00;  // width 65280
  DecodeResult<Surface> surface = DecodeJpeg(jpeg);
  ASSERT_FALSE(surface);
  EXPECT_EQ(surface.error().code, DecodeErrorCode::kTooLarge) << surface.error().reason;
}

// A progressive JPEG keeps every coefficient of the image in libjpeg's own memory (system malloc,
// not lethe_*): for an 8000 x 8000 4:2:0 header of a few bytes, 192 MB, next to a 256 MB surface.
// libjpeg may use only what the surface leaves of max_decoded_bytes, so with 400 MB the decode ends
// in kTooLarge when libjpeg sets up its buffers, before it allocates them (given the whole 400 MB,
// as before, it would allocate 192 MB, then the surface: 448 MB at once).
TEST(JpegDecoder, HoldsLibjpegsBuffersAndTheSurfaceTogetherToTheDecodedBytesLimit) {
  JpegSpec spec;
  spec.progressive = true;
  Bytes jpeg = test::EncodeJpeg(spec);
  size_t sof = 0;
  for (size_t i = 2; i + 1 < jpeg.size() && sof == 0; ++i) {
    if (jpeg[i] == 0xFF && jpeg[i + 1] == 0xC2) sof = i;
  }
  ASSERT_NE(sof, 0u);
  jpeg[sof + 5] = 0x1F, jpeg[sof + 6] = 0x40;  // height 8000
  jpeg[sof + 7] = 0x1F, jpeg[sof + 8] = 0x40;  // width 8000
  for (uint64_t limit_mb : {32u, 400u}) {
    DecodeOptions options;
    options.limits.max_decoded_bytes = limit_mb << 20;
    DecodeResult<Surface> surface = DecodeJpeg(jpeg, options);
    ASSERT_FALSE(surface) << limit_mb << " MB";
    EXPECT_EQ(surface.error().code, DecodeErrorCode::kTooLarge) << surface.error().reason;
    const std::string expected_prefix = limit_mb == 32 ? "jpeg: output" : "jpeg start:";
    EXPECT_EQ(surface.error().reason.rfind(expected_prefix, 0), 0u) << surface.error().reason;
  }
}

TEST(JpegDecoder, ReportsOutOfMemoryWhenTheAllocatorRefuses) {
  const Bytes jpeg = test::EncodeJpeg(JpegSpec());
  lethe_fail_after(1);
  DecodeResult<Surface> surface = DecodeJpeg(jpeg);
  lethe_fail_after(0);
  ASSERT_FALSE(surface);
  EXPECT_EQ(surface.error().code, DecodeErrorCode::kOutOfMemory);
}

TEST(JpegDecoder, ReportsAnEmptyInputAsTruncated) {
  DecodeResult<Surface> surface = DecodeJpeg({});
  ASSERT_FALSE(surface);
  EXPECT_EQ(surface.error().code, DecodeErrorCode::kTruncated) << surface.error().reason;
}

}  // namespace
}  // namespace lethe
