#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "lethe/alloc.h"
#include "lethe/decode.h"
#include "test_images.h"

namespace lethe {
namespace {

using test::Bytes;
using test::GifSpec;
using test::MakeGifFrame;
using test::MakeGifPalette;

// Six frames: sub-rectangles, local palettes, transparency, interlace, disposals 0-3, indices
// beyond a local palette.
GifSpec MixedAnimation() {
  GifSpec spec;
  spec.width = 40;
  spec.height = 30;
  spec.global_palette = MakeGifPalette(16, 1);
  spec.loop_count = 0;
  spec.frames.push_back(MakeGifFrame(0, 0, 40, 30, 16, 1));
  spec.frames.push_back(MakeGifFrame(5, 4, 20, 12, 4, 2));
  spec.frames[1].local_palette = MakeGifPalette(4, 2);
  spec.frames[1].transparent_index = 1;
  spec.frames[1].disposal = 2;
  spec.frames.push_back(MakeGifFrame(10, 8, 25, 17, 16, 3));
  spec.frames[2].interlaced = true;
  spec.frames[2].disposal = 3;
  spec.frames[2].transparent_index = 0;
  spec.frames.push_back(MakeGifFrame(0, 20, 40, 10, 16, 4));
  spec.frames[3].disposal = 3;
  spec.frames.push_back(MakeGifFrame(30, 0, 10, 30, 8, 5));  // see EncodeMixedAnimation
  spec.frames[4].local_palette = MakeGifPalette(8, 5);
  spec.frames[4].disposal = 1;
  spec.frames.push_back(MakeGifFrame(2, 2, 7, 9, 16, 6));
  return spec;
}

// giflib writes palettes of 2^n entries and codes with n bits, so a file whose indices reach past
// its palette is made by shrinking a frame's local palette after encoding (the LZW code size
// stays). Returns the bytes removed.
size_t ShrinkLocalPalette(Bytes* gif, size_t descriptor_offset, int new_bits) {
  uint8_t& flags = (*gif)[descriptor_offset + 9];
  const size_t old_size = 3u << ((flags & 7) + 1);
  const size_t new_size = 3u << new_bits;
  flags = static_cast<uint8_t>((flags & ~7) | (new_bits - 1));
  const auto table = gif->begin() + static_cast<std::ptrdiff_t>(descriptor_offset + 10);
  gif->erase(table + static_cast<std::ptrdiff_t>(new_size), table + static_cast<std::ptrdiff_t>(old_size));
  return old_size - new_size;
}

// Drops the global palette from the screen descriptor. Returns the bytes removed.
size_t RemoveGlobalPalette(Bytes* gif) {
  const size_t size = 3u << (((*gif)[10] & 7) + 1);
  (*gif)[10] = static_cast<uint8_t>((*gif)[10] & ~0x87);
  gif->erase(gif->begin() + 13, gif->begin() + 13 + static_cast<std::ptrdiff_t>(size));
  return size;
}

Bytes EncodeMixedAnimation(GifSpec* spec) {
  std::vector<size_t> offsets;
  Bytes gif = test::EncodeGif(*spec, &offsets);
  ShrinkLocalPalette(&gif, offsets[4], 2);  // 8 entries -> 4; indices 4..7 fall outside
  spec->frames[4].local_palette.resize(4);
  return gif;
}

void ExpectFrame(AnimatedImage& animation, const GifSpec& spec, uint32_t n) {
  DecodeResult<const Surface*> canvas = animation.Compose(n);
  ASSERT_TRUE(canvas) << canvas.error().reason;
  EXPECT_EQ(test::Compare(test::ReferenceGifFrame(spec, n), test::PixelsOf(**canvas)), "")
      << "frame " << n;
}

TEST(GifDecoder, ComposesEveryFrameLikeTheReferenceCompositor) {
  GifSpec spec = MixedAnimation();
  DecodeResult<AnimatedImage> animation = DecodeGif(EncodeMixedAnimation(&spec));
  ASSERT_TRUE(animation) << animation.error().reason;
  EXPECT_TRUE(animation->complete());
  ASSERT_EQ(animation->FrameCount(), spec.frames.size());
  for (uint32_t n = 0; n < spec.frames.size(); ++n) ExpectFrame(*animation, spec, n);
  for (uint32_t n : {5u, 2u, 0u, 3u, 4u, 1u, 1u}) ExpectFrame(*animation, spec, n);  // any order
  EXPECT_EQ(animation->Frame(2).disposal, FrameDisposal::kRestorePrevious);
  EXPECT_TRUE(animation->Frame(2).interlaced);
  EXPECT_TRUE(animation->Frame(1).local_palette);
}

TEST(GifDecoder, StoresEachFrameOverItsOwnRectangle) {
  const GifSpec spec = MixedAnimation();
  DecodeResult<AnimatedImage> animation = DecodeGif(test::EncodeGif(spec));
  ASSERT_TRUE(animation);
  const AnimationMemory memory = animation->Memory();
  uint64_t index_bytes = 0;
  for (const auto& frame : spec.frames) index_bytes += size_t{frame.width} * frame.height;
  EXPECT_GE(memory.bytes_frames, index_bytes);
  EXPECT_LT(memory.bytes_frames, index_bytes + 4096);
  EXPECT_EQ(memory.bytes_32bpp, 40u * 30 * 4 * 6);
  EXPECT_EQ(memory.bytes_canvas, 0u);  // nothing composed yet
  EXPECT_EQ(memory.frames_held, 6u);
  ASSERT_TRUE(animation->Compose(3));
  EXPECT_GE(animation->Memory().bytes_canvas, 40u * 30 * 4);
}

TEST(GifDecoder, ReadsLoopCountAndClampsShortDelays) {
  GifSpec spec;
  spec.width = spec.height = 4;
  spec.global_palette = MakeGifPalette(2, 1);
  for (int delay : {0, 1, 2, 10}) {
    spec.frames.push_back(MakeGifFrame(0, 0, 4, 4, 2, static_cast<uint32_t>(delay)));
    spec.frames.back().delay_centiseconds = delay;
  }
  spec.loop_count = 5;
  DecodeResult<AnimatedImage> animation = DecodeGif(test::EncodeGif(spec));
  ASSERT_TRUE(animation);
  EXPECT_EQ(animation->LoopCount(), 5);
  EXPECT_EQ(animation->Frame(0).delay_ms, 100u);
  EXPECT_EQ(animation->Frame(1).delay_ms, 100u);
  EXPECT_EQ(animation->Frame(2).delay_ms, 20u);
  EXPECT_EQ(animation->Frame(3).delay_ms, 100u);
  spec.loop_count = -1;
  animation = DecodeGif(test::EncodeGif(spec));
  ASSERT_TRUE(animation);
  EXPECT_EQ(animation->LoopCount(), -1);
  spec.loop_count = 0;
  animation = DecodeGif(test::EncodeGif(spec));
  ASSERT_TRUE(animation);
  EXPECT_EQ(animation->LoopCount(), 0);
}

GifSpec LongAnimation(uint32_t frame_count) {
  GifSpec spec;
  spec.width = 64;
  spec.height = 64;
  spec.global_palette = MakeGifPalette(32, 9);
  for (uint32_t k = 0; k < frame_count; ++k) {
    spec.frames.push_back(MakeGifFrame(k % 8, k % 5, 56, 59, 32, k));
    spec.frames.back().transparent_index = static_cast<int>(k % 3);
    spec.frames.back().disposal = static_cast<int>(k % 4);
  }
  return spec;
}

TEST(GifDecoder, KeepsADecodeAheadWindowPastTheBudget) {
  const GifSpec spec = LongAnimation(40);
  DecodeOptions options;
  options.animation.frame_budget_bytes = 5 * 56 * 59;  // five frames' indices
  DecodeResult<AnimatedImage> animation = DecodeGif(test::EncodeGif(spec), options);
  ASSERT_TRUE(animation) << animation.error().reason;
  EXPECT_TRUE(animation->windowed());
  EXPECT_EQ(animation->FrameCount(), 40u);
  for (int lap = 0; lap < 2; ++lap) {
    for (uint32_t n = 0; n < 40; ++n) {
      ExpectFrame(*animation, spec, n);
      const AnimationMemory memory = animation->Memory();
      EXPECT_EQ(memory.frames_held, 5u);
      EXPECT_LT(memory.bytes_frames, options.animation.frame_budget_bytes + 8192);
      EXPECT_GT(memory.bytes_compressed, 0u);
    }
  }
  ExpectFrame(*animation, spec, 17);  // a jump replays from frame 0
}

TEST(GifDecoder, KeepsHeldFramesWithinTheDecodedBytesLimitWhateverTheBudget) {
  const GifSpec spec = LongAnimation(12);
  DecodeOptions options;
  options.animation.frame_budget_bytes = UINT64_MAX;
  // canvas + six frames + the frame table (16 entries of about 100 bytes)
  options.limits.max_decoded_bytes = 64 * 64 * 4 + 6 * 56 * 59 + 2048;
  DecodeResult<AnimatedImage> animation = DecodeGif(test::EncodeGif(spec), options);
  ASSERT_TRUE(animation) << animation.error().reason;
  EXPECT_TRUE(animation->windowed());
  EXPECT_EQ(animation->Memory().frames_held, 6u);
  for (uint32_t n = 0; n < 12; ++n) ExpectFrame(*animation, spec, n);
  options.limits.max_decoded_bytes = 64 * 64 * 4 + 2 * 56 * 59;  // not even three frames
  animation = DecodeGif(test::EncodeGif(spec), options);
  ASSERT_FALSE(animation);
  EXPECT_EQ(animation.error().code, DecodeErrorCode::kTooLarge);
}

TEST(GifDecoder, NeverKeepsFewerThanThreeFrames) {
  const GifSpec spec = LongAnimation(10);
  DecodeOptions options;
  options.animation.frame_budget_bytes = 1;
  DecodeResult<AnimatedImage> animation = DecodeGif(test::EncodeGif(spec), options);
  ASSERT_TRUE(animation);
  EXPECT_TRUE(animation->windowed());
  for (uint32_t n = 0; n < 10; ++n) ExpectFrame(*animation, spec, n);
  EXPECT_EQ(animation->Memory().frames_held, 3u);
}

TEST(GifDecoder, AFrameWithoutAnyPaletteIsCorruptAndKeepsEarlierFrames) {
  GifSpec spec;
  spec.width = spec.height = 8;
  spec.global_palette = MakeGifPalette(4, 7);  // removed after encoding
  spec.frames.push_back(MakeGifFrame(0, 0, 8, 8, 4, 1));
  spec.frames[0].local_palette = MakeGifPalette(4, 1);
  spec.frames.push_back(MakeGifFrame(0, 0, 8, 8, 4, 2));  // uses the global palette
  spec.frames.push_back(MakeGifFrame(0, 0, 8, 8, 4, 3));
  spec.frames[2].local_palette = MakeGifPalette(4, 3);
  Bytes gif = test::EncodeGif(spec);
  RemoveGlobalPalette(&gif);
  DecodeResult<AnimatedImage> animation = DecodeGif(gif);
  ASSERT_TRUE(animation) << animation.error().reason;
  EXPECT_FALSE(animation->complete());
  EXPECT_EQ(animation->FrameCount(), 1u);
  ExpectFrame(*animation, spec, 0);

  spec.frames.erase(spec.frames.begin());
  gif = test::EncodeGif(spec);
  RemoveGlobalPalette(&gif);
  animation = DecodeGif(gif);
  ASSERT_FALSE(animation);
  EXPECT_EQ(animation.error().code, DecodeErrorCode::kCorrupt) << animation.error().reason;
}

// Rewrites the image descriptor at `offset`: left, top, width, height (little-endian).
void PatchDescriptor(Bytes* gif, size_t offset, uint16_t left, uint16_t top, uint16_t width,
                     uint16_t height) {
  const uint16_t values[4] = {left, top, width, height};
  for (int i = 0; i < 4; ++i) {
    (*gif)[offset + 1 + 2 * i] = static_cast<uint8_t>(values[i] & 0xFF);
    (*gif)[offset + 2 + 2 * i] = static_cast<uint8_t>(values[i] >> 8);
  }
}

TEST(GifDecoder, ClipsFramesToTheScreen) {
  GifSpec spec;
  spec.width = 20;
  spec.height = 10;
  spec.global_palette = MakeGifPalette(8, 3);
  spec.frames.push_back(MakeGifFrame(0, 0, 20, 10, 8, 1));
  spec.frames.push_back(MakeGifFrame(0, 0, 12, 8, 8, 2));
  spec.frames.push_back(MakeGifFrame(0, 0, 5, 5, 8, 3));
  std::vector<size_t> offsets;
  Bytes gif = test::EncodeGif(spec, &offsets);
  PatchDescriptor(&gif, offsets[1], 14, 6, 12, 8);  // reaches past the right and bottom edges
  spec.frames[1].left = 14, spec.frames[1].top = 6;
  PatchDescriptor(&gif, offsets[2], 500, 500, 5, 5);  // entirely off the screen
  spec.frames[2].left = 500, spec.frames[2].top = 500;
  DecodeResult<AnimatedImage> animation = DecodeGif(gif);
  ASSERT_TRUE(animation) << animation.error().reason;
  EXPECT_TRUE(animation->complete());
  EXPECT_EQ(animation->Frame(1).width, 6u);
  EXPECT_EQ(animation->Frame(1).height, 4u);
  EXPECT_EQ(animation->Frame(2).width * animation->Frame(2).height, 0u);
  for (uint32_t n = 0; n < 3; ++n) ExpectFrame(*animation, spec, n);
}

TEST(GifDecoder, RejectsZeroSizeFramesAndScreens) {
  GifSpec spec;
  spec.width = spec.height = 8;
  spec.global_palette = MakeGifPalette(4, 1);
  spec.frames.push_back(MakeGifFrame(0, 0, 8, 8, 4, 1));
  spec.frames.push_back(MakeGifFrame(0, 0, 4, 4, 4, 2));
  std::vector<size_t> offsets;
  Bytes gif = test::EncodeGif(spec, &offsets);
  Bytes zero_frame = gif;
  PatchDescriptor(&zero_frame, offsets[1], 0, 0, 0, 4);
  DecodeResult<AnimatedImage> animation = DecodeGif(zero_frame);
  ASSERT_TRUE(animation);
  EXPECT_FALSE(animation->complete());
  EXPECT_EQ(animation->FrameCount(), 1u);
  PatchDescriptor(&zero_frame, offsets[0], 0, 0, 8, 0);
  EXPECT_FALSE(DecodeGif(zero_frame));
  Bytes zero_screen = gif;
  zero_screen[6] = zero_screen[7] = 0;
  animation = DecodeGif(zero_screen);
  ASSERT_FALSE(animation);
  EXPECT_EQ(animation.error().code, DecodeErrorCode::kCorrupt);
}

TEST(GifDecoder, RejectsHugeScreensBeforeAllocating) {
  GifSpec spec = LongAnimation(5);
  Bytes huge = test::EncodeGif(spec);
  huge[6] = huge[7] = huge[8] = huge[9] = 0xFF;  // 65535 x 65535
  lethe_stats_t before;
  lethe_stats(&before);
  DecodeResult<AnimatedImage> animation = DecodeGif(huge);
  lethe_stats_t after;
  lethe_stats(&after);
  ASSERT_FALSE(animation);
  EXPECT_EQ(animation.error().code, DecodeErrorCode::kTooLarge);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
}

// max_frame_count bounds the frames held, not the file: past it the rest play through the window.
TEST(GifDecoder, FramesPastTheHeldFrameCountPlayThroughTheWindow) {
  const GifSpec spec = LongAnimation(7);
  DecodeOptions options;
  options.limits.max_frame_count = 4;
  DecodeResult<AnimatedImage> animation = DecodeGif(test::EncodeGif(spec), options);
  ASSERT_TRUE(animation) << animation.error().reason;
  EXPECT_TRUE(animation->windowed());
  EXPECT_EQ(animation->FrameCount(), 7u);
  EXPECT_EQ(animation->Memory().frames_held, 4u);
  for (uint32_t n = 0; n < 7; ++n) ExpectFrame(*animation, spec, n);
}

// What grows with the frame count, the frame table, counts against max_decoded_bytes before it
// grows: a GIF of thousands of tiny frames under a small limit is a bomb, refused with nothing kept.
TEST(GifDecoder, AFrameTableBeyondTheDecodedBytesLimitIsTooLarge) {
  GifSpec spec;
  spec.width = spec.height = 2;
  spec.global_palette = MakeGifPalette(2, 1);
  for (uint32_t k = 0; k < 2000; ++k) spec.frames.push_back(MakeGifFrame(k % 2, 0, 1, 2, 2, k));
  const Bytes gif = test::EncodeGif(spec);
  DecodeOptions options;
  options.limits.max_decoded_bytes = 16 << 10;  // about 160 table entries
  lethe_purge();
  lethe_stats_reset_peak();
  lethe_stats_t before;
  lethe_stats(&before);
  DecodeResult<AnimatedImage> animation = DecodeGif(gif, options);
  lethe_stats_t after;
  lethe_stats(&after);
  ASSERT_FALSE(animation);
  EXPECT_EQ(animation.error().code, DecodeErrorCode::kTooLarge);
  EXPECT_NE(animation.error().reason.find("frame table"), std::string::npos) << animation.error().reason;
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_LE(after.peak_allocated_bytes - (before.allocated_bytes + before.thread_cache_bytes),
            options.limits.max_decoded_bytes + gif.size() + (64 << 10))
      << "the table, the compressed copy and giflib's state, nothing more";
}

// A frame record stating 20000 x 20000 on an 8 x 8 screen would decompress 400 Mpx to show 64:
// beyond max_frame_pixels as stated (before clipping), it ends the decode, allocating no rows.
TEST(GifDecoder, AFrameStatedBeyondTheFramePixelLimitIsTooLargeWhateverItsClippedSize) {
  GifSpec spec;
  spec.width = spec.height = 8;
  spec.global_palette = MakeGifPalette(4, 1);
  spec.frames.push_back(MakeGifFrame(0, 0, 8, 8, 4, 1));
  spec.frames.push_back(MakeGifFrame(0, 0, 4, 4, 4, 2));
  std::vector<size_t> offsets;
  Bytes gif = test::EncodeGif(spec, &offsets);
  PatchDescriptor(&gif, offsets[1], 2, 2, 20000, 20000);
  DecodeResult<AnimatedImage> animation = DecodeGif(gif);
  ASSERT_FALSE(animation);
  EXPECT_EQ(animation.error().code, DecodeErrorCode::kTooLarge) << animation.error().reason;
  DecodeOptions options;
  // Allowed, it is clipped and its data (4 x 4 worth) ends before its first 20000-pixel row: the
  // frame before it is kept, marked incomplete.
  options.limits.max_frame_pixels = uint64_t{20000} * 20000;
  animation = DecodeGif(gif, options);
  ASSERT_TRUE(animation) << animation.error().reason;
  EXPECT_FALSE(animation->complete());
  ASSERT_EQ(animation->FrameCount(), 1u);
  ExpectFrame(*animation, spec, 0);
}

// An endless animation: 40,000 frames, each with its own palette, play in bounded memory. Past the
// budget the frame count does not matter: the section's peak (the allocator's statistic, not the
// net bytes after it) stays within the budget plus the window, the canvas, the compressed copy and
// the frame table, and the peak of 40,000 frames exceeds that of 4,000 by no more than what grows
// with the count (the copy and the table).
struct PlaybackPeak {
  uint64_t peak_bytes = 0;        // the section's peak: decode, then every frame composed once
  uint64_t table_bytes = 0;       // what grows with the frame count: the table and the copy
  uint64_t window_bytes = 0;      // the window's frames and palettes, at the end
  uint32_t frames_held = 0;
};

GifSpec EndlessAnimation(uint32_t frame_count) {
  GifSpec spec;
  spec.width = spec.height = 64;
  spec.global_palette = MakeGifPalette(16, 2);
  spec.loop_count = 0;
  for (uint32_t k = 0; k < frame_count; ++k) {
    spec.frames.push_back(MakeGifFrame((k * 7) % 48, (k * 5) % 48, 16, 16, 16, k));
    spec.frames.back().local_palette = MakeGifPalette(16, k + 3);
    spec.frames.back().disposal = static_cast<int>(k % 4);
  }
  return spec;
}

PlaybackPeak PlayEveryFrame(const GifSpec& spec, const DecodeOptions& options) {
  const Bytes gif = test::EncodeGif(spec);
  PlaybackPeak result;
  lethe_purge();
  lethe_stats_reset_peak();
  lethe_stats_t before;
  lethe_stats(&before);
  {
    DecodeResult<AnimatedImage> animation = DecodeGif(gif, options);
    EXPECT_TRUE(animation) << animation.error().reason;
    if (!animation) return result;
    EXPECT_TRUE(animation->windowed());
    EXPECT_EQ(animation->FrameCount(), spec.frames.size());
    for (uint32_t n = 0; n < animation->FrameCount(); ++n) {
      DecodeResult<const Surface*> canvas = animation->Compose(n);
      EXPECT_TRUE(canvas) << "frame " << n << ": " << canvas.error().reason;
      if (!canvas) return result;
    }
    EXPECT_EQ(test::Compare(test::ReferenceGifFrame(spec, animation->FrameCount() - 1),
                            test::PixelsOf(**animation->Compose(animation->FrameCount() - 1))),
              "");
    const AnimationMemory memory = animation->Memory();
    result.frames_held = memory.frames_held;
    // Each held frame: 256 indices + a 16-colour palette, as the allocator sizes them.
    result.window_bytes = uint64_t{memory.frames_held} * (lethe_good_size(256) + lethe_good_size(64));
    result.table_bytes = memory.bytes_frames - result.window_bytes + memory.bytes_compressed;
    // At rest the table holds one entry a frame and nothing else: no palette of a frame outside
    // the window stays behind.
    EXPECT_LE(memory.bytes_frames - result.window_bytes, uint64_t{112} * spec.frames.size());
  }
  lethe_stats_t after;
  lethe_stats(&after);
  result.peak_bytes = after.peak_allocated_bytes - (before.allocated_bytes + before.thread_cache_bytes);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes) << "everything freed";
  return result;
}

TEST(GifDecoder, PlaysFortyThousandFramesWithinTheBudgetPlusTheWindow) {
  DecodeOptions options;
  options.animation.frame_budget_bytes = 64 << 10;
  const PlaybackPeak endless = PlayEveryFrame(EndlessAnimation(40000), options);
  ASSERT_GT(endless.frames_held, 0u);
  const uint64_t budget = options.animation.frame_budget_bytes;
  const uint64_t canvas = 64 * 64 * 4 * 2;  // the canvas and a restore-previous rectangle at most
  const uint64_t scratch = 64 << 10;        // a frame decoded into scratch, giflib's buffers, slack
  EXPECT_LE(endless.peak_bytes, budget + endless.window_bytes + canvas + endless.table_bytes +
                                    scratch)
      << "table and copy " << endless.table_bytes << ", window " << endless.window_bytes;
  const PlaybackPeak shorter = PlayEveryFrame(EndlessAnimation(4000), options);
  EXPECT_EQ(shorter.frames_held, endless.frames_held) << "the window does not depend on the count";
  EXPECT_LE(endless.peak_bytes,
            shorter.peak_bytes + (endless.table_bytes - shorter.table_bytes) + scratch);
  std::printf("40,000 frames: peak %llu B (budget %llu, window %llu, table+copy %llu); "
              "4,000 frames: peak %llu B (table+copy %llu)\n",
              static_cast<unsigned long long>(endless.peak_bytes),
              static_cast<unsigned long long>(budget),
              static_cast<unsigned long long>(endless.window_bytes),
              static_cast<unsigned long long>(endless.table_bytes),
              static_cast<unsigned long long>(shorter.peak_bytes),
              static_cast<unsigned long long>(shorter.table_bytes));
}

TEST(GifDecoder, SurvivesBadLzwCodeSizes) {
  GifSpec spec;
  spec.width = spec.height = 16;
  spec.global_palette = MakeGifPalette(16, 1);
  spec.frames.push_back(MakeGifFrame(0, 0, 16, 16, 16, 1));
  spec.frames.push_back(MakeGifFrame(0, 0, 16, 16, 16, 2));
  std::vector<size_t> offsets;
  const Bytes gif = test::EncodeGif(spec, &offsets);
  for (uint8_t code_size : {0, 1, 2, 9, 11, 12, 200, 255}) {
    Bytes bad = gif;
    bad[offsets[1] + 10] = code_size;  // the byte after the 10-byte descriptor (no local palette)
    DecodeResult<AnimatedImage> animation = DecodeGif(bad);
    if (animation) {
      EXPECT_GE(animation->FrameCount(), 1u);
      for (uint32_t n = 0; n < animation->FrameCount(); ++n) EXPECT_TRUE(animation->Compose(n));
    }
  }
}

TEST(GifDecoder, EveryPrefixIsAnErrorOrMarkedPartial) {
  const GifSpec spec = MixedAnimation();
  const Bytes gif = test::EncodeGif(spec);
  for (size_t length = 0; length < gif.size(); ++length) {
    DecodeResult<AnimatedImage> animation = DecodeGif(std::span<const uint8_t>(gif.data(), length));
    if (!animation) {
      EXPECT_FALSE(animation.error().reason.empty());
      continue;
    }
    EXPECT_FALSE(animation->complete()) << length << " bytes";
    for (uint32_t n = 0; n < animation->FrameCount(); ++n) ASSERT_TRUE(animation->Compose(n));
  }
}

TEST(GifDecoder, SurvivesBitFlips) {
  const Bytes gif = test::EncodeGif(MixedAnimation());
  for (size_t bit = 0; bit < gif.size() * 8; bit += 7) {
    Bytes flipped = gif;
    flipped[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    DecodeResult<AnimatedImage> animation = DecodeGif(flipped);
    if (!animation) continue;
    for (uint32_t n = 0; n < animation->FrameCount(); ++n) ASSERT_TRUE(animation->Compose(n));
  }
}

TEST(GifDecoder, ReportsOutOfMemoryWhenTheAllocatorRefuses) {
  const Bytes gif = test::EncodeGif(MixedAnimation());
  lethe_fail_after(1);
  DecodeResult<AnimatedImage> animation = DecodeGif(gif);
  lethe_fail_after(0);
  ASSERT_FALSE(animation);
  EXPECT_EQ(animation.error().code, DecodeErrorCode::kOutOfMemory);
}

TEST(GifDecoder, ASingleFrameBecomesWhicheverIsSmaller) {
  GifSpec spec;
  spec.width = 50;
  spec.height = 40;
  spec.global_palette = MakeGifPalette(16, 4);
  spec.frames.push_back(MakeGifFrame(3, 2, 40, 30, 16, 1));
  spec.frames[0].transparent_index = 2;
  const Bytes gif = test::EncodeGif(spec);
  DecodeResult<DecodedImage> image = Decode(gif);
  ASSERT_TRUE(image);
  ASSERT_TRUE(std::holds_alternative<AnimatedImage>(*image));  // 1 byte per pixel at rest
  DecodeOptions options;
  options.target_width = 25;
  options.target_height = 20;
  image = Decode(gif, options);
  ASSERT_TRUE(image);
  ASSERT_TRUE(std::holds_alternative<Surface>(*image));
  const test::Pixels reference = test::ReferenceGifFrame(spec, 0);
  EXPECT_EQ(test::Compare(test::BoxDownscale(reference, 25, 20), test::PixelsOf(std::get<Surface>(*image))), "");
  DecodeResult<Surface> full = DecodeGifToSurface(gif);
  ASSERT_TRUE(full);
  EXPECT_EQ(test::Compare(reference, test::PixelsOf(*full)), "");
}

// A one-frame GIF asked for at a reduced size becomes a Surface made from the frame Decode()
// already decoded: the section's peak holds that frame's indices once, not a second copy from
// decoding the file again.
TEST(Decode, BuildsAOneFrameGifsSurfaceFromTheFrameAlreadyDecoded) {
  GifSpec spec;
  spec.width = spec.height = 1024;
  spec.global_palette = MakeGifPalette(16, 5);
  spec.frames.push_back(MakeGifFrame(0, 0, 1024, 1024, 16, 3));
  const Bytes gif = test::EncodeGif(spec);
  DecodeOptions options;
  options.target_width = options.target_height = 32;
  lethe_purge();
  lethe_stats_reset_peak();
  lethe_stats_t before;
  lethe_stats(&before);
  DecodeResult<DecodedImage> image = Decode(gif, options);
  lethe_stats_t after;
  lethe_stats(&after);
  ASSERT_TRUE(image) << image.error().reason;
  const Surface* surface = std::get_if<Surface>(&*image);
  ASSERT_NE(surface, nullptr);
  EXPECT_TRUE(surface->complete());
  DecodeResult<Surface> reference = DecodeGifToSurface(gif, options);
  ASSERT_TRUE(reference);
  EXPECT_EQ(test::Compare(test::PixelsOf(*reference), test::PixelsOf(*surface)), "");
  const uint64_t frame_bytes = uint64_t{1024} * 1024;
  const uint64_t peak = after.peak_allocated_bytes - (before.allocated_bytes + before.thread_cache_bytes);
  EXPECT_GE(peak, frame_bytes);
  EXPECT_LT(peak, frame_bytes + frame_bytes / 2) << "the frame was decoded twice";
}

TEST(Decode, PicksTheDecoderBySignature) {
  EXPECT_TRUE(std::holds_alternative<Surface>(*Decode(test::EncodePng(test::PngSpec()))));
  EXPECT_TRUE(std::holds_alternative<Surface>(*Decode(test::EncodeJpeg(test::JpegSpec()))));
  EXPECT_TRUE(std::holds_alternative<AnimatedImage>(*Decode(test::EncodeGif(MixedAnimation()))));
  const Bytes bmp = {'B', 'M', 0, 0, 0, 0, 0, 0};
  DecodeResult<DecodedImage> image = Decode(bmp);
  ASSERT_FALSE(image);
  EXPECT_EQ(image.error().code, DecodeErrorCode::kUnsupported);
}

TEST(Probe, ReadsHeadersWithoutDecoding) {
  DecodeResult<ImageInfo> gif = Probe(test::EncodeGif(MixedAnimation()));
  ASSERT_TRUE(gif);
  EXPECT_EQ(gif->format, ImageFormat::kGif);
  EXPECT_EQ(gif->width, 40u);
  EXPECT_EQ(gif->frame_count, 6u);
  EXPECT_TRUE(gif->has_alpha);
  EXPECT_TRUE(gif->interlaced);
  test::PngSpec png_spec;
  png_spec.interlaced = true;
  png_spec.color_type = 3;
  png_spec.trns = true;
  DecodeResult<ImageInfo> png = Probe(test::EncodePng(png_spec));
  ASSERT_TRUE(png);
  EXPECT_EQ(png->format, ImageFormat::kPng);
  EXPECT_EQ(png->width, png_spec.width);
  EXPECT_TRUE(png->has_alpha);
  EXPECT_TRUE(png->interlaced);
  test::JpegSpec jpeg_spec;
  jpeg_spec.progressive = true;
  DecodeResult<ImageInfo> jpeg = Probe(test::EncodeJpeg(jpeg_spec));
  ASSERT_TRUE(jpeg);
  EXPECT_TRUE(jpeg->progressive);
  EXPECT_EQ(jpeg->height, jpeg_spec.height);
  EXPECT_FALSE(Probe(Bytes{'G', 'I', 'F', '8', '9', 'a', 1}));
}

}  // namespace
}  // namespace lethe
