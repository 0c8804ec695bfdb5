// engine/table_nesting.h — finds tables nested too deep in a styled litehtml tree.
//
// BoundHtml flattens <table> tags nested past HtmlLimits::max_table_depth, but a stylesheet can
// make any element a table (display: table-cell on nested <div>s, and litehtml wraps each in
// anonymous table boxes), and litehtml's layout time grows geometrically with table nesting. After
// styling, before layout, the engine walks the tree; when table boxes are nested too deep it
// parses the page again with max_depth lowered to the value this returns, which drops their
// elements (or the elements their anonymous boxes wrap). Each retry lowers max_depth, so it ends.
#ifndef LETHE_ENGINE_TABLE_NESTING_H_
#define LETHE_ENGINE_TABLE_NESTING_H_

#include <litehtml.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "html_bounds.h"

namespace lethe::internal {

// Nothing when no box under `root` shown as table or inline-table has max_table_depth or more
// such boxes around it; else the fewest named (non-anonymous) elements around any box that does,
// which as a BoundHtml max_depth drops the elements that made them all. Iterative.
// (Named depth counts the <html>, <body> and <tbody> litehtml adds when the page omits them, so
// a cut can fall short by those few levels: ParseBounded's next round lowers it further.)
std::optional<int> DepthThatCutsDeepTables(const litehtml::element::ptr& root, int max_table_depth);

// Cuts `html` to `limits` (BoundHtml) and parses it with `parse`, then again with max_depth
// lowered while DepthThatCutsDeepTables finds a table too deep. *cuts is the last cut's;
// *lowered_depth the max_depth the last parse used if it was lowered, else -1. Null if `parse` is.
litehtml::document::ptr ParseBounded(
    std::string_view html, HtmlLimits limits,
    const std::function<litehtml::document::ptr(const std::string& bounded)>& parse, HtmlCuts* cuts,
    int* lowered_depth);

}  // namespace lethe::internal

#endif  // LETHE_ENGINE_TABLE_NESTING_H_
