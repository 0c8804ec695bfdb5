// The allocation traces of the allocator benchmark: what liblethe-alloc-trace.so records (raw
// events, addresses as the program saw them) and what lethe-alloc-workload replays (compiled
// operations, addresses turned into slots).
#ifndef LETHE_TOOLS_BENCH_ALLOC_ALLOC_TRACE_FORMAT_H_
#define LETHE_TOOLS_BENCH_ALLOC_ALLOC_TRACE_FORMAT_H_

#include <cstdint>

namespace lethe::bench {

// A raw trace: kRawMagic, then RawEvents in the order the calls returned.
inline constexpr char kRawMagic[8] = {'L', 'E', 'T', 'H', 'E', 'A', 'T', '1'};

enum class RawOp : uint32_t {
  kMalloc = 1,    // a = size
  kFree = 2,      // a = pointer
  kCalloc = 3,    // a = count, b = size
  kRealloc = 4,   // a = old pointer (0: none), b = size
  kMemalign = 5,  // a = alignment, b = size (memalign, posix_memalign, aligned_alloc, valloc)
};

struct RawEvent {
  uint32_t op;      // a RawOp
  uint32_t thread;  // the recording thread, numbered from 1 in order of first call
  uint64_t a;
  uint64_t b;
  uint64_t result;  // the pointer returned (0 for free, and for a failed call)
};
static_assert(sizeof(RawEvent) == 32);

// A compiled trace: kReplayMagic, a ReplayHeader, then `op_count` ReplayOps. Every live block has
// a slot; a slot is reused once its block is freed, so slot_count is the most blocks live at once.
inline constexpr char kReplayMagic[8] = {'L', 'E', 'T', 'H', 'E', 'R', 'P', '1'};

enum class ReplayKind : uint32_t {
  kMalloc = 1,    // slot = malloc(size)
  kFree = 2,      // free(slot)
  kCalloc = 3,    // slot = calloc(1, size)
  kRealloc = 4,   // slot = realloc(slot, size): same slot, moved or not
  kMemalign = 5,  // slot = aligned (alignment, size)
};

struct ReplayHeader {
  uint64_t op_count;
  uint64_t slot_count;
  uint64_t dropped_count;  // raw events that could not be replayed (frees of unknown pointers)
  uint64_t thread_count;
};

struct ReplayOp {
  uint32_t kind;  // a ReplayKind
  uint32_t slot;
  uint32_t alignment;  // kMemalign only
  uint32_t unused;
  uint64_t size;
};
static_assert(sizeof(ReplayOp) == 24);

}  // namespace lethe::bench

#endif  // LETHE_TOOLS_BENCH_ALLOC_ALLOC_TRACE_FORMAT_H_
