#include "display_surface.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <variant>

#include "lethe/decode.h"

namespace lethe::internal {

size_t AnimationSurface::MemoryBytes() const {
  AnimationMemory memory = image_.Memory();
  return static_cast<size_t>(memory.bytes_frames + memory.bytes_canvas + memory.bytes_compressed);
}

std::vector<uint8_t> MakePlaceholder(const Surface& source) {
  if (source.empty()) return {};
  // Fit within kPlaceholderMaxSide x kPlaceholderMaxSide, keeping the aspect ratio.
  uint32_t longest = std::max(source.width(), source.height());
  uint32_t width = std::max<uint32_t>(1, static_cast<uint32_t>(uint64_t{source.width()} *
                                                               kPlaceholderMaxSide / longest));
  uint32_t height = std::max<uint32_t>(1, static_cast<uint32_t>(uint64_t{source.height()} *
                                                                kPlaceholderMaxSide / longest));
  width = std::min(width, source.width());
  height = std::min(height, source.height());
  std::vector<uint8_t> out(4 + size_t{width} * height * 4);
  out[0] = static_cast<uint8_t>(width);
  out[1] = static_cast<uint8_t>(height);
  // Area average: each output pixel is the mean of its source block (blocks tile the source).
  for (uint32_t y = 0; y < height; ++y) {
    uint32_t y0 = static_cast<uint32_t>(uint64_t{y} * source.height() / height);
    uint32_t y1 = std::max(y0 + 1, static_cast<uint32_t>(uint64_t{y + 1} * source.height() / height));
    for (uint32_t x = 0; x < width; ++x) {
      uint32_t x0 = static_cast<uint32_t>(uint64_t{x} * source.width() / width);
      uint32_t x1 = std::max(x0 + 1, static_cast<uint32_t>(uint64_t{x + 1} * source.width() / width));
      uint64_t sum[4] = {0, 0, 0, 0};
      for (uint32_t sy = y0; sy < y1; ++sy) {
        const uint8_t* row = source.Row(sy);
        for (uint32_t sx = x0; sx < x1; ++sx) {
          for (int c = 0; c < 4; ++c) sum[c] += row[4 * sx + c];
        }
      }
      uint64_t count = uint64_t{y1 - y0} * (x1 - x0);
      uint8_t* pixel = out.data() + 4 + (size_t{y} * width + x) * 4;
      for (int c = 0; c < 4; ++c) pixel[c] = static_cast<uint8_t>((sum[c] + count / 2) / count);
    }
  }
  return out;
}

Surface PlaceholderToSurface(std::span<const uint8_t> bytes) {
  if (bytes.size() < 4) return {};
  uint32_t width = bytes[0];
  uint32_t height = bytes[1];
  if (width == 0 || height == 0 || bytes.size() != 4 + size_t{width} * height * 4) return {};
  DecodeResult<Surface> surface = Surface::Create(width, height);
  if (!surface) return {};
  for (uint32_t y = 0; y < height; ++y) {
    std::memcpy(surface->Row(y), bytes.data() + 4 + size_t{y} * width * 4, size_t{width} * 4);
  }
  return std::move(surface).value();
}

namespace {

void FillFromAnimation(AnimatedImage& image, DecodeOutcome& outcome, bool want_placeholder) {
  outcome.frame_delays_ms.reserve(image.FrameCount());
  for (uint32_t i = 0; i < image.FrameCount(); ++i) {
    outcome.frame_delays_ms.push_back(image.Frame(i).delay_ms);
  }
  // The canvas exists before the cache reads MemoryBytes (it must not grow while cached).
  DecodeResult<const Surface*> canvas = image.Compose(0);
  if (!canvas) {
    outcome.error = canvas.error().reason;
    return;
  }
  if (want_placeholder) outcome.placeholder = MakePlaceholder(**canvas);
  outcome.surface = std::make_shared<AnimationSurface>(std::move(image));
}

}  // namespace

DecodeOutcome DecodeForDisplay(const DecodeJob& job) {
  DecodeOutcome outcome;
  outcome.key = job.key;
  outcome.url = job.url;
  outcome.ahead = job.ahead;
  if (job.encoded == nullptr) {
    outcome.error = job.url + ": no compressed bytes";
    return outcome;
  }
  auto start = std::chrono::steady_clock::now();
  DecodeOptions options;
  if ((job.key.flags & kAnimatedSurfaceFlag) == 0) {
    options.target_width = job.key.width;
    options.target_height = job.key.height;
  }
  DecodeResult<DecodedImage> decoded = Decode(job.encoded->bytes(), options);
  if (!decoded) {
    outcome.error = job.url + ": " + std::string(DecodeErrorCodeName(decoded.error().code)) + ": " +
                    decoded.error().reason;
  } else if (auto* still = std::get_if<Surface>(&*decoded)) {
    if (job.want_placeholder) outcome.placeholder = MakePlaceholder(*still);
    outcome.surface = std::make_shared<StillSurface>(std::move(*still));
  } else {
    FillFromAnimation(std::get<AnimatedImage>(*decoded), outcome, job.want_placeholder);
    if (!outcome.error.empty()) outcome.error = job.url + ": " + outcome.error;
  }
  outcome.decode_time = std::chrono::duration_cast<Clock::Duration>(
      std::chrono::steady_clock::now() - start);
  return outcome;
}

}  // namespace lethe::internal
