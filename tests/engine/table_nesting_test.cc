// ParseBounded and DepthThatCutsDeepTables: tables nested by stylesheets are cut after styling,
// in as few parses as the depths allow, and pages within the limit are parsed once, unchanged.
#include "table_nesting.h"

#include <gtest/gtest.h>

#include <string>

#include "measuring_container.h"

namespace lethe::internal {
namespace {

class TableNestingTest : public ::testing::Test {
 protected:
  TableNestingTest() {
    context_.load_master_stylesheet(
        "html, body, div, p { display: block; } table { display: table; }"
        "tbody { display: table-row-group; } tr { display: table-row; }"
        "td { display: table-cell; } head, style { display: none; }");
  }

  // Parses `html` within `limits`, counting the parses.
  litehtml::document::ptr Parse(const std::string& html, const HtmlLimits& limits) {
    parses_ = 0;
    return ParseBounded(
        html, limits,
        [this](const std::string& bounded) {
          ++parses_;
          last_bounded_ = bounded;
          return litehtml::document::createFromUTF8(bounded.c_str(), &container_, &context_);
        },
        &cuts_, &lowered_depth_);
  }

  // `levels` <div>s, each a table cell by the page's stylesheet, holding `text` at the bottom.
  static std::string CellDivs(int levels, const std::string& text) {
    std::string html;
    for (int i = 0; i < levels; ++i) html += "<div>";
    html += text;
    for (int i = 0; i < levels; ++i) html += "</div>";
    return html;
  }

  litehtml::context context_;
  testing::MeasuringContainer container_;
  HtmlCuts cuts_;
  int lowered_depth_ = -1;
  int parses_ = 0;
  std::string last_bounded_;
};

constexpr char kCellStyle[] = "<html><head><style>div { display: table-cell }</style></head><body>";

TEST_F(TableNestingTest, TablesWithinTheLimitParseOnceUnchanged) {
  HtmlLimits limits;
  const std::string html =
      std::string(kCellStyle) + CellDivs(limits.max_table_depth, "deep") + "</body></html>";
  litehtml::document::ptr document = Parse(html, limits);
  ASSERT_NE(document, nullptr);
  EXPECT_EQ(parses_, 1);
  EXPECT_EQ(lowered_depth_, -1);
  EXPECT_EQ(last_bounded_, html);
  EXPECT_FALSE(DepthThatCutsDeepTables(document->root(), limits.max_table_depth).has_value());
}

TEST_F(TableNestingTest, DeepStylesheetTablesAreCutAndTheirTextKept) {
  HtmlLimits limits;
  const std::string html = std::string(kCellStyle) + CellDivs(40, "deep") + "</body></html>";
  litehtml::document::ptr document = Parse(html, limits);
  ASSERT_NE(document, nullptr);
  EXPECT_GE(parses_, 2);
  EXPECT_GE(lowered_depth_, limits.max_table_depth);  // html, body and the allowed levels stay
  EXPECT_LT(lowered_depth_, limits.max_table_depth + 4);
  EXPECT_GT(cuts_.dropped_start_tag_count, 0u);
  EXPECT_NE(last_bounded_.find("deep"), std::string::npos);
  EXPECT_FALSE(DepthThatCutsDeepTables(document->root(), limits.max_table_depth).has_value());
}

// One walk finds the shallowest too-deep box of all: structures too deep at different depths cost
// one more parse, not one each.
TEST_F(TableNestingTest, ManyDeepStructuresCostOneMoreParse) {
  HtmlLimits limits;
  std::string html = kCellStyle;
  // The first structure in document order is the deepest wrapped: cut first at its depth, the
  // others would each need a parse of their own.
  for (int structure = 0; structure < 20; ++structure) {
    const int wrappers = 20 - structure;
    for (int i = 0; i < wrappers; ++i) html += "<span>";
    html += CellDivs(12, "s" + std::to_string(structure));
    for (int i = 0; i < wrappers; ++i) html += "</span>";
  }
  litehtml::document::ptr document = Parse(html + "</body></html>", limits);
  ASSERT_NE(document, nullptr);
  EXPECT_EQ(parses_, 2);
  EXPECT_NE(last_bounded_.find("s19"), std::string::npos);
  EXPECT_FALSE(DepthThatCutsDeepTables(document->root(), limits.max_table_depth).has_value());
}

TEST_F(TableNestingTest, NoDocumentAndNoRootAreNotCut) {
  EXPECT_FALSE(DepthThatCutsDeepTables(nullptr, 1).has_value());
  HtmlLimits limits;
  litehtml::document::ptr document = ParseBounded(
      "<p>x", limits, [](const std::string&) { return litehtml::document::ptr(); }, &cuts_,
      &lowered_depth_);
  EXPECT_EQ(document, nullptr);
  EXPECT_EQ(lowered_depth_, -1);
}

// A limit of 0 tables: every table box is too deep, so the cut goes down to <html> and <body>.
TEST_F(TableNestingTest, AZeroTableLimitLeavesNoTable) {
  HtmlLimits limits;
  limits.max_table_depth = 0;
  litehtml::document::ptr document =
      Parse(std::string(kCellStyle) + CellDivs(5, "x") + "</body></html>", limits);
  ASSERT_NE(document, nullptr);
  EXPECT_EQ(lowered_depth_, 2);
  EXPECT_EQ(parses_, 2);
  EXPECT_NE(last_bounded_.find('x'), std::string::npos);
  EXPECT_FALSE(DepthThatCutsDeepTables(document->root(), 0).has_value());
}

}  // namespace
}  // namespace lethe::internal
