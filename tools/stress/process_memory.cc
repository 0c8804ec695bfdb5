// Reading /proc for lethe-stress and lethe-pressure (see process_memory.h).
#include "process_memory.h"

#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "lethe/alloc.h"

namespace lethe::stress {

namespace {

std::string ProcPath(pid_t pid, const char* name) {
  return (pid == 0 ? std::string("/proc/self/") : "/proc/" + std::to_string(pid) + "/") + name;
}

bool ReadFile(const std::string& path, std::string* text, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read " + path + " (" + std::strerror(errno) + ")";
    return false;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  *text = buffer.str();
  return true;
}

}  // namespace

bool ParsePrivateBytes(const std::string& smaps_rollup, uint64_t* out) {
  std::istringstream lines(smaps_rollup);
  std::string line;
  uint64_t total_kb = 0;
  bool found = false;
  while (std::getline(lines, line)) {
    const bool clean = line.rfind("Private_Clean:", 0) == 0;
    const bool dirty = line.rfind("Private_Dirty:", 0) == 0;
    if (!clean && !dirty) continue;
    std::istringstream fields(line.substr(line.find(':') + 1));
    uint64_t kb = 0;
    if (!(fields >> kb)) continue;
    total_kb += kb;
    found = true;
  }
  *out = total_kb * 1024;
  return found;
}

bool ReadProcessMemory(pid_t pid, ProcessMemory* out, std::string* error) {
  *out = ProcessMemory{};
  std::string statm;
  if (!ReadFile(ProcPath(pid, "statm"), &statm, error)) return false;
  std::istringstream fields(statm);
  uint64_t size_pages = 0;
  uint64_t resident_pages = 0;
  if (!(fields >> size_pages >> resident_pages)) {
    *error = ProcPath(pid, "statm") + ": unexpected contents";
    return false;
  }
  out->rss_bytes = resident_pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  std::string rollup;
  std::string ignored;
  if (ReadFile(ProcPath(pid, "smaps_rollup"), &rollup, &ignored)) {
    out->has_unique = ParsePrivateBytes(rollup, &out->resident_unique_bytes);
  }
  return true;
}

HeapSource DetectHeapSource(bool malloc_replaced) {
  return malloc_replaced && std::strcmp(lethe_allocator_name(), "lethe") == 0
             ? HeapSource::kLetheStats
             : HeapSource::kMallinfo;
}

const char* HeapSourceName(HeapSource source) {
  return source == HeapSource::kLetheStats ? "lethe_stats" : "mallinfo2";
}

uint64_t HeapAllocatedBytes(HeapSource source) {
  if (source == HeapSource::kLetheStats) {
    lethe_stats_t stats{};
    lethe_stats(&stats);
    return stats.allocated_bytes;
  }
  struct mallinfo2 info = mallinfo2();
  return static_cast<uint64_t>(info.uordblks) + static_cast<uint64_t>(info.hblkhd);
}

}  // namespace lethe::stress
