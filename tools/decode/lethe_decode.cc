// lethe-decode — decodes image files with Lethe's decoders and prints, for each, the format,
// dimensions, frames, decoded bytes (stored paletted frames, canvas, and the 32 bpp equivalent),
// whether it is complete, or the error code and reason. An animation is played through one whole
// loop first, so that its figures are those of steady playback: the frames held then (all, or the
// decode-ahead window), the compressed copy a windowed animation keeps, and the steady total
// (frames + canvas + copy), the figure to set beside a browser's for the same file.
//
//   lethe-decode [--json] [--out DIR] [--size WxH] [--limits KEY=N[,KEY=N...]] FILE...
//
// Exit status: 0 when every file decoded, 1 when any failed (each failure is still reported),
// 2 on bad usage.
#include <png.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lethe/decode.h"
#include "lethe/json_string.h"

using lethe::JsonString;

namespace {

constexpr const char kUsage[] =
    "usage: lethe-decode [--json] [--out DIR] [--size WxH] [--limits KEY=N[,KEY=N...]] FILE...\n"
    "  --json         one JSON object per file (format, width, height, frames, complete,\n"
    "                 bytes_frames, bytes_canvas, bytes_32bpp, frames_held, bytes_compressed,\n"
    "                 bytes_steady, error {code, reason}); an animation's figures are taken\n"
    "                 after one whole loop: steady playback\n"
    "  --out DIR      write every decoded frame as PNG into DIR\n"
    "  --size WxH     decode at this size (never larger than natural)\n"
    "  --limits ...   frame_pixels, image_pixels, frames, decoded_bytes, input_bytes,\n"
    "                 frame_budget (bytes of stored frames before the decode-ahead window)\n";

struct Options {
  bool json = false;
  std::string out_dir;
  lethe::DecodeOptions decode;
  std::vector<std::string> files;
};

bool ParseNumber(const std::string& text, uint64_t* value) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  *value = std::strtoull(text.c_str(), nullptr, 10);
  return errno == 0;
}

bool ParseSize(const std::string& text, lethe::DecodeOptions* options) {
  const size_t x = text.find('x');
  uint64_t width = 0, height = 0;
  if (x == std::string::npos || !ParseNumber(text.substr(0, x), &width) ||
      !ParseNumber(text.substr(x + 1), &height) || width == 0 || height == 0 ||
      width > UINT32_MAX || height > UINT32_MAX) {
    return false;
  }
  options->target_width = static_cast<uint32_t>(width);
  options->target_height = static_cast<uint32_t>(height);
  return true;
}

bool ParseLimits(const std::string& text, lethe::DecodeOptions* options) {
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const size_t equals = item.find('=');
    uint64_t value = 0;
    if (equals == std::string::npos || !ParseNumber(item.substr(equals + 1), &value)) return false;
    const std::string key = item.substr(0, equals);
    lethe::DecodeLimits& limits = options->limits;
    if (key == "frame_pixels") limits.max_frame_pixels = value;
    else if (key == "image_pixels") limits.max_image_pixels = value;
    else if (key == "frames" && value <= UINT32_MAX) limits.max_frame_count = static_cast<uint32_t>(value);
    else if (key == "decoded_bytes") limits.max_decoded_bytes = value;
    else if (key == "input_bytes") limits.max_input_bytes = value;
    else if (key == "frame_budget") options->animation.frame_budget_bytes = value;
    else return false;
    start = comma + 1;
  }
  return true;
}

// Returns false on bad usage (message printed).
bool ParseArguments(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string text;
    if (argument == "--json") {
      options->json = true;
    } else if (argument == "--out") {
      if (!value(&options->out_dir)) return false;
    } else if (argument == "--size") {
      if (!value(&text) || !ParseSize(text, &options->decode)) return false;
    } else if (argument == "--limits") {
      if (!value(&text) || !ParseLimits(text, &options->decode)) return false;
    } else if (argument == "-h" || argument == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (argument.size() > 1 && argument[0] == '-') {
      return false;
    } else {
      options->files.push_back(argument);
    }
  }
  return !options->files.empty();
}

struct Report {
  std::string file;
  std::string format = "unknown";
  uint32_t width = 0, height = 0, frames = 0;
  bool complete = false;
  uint64_t bytes_frames = 0, bytes_canvas = 0, bytes_32bpp = 0;
  // Steady playback: frames whose indices are in memory, the compressed copy kept to decode ahead
  // (0 unless windowed), and frames + canvas + copy.
  uint32_t frames_held = 0;
  uint64_t bytes_compressed = 0, bytes_steady = 0;
  bool failed = false;
  lethe::DecodeError error;
};

// Writes premultiplied BGRA as a straight-alpha PNG.
bool WritePng(const lethe::Surface& surface, const std::string& path) {
  std::vector<uint8_t> straight(size_t{surface.width()} * surface.height() * 4);
  for (uint32_t y = 0; y < surface.height(); ++y) {
    const uint8_t* in = surface.Row(y);
    uint8_t* out = &straight[size_t{y} * surface.width() * 4];
    for (uint32_t x = 0; x < surface.width() * 4; x += 4) {
      const uint32_t alpha = in[x + 3];
      for (int c = 0; c < 3; ++c) {
        out[x + c] = alpha == 0 ? 0 : static_cast<uint8_t>(std::min<uint32_t>(255, (in[x + c] * 255 + alpha / 2) / alpha));
      }
      out[x + 3] = static_cast<uint8_t>(alpha);
    }
  }
  png_image image;
  std::memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  image.width = surface.width();
  image.height = surface.height();
  image.format = PNG_FORMAT_BGRA;
  const bool ok = png_image_write_to_file(&image, path.c_str(), 0, straight.data(), 0, nullptr) != 0;
  png_image_free(&image);
  return ok;
}

std::string OutPath(const Options& options, const std::string& file, int frame) {
  std::string name = std::filesystem::path(file).stem().string();
  if (frame >= 0) name += "." + std::to_string(frame);
  return (std::filesystem::path(options.out_dir) / (name + ".png")).string();
}

void DecodeOne(const Options& options, const std::string& file, Report* report) {
  report->file = file;
  std::ifstream stream(file, std::ios::binary);
  if (!stream) {
    report->failed = true;
    report->error = {lethe::DecodeErrorCode::kInvalidArgument, "cannot read " + file};
    return;
  }
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  report->format = std::string(lethe::ImageFormatName(lethe::DetectImageFormat(bytes)));
  lethe::DecodeResult<lethe::DecodedImage> decoded = lethe::Decode(bytes, options.decode);
  if (!decoded) {
    report->failed = true;
    report->error = decoded.error();
    return;
  }
  report->complete = lethe::IsComplete(*decoded);
  if (lethe::Surface* surface = std::get_if<lethe::Surface>(&*decoded)) {
    report->width = surface->width();
    report->height = surface->height();
    report->frames = 1;
    report->bytes_frames = surface->MemoryBytes();
    report->bytes_32bpp = uint64_t{surface->width()} * surface->height() * 4;
    report->frames_held = 1;
    report->bytes_steady = report->bytes_frames;
    if (!options.out_dir.empty() && !WritePng(*surface, OutPath(options, file, -1))) {
      std::fprintf(stderr, "lethe-decode: cannot write %s\n", OutPath(options, file, -1).c_str());
    }
    return;
  }
  lethe::AnimatedImage& animation = std::get<lethe::AnimatedImage>(*decoded);
  report->width = animation.width();
  report->height = animation.height();
  report->frames = animation.FrameCount();
  // One whole loop: a windowed animation's window has then slid through every frame.
  for (uint32_t n = 0; n < animation.FrameCount(); ++n) {
    lethe::DecodeResult<const lethe::Surface*> canvas = animation.Compose(n);
    if (!canvas) {
      report->failed = true;
      report->error = canvas.error();
      return;
    }
    if (!options.out_dir.empty() && !WritePng(**canvas, OutPath(options, file, static_cast<int>(n)))) {
      std::fprintf(stderr, "lethe-decode: cannot write %s\n", OutPath(options, file, static_cast<int>(n)).c_str());
    }
  }
  const lethe::AnimationMemory memory = animation.Memory();
  report->bytes_frames = memory.bytes_frames;
  report->bytes_canvas = memory.bytes_canvas;
  report->bytes_32bpp = memory.bytes_32bpp;
  report->frames_held = memory.frames_held;
  report->bytes_compressed = memory.bytes_compressed;
  report->bytes_steady = memory.bytes_frames + memory.bytes_canvas + memory.bytes_compressed;
}

void Print(const Options& options, const Report& report) {
  if (options.json) {
    std::printf("{\"file\":%s,\"format\":%s,\"width\":%u,\"height\":%u,\"frames\":%u,"
                "\"complete\":%s,\"bytes_frames\":%" PRIu64 ",\"bytes_canvas\":%" PRIu64
                ",\"bytes_32bpp\":%" PRIu64 ",\"frames_held\":%u,\"bytes_compressed\":%" PRIu64
                ",\"bytes_steady\":%" PRIu64,
                JsonString(report.file).c_str(), JsonString(report.format).c_str(), report.width,
                report.height, report.frames, report.complete ? "true" : "false",
                report.bytes_frames, report.bytes_canvas, report.bytes_32bpp, report.frames_held,
                report.bytes_compressed, report.bytes_steady);
    if (report.failed) {
      std::printf(",\"error\":{\"code\":%s,\"reason\":%s}",
                  JsonString(std::string(lethe::DecodeErrorCodeName(report.error.code))).c_str(),
                  JsonString(report.error.reason).c_str());
    }
    std::printf("}\n");
    return;
  }
  if (report.failed) {
    std::printf("%s: %s error %s: %s\n", report.file.c_str(), report.format.c_str(),
                std::string(lethe::DecodeErrorCodeName(report.error.code)).c_str(),
                report.error.reason.c_str());
    return;
  }
  std::printf("%s: %s %ux%u, %u frame%s, %s, stored %" PRIu64 " B, canvas %" PRIu64
              " B, 32 bpp %" PRIu64 " B (%.2fx); steady: %u frame%s held, compressed copy %" PRIu64
              " B, total %" PRIu64 " B\n",
              report.file.c_str(), report.format.c_str(), report.width, report.height,
              report.frames, report.frames == 1 ? "" : "s", report.complete ? "complete" : "partial",
              report.bytes_frames, report.bytes_canvas, report.bytes_32bpp,
              report.bytes_frames + report.bytes_canvas == 0
                  ? 0.0
                  : static_cast<double>(report.bytes_32bpp) / static_cast<double>(report.bytes_frames + report.bytes_canvas),
              report.frames_held, report.frames_held == 1 ? "" : "s", report.bytes_compressed,
              report.bytes_steady);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseArguments(argc, argv, &options)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (!options.out_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(options.out_dir, error);
    if (error) {
      std::fprintf(stderr, "lethe-decode: cannot create %s: %s\n", options.out_dir.c_str(), error.message().c_str());
      return 2;
    }
  }
  bool any_failed = false;
  for (const std::string& file : options.files) {
    Report report;
    DecodeOne(options, file, &report);
    Print(options, report);
    any_failed = any_failed || report.failed;
  }
  return any_failed ? 1 : 0;
}
