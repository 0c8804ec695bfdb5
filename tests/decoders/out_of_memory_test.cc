// Out-of-memory paths of every decoder, through lethe_fail_after: the n-th lethe_* allocation of a
// decode fails, for n = 1, 2, ... until the decode no longer reaches the n-th allocation. Each
// failing run must end in kOutOfMemory (never a crash, a leak under ASan, or a "complete" image
// with a hole in it), and once every allocation is allowed the pixels match the reference.
// AnimatedImage::Compose is swept the same way in windowed mode, where it allocates while playing,
// and must recover: after a refused allocation, the next Compose gives the right frame.
#include <gtest/gtest.h>

#include <functional>

#include "lethe/alloc.h"
#include "lethe/decode.h"
#include "test_images.h"

namespace lethe {
namespace {

using test::Bytes;

// Beyond this many allocations a decode of the small test images is a bug in itself.
constexpr long kMaxAllocations = 200;

// Runs `decode` with the n-th allocation refused, for n = 1.. until it succeeds; every failure
// must be kOutOfMemory. Returns the value of the first run that succeeded (all allocations given).
template <typename T>
DecodeResult<T> SweepAllocationFailures(const std::function<DecodeResult<T>()>& decode,
                                        long* failures_seen) {
  *failures_seen = 0;
  for (long n = 1; n <= kMaxAllocations; ++n) {
    lethe_fail_after(n);
    DecodeResult<T> result = decode();
    lethe_fail_after(0);
    if (result) return result;
    EXPECT_EQ(result.error().code, DecodeErrorCode::kOutOfMemory)
        << "allocation " << n << ": " << result.error().reason;
    ++*failures_seen;
  }
  ADD_FAILURE() << "still failing after " << kMaxAllocations << " allocations";
  return MakeDecodeError(DecodeErrorCode::kOutOfMemory, "sweep gave up");
}

TEST(OutOfMemory, EveryPngAllocationFailureIsReportedAtFullAndReducedSize) {
  for (bool interlaced : {false, true}) {
    for (uint32_t target : {0u, 6u}) {
      test::PngSpec spec;
      spec.color_type = 6;
      spec.interlaced = interlaced;
      const Bytes png = test::EncodePng(spec);
      DecodeOptions options;
      options.target_width = options.target_height = target;
      long failures = 0;
      DecodeResult<Surface> surface = SweepAllocationFailures<Surface>(
          [&] { return DecodePng(png, options); }, &failures);
      ASSERT_TRUE(surface);
      EXPECT_GE(failures, target == 0 ? 1 : 2) << "the surface, then the downscaler's buffers";
      EXPECT_TRUE(surface->complete());
      test::Pixels expected = test::ReferencePng(png);
      if (target != 0) expected = test::BoxDownscale(expected, target, target);
      EXPECT_EQ(test::Compare(expected, test::PixelsOf(*surface)), "")
          << "interlaced " << interlaced << ", target " << target;
    }
  }
}

TEST(OutOfMemory, EveryJpegAllocationFailureIsReportedAtFullAndReducedSize) {
  for (uint32_t target : {0u, 7u}) {
    test::JpegSpec spec;
    spec.orientation = target == 0 ? 0 : 6;  // the oriented sink too
    const Bytes jpeg = test::EncodeJpeg(spec);
    DecodeOptions options;
    options.target_width = options.target_height = target;
    long failures = 0;
    DecodeResult<Surface> surface = SweepAllocationFailures<Surface>(
        [&] { return DecodeJpeg(jpeg, options); }, &failures);
    ASSERT_TRUE(surface);
    EXPECT_GE(failures, 1);
    EXPECT_TRUE(surface->complete());
    if (target == 0) {
      EXPECT_EQ(test::Compare(test::ReferenceJpeg(jpeg), test::PixelsOf(*surface)), "");
    }
  }
}

test::GifSpec Animation(uint32_t frame_count) {
  test::GifSpec spec;
  spec.width = 24;
  spec.height = 20;
  spec.global_palette = test::MakeGifPalette(16, 3);
  spec.loop_count = 0;
  for (uint32_t k = 0; k < frame_count; ++k) {
    spec.frames.push_back(test::MakeGifFrame(k % 4, k % 3, 18, 15, 16, k));
    spec.frames.back().transparent_index = static_cast<int>(k % 2);
    spec.frames.back().disposal = static_cast<int>(k % 4);
    if (k % 3 == 1) spec.frames.back().local_palette = test::MakeGifPalette(16, k);
  }
  return spec;
}

TEST(OutOfMemory, EveryGifAllocationFailureIsReportedHeldOrWindowed) {
  const test::GifSpec spec = Animation(8);
  const Bytes gif = test::EncodeGif(spec);
  for (uint64_t budget : {uint64_t{1} << 30, uint64_t{1}}) {
    DecodeOptions options;
    options.animation.frame_budget_bytes = budget;
    long failures = 0;
    DecodeResult<AnimatedImage> animation = SweepAllocationFailures<AnimatedImage>(
        [&] { return DecodeGif(gif, options); }, &failures);
    ASSERT_TRUE(animation);
    EXPECT_GE(failures, 1);
    EXPECT_EQ(animation->windowed(), budget == 1);
    EXPECT_TRUE(animation->complete());
    ASSERT_EQ(animation->FrameCount(), spec.frames.size());
    for (uint32_t n = 0; n < animation->FrameCount(); ++n) {
      DecodeResult<const Surface*> canvas = animation->Compose(n);
      ASSERT_TRUE(canvas) << canvas.error().reason;
      EXPECT_EQ(test::Compare(test::ReferenceGifFrame(spec, n), test::PixelsOf(**canvas)), "");
    }
  }
}

TEST(OutOfMemory, EveryGifToSurfaceAllocationFailureIsReported) {
  const test::GifSpec spec = Animation(1);
  const Bytes gif = test::EncodeGif(spec);
  for (uint32_t target : {0u, 9u}) {
    DecodeOptions options;
    options.target_width = options.target_height = target;
    long failures = 0;
    DecodeResult<Surface> surface = SweepAllocationFailures<Surface>(
        [&] { return DecodeGifToSurface(gif, options); }, &failures);
    ASSERT_TRUE(surface);
    EXPECT_GE(failures, 2) << "frame indices, then the surface";
    test::Pixels expected = test::ReferenceGifFrame(spec, 0);
    if (target != 0) expected = test::BoxDownscale(expected, target, target);
    EXPECT_EQ(test::Compare(expected, test::PixelsOf(*surface)), "");
  }
}

// Windowed playback allocates (the canvas, restore-previous rects, frames decoded again). A refused
// allocation fails that Compose with kOutOfMemory; the image stays usable and the next Compose of
// any frame is right.
TEST(OutOfMemory, ComposeRecoversFromEveryRefusedAllocationWhilePlaying) {
  const test::GifSpec spec = Animation(9);
  const Bytes gif = test::EncodeGif(spec);
  DecodeOptions options;
  options.animation.frame_budget_bytes = 1;  // windowed: three frames held
  DecodeResult<AnimatedImage> animation = DecodeGif(gif, options);
  ASSERT_TRUE(animation) << animation.error().reason;
  ASSERT_TRUE(animation->windowed());
  const uint32_t count = animation->FrameCount();
  long refused = 0;
  for (long n = 1; n <= 12; ++n) {
    animation->DiscardCanvas();  // replay from frame 0: every kind of allocation happens again
    lethe_fail_after(n);
    uint32_t failed_at = count;
    for (uint32_t k = 0; k < count; ++k) {
      DecodeResult<const Surface*> canvas = animation->Compose(k);
      if (!canvas) {
        EXPECT_EQ(canvas.error().code, DecodeErrorCode::kOutOfMemory) << canvas.error().reason;
        failed_at = k;
        break;
      }
    }
    lethe_fail_after(0);
    if (failed_at == count) continue;
    ++refused;
    for (uint32_t k : {failed_at, (failed_at + 1) % count, 0u, count - 1}) {
      DecodeResult<const Surface*> canvas = animation->Compose(k);
      ASSERT_TRUE(canvas) << "after a refusal at allocation " << n << ": " << canvas.error().reason;
      EXPECT_EQ(test::Compare(test::ReferenceGifFrame(spec, k), test::PixelsOf(**canvas)), "")
          << "frame " << k << " after a refusal at allocation " << n;
    }
  }
  EXPECT_GE(refused, 3);
  EXPECT_EQ(animation->Memory().frames_held, 3u);
}

TEST(OutOfMemory, DecodeReportsRefusalsForEveryFormat) {
  const Bytes inputs[] = {test::EncodePng(test::PngSpec()), test::EncodeJpeg(test::JpegSpec()),
                          test::EncodeGif(Animation(1)), test::EncodeGif(Animation(4))};
  for (const Bytes& bytes : inputs) {
    long failures = 0;
    DecodeResult<DecodedImage> image = SweepAllocationFailures<DecodedImage>(
        [&] { return Decode(bytes); }, &failures);
    ASSERT_TRUE(image);
    EXPECT_TRUE(IsComplete(*image));
    EXPECT_GE(failures, 1);
  }
}

}  // namespace
}  // namespace lethe
