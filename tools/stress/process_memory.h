// tools/stress/process_memory.h — what a process holds, read from /proc, and the heap the calling
// process has allocated.
//
// Used by lethe-stress (each child samples itself) and lethe-pressure (reads the engine's RSS
// before and after a pressure event, by pid). Plain functions; any thread.
//   rss_bytes              resident set: /proc/PID/statm field 2 x page size
//   resident_unique_bytes  pages only this process maps: Private_Clean + Private_Dirty of
//                          /proc/PID/smaps_rollup (0 and has_unique == false where the kernel
//                          lacks the file)
#ifndef LETHE_TOOLS_STRESS_PROCESS_MEMORY_H_
#define LETHE_TOOLS_STRESS_PROCESS_MEMORY_H_

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace lethe::stress {

struct ProcessMemory {
  uint64_t rss_bytes = 0;
  uint64_t resident_unique_bytes = 0;
  bool has_unique = false;
};

// pid 0 reads the calling process. Returns false with a readable *error (the file and why) when
// the process is gone or /proc cannot be read.
bool ReadProcessMemory(pid_t pid, ProcessMemory* out, std::string* error);

// Parses the text of an smaps_rollup file: Private_Clean + Private_Dirty in bytes (kB fields).
// Returns false when neither field is present.
bool ParsePrivateBytes(const std::string& smaps_rollup, uint64_t* out);

// Where HeapAllocatedBytes() reads from.
enum class HeapSource {
  kLetheStats,  // lethe_stats().allocated_bytes: the bundled allocator serves malloc and lethe_*
  kMallinfo,    // mallinfo2(): glibc's malloc serves everything (uordblks + hblkhd)
};
// The heap source that matches how this program was linked: kLetheStats when lethe_* runs on the
// bundled allocator and `malloc_replaced`, else kMallinfo.
HeapSource DetectHeapSource(bool malloc_replaced);
const char* HeapSourceName(HeapSource source);
uint64_t HeapAllocatedBytes(HeapSource source);

}  // namespace lethe::stress

#endif  // LETHE_TOOLS_STRESS_PROCESS_MEMORY_H_
