#include "lethe/page_description.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace lethe {
namespace {

std::string ErrorOf(const std::string& json) {
  auto result = ParsePageDescription(json, "/site/pages", "p.json");
  if (!std::holds_alternative<PageError>(result)) return "(parsed)";
  return std::get<PageError>(result).message;
}

constexpr char kPage[] = R"({
  "title": "News", "width": 800, "height": 2000, "background": "#102030",
  "items": [
    {"type": "image", "src": "../images/a.png", "x": 10, "y": 20, "width": 300, "height": 200},
    {"type": "image", "src": "https://example.com/b.jpg", "x": 10, "y": 300, "width": 30, "height": 20},
    {"type": "text", "text": "Hello world", "x": 10, "y": 400, "width": 700, "size": 20, "color": "#80ff0000"}
  ]})";

TEST(PageDescription, ParsesImagesTextAndResolvesRelativeSources) {
  auto result = ParsePageDescription(kPage, "/site/pages", "p.json");
  ASSERT_TRUE(std::holds_alternative<PageDescription>(result)) << std::get<PageError>(result).message;
  const PageDescription& page = std::get<PageDescription>(result);
  EXPECT_EQ(page.title, "News");
  EXPECT_EQ(page.width, 800);
  EXPECT_EQ(page.height, 2000);
  EXPECT_EQ(page.background, 0xff102030u);
  ASSERT_EQ(page.items.size(), 3u);
  const auto& image = std::get<PageImageItem>(page.items[0]);
  EXPECT_EQ(image.src, "/site/images/a.png");
  EXPECT_EQ(image.rect.width, 300);
  EXPECT_EQ(std::get<PageImageItem>(page.items[1]).src, "https://example.com/b.jpg");
  const auto& text = std::get<PageTextItem>(page.items[2]);
  EXPECT_EQ(text.text, "Hello world");
  EXPECT_EQ(text.size, 20);
  EXPECT_EQ(text.color, 0x80ff0000u);
  EXPECT_EQ(text.rect.height, 25);
}

TEST(PageDescription, EveryErrorNamesTheBadField) {
  EXPECT_EQ(ErrorOf("{"), "p.json: not valid JSON");
  EXPECT_EQ(ErrorOf("[]"), "p.json: the page must be a JSON object");
  EXPECT_EQ(ErrorOf(R"({"items": []})"), "p.json: height: missing");
  EXPECT_EQ(ErrorOf(R"({"height": 10})"), "p.json: items: missing");
  EXPECT_EQ(ErrorOf(R"({"height": 10, "items": {}})"), "p.json: items: must be an array");
  EXPECT_EQ(ErrorOf(R"({"height": 0, "items": []})"), "p.json: height: must be an integer in 1..1048576");
  EXPECT_EQ(ErrorOf(R"({"height": 10, "background": "red", "items": []})"),
            "p.json: background: must be a colour like #rrggbb or #aarrggbb, not 'red'");
  EXPECT_EQ(ErrorOf(R"({"height": 10, "items": [7]})"), "p.json: items[0]: must be an object");
  EXPECT_EQ(ErrorOf(R"({"height": 10, "items": [{"type": "video", "x": 0, "y": 0, "width": 5}]})"),
            "p.json: items[0].type: must be \"image\" or \"text\", not \"video\"");
  EXPECT_EQ(ErrorOf(R"({"height": 100, "items": [{"type": "image", "x": 0, "y": 0, "width": 5, "height": 5}]})"),
            "p.json: items[0].src: missing");
  EXPECT_EQ(ErrorOf(R"({"height": 100, "items": [{"type": "image", "src": "", "x": 0, "y": 0, "width": 5, "height": 5}]})"),
            "p.json: items[0].src: must not be empty");
  EXPECT_EQ(ErrorOf(R"({"height": 100, "items": [{"type": "image", "src": "a", "x": 0, "y": 0, "width": -5, "height": 5}]})"),
            "p.json: items[0].width: must be an integer in 1..16384");
  EXPECT_EQ(ErrorOf(R"({"height": 100, "items": [{"type": "text", "text": 3, "x": 0, "y": 0, "width": 5}]})"),
            "p.json: items[0].text: must be a string");
  EXPECT_EQ(ErrorOf(R"({"height": 100, "items": [{"type": "text", "text": "a", "x": 0, "y": 500, "width": 5}]})"),
            "p.json: items[0].y: is below the page's height 100");
  EXPECT_EQ(ErrorOf(R"({"height": 100, "items": [{"type": "text", "text": "a", "x": 0, "y": 0, "width": 5, "size": 9999}]})"),
            "p.json: items[0].size: must be an integer in 4..512");
  EXPECT_EQ(ErrorOf(R"({"height": 100, "items": [{"type": "text", "text": "a", "x": 0, "y": 0, "width": 5, "family": "cursive"}]})"),
            "p.json: items[0].family: must be \"sans-serif\", \"serif\" or \"monospace\", not \"cursive\"");
  EXPECT_EQ(ErrorOf(R"({"height": 100, "items": [{"type": "text", "text": "a", "x": 0, "y": 0, "width": 5, "family": 1}]})"),
            "p.json: items[0].family: must be a string");
  EXPECT_EQ(ErrorOf(R"({"height": 100, "items": [{"type": "text", "text": "a", "x": 0, "y": 0, "width": 5, "bold": "yes"}]})"),
            "p.json: items[0].bold: must be true or false");
}

TEST(PageDescription, TextRunsNameTheirFamilyAndWeight) {
  auto result = ParsePageDescription(R"({"height": 100, "items": [
      {"type": "text", "text": "a", "x": 0, "y": 0, "width": 5},
      {"type": "text", "text": "b", "x": 0, "y": 20, "width": 5, "family": "serif", "bold": true},
      {"type": "text", "text": "c", "x": 0, "y": 40, "width": 5, "family": "monospace", "bold": false}]})",
                                     "/site/pages", "p.json");
  ASSERT_TRUE(std::holds_alternative<PageDescription>(result)) << std::get<PageError>(result).message;
  const PageDescription& page = std::get<PageDescription>(result);
  ASSERT_EQ(page.items.size(), 3u);
  const auto& plain = std::get<PageTextItem>(page.items[0]);
  EXPECT_EQ(plain.family, FontFamily::kSansSerif);
  EXPECT_FALSE(plain.bold);
  const auto& heading = std::get<PageTextItem>(page.items[1]);
  EXPECT_EQ(heading.family, FontFamily::kSerif);
  EXPECT_TRUE(heading.bold);
  const auto& code = std::get<PageTextItem>(page.items[2]);
  EXPECT_EQ(code.family, FontFamily::kMonospace);
  EXPECT_FALSE(code.bold);
  EXPECT_EQ(ParseFontFamily("monospace"), FontFamily::kMonospace);
  EXPECT_EQ(ParseFontFamily("Monospace"), std::nullopt);
}

TEST(PageDescription, LoadReportsMissingFile) {
  auto result = LoadPageDescription("/nonexistent/page.json");
  ASSERT_TRUE(std::holds_alternative<PageError>(result));
  EXPECT_EQ(std::get<PageError>(result).message, "/nonexistent/page.json: cannot open");
}

TEST(PageDescription, LoadResolvesAgainstThePageDirectory) {
  std::filesystem::path directory = std::filesystem::temp_directory_path() / ("lethe-page-" + std::to_string(getpid()));
  std::filesystem::create_directories(directory);
  std::ofstream(directory / "p.json") << kPage;
  auto result = LoadPageDescription((directory / "p.json").string());
  ASSERT_TRUE(std::holds_alternative<PageDescription>(result));
  EXPECT_EQ(std::get<PageImageItem>(std::get<PageDescription>(result).items[0]).src,
            (directory.parent_path() / "images/a.png").string());
  std::filesystem::remove_all(directory);
}

TEST(PageDescription, PageFromImagesScalesWideImagesDownAndStacksThem) {
  PageDescription page = PageFromImages({"/a/wide.png", "/a/small.gif", "/a/bad.jpg"},
                                        {{2000, 1000}, {100, 50}, {0, 0}}, 1000);
  ASSERT_EQ(page.items.size(), 4u);  // caption + image for the two readable images
  const auto& wide = std::get<PageImageItem>(page.items[1]);
  EXPECT_EQ(wide.rect.width, 952);
  EXPECT_EQ(wide.rect.height, 476);
  const auto& small = std::get<PageImageItem>(page.items[3]);
  EXPECT_EQ(small.rect.width, 100);
  EXPECT_GT(small.rect.y, wide.rect.bottom());
  EXPECT_GE(page.height, small.rect.bottom());
  EXPECT_EQ(std::get<PageTextItem>(page.items[0]).text, "wide.png");
}

TEST(ParseColor, AcceptsRgbAndArgbOnly) {
  EXPECT_EQ(ParseColor("#ffffff"), 0xffffffffu);
  EXPECT_EQ(ParseColor("#00AbCdEf"), 0x00abcdefu);
  EXPECT_EQ(ParseColor("ffffff"), std::nullopt);
  EXPECT_EQ(ParseColor("#fff"), std::nullopt);
  EXPECT_EQ(ParseColor("#gggggg"), std::nullopt);
}

}  // namespace
}  // namespace lethe
