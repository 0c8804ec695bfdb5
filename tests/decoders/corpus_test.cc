// Decodes every file of the shared acceptance corpus (LETHE_CORPUS_DIR, read in place) and checks
// the outcome against the verdict in MANIFEST.tsv:
//   OK    decodes complete, with the reference libraries' pixels (libpng simplified API,
//         libjpeg-turbo + EXIF orientation, giflib's DGifSlurp + the reference compositor);
//   WARN  decodes, complete or marked partial;
//   FAIL  (and HDR: giflib read the header only) a DecodeError or a result marked partial;
//   the 12-bit and lossless JPEGs fail with kUnsupported.
// Every file stays within the DecodeLimits its decode used: the peak of the bytes allocated through
// lethe_* during the decode (peak_allocated_bytes of lethe_stats, restarted before it) is checked
// against max_decoded_bytes (+ the compressed copy an animation keeps, + the bundled allocator's
// thread-cache granularity); every file needing 8 MiB or more is decoded again with a quarter of
// that as its limit and must be refused or stay within it.
// With CI=true a missing corpus fails; elsewhere the tests are skipped with a message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "lethe/alloc.h"
#include "lethe/decode.h"
#include "test_images.h"

namespace lethe {
namespace {

struct CorpusEntry {
  std::string path;     // relative to the corpus
  std::string verdict;  // OK, WARN, FAIL, HDR
  std::string notes;
};

std::string CorpusDir() { return LETHE_CORPUS_DIR; }

std::vector<CorpusEntry> LoadManifest() {
  std::vector<CorpusEntry> entries;
  std::ifstream manifest(CorpusDir() + "/MANIFEST.tsv");
  std::string line;
  std::getline(manifest, line);  // header
  while (std::getline(manifest, line)) {
    std::vector<std::string> fields;
    std::stringstream stream(line);
    std::string field;
    while (std::getline(stream, field, '\t')) fields.push_back(field);
    if (fields.size() < 5) continue;
    CorpusEntry entry;
    entry.path = fields[0];
    entry.notes = fields[4];
    const std::string marker = "system-lib verdict: ";
    const size_t at = entry.notes.find(marker);
    if (at != std::string::npos) {
      entry.verdict = entry.notes.substr(at + marker.size());
      entry.verdict = entry.verdict.substr(0, entry.verdict.find(' '));
    }
    entries.push_back(entry);
  }
  return entries;
}

test::Bytes ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return test::Bytes(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

bool ExpectsUnsupported(const CorpusEntry& entry) {
  return entry.path.find("ljt-monkey12") != std::string::npos ||
         entry.path.find("jdec-lossless-sel1") != std::string::npos;
}

void CheckPixels(const CorpusEntry& entry, const test::Bytes& bytes, DecodedImage& image) {
  const ImageFormat format = DetectImageFormat(bytes);
  if (format == ImageFormat::kPng) {
    // libpng's simplified API mis-combines Adam7 passes of 16-bit images (see png_decoder_test).
    if (entry.notes.find("16-bit Adam7") != std::string::npos) return;
    EXPECT_EQ(test::Compare(test::ReferencePng(bytes), test::PixelsOf(std::get<Surface>(image))), "");
  } else if (format == ImageFormat::kJpeg) {
    DecodeResult<ImageInfo> info = Probe(bytes);
    const int orientation = info ? info->exif_orientation : 1;
    EXPECT_EQ(test::Compare(test::Orient(test::ReferenceJpeg(bytes), orientation),
                            test::PixelsOf(std::get<Surface>(image))),
              "");
  } else if (format == ImageFormat::kGif) {
    test::GifSpec spec;
    ASSERT_TRUE(test::SlurpGif(bytes, &spec));
    test::ReferenceGifPlayer player(spec);
    if (Surface* surface = std::get_if<Surface>(&image)) {
      EXPECT_EQ(test::Compare(player.Next(), test::PixelsOf(*surface)), "");
      return;
    }
    AnimatedImage& animation = std::get<AnimatedImage>(image);
    ASSERT_EQ(animation.FrameCount(), spec.frames.size());
    for (uint32_t n = 0; n < animation.FrameCount(); ++n) {
      DecodeResult<const Surface*> canvas = animation.Compose(n);
      ASSERT_TRUE(canvas) << canvas.error().reason;
      const std::string difference = test::Compare(player.Next(), test::PixelsOf(**canvas));
      ASSERT_EQ(difference, "") << "frame " << n;
    }
  }
}

// Where the issue's documented GIF policy decides instead of giflib's verdict: "a frame with no
// palette at all is corrupt (earlier frames kept)".
enum class Override { kNone, kNoPaletteFirstFrame, kNoPaletteLaterFrame };
Override OverrideFor(const CorpusEntry& entry) {
  if (entry.path.find("pillow-no_palette.gif") != std::string::npos) return Override::kNoPaletteFirstFrame;
  if (entry.path.find("wuffs-empty-palette.gif") != std::string::npos) return Override::kNoPaletteLaterFrame;
  return Override::kNone;
}


// The peak of the bytes allocated through lethe_* during one section of work, from the
// allocator's statistics (lethe/alloc.h, peak_allocated_bytes). The bundled allocator counts blocks
// parked in the thread cache as allocated, so the figure may exceed the true peak by at most the
// cache's contents (LETHE_THREAD_CACHE_MAX_BYTES per thread, the calling thread's only here: the
// decoders run on it);
// the system shim of the sanitizer presets is exact. Starting with lethe_purge() makes the
// baseline exact (this thread's cache empty).
class PeakProbe {
 public:
  PeakProbe() {
    lethe_purge();
    lethe_stats_reset_peak();
    lethe_stats(&before_);
  }
  uint64_t Rise() const {
    lethe_stats_t now;
    lethe_stats(&now);
    const uint64_t baseline = before_.allocated_bytes + before_.thread_cache_bytes;
    return now.peak_allocated_bytes - std::min(now.peak_allocated_bytes, baseline);
  }

 private:
  lethe_stats_t before_{};
};

uint64_t AllocatorSlackBytes() {
  return std::string(lethe_allocator_name()) == "lethe" ? LETHE_THREAD_CACHE_MAX_BYTES : 0;
}

// What DecodeLimits let one decode hold at once: max_decoded_bytes of decoded data (surface, or
// stored frames + canvas, and the decoders' row buffers) plus the copy of the compressed input an
// animation keeps to decode ahead (bounded by max_input_bytes; at most the input's size).
uint64_t AllowedPeakBytes(const DecodeLimits& limits, size_t input_bytes) {
  return limits.max_decoded_bytes + std::min<uint64_t>(input_bytes, limits.max_input_bytes) +
         AllocatorSlackBytes();
}

// Decodes needing at least this much get a second decode under a limit of a quarter of it.
constexpr uint64_t kTightCheckMinPeakBytes = uint64_t{8} << 20;

// Decodes `bytes` again with max_decoded_bytes at a quarter of what the default decode needed: the
// decode must either be refused or stay within that limit. A decoder that ignored the limit would
// need the same peak again (4x the limit, more than the allowance of limit + input copy + 3 MiB
// for the thread cache whenever that stays below 4x the limit), so this assertion can fail;
// CorpusPeak.ATightLimitRefusesADecodeWhosePeakTheProbeSees shows the probe sees that peak.
void CheckTightLimit(const test::Bytes& bytes, uint64_t default_peak_bytes) {
  DecodeOptions options;
  options.limits.max_decoded_bytes = default_peak_bytes / 4;
  const PeakProbe probe;
  DecodeResult<DecodedImage> image = Decode(bytes, options);
  const uint64_t peak_bytes = probe.Rise();
  SCOPED_TRACE("max_decoded_bytes " + std::to_string(options.limits.max_decoded_bytes));
  EXPECT_LE(peak_bytes, AllowedPeakBytes(options.limits, bytes.size()));
  if (!image) {
    const DecodeErrorCode code = image.error().code;
    EXPECT_TRUE(code == DecodeErrorCode::kTooLarge || code == DecodeErrorCode::kCorrupt ||
                code == DecodeErrorCode::kTruncated)
        << image.error().reason;
  }
}

void CheckFile(const CorpusEntry& entry) {
  const test::Bytes bytes = ReadFile(CorpusDir() + "/" + entry.path);
  ASSERT_FALSE(bytes.empty()) << entry.path;
  const DecodeOptions options;
  const PeakProbe probe;
  DecodeResult<DecodedImage> image = Decode(bytes, options);
  const uint64_t peak_bytes = probe.Rise();
  EXPECT_LE(peak_bytes, AllowedPeakBytes(options.limits, bytes.size()));
  if (image && peak_bytes >= kTightCheckMinPeakBytes) CheckTightLimit(bytes, peak_bytes);
  if (ExpectsUnsupported(entry)) {
    ASSERT_FALSE(image);
    EXPECT_EQ(image.error().code, DecodeErrorCode::kUnsupported) << image.error().reason;
    return;
  }
  if (OverrideFor(entry) == Override::kNoPaletteFirstFrame) {
    ASSERT_FALSE(image);
    EXPECT_EQ(image.error().code, DecodeErrorCode::kCorrupt) << image.error().reason;
    return;
  }
  if (OverrideFor(entry) == Override::kNoPaletteLaterFrame) {
    ASSERT_TRUE(image) << image.error().reason;
    EXPECT_FALSE(IsComplete(*image));
    return;
  }
  if (entry.verdict == "OK") {
    ASSERT_TRUE(image) << image.error().reason;
    EXPECT_TRUE(IsComplete(*image));
    CheckPixels(entry, bytes, *image);
  } else if (entry.verdict == "WARN") {
    ASSERT_TRUE(image) << image.error().reason;
  } else {
    if (image) {
      EXPECT_FALSE(IsComplete(*image)) << "a " << entry.verdict << " file decoded as complete";
    } else {
      EXPECT_FALSE(image.error().reason.empty());
    }
  }
  // Whatever came out can be drawn.
  if (image) {
    if (AnimatedImage* animation = std::get_if<AnimatedImage>(&*image)) {
      for (uint32_t n = 0; n < animation->FrameCount(); ++n) ASSERT_TRUE(animation->Compose(n));
    }
  }
}

// One test per corpus folder (one process each under CTest, with its own time limit).
class CorpusFolder : public testing::TestWithParam<std::string> {};

TEST_P(CorpusFolder, EveryFileDecodesAsItsVerdictSays) {
  if (!std::filesystem::exists(CorpusDir() + "/MANIFEST.tsv")) GTEST_SKIP() << "no corpus";
  int checked = 0;
  for (const CorpusEntry& entry : LoadManifest()) {
    if (entry.path.rfind(GetParam() + "/", 0) != 0) continue;
    SCOPED_TRACE(entry.path);
    CheckFile(entry);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

std::string NameOf(const testing::TestParamInfo<std::string>& info) {
  std::string name;
  for (char c : info.param) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Manifest, CorpusFolder,
                         testing::Values("valid/png", "valid/jpeg", "valid/gif", "animated/gif",
                                         "malformed/png", "malformed/jpeg", "malformed/gif"),
                         NameOf);

// The probe behind the corpus checks sees a decode's peak, and a limit below it is honoured: a
// 2048x2048 PNG needs its 16 MiB surface, which is far more than a 2 MiB limit allows, so the
// corpus assertion would fail for a decoder that ignored max_decoded_bytes.
TEST(CorpusPeak, ATightLimitRefusesADecodeWhosePeakTheProbeSees) {
  test::PngSpec spec;
  spec.width = 2048;
  spec.height = 2048;
  spec.color_type = 3;  // paletted: a 4 MB input for a 16 MiB surface, so that the input copy and
                        // the thread-cache slack leave the allowance well under the peak
  const test::Bytes bytes = test::EncodePng(spec);
  const DecodeOptions options;
  uint64_t default_peak_bytes = 0;
  {
    const PeakProbe probe;
    DecodeResult<DecodedImage> image = Decode(bytes, options);
    ASSERT_TRUE(image) << image.error().reason;
    default_peak_bytes = probe.Rise();
    EXPECT_GE(default_peak_bytes, std::get<Surface>(*image).MemoryBytes());
  }
  DecodeOptions tight;
  tight.limits.max_decoded_bytes = uint64_t{2} << 20;
  ASSERT_GT(default_peak_bytes, AllowedPeakBytes(tight.limits, bytes.size()))
      << "the image is too small to tell a limit that is honoured from one that is not";
  const PeakProbe probe;
  DecodeResult<DecodedImage> image = Decode(bytes, tight);
  ASSERT_FALSE(image);
  EXPECT_EQ(image.error().code, DecodeErrorCode::kTooLarge) << image.error().reason;
  EXPECT_LE(probe.Rise(), AllowedPeakBytes(tight.limits, bytes.size()));
}

TEST(Corpus, IsPresent) {
  if (std::filesystem::exists(CorpusDir() + "/MANIFEST.tsv")) {
    const std::vector<CorpusEntry> entries = LoadManifest();
    EXPECT_GT(entries.size(), 200u);
    for (const CorpusEntry& entry : entries) {  // every file belongs to a folder checked above
      EXPECT_TRUE(entry.path.rfind("valid/", 0) == 0 || entry.path.rfind("animated/gif/", 0) == 0 ||
                  entry.path.rfind("malformed/", 0) == 0)
          << entry.path;
    }
    return;
  }
  const char* ci = std::getenv("CI");
  if (ci != nullptr && std::string(ci) == "true") {
    FAIL() << "the corpus is missing at " << CorpusDir() << " (CI=true)";
  }
  GTEST_SKIP() << "no corpus at " << CorpusDir() << "; corpus tests skipped";
}

}  // namespace
}  // namespace lethe
