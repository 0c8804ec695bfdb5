#include "about_memory_rules.h"

#include <map>
#include <set>

namespace lethe::testing {
namespace {

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

void CheckReportFields(const nlohmann::ordered_json& entry, size_t index,
                       std::vector<std::string>& out) {
  std::string where = "report " + std::to_string(index) + ": ";
  static const char* kFields[] = {"process", "path", "kind", "units", "amount", "description"};
  for (const char* field : kFields) {
    if (!entry.contains(field)) out.push_back(where + "missing field " + field);
  }
  if (!out.empty() && StartsWith(out.back(), where)) return;
  if (entry.size() != 6) out.push_back(where + "has extra fields");
  if (!entry["process"].is_string()) out.push_back(where + "process not a string");
  if (!entry["description"].is_string()) out.push_back(where + "description not a string");
  if (!entry["path"].is_string() || entry["path"].get<std::string>().empty()) {
    out.push_back(where + "path not a non-empty string");
    return;
  }
  std::string path = entry["path"].get<std::string>();
  where = "report " + path + ": ";
  if (path.front() == '/' || path.back() == '/' || path.find("//") != std::string::npos) {
    out.push_back(where + "empty path segment");
  }
  if (!entry["kind"].is_number_integer() || entry["kind"] < 0 || entry["kind"] > 2) {
    out.push_back(where + "kind not 0..2");
  }
  if (!entry["units"].is_number_integer() || entry["units"] < 0 || entry["units"] > 3) {
    out.push_back(where + "units not 0..3");
  }
  if (!entry["amount"].is_number_integer()) out.push_back(where + "amount not an integer");
  if (StartsWith(path, "explicit/")) {
    if (entry["kind"] != 0 && entry["kind"] != 1) out.push_back(where + "explicit kind not heap/nonheap");
    if (entry["units"] != 0) out.push_back(where + "explicit units not bytes");
    if (entry["amount"].is_number_integer() && entry["amount"] < 0) out.push_back(where + "negative bytes");
  }
  if (entry["units"] == 2 && entry["amount"].is_number_integer() && entry["amount"] < 0) {
    out.push_back(where + "negative cumulative count");
  }
}

}  // namespace

std::vector<std::string> AboutMemoryViolations(const nlohmann::ordered_json& report) {
  std::vector<std::string> out;
  if (!report.is_object()) return {"top level is not an object"};
  std::vector<std::string> keys;
  for (auto it = report.begin(); it != report.end(); ++it) keys.push_back(it.key());
  if (keys != std::vector<std::string>{"version", "hasMozMallocUsableSize", "reports"}) {
    out.push_back("top-level keys are not version, hasMozMallocUsableSize, reports in that order");
  }
  if (!report.contains("version") || report["version"] != 1) out.push_back("version is not 1");
  if (!report.contains("hasMozMallocUsableSize") || !report["hasMozMallocUsableSize"].is_boolean()) {
    out.push_back("hasMozMallocUsableSize missing or not a boolean");
  }
  if (!report.contains("reports") || !report["reports"].is_array()) {
    out.push_back("reports is not an array");
    return out;
  }
  std::set<std::string> paths;
  std::map<std::string, int> tree_units;
  size_t index = 0;
  for (const auto& entry : report["reports"]) {
    size_t before = out.size();
    CheckReportFields(entry, index++, out);
    if (out.size() != before) continue;
    std::string path = entry["path"].get<std::string>();
    paths.insert(path);
    std::string root = path.substr(0, path.find('/'));
    int units = entry["units"].get<int>();
    auto [it, inserted] = tree_units.emplace(root, units);
    if (!inserted && it->second != units) out.push_back("tree " + root + " mixes units");
  }
  // Siblings never overlap: no reported path is an ancestor of another reported path.
  for (const std::string& path : paths) {
    auto it = paths.lower_bound(path + "/");
    if (it != paths.end() && StartsWith(*it, path + "/")) {
      out.push_back("path " + path + " overlaps its descendant " + *it);
    }
  }
  return out;
}

int64_t HeapUnclassified(const nlohmann::ordered_json& report) {
  int64_t heap_allocated = 0;
  int64_t classified = 0;
  for (const auto& entry : report["reports"]) {
    std::string path = entry["path"].get<std::string>();
    if (path == "heap-allocated") heap_allocated += entry["amount"].get<int64_t>();
    if (StartsWith(path, "explicit/") && entry["kind"] == 1) {
      classified += entry["amount"].get<int64_t>();
    }
  }
  return heap_allocated - classified;
}

}  // namespace lethe::testing
