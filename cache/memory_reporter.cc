// The reporter registry, its collection, and the process-wide figures (allocator, /proc).
#include "lethe/memory_reporter.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

#include "lethe/alloc.h"
#include "lethe/check.h"

namespace lethe {

int64_t MemoryReport::Amount(std::string_view path) const {
  int64_t amount = -1;
  for (const MemoryReportEntry& entry : entries) {
    if (entry.path == path) amount = (amount < 0 ? 0 : amount) + entry.amount;
  }
  return amount;
}

int64_t MemoryReport::Sum(std::string_view prefix) const {
  int64_t sum = 0;
  for (const MemoryReportEntry& entry : entries) {
    std::string_view path = entry.path;
    if (path == prefix ||
        (path.size() > prefix.size() && path.substr(0, prefix.size()) == prefix &&
         path[prefix.size()] == '/')) {
      sum += entry.amount;
    }
  }
  return sum;
}

void MemoryReportCollector::HeapBytes(std::string_view explicit_path, uint64_t bytes,
                                      std::string_view description) {
  Add(MemoryReportEntry{"explicit/" + std::string(explicit_path), ReportKind::kHeap,
                        ReportUnits::kBytes, static_cast<int64_t>(bytes),
                        std::string(description)});
}

void MemoryReportCollector::Counter(std::string_view counter_path, uint64_t count,
                                    std::string_view description) {
  Add(MemoryReportEntry{"lethe-counters/" + std::string(counter_path), ReportKind::kOther,
                        ReportUnits::kCountCumulative, static_cast<int64_t>(count),
                        std::string(description)});
}

std::string EscapePathSegment(std::string_view name) {
  std::string escaped(name);
  std::replace(escaped.begin(), escaped.end(), '/', '\\');
  return escaped;
}

namespace {

// Reads "Key:   123 kB" lines of a /proc file into the fields asked for. Returns false when the file
// cannot be opened.
bool ReadKilobyteFields(const char* file, const std::vector<std::pair<const char*, uint64_t*>>& keys) {
  std::FILE* in = std::fopen(file, "r");
  if (in == nullptr) return false;
  char line[256];
  while (std::fgets(line, sizeof(line), in) != nullptr) {
    for (const auto& [key, out] : keys) {
      size_t length = std::strlen(key);
      if (std::strncmp(line, key, length) == 0 && line[length] == ':') {
        unsigned long long kilobytes = 0;
        if (std::sscanf(line + length + 1, "%llu", &kilobytes) == 1) *out += kilobytes * 1024;
      }
    }
  }
  std::fclose(in);
  return true;
}

}  // namespace

ResidentMemory ReadResidentMemory() {
  ResidentMemory memory;
  uint64_t private_clean = 0;
  uint64_t private_dirty = 0;
  if (ReadKilobyteFields("/proc/self/smaps_rollup", {{"Rss", &memory.resident_bytes},
                                                     {"Private_Clean", &private_clean},
                                                     {"Private_Dirty", &private_dirty}})) {
    memory.resident_unique_bytes = private_clean + private_dirty;
    return memory;
  }
  // Kernels before 4.14 have no smaps_rollup: statm gives resident and shared pages.
  std::FILE* in = std::fopen("/proc/self/statm", "r");
  if (in == nullptr) return memory;
  unsigned long long size = 0, resident = 0, shared = 0;
  if (std::fscanf(in, "%llu %llu %llu", &size, &resident, &shared) == 3) {
    uint64_t page = 4096;
    memory.resident_bytes = resident * page;
    memory.resident_unique_bytes = (resident - std::min(resident, shared)) * page;
  }
  std::fclose(in);
  return memory;
}

MemoryReporter::Registration::Registration(Registration&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)), id_(other.id_) {}

MemoryReporter::Registration& MemoryReporter::Registration::operator=(
    Registration&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = std::exchange(other.owner_, nullptr);
    id_ = other.id_;
  }
  return *this;
}

MemoryReporter::Registration::~Registration() { reset(); }

void MemoryReporter::Registration::reset() {
  if (owner_ != nullptr) std::exchange(owner_, nullptr)->Unregister(id_);
}

MemoryReporter::MemoryReporter(std::string process_name) : process_(std::move(process_name)) {}

MemoryReporter::~MemoryReporter() {
  LETHE_CHECK(reporter_count() == 0, "a MemoryReporter::Registration outlived its MemoryReporter");
}

MemoryReporter::Registration MemoryReporter::Register(std::string name, Reporter reporter) {
  LETHE_CHECK(static_cast<bool>(reporter), "MemoryReporter::Register needs a reporter");
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t id = next_id_++;
  entries_.push_back(Entry{id, std::move(name), std::move(reporter)});
  return Registration(this, id);
}

void MemoryReporter::Unregister(uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::erase_if(entries_, [id](const Entry& entry) { return entry.id == id; });
}

size_t MemoryReporter::reporter_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

MemoryReport MemoryReporter::Collect() const {
  MemoryReport report;
  report.process = process_;
  MemoryReportCollector collector(report.entries);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Entry& entry : entries_) entry.reporter(collector);
  }
  lethe_stats_t stats;
  lethe_stats(&stats);
  auto nonheap = [&](const char* path, uint64_t bytes, const char* description) {
    collector.Add(MemoryReportEntry{path, ReportKind::kNonHeap, ReportUnits::kBytes,
                                    static_cast<int64_t>(bytes), description});
  };
  nonheap("explicit/heap-overhead/bin-unused", stats.bin_unused_bytes,
          "Free slots inside the allocator's small-object runs.");
  nonheap("explicit/heap-overhead/thread-caches", stats.thread_cache_bytes,
          "Freed small blocks each thread's cache keeps for its next allocations.");
  nonheap("explicit/heap-overhead/transfer-caches", stats.transfer_cache_bytes,
          "Freed small blocks the arenas keep between thread caches for their next refills.");
  nonheap("explicit/heap-overhead/bookkeeping", stats.metadata_bytes,
          "The allocator's own metadata: chunk headers, page maps, arena and thread-cache state.");
  nonheap("explicit/heap-overhead/page-cache", stats.dirty_bytes,
          "Freed pages the allocator keeps resident until its decay time or a purge returns them.");
  ResidentMemory resident = ReadResidentMemory();
  auto single = [&](const char* path, uint64_t bytes, const char* description) {
    collector.Add(MemoryReportEntry{path, ReportKind::kOther, ReportUnits::kBytes,
                                    static_cast<int64_t>(bytes), description});
  };
  single("heap-allocated", stats.allocated_bytes,
         "Bytes in live blocks of Lethe's allocator (sum of their usable sizes).");
  single("resident", resident.resident_bytes,
         "Physical memory the process uses (RSS, /proc/self/smaps_rollup).");
  single("resident-unique", resident.resident_unique_bytes,
         "Physical memory only this process uses (Private_Clean + Private_Dirty).");
  return report;
}

}  // namespace lethe
