// css_fixups: `oblique` made `italic` for litehtml 0.6, and nothing else touched.
#include "css_fixups.h"

#include <gtest/gtest.h>

#include <string>

#include "html_bounds.h"

namespace lethe::internal {
namespace {

std::string ObliqueAsItalic(std::string_view css) {
  std::string out = "<";  // appended to, never replaced
  AppendObliqueAsItalic(css, &out);
  EXPECT_EQ(out[0], '<');
  return out.substr(1);
}

std::string ObliqueAsItalicInStyleAttribute(std::string_view tag) {
  std::string out;
  AppendTagObliqueAsItalic(tag, &out);
  return out;
}

TEST(CssFixups, ObliqueBecomesItalicWithOrWithoutItsAngle) {
  EXPECT_EQ(ObliqueAsItalic("p { font-style: oblique; }"), "p { font-style: italic; }");
  EXPECT_EQ(ObliqueAsItalic("p{font-style:OBLIQUE 14deg}"), "p{font-style:italic}");
  EXPECT_EQ(ObliqueAsItalic("em { font: oblique -0.5turn bold 12px serif }"),
            "em { font: italic bold 12px serif }");
  EXPECT_EQ(ObliqueAsItalic("font-style: oblique"), "font-style: italic");
}

TEST(CssFixups, StringsLongerIdentifiersAndNumbersWithoutAnAngleStay) {
  EXPECT_EQ(ObliqueAsItalic(R"(p::before { content: "oblique" })"), R"(p::before { content: "oblique" })");
  EXPECT_EQ(ObliqueAsItalic(R"(p { font-family: 'Oblique Sans', obliques, x-oblique })"),
            R"(p { font-family: 'Oblique Sans', obliques, x-oblique })");
  // "12px" is no angle: the shorthand keeps its size.
  EXPECT_EQ(ObliqueAsItalic("p { font: oblique 12px serif }"), "p { font: italic 12px serif }");
  EXPECT_EQ(ObliqueAsItalic(".a{x:1}"), ".a{x:1}");
  EXPECT_EQ(ObliqueAsItalic("a{font-style:obLIque}"), "a{font-style:italic}");
}

TEST(CssFixups, OnlyTheStyleAttributeOfATagIsRewritten) {
  EXPECT_EQ(ObliqueAsItalicInStyleAttribute(
                R"(<p class="oblique" title='oblique' style="font-style: oblique 10deg">)"),
            R"(<p class="oblique" title='oblique' style="font-style: italic">)");
  EXPECT_EQ(ObliqueAsItalicInStyleAttribute("<p hidden STYLE=font-style:oblique>"),
            "<p hidden STYLE=font-style:italic>");
  EXPECT_EQ(ObliqueAsItalicInStyleAttribute(R"(<p data-style="oblique">)"), R"(<p data-style="oblique">)");
  // Unterminated values and bare names end the walk without harm.
  EXPECT_EQ(ObliqueAsItalicInStyleAttribute(R"(<p style="oblique)"), R"(<p style="italic)");
  EXPECT_EQ(ObliqueAsItalicInStyleAttribute("<p oblique>"), "<p oblique>");
}

TEST(CssFixups, BoundHtmlRewritesStyleElementsAndAttributesButNotText) {
  HtmlCuts cuts;
  const std::string out = BoundHtml(
      R"(<html><head><style>p { font-style: oblique }</style></head>)"
      R"(<body><p style="font: oblique 20px serif">oblique text</p><img style='font-style:oblique'></body></html>)",
      HtmlLimits{}, &cuts);
  EXPECT_EQ(out,
            R"(<html><head><style>p { font-style: italic }</style></head>)"
            R"(<body><p style="font: italic 20px serif">oblique text</p><img style='font-style:italic'></body></html>)");
}

}  // namespace
}  // namespace lethe::internal
