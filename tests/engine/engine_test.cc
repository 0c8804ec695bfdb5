// The Engine facade on simulated time: creation errors, navigation, visibility locking, the
// BfCache, animations, drawing, pressure and reports.
#include "lethe/engine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine_test_pages.h"
#include "lethe/window.h"

namespace lethe {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
using testing::PixelAt;
using testing::TestOptions;
using testing::TestSite;

class EngineTest : public ::testing::Test {
 protected:
  std::unique_ptr<Engine> Make(EngineOptions options) { return testing::MakeEngine(std::move(options)); }
  std::unique_ptr<Engine> Make() { return Make(TestOptions(&log_)); }

  // The document images of the window's current page.
  static const std::vector<DocumentImage>& Images(const Engine& engine, WindowId id) {
    return engine.window(id)->document()->images();
  }

  TestSite site_;
  std::vector<std::string> log_;
};

TEST_F(EngineTest, CreateRefusesInconsistentOptions) {
  std::string error;
  ManualClock clock;
  EngineOptions manual = TestOptions(&log_);
  manual.simulated_time = false;
  manual.clock = &clock;
  EXPECT_EQ(Engine::Create(manual, &error), nullptr);
  EXPECT_NE(error.find("simulated_time"), std::string::npos) << error;

  EngineOptions viewport = TestOptions(&log_);
  viewport.viewport_width = 0;
  EXPECT_EQ(Engine::Create(viewport, &error), nullptr);
  EXPECT_NE(error.find("viewport"), std::string::npos) << error;

  EngineOptions font = TestOptions(&log_);
  font.font_path = "/nonexistent/font.ttf";
  EXPECT_EQ(Engine::Create(font, &error), nullptr);
  EXPECT_NE(error.find("/nonexistent/font.ttf"), std::string::npos) << error;
}

TEST_F(EngineTest, NavigateErrorsNameTheFileAndTheProblem) {
  auto engine = Make();
  WindowId tab = engine->OpenWindow();
  testing::WriteFile(site_.dir().File("bad.json"), R"({"height": 10, "items": [{"type": "image"}]})");
  Status bad = engine->Navigate(tab, site_.dir().File("bad.json"));
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("items[0]"), std::string::npos) << bad.message();

  Status missing = engine->Navigate(tab, site_.dir().File("nothing.json"));
  EXPECT_NE(missing.message().find("cannot open"), std::string::npos) << missing.message();
  EXPECT_FALSE(engine->Navigate(tab + 99, site_.Page(1)).ok());
  EXPECT_EQ(engine->window(tab)->document(), nullptr);  // nothing replaced the (empty) page

  testing::WriteFile(site_.dir().File("broken.json"), R"({"height": 100, "items": [
    {"type": "image", "src": "img/none.png", "x": 0, "y": 0, "width": 8, "height": 8}]})");
  ASSERT_TRUE(engine->Navigate(tab, site_.dir().File("broken.json")).ok());
  EXPECT_EQ(engine->window(tab)->document()->broken_images().size(), 1u);
  ASSERT_FALSE(log_.empty());
  EXPECT_NE(log_.back().find("none.png: cannot open"), std::string::npos) << log_.back();
}

TEST_F(EngineTest, NavigatesToASingleImage) {
  auto engine = Make();
  WindowId tab = engine->OpenWindow();
  ASSERT_TRUE(engine->Navigate(tab, site_.Image("red.gif")).ok());
  const auto& images = Images(*engine, tab);
  ASSERT_EQ(images.size(), 1u);
  EXPECT_EQ(images[0].natural_width, 64u);
  EXPECT_FALSE(engine->Navigate(tab, site_.dir().File("page1.txt")).ok());
}

TEST_F(EngineTest, LoadsAPageMadeInMemory) {
  auto engine = Make();
  WindowId tab = engine->OpenWindow();
  PageDescription page;
  page.height = 500;
  page.background = 0xff0000ff;
  page.items.push_back(PageImageItem{site_.Image("green.gif"), {0, 0, 64, 32}});
  ASSERT_TRUE(engine->Load(tab, page, "memory:page").ok());
  EXPECT_EQ(engine->window(tab)->history().current()->url, "memory:page");
  const Framebuffer& frame = engine->DrawFrame();
  EXPECT_EQ(PixelAt(frame, 5, 5), 0xff00ff00u);
  EXPECT_EQ(PixelAt(frame, 100, 100), 0xff0000ffu);
  EXPECT_FALSE(engine->Load(tab + 1, page, "x").ok());
  EXPECT_GT(engine->stats().decode_time.count(), 0);
}

TEST_F(EngineTest, ForegroundViewportImagesAreLockedAndNothingElse) {
  auto engine = Make();
  WindowId tab = engine->OpenWindow();
  ASSERT_TRUE(engine->Navigate(tab, site_.Page(1)).ok());
  const auto& images = Images(*engine, tab);
  SurfaceCache& surfaces = engine->surface_cache();
  EXPECT_TRUE(surfaces.IsImageLocked(images[0].image_id));   // red, at the top
  EXPECT_TRUE(surfaces.IsImageLocked(images[1].image_id));   // the animation
  EXPECT_FALSE(surfaces.IsImageLocked(images[3].image_id));  // green, at y = 2000

  engine->ScrollTo(tab, 1900);
  EXPECT_FALSE(surfaces.IsImageLocked(images[0].image_id));
  EXPECT_TRUE(surfaces.IsImageLocked(images[3].image_id));

  // A second window in the foreground: the first one locks nothing.
  WindowId other = engine->OpenWindow();
  ASSERT_TRUE(engine->Navigate(other, site_.Page(2)).ok());
  EXPECT_FALSE(surfaces.IsImageLocked(Images(*engine, other)[0].image_id));  // background
  engine->SetForegroundWindow(other);
  EXPECT_FALSE(surfaces.IsImageLocked(images[3].image_id));
  EXPECT_TRUE(surfaces.IsImageLocked(Images(*engine, other)[0].image_id));
  engine->CloseWindow(other);
  EXPECT_EQ(engine->foreground_window(), tab);
  EXPECT_TRUE(surfaces.IsImageLocked(images[3].image_id));
}

TEST_F(EngineTest, UnlockedSurfacesExpireOnSimulatedTime) {
  auto engine = Make();
  WindowId tab = engine->OpenWindow();
  ASSERT_TRUE(engine->Navigate(tab, site_.Page(1)).ok());
  engine->DrawFrame();
  uint64_t drawn = engine->Memory().surfaces_bytes;
  EXPECT_GT(drawn, 0u);
  engine->ScrollTo(tab, 1900);  // the top images are no longer visible
  engine->RunFor(seconds(21));  // 2 generations x 10 s
  EXPECT_LT(engine->Memory().surfaces_bytes, drawn);
  EXPECT_GT(engine->surface_cache().stats().expired_count, 0u);
}

TEST_F(EngineTest, DecodesAheadOfScrolling) {
  auto engine = Make();
  WindowId tab = engine->OpenWindow();
  ASSERT_TRUE(engine->Navigate(tab, site_.Page(1)).ok());
  // blue.gif at y = 400 is within 384 px of a 300 px viewport: decoded before any draw.
  EXPECT_GE(engine->stats().decode_ahead_count, 1u);
  EXPECT_EQ(engine->stats().decode_count, 1u);  // blue only: green is far, the rest not drawn
}

TEST_F(EngineTest, BackAndForwardUseTheBfCacheUntilItExpires) {
  auto engine = Make();
  WindowId tab = engine->OpenWindow();
  ASSERT_TRUE(engine->Navigate(tab, site_.Page(1)).ok());
  engine->ScrollTo(tab, 700);
  ASSERT_TRUE(engine->Navigate(tab, site_.Page(2)).ok());
  EXPECT_EQ(engine->bfcache().document_count(), 1u);

  ASSERT_TRUE(engine->GoBack(tab));
  EXPECT_EQ(engine->stats().bfcache_restore_count, 1u);
  EXPECT_EQ(engine->window(tab)->scroll_y(), 700);  // restored with the page
  EXPECT_EQ(engine->bfcache().document_count(), 1u);  // page 2 frozen now
  EXPECT_FALSE(engine->GoBack(tab));

  ASSERT_TRUE(engine->GoForward(tab));
  EXPECT_EQ(engine->stats().bfcache_restore_count, 2u);
  engine->RunFor(minutes(34));  // time to live 30 min (+10%)
  EXPECT_EQ(engine->bfcache().document_count(), 0u);
  uint64_t loads = engine->stats().page_load_count;
  ASSERT_TRUE(engine->GoBack(tab));
  EXPECT_EQ(engine->stats().bfcache_restore_count, 2u);  // reloaded, not restored
  EXPECT_EQ(engine->stats().page_load_count, loads + 1);
  EXPECT_EQ(engine->window(tab)->document()->title(), "one");
}

TEST_F(EngineTest, NavigatingDropsTheForwardListsFrozenDocuments) {
  auto engine = Make();
  WindowId tab = engine->OpenWindow();
  ASSERT_TRUE(engine->Navigate(tab, site_.Page(1)).ok());
  ASSERT_TRUE(engine->Navigate(tab, site_.Page(2)).ok());
  ASSERT_TRUE(engine->GoBack(tab));  // page 2 frozen as the forward entry
  ASSERT_TRUE(engine->Navigate(tab, site_.Page(2)).ok());
  // Page 1 frozen (back); the old forward page 2 is gone.
  EXPECT_EQ(engine->bfcache().document_count(), 1u);
  EXPECT_FALSE(engine->GoForward(tab));
}

TEST_F(EngineTest, AtTheHistoryCapOnlyTheOldestEntrysDocumentGoes) {
  auto engine = Make();
  WindowId tab = engine->OpenWindow();
  // One more page than the history holds: the first entry is dropped by the cap.
  for (size_t i = 0; i <= SessionHistory::kDefaultMaxEntries; ++i) {
    ASSERT_TRUE(engine->Navigate(tab, site_.Page(1 + static_cast<int>(i % 2))).ok());
  }
  ASSERT_EQ(engine->window(tab)->history().entries().size(), SessionHistory::kDefaultMaxEntries);
  const size_t frozen = engine->bfcache().document_count();
  EXPECT_GT(frozen, 0u);  // the recent pages survived the cap
  const uint64_t loads = engine->stats().page_load_count;
  ASSERT_TRUE(engine->GoBack(tab));
  EXPECT_EQ(engine->stats().bfcache_restore_count, 1u);  // restored, not reloaded
  EXPECT_EQ(engine->stats().page_load_count, loads);
  EXPECT_EQ(engine->window(tab)->document()->title(), "two");  // page 50 of 51 (i = 49: page 2)
}

TEST_F(EngineTest, AnimationsAdvanceOnlyInTheForegroundViewport) {
  auto engine = Make();
  WindowId tab = engine->OpenWindow();
  ASSERT_TRUE(engine->Navigate(tab, site_.Page(1)).ok());
  engine->DrawFrame();
  engine->RunFor(seconds(1));  // 100 ms frames
  const DocumentImage& animation = Images(*engine, tab)[1];
  ASSERT_TRUE(animation.animated());
  EXPECT_GE(animation.frames_shown, 9u);
  EXPECT_LE(animation.frames_shown, 11u);

  WindowId other = engine->OpenWindow();
  engine->SetForegroundWindow(other);
  uint64_t before = animation.frames_shown;
  engine->RunFor(seconds(5));
  EXPECT_EQ(animation.frames_shown, before);  // paused in the background
  EXPECT_EQ(animation.frame_timer, 0u);

  engine->SetForegroundWindow(tab);
  engine->RunFor(seconds(1));
  EXPECT_GT(animation.frames_shown, before);
  engine->ScrollTo(tab, 1000);  // scrolled out of view: paused too
  before = animation.frames_shown;
  engine->RunFor(seconds(2));
  EXPECT_EQ(animation.frames_shown, before);
}

TEST_F(EngineTest, AnimationsStopOnTheirLastFrameAfterTheirLoopCount) {
  // Three frames, played once (no loop extension) and twice (loop count 1).
  testing::WriteBytes(site_.Image("once.gif"),
                      testing::SolidGif(16, 16, {testing::kRed, testing::kGreen, testing::kBlue}, 10, -1));
  testing::WriteBytes(site_.Image("twice.gif"),
                      testing::SolidGif(16, 16, {testing::kRed, testing::kGreen, testing::kBlue}, 10, 1));
  testing::WriteFile(site_.dir().File("loops.json"), R"({"height": 100, "items": [
    {"type": "image", "src": "img/once.gif", "x": 0, "y": 0, "width": 16, "height": 16},
    {"type": "image", "src": "img/twice.gif", "x": 20, "y": 0, "width": 16, "height": 16}]})");
  auto engine = Make();
  WindowId tab = engine->OpenWindow();
  ASSERT_TRUE(engine->Navigate(tab, site_.dir().File("loops.json")).ok());
  engine->DrawFrame();
  engine->RunFor(seconds(5));
  const auto& images = Images(*engine, tab);
  EXPECT_EQ(images[0].frames_shown, 2u);  // 0 -> 1 -> 2, then stays
  EXPECT_TRUE(images[0].finished);
  EXPECT_EQ(images[1].frames_shown, 5u);  // 0 -> 1 -> 2 -> 0 -> 1 -> 2
  EXPECT_TRUE(images[1].finished);
  EXPECT_EQ(images[1].frame_timer, 0u);
  EXPECT_EQ(PixelAt(engine->DrawFrame(), 5, 5), 0xff0000ffu);  // the last frame: blue
  EXPECT_EQ(engine->loop().timer_count(), 0u);  // nothing to wake for
}

TEST_F(EngineTest, DrawsImagesAndTextAtTheirLayoutPositions) {
  auto engine = Make();
  WindowId tab = engine->OpenWindow();
  ASSERT_TRUE(engine->Navigate(tab, site_.Page(1)).ok());
  const Framebuffer& frame = engine->DrawFrame();
  ASSERT_EQ(frame.width(), 400u);
  ASSERT_EQ(frame.height(), 300u);
  EXPECT_EQ(PixelAt(frame, 20, 20), 0xffff0000u);    // red.gif at (10,10) 64x32
  EXPECT_EQ(PixelAt(frame, 73, 41), 0xffff0000u);    // its last pixel
  EXPECT_EQ(PixelAt(frame, 74, 42), 0xffffffffu);    // just outside: background
  EXPECT_EQ(PixelAt(frame, 110, 20), 0xffff0000u);   // animation, frame 0 red
  EXPECT_EQ(PixelAt(frame, 390, 290), 0xffffffffu);
  // Text: dark ink somewhere in the run's first line, none below it.
  int ink = 0;
  for (uint32_t y = 60; y < 90; ++y) {
    for (uint32_t x = 10; x < 200; ++x) ink += (PixelAt(frame, x, y) & 0xff) < 128 ? 1 : 0;
  }
  EXPECT_GT(ink, 50);

  engine->RunFor(std::chrono::milliseconds(150));  // the animation's second frame: blue
  EXPECT_EQ(PixelAt(engine->DrawFrame(), 110, 20), 0xff0000ffu);

  engine->ScrollTo(tab, 1990);  // green.gif at y = 2000 -> 10 in the viewport
  EXPECT_EQ(PixelAt(engine->DrawFrame(), 20, 20), 0xff00ff00u);
}

TEST_F(EngineTest, ALongParagraphIsDrawnWhileAnyOfItsLinesIsInView) {
  std::string paragraph;
  for (int i = 0; i < 200; ++i) paragraph += "word ";  // about 40 lines of 300 px at 20 px
  testing::WriteFile(site_.dir().File("long.json"), R"({"height": 3000, "items": [
    {"type": "text", "text": ")" + paragraph + R"(", "x": 10, "y": 10, "width": 300, "size": 20}]})");
  auto engine = Make();
  WindowId tab = engine->OpenWindow();
  ASSERT_TRUE(engine->Navigate(tab, site_.dir().File("long.json")).ok());
  const int height = engine->window(tab)->document()->texts()[0].rect.height;
  EXPECT_GT(height, 25 * 20) << "the layout should know the wrapped height";
  engine->ScrollTo(tab, height - 100);  // only the paragraph's last lines are in view
  const Framebuffer& frame = engine->DrawFrame();
  int ink = 0;
  for (uint32_t y = 0; y < 60; ++y) {
    for (uint32_t x = 10; x < 310; ++x) ink += (PixelAt(frame, x, y) & 0xff) < 128 ? 1 : 0;
  }
  EXPECT_GT(ink, 50);
}

TEST_F(EngineTest, PressureFreesUnlockedMemoryAndBaselineIgnoresIt) {
  auto engine = Make();
  WindowId tab = engine->OpenWindow();
  ASSERT_TRUE(engine->Navigate(tab, site_.Page(1)).ok());
  engine->DrawFrame();
  engine->ScrollTo(tab, 1900);
  ASSERT_TRUE(engine->Navigate(engine->OpenWindow(), site_.Page(2)).ok());  // a background tab
  engine->SetForegroundWindow(tab);
  const uint64_t discardable = engine->Memory().discardable_bytes;
  EXPECT_EQ(engine->stats().pressure_event_count, 0u);
  PressureOutcome outcome = engine->OnMemoryPressure(MemoryPressureLevel::kCritical);
  EXPECT_FALSE(outcome.ignored);
  EXPECT_GT(outcome.freed_bytes, 0u);
  EXPECT_EQ(outcome.freed_bytes, discardable) << "discardable_bytes is what critical frees";
  EXPECT_EQ(engine->Memory().discardable_bytes, 0u);
  EXPECT_EQ(engine->stats().pressure_event_count, 1u);
  EXPECT_EQ(outcome.source, "api");
  EXPECT_EQ(outcome.dispatch.listeners.size(), 5u);
  EXPECT_EQ(engine->last_pressure().freed_bytes, outcome.freed_bytes);
  // Only the visible (locked) green image's surface may remain.
  EXPECT_EQ(engine->Memory().surfaces_bytes, engine->Memory().locked_surfaces_bytes);

  EngineOptions baseline_options = TestOptions(&log_);
  baseline_options.expiration_enabled = false;
  auto baseline = Make(baseline_options);
  WindowId btab = baseline->OpenWindow();
  ASSERT_TRUE(baseline->Navigate(btab, site_.Page(1)).ok());
  baseline->DrawFrame();
  baseline->ScrollTo(btab, 1900);
  uint64_t held = baseline->Memory().surfaces_bytes;
  PressureOutcome ignored = baseline->OnMemoryPressure(MemoryPressureLevel::kCritical);
  EXPECT_TRUE(ignored.ignored);
  EXPECT_EQ(ignored.freed_bytes, 0u);
  baseline->RunFor(minutes(5));  // and nothing expires
  EXPECT_EQ(baseline->Memory().surfaces_bytes, held);
}

TEST_F(EngineTest, TraceRecordsCountersAndEvents) {
  EngineOptions options = TestOptions(&log_);
  options.trace_path = site_.dir().File("trace.json");
  {
    auto engine = Make(options);
    WindowId tab = engine->OpenWindow();
    ASSERT_TRUE(engine->Navigate(tab, site_.Page(1)).ok());
    engine->DrawFrame();
    engine->ScrollTo(tab, 1900);
    engine->RunFor(seconds(25));
    engine->OnMemoryPressure(MemoryPressureLevel::kModerate);
    engine->CloseWindow(tab);
    EXPECT_GT(engine->CollectMemoryReport().Amount("explicit/engine/trace"), 0);
  }
  std::string trace = testing::ReadFile(options.trace_path);
  for (const char* needle : {"\"window-open\"", "\"window-close\"", "\"pressure\"", "\"discard\"",
                             "\"ph\":\"C\"", "\"decoded\""}) {
    EXPECT_NE(trace.find(needle), std::string::npos) << needle;
  }
  // This process's id, not a constant shared by every trace, and the loop thread named.
  EXPECT_NE(trace.find("\"pid\":" + std::to_string(getpid()) + ","), std::string::npos);
  EXPECT_NE(trace.find("\"args\":{\"name\":\"loop\"}"), std::string::npos);
  auto engine = Make();
  EXPECT_FALSE(engine->WriteTrace(site_.dir().File("t.json")).ok());  // no trace_path
  EXPECT_EQ(engine->CollectMemoryReport().Amount("explicit/engine/trace"), 0);
}

TEST_F(EngineTest, ATraceOfALongSessionStaysBounded) {
  EngineOptions options = TestOptions(&log_);
  options.trace_path = site_.dir().File("long-trace.json");
  options.trace_max_events = 100;
  {
    auto engine = Make(options);
    ASSERT_TRUE(engine->Navigate(engine->OpenWindow(), site_.Page(1)).ok());
    engine->RunFor(minutes(30));  // a sample a second: 1800 samples of every figure counter
  }
  auto json = nlohmann::json::parse(testing::ReadFile(options.trace_path));
  EXPECT_LE(json["traceEvents"].size(), 102u);  // + the process and the loop thread names
  EXPECT_GE(json["otherData"]["lethe_counter_sample_stride"].get<int>(), 64);
}

TEST_F(EngineTest, DecodePoolShowsThePlaceholderUntilTheSurfaceIsBackAfterADiscard) {
  EngineOptions options = TestOptions(&log_);
  options.decode_threads = 2;
  auto engine = Make(options);
  WindowId tab = engine->OpenWindow();
  ASSERT_TRUE(engine->Navigate(tab, site_.Page(1)).ok());
  // First sight: no surface and no placeholder yet.
  EXPECT_EQ(PixelAt(engine->DrawFrame(), 20, 20), 0xffecececu);
  EXPECT_GE(engine->stats().blank_draw_count, 1u);
  engine->WaitForDecodes();
  EXPECT_EQ(PixelAt(engine->DrawFrame(), 20, 20), 0xffff0000u);
  std::string red_url = Images(*engine, tab)[0].url;
  auto encoded = engine->image_cache().Get(red_url);
  ASSERT_NE(encoded, nullptr);
  EXPECT_GT(encoded->placeholder().size(), 4u);
  EXPECT_LE(encoded->placeholder_bytes(), 4096u);

  // Scrolled away and discarded by pressure: the compressed bytes and placeholder stay.
  engine->ScrollTo(tab, 1900);
  engine->OnMemoryPressure(MemoryPressureLevel::kCritical);
  engine->ScrollTo(tab, 0);
  uint64_t placeholders = engine->stats().placeholder_draw_count;
  EXPECT_EQ(PixelAt(engine->DrawFrame(), 20, 20), 0xffff0000u);  // the placeholder of a red image
  EXPECT_EQ(engine->stats().placeholder_draw_count, placeholders + 2);  // red and the animation
  engine->WaitForDecodes();
  uint64_t surfaces = engine->stats().surface_draw_count;
  EXPECT_EQ(PixelAt(engine->DrawFrame(), 20, 20), 0xffff0000u);
  EXPECT_GT(engine->stats().surface_draw_count, surfaces);
  EXPECT_EQ(engine->stats().placeholder_draw_count, placeholders + 2);
  EXPECT_GE(engine->surface_cache().stats().redecode_count, 1u);
}

TEST_F(EngineTest, DecodeFailuresAreLoggedAndDrawnAsBlank) {
  auto engine = Make();
  // A PNG whose header probes fine but whose compressed image data is garbage.
  test::PngSpec spec;
  spec.width = 64;
  spec.height = 32;
  std::vector<uint8_t> png = test::EncodePng(spec);
  for (size_t i = 45; i + 16 < png.size(); ++i) png[i] = 0x55;
  testing::WriteBytes(site_.Image("bad.png"), png);
  testing::WriteFile(site_.dir().File("bad.json"), R"({"height": 100, "items": [
    {"type": "image", "src": "img/bad.png", "x": 0, "y": 0, "width": 64, "height": 32}]})");
  WindowId tab = engine->OpenWindow();
  ASSERT_TRUE(engine->Navigate(tab, site_.dir().File("bad.json")).ok());
  EXPECT_EQ(PixelAt(engine->DrawFrame(), 10, 10), 0xffecececu);
  engine->DrawFrame();  // not tried again
  EXPECT_EQ(engine->stats().decode_failure_count, 1u);
  ASSERT_FALSE(log_.empty());
  EXPECT_NE(log_.back().find("bad.png"), std::string::npos) << log_.back();
}

TEST_F(EngineTest, ScreenshotWritesTheFrameAsPng) {
  auto engine = Make();
  WindowId tab = engine->OpenWindow();
  ASSERT_TRUE(engine->Navigate(tab, site_.Page(1)).ok());
  std::string path = site_.dir().File("shot.png");
  ASSERT_TRUE(engine->Screenshot(path).ok());
  std::string png = testing::ReadFile(path);
  std::vector<uint8_t> bytes(png.begin(), png.end());
  test::Pixels pixels = test::ReferencePng(bytes);
  ASSERT_EQ(pixels.width, 400u);
  ASSERT_EQ(pixels.height, 300u);
  const uint8_t* red = pixels.At(20, 20);  // BGRA
  EXPECT_EQ(red[0], 0);
  EXPECT_EQ(red[1], 0);
  EXPECT_EQ(red[2], 255);
  EXPECT_EQ(red[3], 255);
  const uint8_t* white = pixels.At(390, 290);
  EXPECT_EQ(white[0] + white[1] + white[2], 3 * 255);
  int ink = 0;
  for (uint32_t y = 60; y < 90; ++y) {
    for (uint32_t x = 10; x < 200; ++x) ink += pixels.At(x, y)[0] < 128 ? 1 : 0;
  }
  EXPECT_GT(ink, 50);
  Status bad = engine->Screenshot("/nonexistent/dir/shot.png");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("/nonexistent/dir/shot.png"), std::string::npos) << bad.message();
}

TEST_F(EngineTest, FramesWithoutAWindowAreWhite) {
  auto engine = Make();
  EXPECT_EQ(PixelAt(engine->DrawFrame(), 0, 0), 0xffffffffu);
  WindowId tab = engine->OpenWindow();
  engine->CloseWindow(tab);
  EXPECT_EQ(engine->foreground_window(), 0u);
  EXPECT_FALSE(engine->GoBack(tab));
  EXPECT_EQ(PixelAt(engine->DrawFrame(), 399, 299), 0xffffffffu);
}

TEST_F(EngineTest, ClosingAWindowReleasesItsDocumentsAndImages) {
  auto engine = Make();
  WindowId tab = engine->OpenWindow();
  ASSERT_TRUE(engine->Navigate(tab, site_.Page(1)).ok());
  ASSERT_TRUE(engine->Navigate(tab, site_.Page(2)).ok());
  engine->DrawFrame();
  EXPECT_EQ(engine->bfcache().document_count(), 1u);
  engine->CloseWindow(tab);
  EXPECT_EQ(engine->bfcache().document_count(), 0u);
  EXPECT_EQ(engine->Memory().surfaces_bytes, 0u);  // no document uses the images any more
  EXPECT_EQ(engine->image_cache().referenced_bytes(), 0u);
  engine->RunFor(minutes(3));  // unreferenced compressed bytes age out (2 x 60 s)
  EXPECT_EQ(engine->Memory().images_bytes, 0u);
  EXPECT_EQ(engine->Memory().fonts_bytes, 0u);
  EXPECT_EQ(engine->Memory().shaped_words_bytes, 0u);
  // Nothing left to expire: no timer, so an idle engine sleeps.
  EXPECT_EQ(engine->loop().timer_count(), 0u);
  uint64_t fired = engine->loop().stats().timer_fire_count;
  engine->RunFor(minutes(10));
  EXPECT_EQ(engine->loop().stats().timer_fire_count, fired);
}

}  // namespace
}  // namespace lethe
