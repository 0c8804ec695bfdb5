// engine/table_nesting.h — finds tables nested too deep in a styled litehtml tree.
//
// BoundHtml flattens <table> tags nested past HtmlLimits::max_table_depth, but a stylesheet can
// make any element a table (display: table-cell on nested <div>s, and litehtml wraps each in
// anonymous table boxes), and litehtml's layout time grows geometrically with table nesting. After
// styling, before layout, the engine walks the tree; when a table box is nested too deep it parses
// the page again with max_depth lowered to the value this returns, which drops that table's
// element (or the element its anonymous boxes wrap). Each retry lowers max_depth, so it ends.
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
// such boxes around it; else the count of named (non-anonymous) elements around the first box
// that does, which as a BoundHtml max_depth drops the element that made it. Iterative.
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
