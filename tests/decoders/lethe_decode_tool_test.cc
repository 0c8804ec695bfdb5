// Runs the lethe-decode tool (path from the build) on images the test makes: output, JSON keys,
// exit codes 0 / 1 / 2, and --out.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "test_images.h"

namespace lethe {
namespace {

struct ToolRun {
  int status = -1;
  std::string output;
};

ToolRun RunTool(const std::string& arguments) {
  ToolRun run;
  const std::string command = std::string(LETHE_DECODE_TOOL) + " " + arguments + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t count;
  while ((count = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) run.output.append(buffer, count);
  const int status = pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::filesystem::path WriteTemp(const std::string& name, const test::Bytes& bytes) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "lethe_decode_tool_test";
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return dir / name;
}

test::GifSpec TwoFrames() {
  test::GifSpec spec;
  spec.width = 10;
  spec.height = 8;
  spec.global_palette = test::MakeGifPalette(4, 1);
  spec.frames.push_back(test::MakeGifFrame(0, 0, 10, 8, 4, 1));
  spec.frames.push_back(test::MakeGifFrame(2, 2, 4, 4, 4, 2));
  return spec;
}

TEST(LetheDecodeTool, PrintsOneJsonDocumentForOneFile) {
  const auto gif = WriteTemp("two.gif", test::EncodeGif(TwoFrames()));
  const ToolRun run = RunTool("--json " + gif.string());
  EXPECT_EQ(run.status, 0);
  for (const char* key : {"\"format\":\"gif\"", "\"width\":10", "\"height\":8", "\"frames\":2",
                          "\"complete\":true", "\"bytes_frames\":", "\"bytes_canvas\":",
                          "\"bytes_32bpp\":640"}) {
    EXPECT_NE(run.output.find(key), std::string::npos) << key << " in " << run.output;
  }
  EXPECT_EQ(run.output.find("\"error\""), std::string::npos);
  EXPECT_EQ(run.output.back(), '\n');
}

TEST(LetheDecodeTool, ReportsEveryFailureAndExitsOne) {
  const auto png = WriteTemp("ok.png", test::EncodePng(test::PngSpec()));
  const auto bad = WriteTemp("bad.gif", test::Bytes{'G', 'I', 'F', '8', '9', 'a', 1, 0});
  const ToolRun run = RunTool("--json " + png.string() + " " + bad.string());
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.output.find("\"format\":\"png\""), std::string::npos);
  EXPECT_NE(run.output.find("\"error\":{\"code\":"), std::string::npos) << run.output;
  const ToolRun text = RunTool(bad.string());
  EXPECT_EQ(text.status, 1);
  EXPECT_NE(text.output.find("error"), std::string::npos);
}

TEST(LetheDecodeTool, ExitsTwoOnBadUsage) {
  EXPECT_EQ(RunTool("").status, 2);
  EXPECT_EQ(RunTool("--size 10 x.png").status, 2);
  EXPECT_EQ(RunTool("--limits nonsense=1 x.png").status, 2);
  EXPECT_EQ(RunTool("--frobnicate x.png").status, 2);
}

TEST(LetheDecodeTool, WritesEachFrameAsPngAndHonoursSizeAndLimits) {
  const auto gif = WriteTemp("frames.gif", test::EncodeGif(TwoFrames()));
  const std::filesystem::path out = gif.parent_path() / "out";
  std::filesystem::remove_all(out);
  EXPECT_EQ(RunTool("--out " + out.string() + " " + gif.string()).status, 0);
  EXPECT_TRUE(std::filesystem::exists(out / "frames.0.png"));
  EXPECT_TRUE(std::filesystem::exists(out / "frames.1.png"));
  test::PngSpec spec;
  spec.width = 40;
  spec.height = 20;
  const auto png = WriteTemp("big.png", test::EncodePng(spec));
  const ToolRun scaled = RunTool("--json --size 10x5 " + png.string());
  EXPECT_NE(scaled.output.find("\"width\":10,\"height\":5"), std::string::npos) << scaled.output;
  const ToolRun limited = RunTool("--json --limits frame_pixels=100 " + png.string());
  EXPECT_EQ(limited.status, 1);
  EXPECT_NE(limited.output.find("too_large"), std::string::npos);
}

// The number after "key": in one line of --json output; -1 when the key is missing.
int64_t JsonNumber(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return -1;
  return std::strtoll(json.c_str() + at + key.size() + 3, nullptr, 10);
}

test::GifSpec TwelveFrames() {
  test::GifSpec spec;
  spec.width = 16;
  spec.height = 16;
  spec.global_palette = test::MakeGifPalette(8, 3);
  for (uint32_t k = 0; k < 12; ++k) spec.frames.push_back(test::MakeGifFrame(0, 0, 16, 16, 8, k));
  return spec;
}

// Steady playback of a windowed animation: the window of frames, the compressed copy, and their
// total with the canvas; the figures a browser's memory report gives for the same file.
TEST(LetheDecodeTool, PrintsWhatAWindowedAnimationHoldsAtSteadyState) {
  const test::Bytes bytes = test::EncodeGif(TwelveFrames());
  const auto gif = WriteTemp("twelve.gif", bytes);
  const ToolRun run = RunTool("--json --limits frame_budget=1024 " + gif.string());  // 4 frames
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(JsonNumber(run.output, "frames"), 12);
  EXPECT_EQ(JsonNumber(run.output, "frames_held"), 4) << run.output;
  const int64_t compressed = JsonNumber(run.output, "bytes_compressed");
  EXPECT_GE(compressed, static_cast<int64_t>(bytes.size()));
  EXPECT_LT(compressed, static_cast<int64_t>(2 * bytes.size()));
  EXPECT_EQ(JsonNumber(run.output, "bytes_steady"),
            JsonNumber(run.output, "bytes_frames") + JsonNumber(run.output, "bytes_canvas") +
                compressed);
  EXPECT_GE(JsonNumber(run.output, "bytes_canvas"), 16 * 16 * 4);
  const ToolRun text = RunTool("--limits frame_budget=1024 " + gif.string());
  EXPECT_NE(text.output.find("steady: 4 frames held, compressed copy " + std::to_string(compressed)),
            std::string::npos) << text.output;
}

TEST(LetheDecodeTool, AnAnimationWithinItsBudgetHoldsEveryFrameAndNoCopy) {
  const auto gif = WriteTemp("twelve-held.gif", test::EncodeGif(TwelveFrames()));
  const ToolRun run = RunTool("--json " + gif.string());
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(JsonNumber(run.output, "frames_held"), 12) << run.output;
  EXPECT_EQ(JsonNumber(run.output, "bytes_compressed"), 0);
  EXPECT_EQ(JsonNumber(run.output, "bytes_steady"),
            JsonNumber(run.output, "bytes_frames") + JsonNumber(run.output, "bytes_canvas"));
  const auto png = WriteTemp("held.png", test::EncodePng(test::PngSpec()));
  const ToolRun still = RunTool("--json " + png.string());
  EXPECT_EQ(JsonNumber(still.output, "frames_held"), 1) << still.output;
  EXPECT_EQ(JsonNumber(still.output, "bytes_steady"), JsonNumber(still.output, "bytes_frames"));
}

}  // namespace
}  // namespace lethe
