// Shapes of other allocator suites; see suite_shapes.h. Each shape runs a fixed number of steps
// from a fixed seed, so every allocator sees the same calls in the same order (up to the
// interleaving of threads). Blocks carry a tag at their first and last byte, checked before they
// are freed: an allocator that hands out overlapping blocks or loses bytes in realloc fails the
// run instead of reporting a time.
#include "suite_shapes.h"

#include <stdlib.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "proc_figures.h"
#include "workload_support.h"

namespace lethe::bench {
namespace {

// Blocks whose tag did not survive (any thread). Counted rather than fatal, so that the run
// still prints what it measured; the mode then exits 1.
std::atomic<long> g_corrupt_blocks{0};

void NoteCorrupt() { g_corrupt_blocks.fetch_add(1, std::memory_order_relaxed); }

struct Slot {
  void* block = nullptr;
  size_t size = 0;
  unsigned char tag = 0;
};

void Stamp(const Slot& slot) {
  auto* bytes = static_cast<unsigned char*>(slot.block);
  bytes[0] = slot.tag;
  bytes[slot.size - 1] = slot.tag;
}

// Frees a slot's block after checking its tag; leaves the slot empty.
void Release(Slot& slot) {
  if (slot.block == nullptr) return;
  const auto* bytes = static_cast<const unsigned char*>(slot.block);
  if (bytes[0] != slot.tag || bytes[slot.size - 1] != slot.tag) NoteCorrupt();
  std::free(slot.block);
  slot = Slot{};
}

void Replace(Slot& slot, size_t size, unsigned char tag) {
  Release(slot);
  slot = Slot{MallocOrAbort(size), size, tag};
  Stamp(slot);
}

void ReleaseAll(std::vector<Slot>& slots) {
  for (Slot& slot : slots) Release(slot);
}

unsigned char TagOf(uint64_t step) { return static_cast<unsigned char>(step * 131 + 7); }

struct Figures {
  double ms = 0;
  long faults = 0;
  long moves = -1;       // reallocs that moved the block, where the shape reallocs
  long misaligned = -1;  // blocks not at the alignment asked for, where the shape asks
};

// The figures of the span since construction.
struct Stopwatch {
  double start_ms = NowMs();
  long start_faults = MinorFaults();
  Figures Stop() const { return Figures{NowMs() - start_ms, MinorFaults() - start_faults}; }
};

long Scaled(long steps, long divisor) { return steps / divisor > 0 ? steps / divisor : 1; }

// Runs `body(t)` on `threads` threads at once and waits for them.
template <typename Body>
void OnThreads(int threads, const Body& body) {
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t) running.emplace_back([&body, t] { body(t); });
  for (std::thread& thread : running) thread.join();
}

// espresso-like: 2048 buffers grown by realloc 1-48 B at a time; a buffer past 4 KiB (or one
// step in 64) is freed and started again. Each grow writes the new last byte and checks that the
// old one survived. What it shows: how often a small block moves as it grows (the class spacing
// realloc grows through) and the footprint of the classes it leaves behind.
Figures GrowSmall(long divisor) {
  constexpr size_t kSlots = 2048;
  Random random(11);
  std::vector<Slot> slots(kSlots);
  long moves = 0;
  Stopwatch watch;
  for (long i = 0, steps = Scaled(4000000, divisor); i < steps; ++i) {
    Slot& slot = slots[random.Below(kSlots)];
    if (slot.size > 4096 || random.Below(64) == 0) Release(slot);
    if (slot.block == nullptr) slot.tag = TagOf(static_cast<uint64_t>(i));
    const size_t size = slot.size + random.Between(1, 48);
    auto* block = static_cast<unsigned char*>(ReallocOrAbort(slot.block, size));
    if (slot.block != nullptr && block != slot.block) ++moves;
    if (slot.block != nullptr && (block[0] != slot.tag || block[slot.size - 1] != slot.tag)) {
      NoteCorrupt();
    }
    slot.block = block;
    slot.size = size;
    Stamp(slot);
  }
  Figures figures = watch.Stop();
  figures.moves = moves;
  ReleaseAll(slots);
  return figures;
}

// Small blocks at small alignments (32-256 B), as SIMD code and aligned containers ask for them:
// 2*10^6 posix_memalign calls of 16-1039 B over 4096 live slots. Every address is checked and
// the misaligned ones counted (a figure, not a failure: it is the allocator's answer to report;
// mimalloc 2.0.9 gives 128-byte alignment to some 256-byte requests, its issue #700).
Figures AlignedSmall(long divisor) {
  constexpr size_t kSlots = 4096;
  Random random(4);
  std::vector<Slot> slots(kSlots);
  long misaligned = 0;
  Stopwatch watch;
  for (long i = 0, steps = Scaled(2000000, divisor); i < steps; ++i) {
    Slot& slot = slots[random.Below(kSlots)];
    Release(slot);
    const size_t alignment = size_t{32} << random.Below(4);
    const size_t size = random.Between(16, 1039);
    void* block = nullptr;
    if (posix_memalign(&block, alignment, size) != 0) std::abort();
    if (reinterpret_cast<uintptr_t>(block) % alignment != 0) ++misaligned;
    slot = Slot{block, size, TagOf(static_cast<uint64_t>(i))};
    Stamp(slot);
  }
  Figures figures = watch.Stop();
  figures.misaligned = misaligned;
  ReleaseAll(slots);
  return figures;
}

// Short-lived threads: 500 rounds of 4 threads that each allocate 1000 blocks of 16-2015 B,
// free them and exit. What it shows: what a thread's first allocations and its exit cost (thread
// caches set up and flushed, runs handed back).
Figures ShortLivedThreads(long divisor) {
  Stopwatch watch;
  for (long round = 0, rounds = Scaled(500, divisor); round < rounds; ++round) {
    OnThreads(4, [round](int t) {
      Random random(static_cast<uint64_t>(t + round * 7));
      std::vector<Slot> slots(1000);
      for (Slot& slot : slots) Replace(slot, random.Between(16, 2015), TagOf(random.Next()));
      ReleaseAll(slots);
    });
  }
  return watch.Stop();
}

// larson with its thread rollover: two arrays of 1000 live blocks; each round, two new threads
// take one array each and replace 20,000 random blocks of 8-999 B, freeing blocks that threads
// of earlier rounds allocated and that have since exited.
Figures Rollover(long divisor) {
  std::vector<Slot> arrays[2] = {std::vector<Slot>(1000), std::vector<Slot>(1000)};
  Stopwatch watch;
  for (long round = 0, rounds = Scaled(200, divisor); round < rounds; ++round) {
    OnThreads(2, [&arrays, round](int t) {
      Random random(static_cast<uint64_t>(t * 31 + round));
      std::vector<Slot>& slots = arrays[t];
      for (int i = 0; i < 20000; ++i) {
        Replace(slots[random.Below(slots.size())], random.Between(8, 999), TagOf(random.Next()));
      }
    });
  }
  Figures figures = watch.Stop();
  for (std::vector<Slot>& slots : arrays) ReleaseAll(slots);
  return figures;
}

// alloc-test-like: 2 threads, each with 20,000 live blocks, replace random ones 2*10^6 times
// with blocks of 16 B-128 KiB (a power of two times 1-2, every power equally likely): small and
// large classes at once, the large ones touched at both ends only.
Figures AllocTestMix(long divisor) {
  const long steps = Scaled(2000000, divisor);
  Stopwatch watch;
  OnThreads(2, [steps](int t) {
    Random random(static_cast<uint64_t>(t + 60));
    std::vector<Slot> slots(20000);
    for (long i = 0; i < steps; ++i) {
      size_t size = size_t{16} << random.Below(13);
      size += random.Below(size);
      Replace(slots[random.Below(slots.size())], size, TagOf(static_cast<uint64_t>(i)));
    }
    ReleaseAll(slots);
  });
  return watch.Stop();
}

// Vectors grown by doubling, the way std::vector does it (allocate, copy, free the old): 4 at a
// time from 4 KiB to 32 MiB, written in full, 3 rounds. What it shows: the faults of big blocks
// freed and allocated again at twice the size.
Figures DoublingVectors(long divisor) {
  const size_t largest = divisor > 1 ? size_t{1} << 20 : size_t{32} << 20;
  Stopwatch watch;
  for (long round = 0, rounds = Scaled(3, divisor); round < rounds; ++round) {
    Slot vectors[4];
    for (size_t length = 4096; length <= largest; length *= 2) {
      for (Slot& vector : vectors) {
        auto* grown = static_cast<unsigned char*>(MallocOrAbort(length));
        const unsigned char tag = static_cast<unsigned char>(&vector - vectors + 1);
        const size_t kept = vector.size;  // the old contents, copied; the rest written
        if (kept != 0) std::memcpy(grown, vector.block, kept);
        Release(vector);
        Touch(grown + kept, length - kept, tag);
        vector = Slot{grown, length, tag};
      }
    }
    for (Slot& vector : vectors) Release(vector);
  }
  return watch.Stop();
}

// cfrac-like: a stack of small blocks (8-64 B) pushed and popped in stack order, 2*10^7 steps,
// the depth wandering between 64 and 4000.
Figures StackOrder(long divisor) {
  Random random(9);
  std::vector<Slot> stack;
  stack.reserve(4096);
  Stopwatch watch;
  for (long i = 0, steps = Scaled(20000000, divisor); i < steps; ++i) {
    const uint64_t roll = random.Next();
    if (stack.size() < 64 || (stack.size() < 4000 && (roll & 1) != 0)) {
      stack.emplace_back();
      Replace(stack.back(), 8 + (roll & 56), TagOf(static_cast<uint64_t>(i)));
    } else {
      Release(stack.back());
      stack.pop_back();
    }
  }
  Figures figures = watch.Stop();
  ReleaseAll(stack);
  return figures;
}

// mstress-like: 2 threads, 1.5*10^6 blocks each, mostly 8-255 B (one in 16: 1-32 KiB). Most
// replace one of the thread's 256 live blocks; one in 8 goes into a shared pool of 4096 slots,
// and the block it replaces (often another thread's) is freed by this one.
Figures SharedPool(long divisor) {
  std::mutex pool_lock;
  std::vector<Slot> pool(4096);
  const long steps = Scaled(1500000, divisor);
  Stopwatch watch;
  OnThreads(2, [&pool_lock, &pool, steps](int t) {
    Random random(static_cast<uint64_t>(t + 50));
    std::vector<Slot> local(256);
    for (long i = 0; i < steps; ++i) {
      const size_t size = random.Below(16) == 0 ? random.Between(1024, 32767)
                                                : random.Between(8, 255);
      if (random.Below(8) != 0) {
        Replace(local[random.Below(local.size())], size, TagOf(static_cast<uint64_t>(i)));
        continue;
      }
      Slot fresh{MallocOrAbort(size), size, TagOf(static_cast<uint64_t>(i))};
      Stamp(fresh);
      const size_t index = random.Below(pool.size());
      {
        std::lock_guard<std::mutex> hold(pool_lock);
        std::swap(pool[index], fresh);
      }
      Release(fresh);  // the replaced block, freed outside the lock
    }
    ReleaseAll(local);
  });
  Figures figures = watch.Stop();
  ReleaseAll(pool);
  return figures;
}

// More threads than CPUs: 8 threads, each replacing 10^6 random blocks of 64 B-8 KiB over 2000
// live slots. What it shows: the cost of locks and caches when threads are preempted.
Figures Oversubscribed(long divisor) {
  const long steps = Scaled(1000000, divisor);
  Stopwatch watch;
  OnThreads(8, [steps](int t) {
    Random random(static_cast<uint64_t>(t + 10));
    std::vector<Slot> slots(2000);
    for (long i = 0; i < steps; ++i) {
      Replace(slots[random.Below(slots.size())], random.Between(64, 8255),
              TagOf(static_cast<uint64_t>(i)));
    }
    ReleaseAll(slots);
  });
  return watch.Stop();
}

struct Shape {
  const char* name;
  Figures (*run)(long divisor);
};

constexpr Shape kShapes[] = {
    {"grow-small", GrowSmall},          {"aligned-small", AlignedSmall},
    {"threads", ShortLivedThreads},     {"rollover", Rollover},
    {"alloc-test", AllocTestMix},       {"vectors", DoublingVectors},
    {"stack-order", StackOrder},        {"shared-pool", SharedPool},
    {"oversubscribed", Oversubscribed},
};

}  // namespace

const char* SuiteShapeNames() {
  static const std::string names = [] {
    std::string joined;
    for (const Shape& shape : kShapes) {
      if (!joined.empty()) joined += '|';
      joined += shape.name;
    }
    return joined;
  }();
  return names.c_str();
}

int RunSuiteShape(const char* name, long divisor) {
  for (const Shape& shape : kShapes) {
    if (std::string(name) != shape.name) continue;
    const Figures figures = shape.run(divisor);
    std::printf("ms=%.1f minflt=%ld peak_kb=%ld", figures.ms, figures.faults, PeakRssKb());
    if (figures.moves >= 0) std::printf(" moves=%ld", figures.moves);
    if (figures.misaligned >= 0) std::printf(" misaligned=%ld", figures.misaligned);
    std::printf("\n");
    const long corrupt = g_corrupt_blocks.load();
    if (corrupt != 0) std::fprintf(stderr, "suite %s: %ld blocks lost their bytes\n", name, corrupt);
    return corrupt == 0 ? 0 : 1;
  }
  return 2;
}

}  // namespace lethe::bench
