// CSV for lethe-stress samples (see stress_samples.h).
#include "stress_samples.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace lethe::stress {

namespace {

constexpr size_t kFixedColumnCount = 9;

std::vector<std::string> SplitCommas(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.emplace_back();
  return fields;
}

bool ParseUnsigned(const std::string& text, uint64_t* out) {
  if (text.empty() || text[0] == '-') return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = value;
  return true;
}

}  // namespace

RegretCounts MakeRegretCounts(uint64_t surface_count, uint64_t surface_bytes,
                              uint64_t surface_decode_ns, uint64_t image_count, uint64_t image_bytes) {
  RegretCounts regret{};
  regret[kSurfaceRegretCount] = surface_count;
  regret[kSurfaceRegretBytes] = surface_bytes;
  regret[kSurfaceRegretDecodeNs] = surface_decode_ns;
  regret[kImageRegretCount] = image_count;
  regret[kImageRegretBytes] = image_bytes;
  regret[kTotalRegretCount] = surface_count + image_count;
  regret[kTotalRegretBytes] = surface_bytes + image_bytes;
  return regret;
}

std::string CsvHeader() {
  std::string header =
      "run,phase,load,cycle,time_s,windows,rss_bytes,resident_unique_bytes,heap_allocated_bytes";
  for (const char* name : kCacheNames) header += std::string(",") + name + "_bytes";
  for (const char* name : kRegretNames) header += std::string(",") + name;
  return header;
}

void WriteCsvRow(std::ostream& out, const StressSample& sample) {
  char time[32];
  std::snprintf(time, sizeof(time), "%.3f", sample.time_s);
  out << sample.run << ',' << sample.phase << ',' << sample.load << ',' << sample.cycle << ','
      << time << ',' << sample.windows << ',' << sample.rss_bytes << ','
      << sample.resident_unique_bytes << ',' << sample.heap_allocated_bytes;
  for (uint64_t bytes : sample.cache_bytes) out << ',' << bytes;
  for (uint64_t count : sample.regret) out << ',' << count;
  out << '\n';
}

std::string WriteCsvFile(const std::string& path, const std::vector<StressSample>& samples) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return "cannot write " + path + " (" + std::strerror(errno) + ")";
  out << CsvHeader() << '\n';
  for (const StressSample& sample : samples) WriteCsvRow(out, sample);
  out.close();
  if (!out) return "cannot write " + path + " (disk full?)";
  return "";
}

std::string ReadCsvFile(const std::string& path, std::vector<StressSample>* samples) {
  std::ifstream in(path);
  if (!in) return "cannot read " + path + " (" + std::strerror(errno) + ")";
  std::string line;
  if (!std::getline(in, line) || line != CsvHeader()) {
    return path + ": line 1: not the lethe-stress CSV header";
  }
  const size_t column_count = kFixedColumnCount + kCacheNames.size() + kRegretNames.size();
  for (int line_number = 2; std::getline(in, line); ++line_number) {
    const std::string where = path + ": line " + std::to_string(line_number) + ": ";
    std::vector<std::string> fields = SplitCommas(line);
    if (fields.size() != column_count) {
      return where + std::to_string(fields.size()) + " columns, want " +
             std::to_string(column_count);
    }
    StressSample sample;
    sample.run = fields[0];
    sample.phase = fields[1];
    char* end = nullptr;
    sample.time_s = std::strtod(fields[4].c_str(), &end);
    if (fields[4].empty() || *end != '\0') return where + "time_s is not a number";
    uint64_t load = 0, cycle = 0, windows = 0;
    if (!ParseUnsigned(fields[2], &load) || !ParseUnsigned(fields[3], &cycle) ||
        !ParseUnsigned(fields[5], &windows)) {
      return where + "load, cycle or windows is not a number";
    }
    sample.load = static_cast<int>(load);
    sample.cycle = static_cast<int>(cycle);
    sample.windows = static_cast<int>(windows);
    uint64_t* byte_fields[3] = {&sample.rss_bytes, &sample.resident_unique_bytes,
                                &sample.heap_allocated_bytes};
    for (size_t i = 0; i < 3; ++i) {
      if (!ParseUnsigned(fields[6 + i], byte_fields[i])) return where + "a byte count is not a number";
    }
    for (size_t i = 0; i < kCacheNames.size(); ++i) {
      if (!ParseUnsigned(fields[kFixedColumnCount + i], &sample.cache_bytes[i])) {
        return where + "a cache byte count is not a number";
      }
    }
    for (size_t i = 0; i < kRegretNames.size(); ++i) {
      if (!ParseUnsigned(fields[kFixedColumnCount + kCacheNames.size() + i], &sample.regret[i])) {
        return where + "a regret figure is not a number";
      }
    }
    const RegretCounts& r = sample.regret;
    if (r != MakeRegretCounts(r[kSurfaceRegretCount], r[kSurfaceRegretBytes],
                              r[kSurfaceRegretDecodeNs], r[kImageRegretCount], r[kImageRegretBytes])) {
      return where + "a regret total is not the sum of the two caches' figures";
    }
    samples->push_back(std::move(sample));
  }
  return "";
}

}  // namespace lethe::stress
