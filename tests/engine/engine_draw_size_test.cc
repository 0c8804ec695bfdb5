// Decode at draw size, end to end (issue 17): the engine decodes an image at the size a page
// draws it, never at its natural size, and keeps one surface per size in use.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine_test_pages.h"
#include "lethe/engine.h"
#include "test_images.h"

namespace lethe::testing {
namespace {

using std::chrono::seconds;

constexpr uint64_t kNaturalBytes = uint64_t{4000} * 3000 * 4;
constexpr uint64_t kLargeBytes = uint64_t{400} * 300 * 4;
constexpr uint64_t kSmallBytes = uint64_t{200} * 150 * 4;

class EngineDrawSizeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::JpegSpec spec;
    spec.width = 4000;
    spec.height = 3000;
    spec.quality = 50;
    WriteBytes(dir_.File("img/photo.jpg"), test::EncodeJpeg(spec));
  }

  // A page drawing photo.jpg at each of `sizes` (w x h), side by side from the left.
  std::string Page(const std::string& name, const std::vector<std::pair<int, int>>& sizes) {
    std::string items;
    int x = 0;
    for (const auto& [width, height] : sizes) {
      if (!items.empty()) items += ",";
      items += R"({"type": "image", "src": "img/photo.jpg", "x": )" + std::to_string(x) +
               R"(, "y": 0, "width": )" + std::to_string(width) + R"(, "height": )" +
               std::to_string(height) + "}";
      x += width;
    }
    WriteFile(dir_.File(name), R"({"title": "photo", "width": 800, "height": 600, "items": [)" +
                                   items + "]}");
    return dir_.File(name);
  }

  std::unique_ptr<Engine> Make() {
    EngineOptions options = TestOptions(&log_);
    options.viewport_width = 800;
    options.viewport_height = 600;
    return MakeEngine(options);
  }

  // Draws until no decode is pending (decode_threads = 0: each DrawFrame decodes what it missed).
  static void DrawUntilDecoded(Engine& engine) {
    for (int i = 0; i < 4; ++i) {
      engine.DrawFrame();
      engine.RunFor(seconds(0));
    }
  }

  static int64_t DecodedBytes(Engine& engine) {
    return engine.CollectMemoryReport().Sum("explicit/images/raster");
  }

  TempDir dir_;
  std::vector<std::string> log_;
};

TEST_F(EngineDrawSizeTest, A4000x3000JpegDrawnAt400x300IsDecodedAt400x300) {
  auto engine = Make();
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(engine->Navigate(engine->OpenWindow(), Page("one.json", {{400, 300}})).ok());
  DrawUntilDecoded(*engine);
  EXPECT_EQ(engine->stats().decode_count, 1u);
  EXPECT_EQ(engine->surface_cache().surface_count(), 1u);
  // The surface's bytes are the draw size's (rounded up to the allocator's class), far from the
  // 48 MB of the natural size.
  const int64_t decoded = DecodedBytes(*engine);
  EXPECT_GE(decoded, static_cast<int64_t>(kLargeBytes));
  EXPECT_LT(decoded, static_cast<int64_t>(kLargeBytes * 5 / 4)) << "natural: " << kNaturalBytes;
  EXPECT_EQ(engine->surface_cache().used_bytes(), static_cast<uint64_t>(decoded));
}

TEST_F(EngineDrawSizeTest, TheSameImageDrawnAtTwoSizesKeepsBothSurfacesWhileBothAreUsed) {
  auto engine = Make();
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(
      engine->Navigate(engine->OpenWindow(), Page("two.json", {{400, 300}, {200, 150}})).ok());
  DrawUntilDecoded(*engine);
  EXPECT_EQ(engine->stats().decode_count, 2u);
  EXPECT_EQ(engine->surface_cache().surface_count(), 2u);
  const int64_t decoded = DecodedBytes(*engine);
  EXPECT_GE(decoded, static_cast<int64_t>(kLargeBytes + kSmallBytes));
  EXPECT_LT(decoded, static_cast<int64_t>((kLargeBytes + kSmallBytes) * 5 / 4));
  // Both on screen: both locked, neither expires nor is decoded again, however long it stays.
  EXPECT_EQ(engine->surface_cache().locked_bytes(), static_cast<uint64_t>(decoded));
  engine->RunFor(seconds(120));
  DrawUntilDecoded(*engine);
  EXPECT_EQ(engine->surface_cache().surface_count(), 2u);
  EXPECT_EQ(engine->stats().decode_count, 2u);
  EXPECT_EQ(DecodedBytes(*engine), decoded);
}

}  // namespace
}  // namespace lethe::testing
