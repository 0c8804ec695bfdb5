// What every workload of lethe-alloc-workload draws on: a deterministic random source, sizes
// drawn log-uniformly, malloc/realloc that end the run on failure (a run that lost a block
// reports no figure), and the allocator's own statistics on request. Header-only, like
// proc_figures.h.
#ifndef LETHE_TOOLS_BENCH_ALLOC_WORKLOAD_SUPPORT_H_
#define LETHE_TOOLS_BENCH_ALLOC_WORKLOAD_SUPPORT_H_

#include <malloc.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace lethe::bench {

// xorshift64*: deterministic, cheap, independent of the C library.
struct Random {
  uint64_t state;
  explicit Random(uint64_t seed) : state(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t Next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 2685821657736338717ull;
  }
  size_t Below(size_t bound) { return static_cast<size_t>(Next() % bound); }
  size_t Between(size_t low, size_t high) { return low + Below(high - low + 1); }
};

// Log-uniform in [low, high].
inline size_t LogUniform(Random& random, size_t low, size_t high) {
  double span = std::log(static_cast<double>(high) / static_cast<double>(low));
  double unit = static_cast<double>(random.Next() >> 11) / 9007199254740992.0;
  return static_cast<size_t>(static_cast<double>(low) * std::exp(span * unit));
}

inline void Touch(void* block, size_t size, unsigned char value) { std::memset(block, value, size); }

inline void* MallocOrAbort(size_t size) {
  void* block = std::malloc(size);
  if (block == nullptr) std::abort();
  return block;
}
inline void* ReallocOrAbort(void* block, size_t size) {
  block = std::realloc(block, size);
  if (block == nullptr) std::abort();
  return block;
}

// ALLOC_WORKLOAD_STATS set: prints the allocator's own view (malloc_stats, on stderr; for Lethe:
// classes, dirty pages, thread caches, the huge regions) beside a workload's figures.
inline void PrintAllocatorStatsIfAsked() {
  if (std::getenv("ALLOC_WORKLOAD_STATS") != nullptr) malloc_stats();
}

}  // namespace lethe::bench

#endif  // LETHE_TOOLS_BENCH_ALLOC_WORKLOAD_SUPPORT_H_
