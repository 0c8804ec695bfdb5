// lethe_fuzz_seeds OUT_DIR — writes the seed corpus of every fuzz target into OUT_DIR/<target>/,
// made with the encoders (tests/decoders/test_images.h): PNG of every colour type and depth, JPEG
// modes, GIF animations with sub-rectangles, local palettes, transparency, interlace, disposals.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test_images.h"

namespace {

using lethe::test::Bytes;

void Write(const std::filesystem::path& dir, const std::string& name, const Bytes& bytes) {
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<Bytes> PngSeeds() {
  std::vector<Bytes> seeds;
  const int kTypes[][2] = {{0, 1}, {0, 8}, {0, 16}, {2, 8}, {2, 16}, {3, 2}, {3, 8}, {4, 8}, {6, 8}, {6, 16}};
  uint32_t seed = 1;
  for (const auto& type : kTypes) {
    for (bool interlaced : {false, true}) {
      lethe::test::PngSpec spec;
      spec.width = 9 + seed % 7;
      spec.height = 5 + seed % 5;
      spec.color_type = type[0];
      spec.bit_depth = type[1];
      spec.interlaced = interlaced;
      spec.trns = (type[0] & 4) == 0 && seed % 2 == 0;
      spec.gamma = seed % 3 == 0 ? 45455 : 0;
      spec.seed = seed++;
      seeds.push_back(lethe::test::EncodePng(spec));
    }
  }
  return seeds;
}

std::vector<Bytes> JpegSeeds() {
  std::vector<Bytes> seeds;
  for (int mode = 0; mode < 8; ++mode) {
    lethe::test::JpegSpec spec;
    spec.width = 16 + static_cast<uint32_t>(mode) * 3;
    spec.height = 8 + static_cast<uint32_t>(mode);
    spec.components = mode == 2 ? 1 : mode >= 6 ? 4 : 3;
    spec.ycck = mode == 7;
    spec.progressive = mode == 1 || mode == 5;
    spec.arithmetic = mode == 3;
    spec.restart_interval = mode == 4 ? 1 : 0;
    spec.orientation = mode == 5 ? 6 : 0;
    spec.quality = 50;
    seeds.push_back(lethe::test::EncodeJpeg(spec));
  }
  return seeds;
}

std::vector<Bytes> GifSeeds() {
  using lethe::test::MakeGifFrame;
  using lethe::test::MakeGifPalette;
  std::vector<Bytes> seeds;
  for (uint32_t variant = 0; variant < 6; ++variant) {
    lethe::test::GifSpec spec;
    spec.width = 24;
    spec.height = 16;
    spec.global_palette = MakeGifPalette(variant % 2 ? 4 : 16, variant);
    spec.loop_count = variant % 3 == 0 ? -1 : static_cast<int>(variant);
    for (uint32_t k = 0; k < 2 + variant; ++k) {
      auto frame = MakeGifFrame(k % 5, k % 3, 24 - k % 5 - 2, 16 - k % 3 - 1, variant % 2 ? 4 : 16, k);
      frame.disposal = static_cast<int>((k + variant) % 4);
      frame.interlaced = (k + variant) % 3 == 0;
      frame.transparent_index = k % 2 ? 1 : -1;
      if (k % 3 == 2) frame.local_palette = MakeGifPalette(8, k);
      frame.delay_centiseconds = static_cast<int>(k % 4);
      spec.frames.push_back(std::move(frame));
    }
    seeds.push_back(lethe::test::EncodeGif(spec));
  }
  return seeds;
}

// Pages in the format of lethe/page_description.h: every field kind, both item types.
std::vector<Bytes> HtmlSeeds() {
  const char* pages[] = {
      "<!DOCTYPE html><html><head><title>t</title><style>p { float: left; width: 50%; }"
      " .b { background: url(a.png) repeat-x; border: 1px solid red }</style></head><body>"
      "<h1>Title</h1><p class=b>One <b>two</b> <i>three</i></p><ul><li>a<li>b</ul>"
      "<table><tr><td>1<td>2<tr><td colspan=2><img src=x.gif width=10 height=10></table></body>",
      "<div><div><div><span>deep</span></div></div></div><p>a<p>b<!-- c --><ol><li>x</ol>",
      "<b><p></b>misnested</p><table><td>cell<style>td{color:red}</style>",
      // Tables nested past max_table_depth, by tags and by a stylesheet (the shapes whose layout
      // time grows geometrically: a fuzz run once found one that ran for ten minutes).
      "<table><td><table><td><table><td><table><td><table><td><table><td><table><td><table><td>"
      "<table><td><table><td><table><td><table><td>x</table></table>after",
      "<style>div{display:table-cell}</style><div>a<div>b<div>c<div>d<div>e<div>f<div>g<div>h"
      "<div>i<div>j<div>k<div>l<div>m<div>n</div></div>o",
  };
  std::vector<Bytes> seeds;
  for (const char* page : pages) seeds.emplace_back(page, page + std::char_traits<char>::length(page));
  return seeds;
}

std::vector<Bytes> PageSeeds() {
  const char* pages[] = {
      R"({"title": "News", "width": 1024, "height": 4100, "background": "#ffffff", "items": [
         {"type": "image", "src": "img/a.png", "x": 24, "y": 80, "width": 640, "height": 480},
         {"type": "image", "src": "https://example.com/b.jpg", "x": -10, "y": 600, "width": 30, "height": 20},
         {"type": "text", "text": "Hello world", "x": 24, "y": 700, "width": 976, "size": 16,
          "color": "#80303030", "family": "serif", "bold": true}]})",
      R"({"height": 10, "items": []})",
      R"({"height": 100, "items": [{"type": "text", "text": "a", "x": 0, "y": 0, "width": 5,
          "family": "monospace", "bold": false, "size": 512}]})",
  };
  std::vector<Bytes> seeds;
  for (const char* page : pages) seeds.emplace_back(page, page + std::char_traits<char>::length(page));
  return seeds;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: lethe_fuzz_seeds OUT_DIR\n");
    return 2;
  }
  const std::filesystem::path out = argv[1];
  const std::vector<Bytes> png = PngSeeds(), jpeg = JpegSeeds(), gif = GifSeeds();
  auto write_all = [&](const std::string& target, const std::vector<Bytes>& seeds, const std::string& prefix) {
    for (size_t i = 0; i < seeds.size(); ++i) {
      Bytes bytes = seeds[i];
      if (target == "fuzz_compose") {  // 8 control bytes first
        const Bytes control = {static_cast<uint8_t>(i * 17), static_cast<uint8_t>(i), 2, 0x81, 0x03, 0x92, 0x55, 0x7F};
        bytes.insert(bytes.begin(), control.begin(), control.end());
      }
      Write(out / target, prefix + std::to_string(i), bytes);
    }
  };
  write_all("fuzz_png", png, "png");
  write_all("fuzz_jpeg", jpeg, "jpeg");
  write_all("fuzz_gif", gif, "gif");
  write_all("fuzz_compose", gif, "gif");
  write_all("fuzz_probe", png, "png");
  write_all("fuzz_probe", jpeg, "jpeg");
  write_all("fuzz_probe", gif, "gif");
  write_all("fuzz_page", PageSeeds(), "page");
  write_all("fuzz_html", HtmlSeeds(), "html");
  return 0;
}
