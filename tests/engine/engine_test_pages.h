// A small site for the Engine's tests: solid-colour GIFs (exact pixels after decoding), a
// two-frame animation, and page descriptions placing them with text. Written into a TempDir.
#ifndef LETHE_TESTS_ENGINE_ENGINE_TEST_PAGES_H_
#define LETHE_TESTS_ENGINE_ENGINE_TEST_PAGES_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine_test_util.h"
#include "lethe/engine.h"
#include "test_images.h"

namespace lethe::testing {

inline void WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  WriteFile(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

// A GIF of `frames` frames, each one solid colour from `colors` (frame i uses colors[i]).
inline std::vector<uint8_t> SolidGif(uint32_t width, uint32_t height,
                                     const std::vector<test::GifColor>& colors, int delay_cs = 10,
                                     int loop_count = 0) {
  test::GifSpec spec;
  spec.width = width;
  spec.height = height;
  spec.global_palette = colors;
  while (spec.global_palette.size() < 2 || (spec.global_palette.size() & (spec.global_palette.size() - 1))) {
    spec.global_palette.push_back({0, 0, 0});
  }
  spec.loop_count = colors.size() > 1 ? loop_count : -1;
  for (size_t i = 0; i < colors.size(); ++i) {
    test::GifFrameSpec frame;
    frame.width = width;
    frame.height = height;
    frame.delay_centiseconds = delay_cs;
    frame.indices.assign(size_t{width} * height, static_cast<uint8_t>(i));
    spec.frames.push_back(std::move(frame));
  }
  return test::EncodeGif(spec);
}

constexpr test::GifColor kRed{255, 0, 0};
constexpr test::GifColor kGreen{0, 255, 0};
constexpr test::GifColor kBlue{0, 0, 255};

// The site:
//   page1.json  400 x 3000: red.gif (10,10 64x32), anim.gif (100,10 32x32, red/blue), a text run
//               "Hello world" at (10,60) size 20, green.gif (10,2000 64x32), blue.gif at (10,400):
//               just below a 300 px viewport, within decode-ahead.
//   page2.json  400 x 1000: blue.gif only (10,10 64x32).
class TestSite {
 public:
  TestSite() {
    WriteBytes(dir_.File("img/red.gif"), SolidGif(64, 32, {kRed}));
    WriteBytes(dir_.File("img/green.gif"), SolidGif(64, 32, {kGreen}));
    WriteBytes(dir_.File("img/blue.gif"), SolidGif(64, 32, {kBlue}));
    WriteBytes(dir_.File("img/anim.gif"), SolidGif(32, 32, {kRed, kBlue}));
    WriteFile(dir_.File("page1.json"), R"({"title": "one", "width": 400, "height": 3000,
      "background": "#ffffff", "items": [
      {"type": "image", "src": "img/red.gif", "x": 10, "y": 10, "width": 64, "height": 32},
      {"type": "image", "src": "img/anim.gif", "x": 100, "y": 10, "width": 32, "height": 32},
      {"type": "text", "text": "Hello world", "x": 10, "y": 60, "width": 300, "size": 20,
       "color": "#000000"},
      {"type": "image", "src": "img/blue.gif", "x": 10, "y": 400, "width": 64, "height": 32},
      {"type": "image", "src": "img/green.gif", "x": 10, "y": 2000, "width": 64, "height": 32}]})");
    WriteFile(dir_.File("page2.json"), R"({"title": "two", "height": 1000, "items": [
      {"type": "image", "src": "img/blue.gif", "x": 10, "y": 10, "width": 64, "height": 32}]})");
  }
  std::string Page(int n) const { return dir_.File("page" + std::to_string(n) + ".json"); }
  std::string Image(const std::string& name) const { return dir_.File("img/" + name); }
  const TempDir& dir() const { return dir_; }

 private:
  TempDir dir_;
};

// Simulated time, decoding inline, no OS pressure sources, a 400 x 300 viewport; log lines kept.
inline EngineOptions TestOptions(std::vector<std::string>* log) {
  EngineOptions options;
  options.simulated_time = true;
  options.decode_threads = 0;
  options.pressure_sources = false;
  options.viewport_width = 400;
  options.viewport_height = 300;
  options.log = [log](std::string_view line) { log->emplace_back(line); };
  return options;
}

// Engine::Create; a failure is recorded in the current test with its reason (and nullptr returned).
inline std::unique_ptr<Engine> MakeEngine(EngineOptions options) {
  std::string error;
  auto engine = Engine::Create(std::move(options), &error);
  EXPECT_NE(engine, nullptr) << error;
  return engine;
}

// The BGRA pixel at (x, y) as 0xAARRGGBB.
inline uint32_t PixelAt(const Framebuffer& frame, uint32_t x, uint32_t y) {
  const uint8_t* p = frame.Row(y) + 4 * size_t{x};
  return uint32_t{p[3]} << 24 | uint32_t{p[2]} << 16 | uint32_t{p[1]} << 8 | p[0];
}

// The fixture of the HTML page tests: an engine on the test site with one tab, pages the test writes
// itself, and readers of the frame.
class HtmlEngineTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(TestOptions(&log_)); }

  // (Re)creates the engine with `options` and opens its tab.
  void Start(EngineOptions options) {
    engine_ = MakeEngine(std::move(options));
    ASSERT_NE(engine_, nullptr);
    tab_ = engine_->OpenWindow();
  }

  // Writes `html` as NAME.html in the test site and navigates the tab to it.
  void ShowHtml(const std::string& html, const std::string& name = "page") {
    const std::string path = site_.dir().File(name + ".html");
    WriteFile(path, html);
    Status status = engine_->Navigate(tab_, path);
    ASSERT_TRUE(status.ok()) << status.message();
  }

  const Framebuffer& Frame() { return engine_->DrawFrame(); }

  // Pixels darker than mid-grey in the rectangle [x0, x1) x [y0, y1): how much ink text left there.
  int Ink(int x0, int y0, int x1, int y1) {
    const Framebuffer& frame = Frame();
    int count = 0;
    for (int y = y0; y < y1; ++y) {
      for (int x = x0; x < x1; ++x) {
        count += (PixelAt(frame, static_cast<uint32_t>(x), static_cast<uint32_t>(y)) & 0xff) < 128;
      }
    }
    return count;
  }

  std::string AllLog() const {
    std::string all;
    for (const std::string& line : log_) all += line + "\n";
    return all;
  }

  TestSite site_;
  std::vector<std::string> log_;
  std::unique_ptr<Engine> engine_;
  WindowId tab_ = 0;
};

}  // namespace lethe::testing

#endif  // LETHE_TESTS_ENGINE_ENGINE_TEST_PAGES_H_
