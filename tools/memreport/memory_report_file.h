// memory_report_file.h — reading memory reports in the JSON format that Firefox's about:memory
// loads (plain or gzip'd), building their trees, and printing or diffing them as text.
// Used by lethe-memreport; no dependency on how the report was made, so it reads Firefox's own
// reports too.
#ifndef LETHE_TOOLS_MEMREPORT_MEMORY_REPORT_FILE_H_
#define LETHE_TOOLS_MEMREPORT_MEMORY_REPORT_FILE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace lethe::memreport {

enum class Kind { kNonHeap = 0, kHeap = 1, kOther = 2 };
enum class Units { kBytes = 0, kCount = 1, kCountCumulative = 2, kPercentage = 3 };

struct Entry {
  std::string process;
  std::string path;  // as in the file: '/' separates nodes, '\' stands for a '/' inside a name
  Kind kind = Kind::kOther;
  Units units = Units::kBytes;
  int64_t amount = 0;
  std::string description;
};

struct ReportFile {
  std::vector<Entry> entries;
};

// Loads `path` (gzip'd when it ends in ".gz"). On failure returns nullopt and a readable *error
// naming the file and what is wrong ("report.json: reports[3]: missing field 'amount'").
std::optional<ReportFile> LoadReportFile(const std::string& path, std::string* error);
// Parses JSON text already in memory; `name` is used in error messages.
std::optional<ReportFile> ParseReport(const std::string& text, const std::string& name,
                                      std::string* error);

// One node of a tree; amount is the sum of its children when it has any (reports give leaves).
struct Node {
  std::string name;
  int64_t amount = 0;
  Units units = Units::kBytes;
  std::string description;
  std::map<std::string, std::unique_ptr<Node>> children;
};

// Trees of one process, by their root name ("explicit", "heap-allocated", "lethe-counters", ...).
// Adds "explicit/heap-unclassified" (heap-allocated minus explicit heap reports) when the report
// has heap-allocated and no heap-unclassified of its own, as about:memory does.
struct ProcessTrees {
  std::map<std::string, std::unique_ptr<Node>> roots;
};
std::map<std::string, ProcessTrees> BuildTrees(const ReportFile& report);

// Prints every process's trees, largest children first, with amounts in their units and bytes
// also as a percentage of the root. Nodes smaller than `min_amount` are folded into their parent.
void PrintReport(const ReportFile& report, std::ostream& out, int64_t min_amount = 0);

// Prints `after` minus `before`: only nodes whose amount changed, signed, largest change first.
void PrintDiff(const ReportFile& before, const ReportFile& after, std::ostream& out);

// "12.34 MB" style, exact bytes below 1 KiB.
std::string FormatAmount(int64_t amount, Units units, bool with_sign = false);

}  // namespace lethe::memreport

#endif  // LETHE_TOOLS_MEMREPORT_MEMORY_REPORT_FILE_H_
