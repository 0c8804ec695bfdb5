// Errors and warnings of libpng, libjpeg and giflib are captured into DecodeError reasons, never
// printed: the test points file descriptor 2 at a temporary file while decoding damaged images of
// every format (cut short, bytes flipped, bad checksums, warnings that still decode) and expects
// the file to stay empty.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "lethe/decode.h"
#include "test_images.h"

namespace lethe {
namespace {

using test::Bytes;

// Redirects stderr (fd 2) to a temporary file for its lifetime; Captured() returns what was written.
class StderrCapture {
 public:
  StderrCapture() : file_(std::tmpfile()) {
    std::fflush(stderr);
    saved_ = dup(2);
    if (file_ != nullptr) dup2(fileno(file_), 2);
  }
  ~StderrCapture() {
    Restore();
    if (file_ != nullptr) std::fclose(file_);
  }
  std::string Captured() {
    Restore();
    std::string text;
    if (file_ == nullptr) return "(no temporary file)";
    std::rewind(file_);
    char buffer[512];
    size_t count = 0;
    while ((count = std::fread(buffer, 1, sizeof(buffer), file_)) > 0) text.append(buffer, count);
    return text;
  }

 private:
  void Restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    saved_ = -1;
  }
  std::FILE* file_;
  int saved_ = -1;
};

std::vector<Bytes> DamagedVariants(const Bytes& good) {
  std::vector<Bytes> variants;
  for (size_t cut : {good.size() / 4, good.size() / 2, good.size() - 3}) {
    variants.emplace_back(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
  }
  for (size_t at = 8; at < good.size(); at += good.size() / 9 + 1) {
    Bytes flipped = good;
    flipped[at] ^= 0x5A;
    variants.push_back(std::move(flipped));
  }
  Bytes trailing = good;  // junk after the end (a JPEG warning, ignored elsewhere)
  trailing.insert(trailing.end() - 2, {0x12, 0x34, 0x56});
  variants.push_back(std::move(trailing));
  return variants;
}

TEST(DecodeErrors, NothingIsPrintedForDamagedImagesOfAnyFormat) {
  test::PngSpec png_spec;
  png_spec.width = 40;
  png_spec.height = 30;
  png_spec.gamma = 45455;
  test::JpegSpec jpeg_spec;
  jpeg_spec.width = 64;
  jpeg_spec.height = 48;
  test::JpegSpec progressive = jpeg_spec;
  progressive.progressive = true;
  test::GifSpec gif_spec;
  gif_spec.width = 20;
  gif_spec.height = 16;
  gif_spec.global_palette = test::MakeGifPalette(8, 2);
  for (uint32_t k = 0; k < 3; ++k) gif_spec.frames.push_back(test::MakeGifFrame(k, k, 16, 12, 8, k));
  const Bytes inputs[] = {test::EncodePng(png_spec), test::EncodeJpeg(jpeg_spec),
                          test::EncodeJpeg(progressive), test::EncodeGif(gif_spec)};
  int errors = 0, partial = 0;
  std::vector<std::string> reasons;
  {
    StderrCapture capture;
    for (const Bytes& input : inputs) {
      for (const Bytes& variant : DamagedVariants(input)) {
        DecodeOptions options;
        for (uint32_t target : {0u, 9u}) {
          options.target_width = options.target_height = target;
          DecodeResult<DecodedImage> image = Decode(variant, options);
          if (!image) {
            ++errors;
            reasons.push_back(image.error().reason);
          } else if (!IsComplete(*image)) {
            ++partial;
          }
        }
      }
    }
    EXPECT_EQ(capture.Captured(), "");
  }
  EXPECT_GT(errors, 0);
  EXPECT_GT(partial, 0);
  for (const std::string& reason : reasons) {
    EXPECT_FALSE(reason.empty());
    EXPECT_EQ(reason.find('\n'), std::string::npos) << reason;
  }
}

// The capture itself works: a line written to stderr is seen (so the test above can fail).
TEST(DecodeErrors, TheStderrCaptureSeesWhatIsPrinted) {
  StderrCapture capture;
  std::fprintf(stderr, "printed\n");
  EXPECT_EQ(capture.Captured(), "printed\n");
}

}  // namespace
}  // namespace lethe
