#include "table_nesting.h"

#include <algorithm>
#include <vector>

namespace lethe::internal {

namespace {

bool IsTableBox(const litehtml::element& element) {
  const litehtml::style_display display = element.get_display();
  return display == litehtml::display_table || display == litehtml::display_inline_table;
}

bool IsNamed(const litehtml::element& element) {
  const char* name = element.get_tagName();
  return name != nullptr && name[0] != '\0';
}

}  // namespace

std::optional<int> DepthThatCutsDeepTables(const litehtml::element::ptr& root,
                                           int max_table_depth) {
  struct Visit {
    litehtml::element::ptr element;
    int tables_around;  // table boxes among its ancestors
    int named_around;   // named elements among its ancestors
  };
  std::optional<int> shallowest;
  std::vector<Visit> pending;
  if (root != nullptr) pending.push_back({root, 0, 0});
  while (!pending.empty()) {
    Visit visit = std::move(pending.back());
    pending.pop_back();
    const litehtml::element& element = *visit.element;
    const bool table = IsTableBox(element);
    if (table && visit.tables_around >= max_table_depth) {
      // Every too-deep box is cut by the smallest depth: one more parse, not one per box.
      shallowest = std::min(shallowest.value_or(visit.named_around), visit.named_around);
      continue;  // what is under it goes with it
    }
    const int tables = visit.tables_around + (table ? 1 : 0);
    const int named = visit.named_around + (IsNamed(element) ? 1 : 0);
    for (size_t i = element.get_children_count(); i > 0; --i) {
      litehtml::element::ptr child = element.get_child(static_cast<int>(i - 1));
      if (child != nullptr) pending.push_back({std::move(child), tables, named});
    }
  }
  return shallowest;
}

litehtml::document::ptr ParseBounded(
    std::string_view html, HtmlLimits limits,
    const std::function<litehtml::document::ptr(const std::string& bounded)>& parse, HtmlCuts* cuts,
    int* lowered_depth) {
  *lowered_depth = -1;
  for (;;) {
    litehtml::document::ptr document = parse(BoundHtml(html, limits, cuts));
    if (document == nullptr || limits.max_depth <= 0) return document;
    std::optional<int> cut = DepthThatCutsDeepTables(document->root(), limits.max_table_depth);
    if (!cut) return document;
    limits.max_depth = std::clamp(*cut, 0, limits.max_depth - 1);  // strictly lower: this ends
    *lowered_depth = limits.max_depth;
  }
}

}  // namespace lethe::internal
