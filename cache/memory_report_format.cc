// Memory reports as the JSON about:memory loads (plain or gzip'd) and as a text tree.
#include <zlib.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "lethe/memory_reporter.h"

namespace lethe {
namespace {

void AppendJsonString(std::string& out, std::string_view text) {
  out += '"';
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string WriteGzip(const std::string& data, const std::string& path) {
  gzFile out = gzopen(path.c_str(), "wb9");
  if (out == nullptr) return "cannot open " + path + " for writing";
  size_t written = 0;
  while (written < data.size()) {
    unsigned chunk = static_cast<unsigned>(std::min<size_t>(data.size() - written, 1u << 20));
    int n = gzwrite(out, data.data() + written, chunk);
    if (n <= 0) {
      gzclose(out);
      return "gzip write to " + path + " failed";
    }
    written += static_cast<size_t>(n);
  }
  if (gzclose(out) != Z_OK) return "gzip close of " + path + " failed";
  return "";
}

std::string WritePlain(const std::string& data, const std::string& path) {
  std::FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) return "cannot open " + path + " for writing";
  bool ok = std::fwrite(data.data(), 1, data.size(), out) == data.size();
  ok = (std::fclose(out) == 0) && ok;
  return ok ? "" : "write to " + path + " failed";
}

// One node of a text tree: its own amount (a leaf's report) plus its children's.
struct TextNode {
  int64_t amount = 0;
  std::map<std::string, TextNode> children;
};

std::string FormatAmount(int64_t amount, ReportUnits units) {
  char text[64];
  if (units == ReportUnits::kBytes) {
    std::snprintf(text, sizeof(text), "%.2f MB", static_cast<double>(amount) / (1024.0 * 1024.0));
  } else if (units == ReportUnits::kPercentage) {
    std::snprintf(text, sizeof(text), "%.2f%%", static_cast<double>(amount) / 100.0);
  } else {
    std::snprintf(text, sizeof(text), "%" PRId64, amount);
  }
  return text;
}

void PrintNode(std::string& out, const std::string& name, const TextNode& node, int64_t total,
               ReportUnits units, int depth) {
  out.append(static_cast<size_t>(depth) * 2, ' ');
  out += FormatAmount(node.amount, units);
  if (depth > 0 && total > 0) {
    char percent[32];
    std::snprintf(percent, sizeof(percent), " (%.1f%%)", 100.0 * static_cast<double>(node.amount) /
                                                              static_cast<double>(total));
    out += percent;
  }
  out += (node.children.empty() ? " -- " : " ── ") + name + "\n";
  std::vector<std::pair<std::string, const TextNode*>> children;
  for (const auto& [child_name, child] : node.children) children.emplace_back(child_name, &child);
  std::stable_sort(children.begin(), children.end(), [](const auto& a, const auto& b) {
    return a.second->amount > b.second->amount;
  });
  for (const auto& [child_name, child] : children) {
    PrintNode(out, child_name, *child, total, units, depth + 1);
  }
}

void AddToTree(TextNode& root, std::string_view path, int64_t amount) {
  TextNode* node = &root;
  node->amount += amount;
  size_t start = path.find('/');
  while (start != std::string_view::npos) {
    size_t end = path.find('/', start + 1);
    std::string segment(path.substr(start + 1, end == std::string_view::npos ? end : end - start - 1));
    node = &node->children[segment];
    node->amount += amount;
    start = end;
  }
}

}  // namespace

std::string MemoryReportToJson(const MemoryReport& report) {
  std::string out = "{\"version\":1,\"hasMozMallocUsableSize\":true,\"reports\":[";
  bool first = true;
  for (const MemoryReportEntry& entry : report.entries) {
    out += first ? "\n" : ",\n";
    first = false;
    out += "{\"process\":";
    AppendJsonString(out, report.process);
    out += ",\"path\":";
    AppendJsonString(out, entry.path);
    out += ",\"kind\":" + std::to_string(static_cast<int>(entry.kind));
    out += ",\"units\":" + std::to_string(static_cast<int>(entry.units));
    out += ",\"amount\":" + std::to_string(entry.amount);
    out += ",\"description\":";
    AppendJsonString(out, entry.description);
    out += "}";
  }
  out += "\n]}\n";
  return out;
}

std::string WriteMemoryReport(const MemoryReport& report, const std::string& path) {
  std::string json = MemoryReportToJson(report);
  return EndsWith(path, ".gz") ? WriteGzip(json, path) : WritePlain(json, path);
}

std::string MemoryReportToText(const MemoryReport& report) {
  std::map<std::string, TextNode> trees;
  std::map<std::string, ReportUnits> units;
  for (const MemoryReportEntry& entry : report.entries) {
    std::string root = entry.path.substr(0, entry.path.find('/'));
    AddToTree(trees[root], entry.path, entry.amount);
    units.emplace(root, entry.units);
  }
  int64_t heap_allocated = report.Amount("heap-allocated");
  if (heap_allocated >= 0 && trees.count("explicit") != 0) {
    int64_t classified = 0;
    for (const MemoryReportEntry& entry : report.entries) {
      if (entry.kind == ReportKind::kHeap && entry.path.rfind("explicit/", 0) == 0) {
        classified += entry.amount;
      }
    }
    AddToTree(trees["explicit"], "explicit/heap-unclassified", heap_allocated - classified);
  }
  std::string out = "Memory report of process " + report.process + "\n";
  std::string others;
  for (const auto& [root, node] : trees) {
    if (node.children.empty()) {
      others += "  " + FormatAmount(node.amount, units[root]) + " -- " + root + "\n";
      continue;
    }
    out += "\n";
    PrintNode(out, root, node, node.amount, units[root], 0);
  }
  if (!others.empty()) out += "\nOther measurements\n" + others;
  return out;
}

}  // namespace lethe
