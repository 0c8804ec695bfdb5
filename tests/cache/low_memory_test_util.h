// What the out-of-memory tests of the caches and the engine share (issue 17): a surface whose
// pixels are Lethe's, a probe of whether operator new is Lethe's, and a runner that fails the n-th
// allocation of a call on another thread and aborts on a deadlock.
#ifndef LETHE_TESTS_CACHE_LOW_MEMORY_TEST_UTIL_H_
#define LETHE_TESTS_CACHE_LOW_MEMORY_TEST_UTIL_H_

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <new>
#include <string>
#include <vector>

#include "lethe/alloc.h"
#include "lethe/cached_surface.h"

namespace lethe::testing {

// A surface whose pixels come from Lethe's allocator: its cost is their usable size.
class HeapSurface : public CachedSurface {
 public:
  explicit HeapSurface(size_t bytes) : pixels_(lethe_malloc(bytes)) {}
  ~HeapSurface() override { lethe_free(pixels_); }
  size_t MemoryBytes() const override { return lethe_usable_size(pixels_); }

 private:
  void* pixels_;
};

// True when operator new is served by Lethe's allocator in this process (the malloc replacement
// is linked), so that lethe_fail_after reaches the caches' bookkeeping.
inline bool NewIsLethes() {
  lethe_stats_t before;
  lethe_stats(&before);
  auto* probe = new std::vector<int>(100);
  lethe_stats_t after;
  lethe_stats(&after);
  delete probe;
  return after.allocation_count > before.allocation_count;
}

// Runs `call` on another thread with the n-th allocation failing (lethe_fail_after: the
// low-memory callback runs, then the allocation fails). A std::bad_alloc out of the call is
// allowed (where documented; the caller checks that nothing changed). Aborts the whole test
// program when the call has not returned within 30 s: a deadlock fails CI instead of hanging it.
inline void RunWithFailure(long n, const std::function<void()>& call, const std::string& what) {
  auto done = std::async(std::launch::async, [&] {
    lethe_fail_after(n);
    try {
      call();
    } catch (const std::bad_alloc&) {
    }
    lethe_fail_after(0);
  });
  if (done.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    std::fprintf(stderr, "DEADLOCK: %s with allocation %ld failing did not return in 30 s\n",
                 what.c_str(), n);
    std::abort();
  }
  done.get();
}

}  // namespace lethe::testing

#endif  // LETHE_TESTS_CACHE_LOW_MEMORY_TEST_UTIL_H_
