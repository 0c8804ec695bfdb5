// BoundHtml: the cuts that keep litehtml's recursion and allocations bounded, and what it leaves
// alone (a well-formed page passes through unchanged); and the URL rules pages rely on.
#include "html_bounds.h"

#include <gtest/gtest.h>

#include <string>

#include "url.h"

namespace lethe::internal {
namespace {

// The deepest nesting of `html` as the scanner sees it (start tags minus end tags, void excluded).
int Depth(const std::string& html) {
  HtmlLimits unlimited;
  unlimited.max_depth = 1 << 30;
  HtmlCuts cuts;
  (void)BoundHtml(html, unlimited, &cuts);
  return cuts.max_depth_seen;
}

TEST(HtmlBounds, WellFormedPagePassesUnchanged) {
  const std::string html =
      "<!DOCTYPE html><html><head><style>p > a { color: red }</style></head><body>"
      "<p>One <b>two</b><br>three<img src=\"a.png\" alt=\"x > y\"></p><ul><li>a<li>b</ul>"
      "<script>if (a < b && c > d) {}</script></body></html>";
  HtmlCuts cuts;
  EXPECT_EQ(BoundHtml(html, HtmlLimits{}, &cuts), html);
  EXPECT_FALSE(cuts.any());
}

TEST(HtmlBounds, NestingPastTheLimitIsDroppedWithItsEndTags) {
  std::string html;
  for (int i = 0; i < 100000; ++i) html += "<div>";
  html += "x";
  for (int i = 0; i < 100000; ++i) html += "</div>";
  HtmlLimits limits;
  limits.max_depth = 10;
  HtmlCuts cuts;
  std::string bounded = BoundHtml(html, limits, &cuts);
  EXPECT_EQ(cuts.dropped_start_tag_count, 99990u);
  EXPECT_EQ(cuts.max_depth_seen, 10);
  std::string expected;
  for (int i = 0; i < 10; ++i) expected += "<div>";
  expected += "x";
  for (int i = 0; i < 10; ++i) expected += "</div>";
  EXPECT_EQ(bounded, expected);
  EXPECT_EQ(Depth(bounded), 10);
  EXPECT_NE(cuts.Describe(limits).find("nesting deeper than 10: 99990 start tags dropped"),
            std::string::npos);
}

TEST(HtmlBounds, SiblingsThatCloseEachOtherDoNotDeepen) {
  std::string html = "<ul>";
  for (int i = 0; i < 1000; ++i) html += "<li>item<p>para";
  html += "</ul><table>";
  for (int i = 0; i < 1000; ++i) html += "<tr><td>a<td>b";
  html += "</table>";
  EXPECT_LE(Depth(html), 4);
}

TEST(HtmlBounds, TablesNestedPastTheLimitLoseTheirStructureNotTheirContent) {
  std::string html;
  for (int i = 0; i < 5; ++i) html += "<table><tbody><tr><td><b>" + std::to_string(i) + "</b>";
  for (int i = 0; i < 5; ++i) html += "</td></tr></tbody></table>";
  html += "<table><tr><td>after</td></tr></table>";
  HtmlLimits limits;
  limits.max_table_depth = 2;
  HtmlCuts cuts;
  const std::string bounded = BoundHtml(html, limits, &cuts);
  EXPECT_EQ(cuts.flattened_table_count, 3u);
  EXPECT_EQ(cuts.max_table_depth_seen, 2);
  EXPECT_EQ(bounded,
            "<table><tbody><tr><td><b>0</b><table><tbody><tr><td><b>1</b>"
            "<b>2</b><b>3</b><b>4</b></td></tr></tbody></table></td></tr></tbody></table>"
            "<table><tr><td>after</td></tr></table>");
  EXPECT_NE(cuts.Describe(limits).find("tables nested deeper than 2: 3 flattened"),
            std::string::npos);
}

TEST(HtmlBounds, UnclosedFlattenedTablesDropOnlyTableTags) {
  HtmlLimits limits;
  limits.max_table_depth = 1;
  HtmlCuts cuts;
  EXPECT_EQ(BoundHtml("<table><td><table><td>a<p>b<col><table><tr>c", limits, &cuts),
            "<table><td>a<p>bc");
  EXPECT_EQ(cuts.flattened_table_count, 2u);
}

TEST(HtmlBounds, WordsPastTheLimitAreDroppedTagsStay) {
  std::string html = "<p>";
  for (int i = 0; i < 100; ++i) html += "w" + std::to_string(i) + " ";
  html += "</p><img src=\"a.png\">";
  HtmlLimits limits;
  limits.max_words = 10;
  HtmlCuts cuts;
  std::string bounded = BoundHtml(html, limits, &cuts);
  EXPECT_EQ(cuts.dropped_word_count, 90u);
  EXPECT_NE(bounded.find("w9"), std::string::npos);
  EXPECT_EQ(bounded.find("w10"), std::string::npos);
  EXPECT_NE(bounded.find("<img src=\"a.png\">"), std::string::npos);
}

TEST(HtmlBounds, LongStyleIsCutCommentsAreDropped) {
  HtmlLimits limits;
  limits.max_stylesheet_bytes = 5;
  HtmlCuts cuts;
  EXPECT_EQ(BoundHtml("<style>abcdefgh</style><!-- gone -->x", limits, &cuts),
            "<style>abcde</style>x");
  EXPECT_EQ(cuts.cut_style_bytes, 3u);
}

TEST(HtmlBounds, UnterminatedConstructsEndTheScan) {
  HtmlCuts cuts;
  EXPECT_EQ(BoundHtml("<p>a<!-- open", HtmlLimits{}, &cuts), "<p>a");
  EXPECT_EQ(BoundHtml("<p title=\"open>", HtmlLimits{}, &cuts), "<p title=\"open>");
  EXPECT_EQ(BoundHtml("<script>x", HtmlLimits{}, &cuts), "<script>x</script>");
  EXPECT_EQ(BoundHtml("a < b <", HtmlLimits{}, &cuts), "a < b <");
}

TEST(Url, RelativePathsResolveAgainstTheDocumentsDirectory) {
  EXPECT_EQ(ResolveUrl("/site/pages/a.html", "../images/x.png"), "/site/images/x.png");
  EXPECT_EQ(ResolveUrl("/site/pages/a.html", "x.png"), "/site/pages/x.png");
  EXPECT_EQ(ResolveUrl("/site/pages/", "x.png"), "/site/pages/x.png");
  EXPECT_EQ(ResolveUrl("/site/pages/a.html", "/abs/x.png"), "/abs/x.png");
  EXPECT_EQ(ResolveUrl("file:///site/pages/a.html", "x.png"), "/site/pages/x.png");
  EXPECT_EQ(ResolveUrl("/site/a.html", "file:///b/x.png"), "/b/x.png");
  EXPECT_EQ(ResolveUrl("/site/a.html", "  x.png "), "/site/x.png");
  EXPECT_EQ(ResolveUrl("/site/a.html", "https://example.com/x.png"), "https://example.com/x.png");
  EXPECT_EQ(KindOf("https://example.com/x.png"), UrlKind::kRemote);
  EXPECT_EQ(KindOf("data:,x"), UrlKind::kData);
  EXPECT_EQ(KindOf("x:y.png"), UrlKind::kPath);  // one letter: not a scheme
}

TEST(Url, DataUrlsDecodeBase64AndPercentAndRefuseGarbage) {
  std::vector<uint8_t> bytes;
  std::string error;
  ASSERT_TRUE(DecodeDataUrl("data:image/png;base64,SGVs bG8=", 100, &bytes, &error)) << error;
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "Hello");
  ASSERT_TRUE(DecodeDataUrl("data:text/plain,a%20b", 100, &bytes, &error)) << error;
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "a b");
  EXPECT_FALSE(DecodeDataUrl("data:image/png;base64,SGV*", 100, &bytes, &error));
  EXPECT_NE(error.find("malformed"), std::string::npos);
  EXPECT_FALSE(DecodeDataUrl("data:image/png;base64,SGVsbG8=", 3, &bytes, &error));
  EXPECT_NE(error.find("larger than 3"), std::string::npos);
  EXPECT_FALSE(DecodeDataUrl("data:image/png;base64", 100, &bytes, &error));
  EXPECT_TRUE(bytes.empty());
}

}  // namespace
}  // namespace lethe::internal
