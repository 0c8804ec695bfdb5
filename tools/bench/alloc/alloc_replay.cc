// Trace replays for lethe-alloc-workload: compile-trace (raw events to slot operations, once) and
// replay (the operations on this process's malloc, timed).
#include "alloc_replay.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "alloc_trace_format.h"
#include "proc_figures.h"
#include "workload_support.h"

namespace lethe::bench {
namespace {

// Turns addresses into slots: a slot per live block, reused once the block is freed.
class SlotMap {
 public:
  // The slot of a new block at `address`; a block still recorded there is ended first (its free
  // was lost: a child that exec'd, a buffer a process died with).
  uint32_t Open(uint64_t address, std::vector<ReplayOp>& ops) {
    auto it = live_.find(address);
    if (it != live_.end()) ops.push_back({uint32_t(ReplayKind::kFree), Close(it), 0, 0, 0});
    uint32_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
      slot = next_++;
    }
    live_.emplace(address, slot);
    return slot;
  }

  // The slot of the live block at `address`, removed from the map; false if none.
  bool Take(uint64_t address, uint32_t* slot) {
    auto it = live_.find(address);
    if (it == live_.end()) return false;
    *slot = Close(it);
    return true;
  }

  // Moves the live block at `from` to `to` (the address its realloc returned), in the same slot;
  // false if no block is live at `from`. The slot stays taken: a realloc neither frees nor opens
  // one. A block still recorded at `to` lost its free and is ended first, as in Open.
  bool Move(uint64_t from, uint64_t to, uint32_t* slot, std::vector<ReplayOp>& ops) {
    auto it = live_.find(from);
    if (it == live_.end()) return false;
    *slot = it->second;
    live_.erase(it);
    auto stale = live_.find(to);
    if (stale != live_.end()) ops.push_back({uint32_t(ReplayKind::kFree), Close(stale), 0, 0, 0});
    live_.emplace(to, *slot);
    return true;
  }

  // Frees every live block (the end of a process).
  void CloseAll(std::vector<ReplayOp>& ops) {
    while (!live_.empty()) ops.push_back({uint32_t(ReplayKind::kFree), Close(live_.begin()), 0, 0, 0});
  }

  uint32_t slot_count() const { return next_; }

 private:
  using Map = std::unordered_map<uint64_t, uint32_t>;
  uint32_t Close(Map::iterator it) {
    uint32_t slot = it->second;
    live_.erase(it);
    free_.push_back(slot);
    return slot;
  }

  Map live_;
  std::vector<uint32_t> free_;
  uint32_t next_ = 0;
};

struct Compiled {
  std::vector<ReplayOp> ops;
  uint64_t dropped = 0;
  uint64_t threads = 0;
};

// Appends the operations of one raw event.
void CompileEvent(const RawEvent& event, SlotMap& slots, Compiled& out) {
  out.threads = std::max<uint64_t>(out.threads, event.thread);
  auto allocate = [&](ReplayKind kind, uint64_t size, uint32_t alignment) {
    if (event.result == 0) return void(++out.dropped);  // a failed call changed nothing
    out.ops.push_back({uint32_t(kind), slots.Open(event.result, out.ops), alignment, 0, size});
  };
  uint32_t slot = 0;
  switch (static_cast<RawOp>(event.op)) {
    case RawOp::kMalloc: return allocate(ReplayKind::kMalloc, event.a, 0);
    case RawOp::kCalloc: return allocate(ReplayKind::kCalloc, event.a * event.b, 0);
    case RawOp::kMemalign:
      return allocate(ReplayKind::kMemalign, event.b, static_cast<uint32_t>(event.a));
    case RawOp::kFree:
      if (!slots.Take(event.a, &slot)) return void(++out.dropped);
      out.ops.push_back({uint32_t(ReplayKind::kFree), slot, 0, 0, 0});
      return;
    case RawOp::kRealloc:
      if (event.a == 0) return allocate(ReplayKind::kMalloc, event.b, 0);
      if (event.result == 0 && event.b > 0) return void(++out.dropped);  // failed: unchanged
      if (event.result == 0) {  // realloc(p, 0) freed it
        if (!slots.Take(event.a, &slot)) return void(++out.dropped);
        out.ops.push_back({uint32_t(ReplayKind::kFree), slot, 0, 0, 0});
        return;
      }
      if (!slots.Move(event.a, event.result, &slot, out.ops)) {
        ++out.dropped;  // a block from before the recording: a new one here
        return allocate(ReplayKind::kMalloc, event.b, 0);
      }
      out.ops.push_back({uint32_t(ReplayKind::kRealloc), slot, 0, 0, event.b});
      return;
  }
  ++out.dropped;  // an unknown operation
}

std::string CompileRaw(const std::string& path, SlotMap& slots, Compiled& out) {
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return "cannot open " + path + ": " + std::strerror(errno);
  char magic[sizeof(kRawMagic)];
  if (std::fread(magic, 1, sizeof(magic), file) != sizeof(magic) ||
      std::memcmp(magic, kRawMagic, sizeof(magic)) != 0) {
    std::fclose(file);
    return path + " is not a raw allocation trace (no LETHEAT1 magic)";
  }
  std::vector<RawEvent> chunk(1 << 16);
  size_t count;
  while ((count = std::fread(chunk.data(), sizeof(RawEvent), chunk.size(), file)) > 0) {
    for (size_t i = 0; i < count; ++i) CompileEvent(chunk[i], slots, out);
  }
  std::fclose(file);
  return "";
}

bool WriteAll(int fd, const void* data, size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t written = write(fd, bytes, size);
    if (written <= 0) return false;
    bytes += written;
    size -= static_cast<size_t>(written);
  }
  return true;
}

// The trace at `path`, mapped: its header and operations, checked against the file's size.
struct MappedTrace {
  void* base = MAP_FAILED;
  size_t size = 0;
  ReplayHeader header{};
  const ReplayOp* ops = nullptr;
  ~MappedTrace() {
    if (base != MAP_FAILED) munmap(base, size);
  }
};

std::string MapTrace(const std::string& path, MappedTrace& trace) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "cannot open " + path + ": " + std::strerror(errno);
  struct stat info{};
  fstat(fd, &info);
  trace.size = static_cast<size_t>(info.st_size);
  constexpr size_t kPrefix = sizeof(kReplayMagic) + sizeof(ReplayHeader);
  if (trace.size >= kPrefix) {
    trace.base = mmap(nullptr, trace.size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  }
  close(fd);
  const char* bytes = static_cast<const char*>(trace.base);
  if (trace.base == MAP_FAILED || std::memcmp(bytes, kReplayMagic, sizeof(kReplayMagic)) != 0) {
    return path + " is not a compiled trace (compile it with compile-trace)";
  }
  std::memcpy(&trace.header, bytes + sizeof(kReplayMagic), sizeof(ReplayHeader));
  if (trace.header.op_count != (trace.size - kPrefix) / sizeof(ReplayOp) ||
      (trace.size - kPrefix) % sizeof(ReplayOp) != 0 || trace.header.slot_count > (1u << 31)) {
    return path + " is truncated or corrupt (its header does not match its size)";
  }
  trace.ops = reinterpret_cast<const ReplayOp*>(bytes + kPrefix);
  return "";
}

// Checks, before anything is timed, that every operation is one the replay can run: a known
// kind on a slot within slot_count; an allocation on a free slot, a free or a realloc on a live
// one. "" when it is, else what is wrong and where. (A compiler that left a reallocated block's
// slot free made replays leak every such block; this check is what would have caught it.)
std::string CheckOperations(const MappedTrace& trace) {
  std::vector<bool> live(trace.header.slot_count, false);
  for (uint64_t i = 0; i < trace.header.op_count; ++i) {
    const ReplayOp& op = trace.ops[i];
    auto where = [&] {
      return "operation " + std::to_string(i) + " (slot " + std::to_string(op.slot) + ")";
    };
    if (op.slot >= trace.header.slot_count) return where() + " is past the trace's slot count";
    switch (static_cast<ReplayKind>(op.kind)) {
      case ReplayKind::kMalloc:
      case ReplayKind::kCalloc:
      case ReplayKind::kMemalign:
        if (live[op.slot]) return where() + " allocates into a slot whose block is live";
        live[op.slot] = true;
        break;
      case ReplayKind::kFree:
        if (!live[op.slot]) return where() + " frees a slot with no live block";
        live[op.slot] = false;
        break;
      case ReplayKind::kRealloc:
        if (!live[op.slot]) return where() + " reallocates a slot with no live block";
        break;
      default:
        return where() + " has an unknown kind " + std::to_string(op.kind);
    }
  }
  return "";
}

struct Block {
  unsigned char* pointer;
  uint64_t size;
};

// Runs the operations on this process's malloc; false (with the index) if a call failed.
bool Replay(const MappedTrace& trace, Block* blocks, uint64_t* failed_at) {
  for (uint64_t i = 0; i < trace.header.op_count; ++i) {
    const ReplayOp& op = trace.ops[i];
    Block& block = blocks[op.slot];
    void* result = nullptr;
    uint64_t written_from = 0;  // bytes already written (kept across a realloc)
    switch (static_cast<ReplayKind>(op.kind)) {
      case ReplayKind::kFree:
        std::free(block.pointer);
        block = Block{nullptr, 0};
        continue;
      case ReplayKind::kMalloc: result = std::malloc(op.size); break;
      case ReplayKind::kCalloc: result = std::calloc(1, op.size); break;
      case ReplayKind::kMemalign:
        if (posix_memalign(&result, std::max<size_t>(op.alignment, sizeof(void*)), op.size) != 0) {
          result = nullptr;
        }
        break;
      case ReplayKind::kRealloc:
        result = std::realloc(block.pointer, op.size);
        written_from = std::min(block.size, op.size);
        break;
    }
    if (result == nullptr && op.size > 0) {
      *failed_at = i;
      return false;
    }
    block = Block{static_cast<unsigned char*>(result), op.size};
    if (op.size > written_from) {
      std::memset(block.pointer + written_from, static_cast<int>(i & 0xff), op.size - written_from);
    }
  }
  return true;
}

}  // namespace

std::string CompileTrace(const std::vector<std::string>& raws, const std::string& out) {
  SlotMap slots;
  Compiled compiled;
  for (size_t i = 0; i < raws.size(); ++i) {
    // The process before this one exited: its blocks go back before the next one starts. The last
    // one's stay live, as an exiting program leaves them (what its exit RSS measures).
    if (i > 0) slots.CloseAll(compiled.ops);
    std::string error = CompileRaw(raws[i], slots, compiled);
    if (!error.empty()) return error;
  }
  ReplayHeader header{compiled.ops.size(), slots.slot_count(), compiled.dropped, compiled.threads};
  int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot create " + out + ": " + std::strerror(errno);
  bool ok = WriteAll(fd, kReplayMagic, sizeof(kReplayMagic)) &&
            WriteAll(fd, &header, sizeof(header)) &&
            WriteAll(fd, compiled.ops.data(), compiled.ops.size() * sizeof(ReplayOp));
  ok = close(fd) == 0 && ok;
  if (!ok) {
    unlink(out.c_str());
    return "cannot write " + out + ": " + std::strerror(errno);
  }
  std::printf("ops=%llu slots=%llu dropped=%llu threads=%llu\n",
              static_cast<unsigned long long>(header.op_count),
              static_cast<unsigned long long>(header.slot_count),
              static_cast<unsigned long long>(header.dropped_count),
              static_cast<unsigned long long>(header.thread_count));
  return "";
}

std::string RunReplay(const std::string& path, unsigned settle_ms) {
  MappedTrace trace;
  std::string error = MapTrace(path, trace);
  if (!error.empty()) return error;
  error = CheckOperations(trace);
  if (!error.empty()) return path + " is corrupt: " + error + " (compile it again)";
  // The block table is mapped, not allocated: it must not be part of what the malloc under test
  // serves. Its pages count in every allocator's RSS alike.
  const size_t table_bytes = std::max<size_t>(1, trace.header.slot_count) * sizeof(Block);
  void* table = mmap(nullptr, table_bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (table == MAP_FAILED) return "cannot map the block table";
  const long faults_before = MinorFaults();
  const double start = NowMs();
  uint64_t failed_at = 0;
  const bool ok = Replay(trace, static_cast<Block*>(table), &failed_at);
  const double elapsed = NowMs() - start;
  if (!ok) {
    return "allocation " + std::to_string(failed_at) + " of " + path + " failed (out of memory)";
  }
  std::printf("ms=%.3f exit_rss_kb=%ld exit_anon_kb=%ld peak_kb=%ld minflt=%ld ops=%llu "
              "slots=%llu\n",
              elapsed, RssKb(), AnonRssKb(), PeakRssKb(), MinorFaults() - faults_before,
              static_cast<unsigned long long>(trace.header.op_count),
              static_cast<unsigned long long>(trace.header.slot_count));
  PrintAllocatorStatsIfAsked();  // what the exit RSS holds
  if (settle_ms > 0) {
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::milliseconds(settle_ms));
    std::printf("settled_rss_kb=%ld settled_anon_kb=%ld\n", RssKb(), AnonRssKb());
  }
  return "";  // the blocks and the table stay: the process exits, as the program did
}

}  // namespace lethe::bench
