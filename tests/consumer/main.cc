// The consumer's program: uses one public header of every layer and checks the results, so that a
// broken install (missing header, missing archive, unresolved dependency) fails here. The engine
// part loads a page (an image and a text run) and draws it.
#include <lethe/alloc.h>
#include <lethe/build_info.h>
#include <lethe/clock.h>
#include <lethe/engine.h>
#include <lethe/image_format.h>
#include <stdlib.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace {

// A 1 x 1 GIF whose only pixel is palette entry 0, red.
const unsigned char kRedGif[] = {'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0x80, 0, 0,
                                 0xff, 0, 0, 0, 0, 0, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0,
                                 2, 2, 0x44, 1, 0, 0x3b};

int LoadAPage() {
  char pattern[] = "/tmp/lethe-consumer-XXXXXX";
  if (mkdtemp(pattern) == nullptr) return 10;
  std::string dir = pattern;
  std::ofstream(dir + "/red.gif", std::ios::binary)
      .write(reinterpret_cast<const char*>(kRedGif), sizeof(kRedGif));
  std::ofstream(dir + "/page.json")
      << R"({"height": 200, "items": [{"type": "image", "src": "red.gif", "x": 0, "y": 0,)"
         R"( "width": 10, "height": 10}, {"type": "text", "text": "consumer", "x": 0, "y": 20,)"
         R"( "width": 100}]})";
  lethe::EngineOptions options;
  options.simulated_time = true;
  options.decode_threads = 0;
  options.pressure_sources = false;
  options.viewport_width = 100;
  options.viewport_height = 50;
  std::string error;
  auto engine = lethe::Engine::Create(options, &error);
  if (engine == nullptr) {
    std::fprintf(stderr, "consumer: %s\n", error.c_str());
    return 11;
  }
  lethe::WindowId tab = engine->OpenWindow();
  lethe::Status status = engine->Navigate(tab, dir + "/page.json");
  if (!status.ok()) {
    std::fprintf(stderr, "consumer: %s\n", status.message().c_str());
    return 12;
  }
  const lethe::Framebuffer& frame = engine->DrawFrame();
  const uint8_t* pixel = frame.Row(5) + 4 * 5;  // BGRA
  if (pixel[2] != 255 || pixel[1] != 0 || pixel[3] != 255) return 13;
  engine->RunFor(std::chrono::seconds(30));
  std::remove((dir + "/red.gif").c_str());
  std::remove((dir + "/page.json").c_str());
  std::remove(dir.c_str());
  return 0;
}

}  // namespace

int main() {
  void* block = lethe_malloc(1000);
  if (block == nullptr || lethe_usable_size(block) < 1000) return 1;
  lethe_free(block);

  const uint8_t gif[] = {'G', 'I', 'F', '8', '9', 'a'};
  if (lethe::DetectImageFormat(gif) != lethe::ImageFormat::kGif) return 2;

  lethe::ManualClock clock;
  auto start = clock.Now();
  clock.Advance(std::chrono::seconds(5));
  if (clock.Now() - start != std::chrono::seconds(5)) return 3;

  if (int failed = LoadAPage()) return failed;

  std::printf("consumer ok (engine drew a page): %s\n", lethe::DescribeBuild().c_str());
  return 0;
}
