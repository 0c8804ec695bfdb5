#include <png.h>
#include <zlib.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "lethe/alloc.h"
#include "lethe/decode.h"
#include "test_images.h"

namespace lethe {
namespace {

using test::Bytes;
using test::PngSpec;

struct Combination {
  int color_type;
  int bit_depth;
};

constexpr Combination kCombinations[] = {
    {PNG_COLOR_TYPE_GRAY, 1},       {PNG_COLOR_TYPE_GRAY, 2},       {PNG_COLOR_TYPE_GRAY, 4},
    {PNG_COLOR_TYPE_GRAY, 8},       {PNG_COLOR_TYPE_GRAY, 16},      {PNG_COLOR_TYPE_RGB, 8},
    {PNG_COLOR_TYPE_RGB, 16},       {PNG_COLOR_TYPE_PALETTE, 1},    {PNG_COLOR_TYPE_PALETTE, 2},
    {PNG_COLOR_TYPE_PALETTE, 4},    {PNG_COLOR_TYPE_PALETTE, 8},    {PNG_COLOR_TYPE_GRAY_ALPHA, 8},
    {PNG_COLOR_TYPE_GRAY_ALPHA, 16}, {PNG_COLOR_TYPE_RGB_ALPHA, 8}, {PNG_COLOR_TYPE_RGB_ALPHA, 16},
};

TEST(PngDecoder, MatchesTheSimplifiedApiForEveryColorTypeDepthInterlaceTrnsAndGamma) {
  int checked = 0;
  for (const Combination& combination : kCombinations) {
    const bool can_trns = (combination.color_type & PNG_COLOR_MASK_ALPHA) == 0;
    for (bool interlaced : {false, true}) {
      for (bool trns : {false, true}) {
        if (trns && !can_trns) continue;
        for (uint32_t gamma : {0u, 45455u, 100000u, 35000u}) {
          PngSpec spec;
          spec.color_type = combination.color_type;
          spec.bit_depth = combination.bit_depth;
          spec.interlaced = interlaced;
          spec.trns = trns;
          spec.gamma = gamma;
          spec.seed = static_cast<uint32_t>(checked);
          const Bytes png = test::EncodePng(spec);
          // libpng 1.6.39's simplified API mis-combines Adam7 passes of 16-bit images (its
          // interlaced and non-interlaced decodes of the same samples differ), so 16-bit
          // interlaced files are compared with the reference of the same samples non-interlaced.
          PngSpec reference_spec = spec;
          if (spec.bit_depth == 16) reference_spec.interlaced = false;
          const test::Pixels expected = test::ReferencePng(test::EncodePng(reference_spec));
          ASSERT_FALSE(expected.bgra.empty());
          DecodeResult<Surface> surface = DecodePng(png);
          ASSERT_TRUE(surface) << surface.error().reason;
          EXPECT_TRUE(surface->complete());
          EXPECT_EQ(test::Compare(expected, test::PixelsOf(*surface)), "")
              << "color type " << combination.color_type << " depth " << combination.bit_depth
              << " interlaced " << interlaced << " tRNS " << trns << " gamma " << gamma;
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 208);
}

TEST(PngDecoder, SurfaceFillsAWholeSizeClass) {
  PngSpec spec;
  spec.width = 100;
  spec.height = 7;
  DecodeResult<Surface> surface = DecodePng(test::EncodePng(spec));
  ASSERT_TRUE(surface);
  EXPECT_EQ(surface->stride(), 400u);
  EXPECT_GE(surface->MemoryBytes(), lethe_good_size(2800));
  // The bundled allocator hands out exactly the class size; the system one may round further.
  if (std::string(lethe_allocator_name()) == "lethe") {
    EXPECT_EQ(surface->MemoryBytes(), lethe_good_size(2800));
  }
}

TEST(PngDecoder, DecodesAtARequestedSizeLikeABoxFilterOfTheReference) {
  for (bool interlaced : {false, true}) {
    PngSpec spec;
    spec.width = 64;
    spec.height = 48;
    spec.color_type = PNG_COLOR_TYPE_RGB_ALPHA;
    spec.interlaced = interlaced;
    const Bytes png = test::EncodePng(spec);
    DecodeOptions options;
    options.target_width = 20;
    options.target_height = 13;
    DecodeResult<Surface> surface = DecodePng(png, options);
    ASSERT_TRUE(surface) << surface.error().reason;
    EXPECT_TRUE(surface->complete());
    const test::Pixels expected = test::BoxDownscale(test::ReferencePng(png), 20, 13);
    EXPECT_EQ(test::Compare(expected, test::PixelsOf(*surface)), "") << "interlaced " << interlaced;
  }
}

// One output pixel over 4200 x 4200 = 17.6 Mpx of an opaque image: its alpha sum, 255 x 17.6 M,
// overflows 32 bits, so the downscaler must switch to 64-bit sums there (it uses 32-bit ones, half
// the memory, below 16 Mpx per bin). Adam7, where the whole grid of bins is kept.
TEST(PngDecoder, KeepsExactMeansWhenOneOutputPixelCoversSeventeenMegapixels) {
  PngSpec spec;
  spec.width = 4200;
  spec.height = 4200;
  spec.color_type = PNG_COLOR_TYPE_GRAY;
  spec.bit_depth = 1;  // black and white pixels from a hash
  spec.interlaced = true;
  DecodeOptions options;
  options.target_width = options.target_height = 1;
  DecodeResult<Surface> surface = DecodePng(test::EncodePng(spec), options);
  ASSERT_TRUE(surface) << surface.error().reason;
  const uint8_t* pixel = surface->Row(0);
  EXPECT_EQ(pixel[3], 255);
  EXPECT_EQ(pixel[0], pixel[1]);
  EXPECT_EQ(pixel[0], pixel[2]);
  // test::BoxDownscale(test::ReferencePng(png), 1, 1) gives 153 (too slow to run here each time).
  EXPECT_EQ(pixel[0], 153);
}

TEST(PngDecoder, NeverUpscalesBeyondTheNaturalSize) {
  PngSpec spec;
  DecodeOptions options;
  options.target_width = 1000;
  options.target_height = 5;
  DecodeResult<Surface> surface = DecodePng(test::EncodePng(spec), options);
  ASSERT_TRUE(surface);
  EXPECT_EQ(surface->width(), spec.width);
  EXPECT_EQ(surface->height(), 5u);
}

TEST(PngDecoder, EveryPrefixIsAnErrorOrMarkedPartial) {
  for (bool interlaced : {false, true}) {
    PngSpec spec;
    spec.width = 40;
    spec.height = 30;
    spec.interlaced = interlaced;
    const Bytes png = test::EncodePng(spec);
    const test::Pixels whole = test::ReferencePng(png);
    int partial_count = 0;
    for (size_t length = 0; length < png.size(); ++length) {
      const Bytes prefix(png.begin(), png.begin() + static_cast<std::ptrdiff_t>(length));
      DecodeResult<Surface> surface = DecodePng(prefix);
      if (surface && surface->complete()) {
        // Only the chunks after the image data may be missing from a complete result.
        EXPECT_EQ(test::Compare(whole, test::PixelsOf(*surface)), "") << length << " bytes";
      } else if (surface) {
        ++partial_count;
      } else {
        EXPECT_FALSE(surface.error().reason.empty());
      }
    }
    EXPECT_GT(partial_count, 0);
  }
}

TEST(PngDecoder, TruncationInsideTheImageDataKeepsTheRowsBefore) {
  PngSpec spec;
  spec.width = 64;
  spec.height = 64;
  const Bytes png = test::EncodePng(spec);
  const test::Pixels expected = test::ReferencePng(png);
  const Bytes prefix(png.begin(), png.begin() + static_cast<std::ptrdiff_t>(png.size() / 2));
  DecodeResult<Surface> surface = DecodePng(prefix);
  ASSERT_TRUE(surface) << surface.error().reason;
  EXPECT_FALSE(surface->complete());
  const test::Pixels actual = test::PixelsOf(*surface);
  EXPECT_EQ(std::memcmp(actual.bgra.data(), expected.bgra.data(), 64 * 4 * 4), 0);  // first rows
  EXPECT_EQ(actual.At(63, 63)[3], 0);  // the last row was never decoded: transparent
}

TEST(PngDecoder, SurvivesBitFlips) {
  PngSpec spec;
  spec.width = 24;
  spec.height = 24;
  spec.color_type = PNG_COLOR_TYPE_PALETTE;
  spec.trns = true;
  const Bytes png = test::EncodePng(spec);
  for (size_t bit = 0; bit < png.size() * 8; bit += 3) {
    Bytes flipped = png;
    flipped[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    DecodeResult<Surface> surface = DecodePng(flipped);
    if (!surface) {
      EXPECT_FALSE(surface.error().reason.empty());
    }
  }
}

// A 20000 x 20000 header over a tiny stream: rejected before any pixel allocation.
TEST(PngDecoder, RejectsHugeDimensionsBeforeAllocating) {
  PngSpec spec;
  spec.width = 1;
  spec.height = 1;
  Bytes png = test::EncodePng(spec);
  auto put32 = [&](size_t at, uint32_t value) {
    for (int i = 0; i < 4; ++i) png[at + i] = static_cast<uint8_t>(value >> (24 - 8 * i));
  };
  // libpng's own state goes through lethe_malloc too: count what a valid 1x1 decode allocates
  // (that state, zlib's, the rows, the surface) to compare with.
  lethe_stats_t before;
  lethe_stats(&before);
  ASSERT_TRUE(DecodePng(png));
  lethe_stats_t after;
  lethe_stats(&after);
  const uint64_t valid_count = after.allocation_count - before.allocation_count;

  put32(16, 20000);
  put32(20, 20000);
  put32(29, static_cast<uint32_t>(crc32(crc32(0, nullptr, 0), &png[12], 17)));
  lethe_purge();
  lethe_stats_reset_peak();
  lethe_stats(&before);
  DecodeResult<Surface> surface = DecodePng(png);
  ASSERT_FALSE(surface);
  EXPECT_EQ(surface.error().code, DecodeErrorCode::kTooLarge) << surface.error().reason;
  lethe_stats(&after);
  // Only libpng's structs, made before the header was read: no surface, no rows, no inflate state.
  EXPECT_LT(after.allocation_count - before.allocation_count, valid_count);
  EXPECT_LE(after.allocation_count - before.allocation_count, 4u);
  // A 20000 x 20000 surface would be 1.6 GB: the peak says nothing near it was ever held (the
  // bound allows the thread cache's error, see lethe_stats_t::peak_allocated_bytes).
  EXPECT_LT(after.peak_allocated_bytes - (before.allocated_bytes + before.thread_cache_bytes),
            uint64_t{2} << 20);
}

// Found by the fuzzing campaign: a 4.6 KB file whose sCAL chunk declared 1.9 GB made libpng
// allocate and zero that much (its length check is a benign error, a warning once benign errors are
// allowed) before the read failed: 30 s and 1.9 GB of RSS. Past the chunk allocation cap, a chunk
// other than IDAT now ends the decode before anything that large is allocated.
TEST(PngDecoder, AnAncillaryChunkDeclaringGigabytesAllocatesNothingLarge) {
  const Bytes valid = test::EncodePng(PngSpec());
  Bytes png(valid.begin(), valid.begin() + 33);  // signature and IHDR
  const Bytes chunk = {0x72, 0x00, 0x00, 0x00, 's', 'C', 'A', 'L', 1, '1', 0, '1'};
  png.insert(png.end(), chunk.begin(), chunk.end());
  png.insert(png.end(), valid.begin() + 33, valid.end());
  lethe_purge();
  lethe_stats_reset_peak();
  lethe_stats_t before;
  lethe_stats(&before);
  DecodeResult<Surface> surface = DecodePng(png);
  lethe_stats_t after;
  lethe_stats(&after);
  ASSERT_FALSE(surface);
  EXPECT_EQ(surface.error().code, DecodeErrorCode::kTooLarge) << surface.error().reason;
  EXPECT_NE(surface.error().reason.find("sCAL"), std::string::npos) << surface.error().reason;
  EXPECT_LT(after.peak_allocated_bytes - (before.allocated_bytes + before.thread_cache_bytes),
            uint64_t{16} << 20);
}

TEST(PngDecoder, HonoursCallerLimits) {
  PngSpec spec;
  DecodeOptions options;
  options.limits.max_frame_pixels = 100;
  DecodeResult<Surface> surface = DecodePng(test::EncodePng(spec), options);
  ASSERT_FALSE(surface);
  EXPECT_EQ(surface.error().code, DecodeErrorCode::kTooLarge);
  options = DecodeOptions();
  options.limits.max_input_bytes = 10;
  surface = DecodePng(test::EncodePng(spec), options);
  ASSERT_FALSE(surface);
  EXPECT_EQ(surface.error().code, DecodeErrorCode::kTooLarge);
}

TEST(PngDecoder, ReportsOutOfMemoryWhenTheAllocatorRefuses) {
  PngSpec spec;
  const Bytes png = test::EncodePng(spec);
  for (long n = 1; n <= 2; ++n) {
    DecodeOptions options;
    if (n == 2) options.target_width = options.target_height = 5;  // surface, then the bins
    lethe_fail_after(n);
    DecodeResult<Surface> surface = DecodePng(png, options);
    lethe_fail_after(0);
    ASSERT_FALSE(surface);
    EXPECT_EQ(surface.error().code, DecodeErrorCode::kOutOfMemory);
  }
}

TEST(PngDecoder, CapturesLibpngMessagesInTheError) {
  const Bytes not_png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                         0, 0, 0, 0, 0, 0, 0, 1, 8, 2, 0, 0, 0, 0, 0, 0, 0};
  DecodeResult<Surface> surface = DecodePng(not_png);
  ASSERT_FALSE(surface);
  EXPECT_NE(surface.error().reason.find("png header: "), std::string::npos) << surface.error().reason;
}

}  // namespace
}  // namespace lethe
