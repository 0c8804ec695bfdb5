#include "memory_report_file.h"

#include <zlib.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace lethe::memreport {

namespace {

using Json = nlohmann::json;

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::optional<std::string> ReadGzip(const std::string& path, std::string* error) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    *error = path + ": cannot open";
    return std::nullopt;
  }
  std::string text;
  char buffer[1 << 16];
  int count = 0;
  while ((count = gzread(file, buffer, sizeof(buffer))) > 0) text.append(buffer, static_cast<size_t>(count));
  int status = Z_OK;
  const char* message = gzerror(file, &status);
  bool failed = count < 0 || (status != Z_OK && status != Z_STREAM_END);
  std::string reason = failed ? message : "";
  gzclose(file);
  if (failed) {
    *error = path + ": not a valid gzip file (" + reason + ")";
    return std::nullopt;
  }
  return text;
}

std::optional<std::string> ReadPlain(const std::string& path, std::string* error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    *error = path + ": cannot open";
    return std::nullopt;
  }
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// Checks one element of "reports" and converts it; `where` is "name: reports[i]".
std::optional<Entry> ParseEntry(const Json& item, const std::string& where, std::string* error) {
  if (!item.is_object()) {
    *error = where + ": not an object";
    return std::nullopt;
  }
  struct Field { const char* name; bool (Json::*is)() const noexcept; const char* type; };
  static constexpr Field kFields[] = {
      {"process", &Json::is_string, "a string"},      {"path", &Json::is_string, "a string"},
      {"kind", &Json::is_number_integer, "an integer"}, {"units", &Json::is_number_integer, "an integer"},
      {"amount", &Json::is_number_integer, "an integer"},
      {"description", &Json::is_string, "a string"}};
  for (const Field& field : kFields) {
    auto found = item.find(field.name);
    if (found == item.end()) {
      *error = where + ": missing field '" + field.name + "'";
      return std::nullopt;
    }
    if (!((*found).*(field.is))()) {
      *error = where + ": field '" + field.name + "' is not " + field.type;
      return std::nullopt;
    }
  }
  Entry entry;
  entry.process = item["process"].get<std::string>();
  entry.path = item["path"].get<std::string>();
  int kind = item["kind"].get<int>();
  int units = item["units"].get<int>();
  if (kind < 0 || kind > 2) {
    *error = where + ": kind " + std::to_string(kind) + " is not 0, 1 or 2";
    return std::nullopt;
  }
  if (units < 0 || units > 3) {
    *error = where + ": units " + std::to_string(units) + " is not 0..3";
    return std::nullopt;
  }
  entry.kind = static_cast<Kind>(kind);
  entry.units = static_cast<Units>(units);
  entry.amount = item["amount"].get<int64_t>();
  entry.description = item["description"].get<std::string>();
  if (entry.path.empty() || entry.path.front() == '/' || entry.path.back() == '/' ||
      entry.path.find("//") != std::string::npos) {
    *error = where + ": malformed path '" + entry.path + "'";
    return std::nullopt;
  }
  if (entry.path.rfind("explicit/", 0) == 0 &&
      (entry.kind == Kind::kOther || entry.units != Units::kBytes)) {
    *error = where + ": '" + entry.path + "' is under explicit/ but is not heap/nonheap bytes";
    return std::nullopt;
  }
  return entry;
}

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : path) {
    if (c == '/') {
      parts.push_back(current);
      current.clear();
    } else {
      current.push_back(c == '\\' ? '/' : c);
    }
  }
  parts.push_back(current);
  return parts;
}

std::string RootOf(const std::string& path) { return SplitPath(path).front(); }

void AddLeaf(ProcessTrees& trees, const Entry& entry) {
  std::vector<std::string> parts = SplitPath(entry.path);
  std::unique_ptr<Node>& root = trees.roots[parts.front()];
  if (!root) {
    root = std::make_unique<Node>();
    root->name = parts.front();
    root->units = entry.units;
  }
  Node* node = root.get();
  node->amount += entry.amount;
  for (size_t i = 1; i < parts.size(); ++i) {
    std::unique_ptr<Node>& child = node->children[parts[i]];
    if (!child) {
      child = std::make_unique<Node>();
      child->name = parts[i];
      child->units = entry.units;
    }
    node = child.get();
    node->amount += entry.amount;  // duplicates sum, as in about:memory
  }
  if (node->description.empty()) node->description = entry.description;
}

int64_t ExplicitHeapSum(const ReportFile& report, const std::string& process) {
  int64_t sum = 0;
  for (const Entry& entry : report.entries) {
    if (entry.process == process && entry.kind == Kind::kHeap &&
        entry.path.rfind("explicit/", 0) == 0) {
      sum += entry.amount;
    }
  }
  return sum;
}

std::vector<const Node*> SortedChildren(const Node& node) {
  std::vector<const Node*> children;
  for (const auto& [name, child] : node.children) children.push_back(child.get());
  std::stable_sort(children.begin(), children.end(), [](const Node* a, const Node* b) {
    return std::llabs(a->amount) > std::llabs(b->amount);
  });
  return children;
}

struct PrintStyle {
  int64_t root_amount = 0;  // percentages of this when > 0
  int64_t min_amount = 0;   // smaller children are folded into one line
  bool with_sign = false;   // diffs show +/- on every amount
};

void PrintNode(const Node& node, const PrintStyle& style, const std::string& prefix, bool last,
               bool is_root, std::ostream& out) {
  const int64_t root_amount = style.root_amount;
  const int64_t min_amount = style.min_amount;
  std::string line = is_root ? "" : prefix + (last ? "└──" : "├──");
  line += FormatAmount(node.amount, node.units, style.with_sign);
  if (node.units == Units::kBytes && root_amount > 0) {
    char percent[32];
    std::snprintf(percent, sizeof(percent), " (%.2f%%)",
                  100.0 * static_cast<double>(node.amount) / static_cast<double>(root_amount));
    line += percent;
  }
  line += node.children.empty() ? " ── " : " -- ";
  out << line << node.name << "\n";
  std::string child_prefix = is_root ? "" : prefix + (last ? "   " : "│  ");
  std::vector<const Node*> children = SortedChildren(node);
  int64_t folded = 0;
  size_t folded_count = 0;
  std::vector<const Node*> shown;
  for (const Node* child : children) {
    if (min_amount > 0 && std::llabs(child->amount) < min_amount) {
      folded += child->amount;
      ++folded_count;
    } else {
      shown.push_back(child);
    }
  }
  for (size_t i = 0; i < shown.size(); ++i) {
    bool is_last = i + 1 == shown.size() && folded_count == 0;
    PrintNode(*shown[i], style, child_prefix, is_last, false, out);
  }
  if (folded_count > 0) {
    out << child_prefix << "└──" << FormatAmount(folded, node.units, style.with_sign) << " ── (" << folded_count
        << " smaller)\n";
  }
}

// Subtracts `before` from `after` node by node into `out` (union of both trees).
void DiffNodes(const Node* before, const Node* after, Node* out) {
  out->amount = (after ? after->amount : 0) - (before ? before->amount : 0);
  out->units = after ? after->units : before->units;
  std::map<std::string, std::pair<const Node*, const Node*>> pairs;
  if (before)
    for (const auto& [name, child] : before->children) pairs[name].first = child.get();
  if (after)
    for (const auto& [name, child] : after->children) pairs[name].second = child.get();
  for (const auto& [name, pair] : pairs) {
    auto child = std::make_unique<Node>();
    child->name = name;
    DiffNodes(pair.first, pair.second, child.get());
    if (child->amount != 0 || !child->children.empty()) out->children[name] = std::move(child);
  }
}

}  // namespace

std::optional<ReportFile> ParseReport(const std::string& text, const std::string& name,
                                      std::string* error) {
  Json document = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) {
    *error = name + ": not valid JSON";
    return std::nullopt;
  }
  if (!document.is_object()) {
    *error = name + ": the top level is not an object";
    return std::nullopt;
  }
  auto version = document.find("version");
  if (version == document.end() || !version->is_number_integer() || version->get<int>() != 1) {
    *error = name + ": 'version' must be 1";
    return std::nullopt;
  }
  if (!document.contains("hasMozMallocUsableSize") || !document["hasMozMallocUsableSize"].is_boolean()) {
    *error = name + ": missing boolean 'hasMozMallocUsableSize'";
    return std::nullopt;
  }
  auto reports = document.find("reports");
  if (reports == document.end() || !reports->is_array()) {
    *error = name + ": 'reports' is not an array";
    return std::nullopt;
  }
  ReportFile report;
  std::map<std::pair<std::string, std::string>, Units> tree_units;
  for (size_t i = 0; i < reports->size(); ++i) {
    std::string where = name + ": reports[" + std::to_string(i) + "]";
    std::optional<Entry> entry = ParseEntry((*reports)[i], where, error);
    if (!entry) return std::nullopt;
    auto key = std::make_pair(entry->process, RootOf(entry->path));
    auto [it, inserted] = tree_units.emplace(key, entry->units);
    if (!inserted && it->second != entry->units) {
      *error = where + ": tree '" + key.second + "' mixes units";
      return std::nullopt;
    }
    report.entries.push_back(std::move(*entry));
  }
  return report;
}

std::optional<ReportFile> LoadReportFile(const std::string& path, std::string* error) {
  std::optional<std::string> text = EndsWith(path, ".gz") ? ReadGzip(path, error) : ReadPlain(path, error);
  if (!text) return std::nullopt;
  return ParseReport(*text, path, error);
}

std::map<std::string, ProcessTrees> BuildTrees(const ReportFile& report) {
  std::map<std::string, ProcessTrees> processes;
  for (const Entry& entry : report.entries) AddLeaf(processes[entry.process], entry);
  for (auto& [process, trees] : processes) {
    auto heap = trees.roots.find("heap-allocated");
    auto explicit_root = trees.roots.find("explicit");
    if (heap == trees.roots.end()) continue;
    if (explicit_root != trees.roots.end() &&
        explicit_root->second->children.count("heap-unclassified") != 0) {
      continue;
    }
    Entry unclassified;
    unclassified.process = process;
    unclassified.path = "explicit/heap-unclassified";
    unclassified.kind = Kind::kHeap;
    unclassified.amount = heap->second->amount - ExplicitHeapSum(report, process);
    unclassified.description = "heap-allocated minus every explicit heap report";
    AddLeaf(trees, unclassified);
  }
  return processes;
}

std::string FormatAmount(int64_t amount, Units units, bool with_sign) {
  char text[64];
  const char* sign = with_sign && amount > 0 ? "+" : "";
  switch (units) {
    case Units::kBytes:
      if (std::llabs(amount) < 1024) {
        std::snprintf(text, sizeof(text), "%s%" PRId64 " B", sign, amount);
      } else {
        std::snprintf(text, sizeof(text), "%s%.2f MB", sign, static_cast<double>(amount) / (1024.0 * 1024.0));
      }
      break;
    case Units::kPercentage:
      std::snprintf(text, sizeof(text), "%s%.2f%%", sign, static_cast<double>(amount) / 100.0);
      break;
    case Units::kCount:
    case Units::kCountCumulative:
      std::snprintf(text, sizeof(text), "%s%" PRId64, sign, amount);
      break;
  }
  return text;
}

void PrintReport(const ReportFile& report, std::ostream& out, int64_t min_amount) {
  for (const auto& [process, trees] : BuildTrees(report)) {
    out << process << "\n";
    auto explicit_root = trees.roots.find("explicit");
    if (explicit_root != trees.roots.end()) {
      out << "\nExplicit Allocations\n\n";
      PrintNode(*explicit_root->second, {explicit_root->second->amount, min_amount, false}, "", true,
                true, out);
    }
    bool header = false;
    for (const auto& [name, root] : trees.roots) {
      if (name == "explicit" || root->children.empty()) continue;
      out << (header ? "\n" : "\nOther Measurements\n\n");
      header = true;
      PrintNode(*root, {root->amount, min_amount, false}, "", true, true, out);
    }
    out << "\n";
    for (const auto& [name, root] : trees.roots) {
      if (name != "explicit" && root->children.empty()) {
        out << FormatAmount(root->amount, root->units) << " ── " << name << "\n";
      }
    }
    out << "\n";
  }
}

void PrintDiff(const ReportFile& before, const ReportFile& after, std::ostream& out) {
  std::map<std::string, ProcessTrees> old_trees = BuildTrees(before);
  std::map<std::string, ProcessTrees> new_trees = BuildTrees(after);
  std::map<std::string, bool> processes;
  for (const auto& [name, trees] : old_trees) processes[name] = true;
  for (const auto& [name, trees] : new_trees) processes[name] = true;
  for (const auto& [process, unused] : processes) {
    out << process << " (after - before)\n\n";
    std::map<std::string, std::pair<const Node*, const Node*>> roots;
    if (auto it = old_trees.find(process); it != old_trees.end())
      for (const auto& [name, root] : it->second.roots) roots[name].first = root.get();
    if (auto it = new_trees.find(process); it != new_trees.end())
      for (const auto& [name, root] : it->second.roots) roots[name].second = root.get();
    bool any = false;
    for (const auto& [name, pair] : roots) {
      Node diff;
      diff.name = name;
      DiffNodes(pair.first, pair.second, &diff);
      if (diff.amount == 0 && diff.children.empty()) continue;
      any = true;
      PrintNode(diff, {0, 0, true}, "", true, true, out);
    }
    if (!any) out << "no differences\n";
    out << "\n";
  }
}

}  // namespace lethe::memreport
