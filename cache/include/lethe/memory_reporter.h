// lethe/memory_reporter.h — a registry of memory reporters, and the reports Firefox's about:memory
// loads.
//
// What it is: every cache registers a reporter (RAII) that, when asked, adds its measurements:
// its bytes under explicit/ (kind heap, units bytes) and its counters under lethe-counters/ (kind
// other, units cumulative count). Collect() runs every reporter and adds the process-wide figures:
//   heap-allocated                         lethe_stats().allocated_bytes        (single node)
//   explicit/heap-overhead/bin-unused      free slots inside small runs         (kind nonheap)
//   explicit/heap-overhead/bookkeeping     the allocator's metadata             (kind nonheap)
//   explicit/heap-overhead/page-cache      dirty pages it still keeps            (kind nonheap)
//   resident, resident-unique              /proc/self/smaps_rollup: Rss, Private_Clean+Private_Dirty
// The viewer computes heap-unclassified = heap-allocated - sum(explicit heap). The text tree of a
// written report is lethe-memreport's (tools/memreport), which shows heap-unclassified too.
//
// Format (REFERENCE.md; aboutMemory.js): {"version":1,"hasMozMallocUsableSize":true,"reports":[
// {"process","path","kind","units","amount","description"}...]}. Paths are '/'-separated; a '/'
// inside one name (a URL) must be written '\' — use EscapePathSegment().
//
// Threads: Register and Registration destruction from any thread; Collect from any thread. Collect
// calls the reporters with the registry's lock held, so a Registration's destructor waits for a
// collection in progress: after it returns the reporter is never called again. A reporter must not
// register or unregister reporters.
#ifndef LETHE_MEMORY_REPORTER_H_
#define LETHE_MEMORY_REPORTER_H_

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace lethe {

enum class ReportKind : int { kNonHeap = 0, kHeap = 1, kOther = 2 };
enum class ReportUnits : int { kBytes = 0, kCount = 1, kCountCumulative = 2, kPercentage = 3 };

struct MemoryReportEntry {
  std::string path;
  ReportKind kind = ReportKind::kHeap;
  ReportUnits units = ReportUnits::kBytes;
  int64_t amount = 0;
  std::string description;
};

struct MemoryReport {
  std::string process;
  std::vector<MemoryReportEntry> entries;

  // The amount of `path`, or -1 if absent (sums duplicates, as about:memory does).
  int64_t Amount(std::string_view path) const;
  // The sum of every entry under `prefix` + "/" (and `prefix` itself).
  int64_t Sum(std::string_view prefix) const;
};

// Handed to each reporter: the helpers fix kind and units for the two trees caches use.
class MemoryReportCollector {
 public:
  explicit MemoryReportCollector(std::vector<MemoryReportEntry>& out) : out_(out) {}
  void Add(MemoryReportEntry entry) { out_.push_back(std::move(entry)); }
  // explicit/<path>, kind heap, units bytes.
  void HeapBytes(std::string_view explicit_path, uint64_t bytes, std::string_view description);
  // lethe-counters/<path>, kind other, units cumulative count.
  void Counter(std::string_view counter_path, uint64_t count, std::string_view description);

 private:
  std::vector<MemoryReportEntry>& out_;
};

// Resident figures of this process. Zero when /proc is unreadable.
struct ResidentMemory {
  uint64_t resident_bytes = 0;
  uint64_t resident_unique_bytes = 0;
};
ResidentMemory ReadResidentMemory();

// "http://a/b.png" -> "http:\\a\b.png" (one path segment).
std::string EscapePathSegment(std::string_view name);

class MemoryReporter {
 public:
  using Reporter = std::function<void(MemoryReportCollector&)>;

  // RAII: the reporter is unregistered when this is destroyed. Move-only. Must not outlive the
  // MemoryReporter.
  class Registration {
   public:
    Registration() = default;
    Registration(Registration&& other) noexcept;
    Registration& operator=(Registration&& other) noexcept;
    ~Registration();
    void reset();
    bool active() const { return owner_ != nullptr; }

   private:
    friend class MemoryReporter;
    Registration(MemoryReporter* owner, uint64_t id) : owner_(owner), id_(id) {}
    MemoryReporter* owner_ = nullptr;
    uint64_t id_ = 0;
  };

  explicit MemoryReporter(std::string process_name = "lethe");
  MemoryReporter(const MemoryReporter&) = delete;
  MemoryReporter& operator=(const MemoryReporter&) = delete;
  ~MemoryReporter();

  [[nodiscard]] Registration Register(std::string name, Reporter reporter);
  size_t reporter_count() const;

  // Runs every reporter, then adds the process-wide figures (see the top of this file).
  MemoryReport Collect() const;

 private:
  struct Entry {
    uint64_t id;
    std::string name;
    Reporter reporter;
  };
  void Unregister(uint64_t id);

  std::string process_;
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;  // guarded by mutex_
  uint64_t next_id_ = 1;        // guarded by mutex_
};

// The JSON about:memory loads.
std::string MemoryReportToJson(const MemoryReport& report);
// Writes the JSON to `path`, gzip'd when the name ends in ".gz", whole or not at all
// (WriteFileAtomically: a full disk leaves any earlier report at `path` untouched and no partial
// file). Returns "" or a readable error naming the file.
[[nodiscard]] std::string WriteMemoryReport(const MemoryReport& report, const std::string& path);

}  // namespace lethe

#endif  // LETHE_MEMORY_REPORTER_H_
