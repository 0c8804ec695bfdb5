// lethe-memreport: prints a memory report (the JSON that about:memory loads, plain or .gz) as a
// tree like about:memory's, or the difference between two reports.
//
//   lethe-memreport REPORT [--min-bytes N]
//   lethe-memreport --diff BEFORE AFTER
// Exit 0 on success, 2 on bad usage or an unreadable/invalid report (with the reason).
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "memory_report_file.h"

namespace {

// Without a problem (--help) the usage goes to stdout.
int Usage(const std::string& problem) {
  if (!problem.empty()) std::cerr << "lethe-memreport: " << problem << "\n";
  std::ostream& out = problem.empty() ? std::cout : std::cerr;
  out << "usage: lethe-memreport REPORT [--min-bytes N]\n"
               "       lethe-memreport --diff BEFORE AFTER\n"
               "REPORT: a memory report in about:memory's JSON format (.json or .json.gz)\n";
  return 2;
}

std::optional<lethe::memreport::ReportFile> Load(const std::string& path) {
  std::string error;
  auto report = lethe::memreport::LoadReportFile(path, &error);
  if (!report) std::cerr << "lethe-memreport: " << error << "\n";
  return report;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return Usage("no report given");
  if (args[0] == "-h" || args[0] == "--help") {
    Usage("");
    return 0;
  }
  if (args[0] == "--diff") {
    if (args.size() != 3) return Usage("--diff takes exactly two reports");
    auto before = Load(args[1]);
    auto after = Load(args[2]);
    if (!before || !after) return 2;
    lethe::memreport::PrintDiff(*before, *after, std::cout);
    return 0;
  }
  int64_t min_amount = 0;
  std::string path;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--min-bytes") {
      if (i + 1 >= args.size()) return Usage("--min-bytes needs a number");
      char* end = nullptr;
      long long value = std::strtoll(args[i + 1].c_str(), &end, 10);
      if (end == args[i + 1].c_str() || *end != '\0' || value < 0) {
        return Usage("--min-bytes needs a non-negative number, not '" + args[i + 1] + "'");
      }
      min_amount = value;
      ++i;
    } else if (!args[i].empty() && args[i][0] == '-') {
      return Usage("unknown flag '" + args[i] + "'");
    } else if (path.empty()) {
      path = args[i];
    } else {
      return Usage("more than one report given (use --diff to compare two)");
    }
  }
  if (path.empty()) return Usage("no report given");
  auto report = Load(path);
  if (!report) return 2;
  lethe::memreport::PrintReport(*report, std::cout, min_amount);
  return 0;
}
