// Side-by-side figures (a tool, not a test): DrawFrame of a text-heavy viewport with the per-face
// glyph tables (default) and with them off (glyph_table_max_bytes = 0: FreeType at every draw), in
// one run, alternating. Usage: lethe_glyph_cache_benchmark [frames]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "lethe/engine.h"

namespace {

using Seconds = std::chrono::duration<double>;

lethe::PageDescription TextPage() {
  lethe::PageDescription page;
  page.height = 768;
  page.background = 0xffffffff;
  const std::string paragraph =
      "Lethe keeps what a long browsing session needs and forgets the rest: decoded images age out, "
      "fonts and shaped words expire, and memory pressure drops whatever nobody looks at. ";
  int y = 8;
  for (int size : {12, 14, 16, 20}) {
    for (int i = 0; i < 3; ++i, y += size * 5) {
      page.items.push_back(lethe::PageTextItem{paragraph, {8, y, 1000, size * 5}, size, 0xff202020});
    }
  }
  return page;
}

std::unique_ptr<lethe::Engine> MakeEngine(uint64_t glyph_table_max_bytes) {
  lethe::EngineOptions options;
  options.simulated_time = true;
  options.decode_threads = 0;
  options.pressure_sources = false;
  options.glyph_table_max_bytes = glyph_table_max_bytes;
  options.log = [](std::string_view) {};
  std::string error;
  auto engine = lethe::Engine::Create(options, &error);
  if (engine == nullptr) {
    std::fprintf(stderr, "cannot create the engine: %s\n", error.c_str());
    std::exit(1);
  }
  lethe::WindowId tab = engine->OpenWindow();
  if (!engine->Load(tab, TextPage(), "memory:text").ok()) std::exit(1);
  engine->DrawFrame();  // warm: faces opened, words shaped, glyphs kept (when on)
  return engine;
}

}  // namespace

int main(int argc, char** argv) {
  const int frames = argc > 1 ? std::max(1, std::atoi(argv[1])) : 200;
  auto kept = MakeEngine(lethe::EngineOptions{}.glyph_table_max_bytes);
  auto every_draw = MakeEngine(0);
  Seconds kept_time{}, every_draw_time{};
  for (int i = 0; i < frames; ++i) {
    auto start = std::chrono::steady_clock::now();
    kept->DrawFrame();
    auto middle = std::chrono::steady_clock::now();
    every_draw->DrawFrame();
    auto end = std::chrono::steady_clock::now();
    kept_time += middle - start;
    every_draw_time += end - middle;
  }
  std::printf("frames %d, 1024x768, 12 text runs at 4 sizes\n", frames);
  std::printf("glyph tables on : %8.3f ms/frame, %llu rasterizations, %llu glyphs kept, %llu bytes\n",
              1e3 * kept_time.count() / frames,
              static_cast<unsigned long long>(kept->stats().glyph_rasterize_count),
              static_cast<unsigned long long>(kept->Memory().glyph_count),
              static_cast<unsigned long long>(kept->Memory().glyph_bytes));
  std::printf("glyph tables off: %8.3f ms/frame, %llu rasterizations\n",
              1e3 * every_draw_time.count() / frames,
              static_cast<unsigned long long>(every_draw->stats().glyph_rasterize_count));
  std::printf("ratio (off / on): %.2fx\n", every_draw_time.count() / kept_time.count());
  return 0;
}
