// lethe-alloc-workload — one allocator workload, run on whatever malloc the process has (choose
// it with LD_PRELOAD). Prints one line of "key=value" results. Driven by run_alloc_bench.py.
//
// usage: lethe-alloc-workload churn | churn-residency LOADS | mt THREADS | realloc | slop |
//        pagemap LIVE_RUNS | appends exact|doubling | bigbuf SHAPE | rounding | scatter SHAPE |
//        bursts | shrinks | aligned | xthread small|small-4x4|surfaces|surfaces-written |
//        scratch THREADS | handoff THREADS | pairs N | reallocs N | suite SHAPE [quick] |
//        compile-trace OUT RAW... | replay TRACE | faultcost
//
//  churn    browser-like: 29 pages cycled through 30 windows over 11 cycles (319 loads); a load
//           makes ~10^4 objects (mostly 16-128 B, some KiB buffers, a few multi-MiB images), of
//           which some die within the load, most live while the page is shown, and some replace
//           entries of a global cache; then all windows but one close and the process idles
//           1.5 s with light activity. Reports load time, peak RSS, RSS after the idle (no
//           release call), and live bytes.
//  churn-residency  a diagnosis, not a benchmark: runs the first LOADS loads of churn, then asks
//           the kernel (mincore) which pages under the live blocks are resident, by kind of
//           block, next to the bytes the workload wrote. RSS minus the resident pages under live
//           blocks is what the allocator holds outside them (dirty pages, metadata, caches);
//           resident pages under a kind beyond what was written there are pages the allocator
//           placed the blocks on that were already resident.
//  mt       larson-like: each thread replaces random slots of 1000 blocks (16-512 B); one block
//           in 16 is freed by the next thread. Reports Mops/s.
//  realloc  exact-fit growth (+16 B steps to 64 KiB in 200 buffers, +4 KiB steps to 32 MiB) and
//           doubling growth; reports time and peak RSS of each.
//  slop     200,000 objects of a browser-like size histogram: usable minus requested bytes, and
//           RSS growth per object minus its requested size.
//  pagemap  LIVE_RUNS large blocks (16-48 KiB, untouched), every other one freed again; then
//           400,000 steps of two allocations and two frees. Reports ns per alloc+free.
//  appends exact|doubling  64 buffers live at once, each grown by appends of 1-32 B (one in 64:
//           256 B-4 KiB, written) up to a log-uniform target of 64 B-1 MiB, then freed and
//           started again; 3*10^6 appends. exact: realloc to exactly the new length at every
//           append; doubling: capacity doubled when full. Reports time, peak RSS, page faults, and
//           the reallocs that moved a buffer with the bytes they copied.
//  bigbuf reuse|mixed|interleaved|large  decoded-image-like buffers, allocated, written in full
//           and freed, 400 of them. reuse: 4 MiB, one live at a time; mixed: 1-16 MiB
//           (log-uniform), up to 4 live; interleaved: 1-16 MiB, up to 16 live; large: 5-25 MiB,
//           up to 20 live (mimalloc-bench's malloc-large is of this kind). Reports time (and per
//           GiB written), peak RSS, page faults per MiB allocated.
//  rounding 3000 large blocks of 16 KiB-1 MiB (log-uniform), only the requested bytes written:
//           RSS growth against the requested and the usable bytes (what class rounding costs).
//  scatter mixed|mid  4000 live slots, 3*10^6 random replacements, each new block written at its
//           first 64 bytes only. mixed: 16 B-32 KiB (log-uniform, as rptest); mid: 16-64 KiB.
//           Reports time, peak RSS and page faults.
//  bursts   2000 rounds of 1000 blocks of one or two classes (1-1064 B) allocated, then all freed,
//           in one of two orders (sh6bench-like). Reports time, peak RSS and page faults.
//  shrinks  64 live slots, 4*10^5 steps: a block of 16 B-64 KiB (uniform) is allocated, its first
//           256 B written, then shrunk by realloc to a quarter of its size (a buffer trimmed to
//           what it holds once built); the slot's previous block is freed first. Most blocks are
//           large runs that shed their tails. Reports time, peak RSS and page faults.
//  aligned  posix_memalign over a page: 64 KiB work buffers aligned to 64 KiB, 4 live, written
//           in full; 10^6 random replacements of 1 B-96 KiB aligned to 16 B-64 KiB; 2 MiB
//           buffers aligned to 2 MiB, 2 live, written in full. Reports time and page faults of
//           each.
//  xthread small|small-4x4|surfaces|surfaces-written  producer/consumer: one thread allocates
//           blocks and passes them in batches of 256 to a second thread that frees them and
//           never allocates. small: 4*10^6 blocks of 16 B-4 KiB (mostly <= 512 B); small-4x4:
//           the same blocks from four such pairs at once (8 threads; xmalloc-test's shape);
//           surfaces: 2*10^4 blocks of 16 KiB-4 MiB (log-uniform, first and last byte written),
//           as decoded images go from decode threads to the main thread; surfaces-written: the
//           same blocks written in full, as a decoder writes its pixels (every page of a block
//           that is not resident faults).
//           Reports Mops/s and page faults (run_alloc_bench.py counts futex and madvise calls
//           with strace in a separate run).
//  scratch THREADS  Hoard's cache-scratch: one 8-byte block per thread, allocated by the main
//           thread, freed by its thread, which then allocates, writes and frees 8 bytes 1000
//           times. Reports time: flat from 1 to 2 threads on 2 CPUs unless the allocator hands
//           threads regions on one cache line (passive false sharing).
//  handoff THREADS  sh8bench-like: each thread allocates batches of 1000 blocks of 1-1000 B and
//           hands each batch to the next thread, which frees it. Reports time and peak RSS.
//  pairs N  N malloc/free pairs of 16-512 B over 64 live slots, single-threaded: for counting
//           instructions per pair with callgrind (Ir of pairs 2N minus Ir of pairs N, over N).
//  reallocs N  N steps over 64 slots of malloc, calloc, realloc (16 B-64 KiB, moving or not) and
//           free: a short trace with every kind of call, for the trace tools' test.
//  suite SHAPE [quick]  a shape of another suite (suite_shapes.cc: realloc growth of small
//           buffers, small aligned blocks, short-lived threads, larson's rollover, alloc-test,
//           doubling vectors, stack order, a shared pool, more threads than CPUs). Reports time,
//           page faults, peak RSS; exits 1 if a block lost its bytes. quick: 1/100 of the steps.
//  compile-trace OUT RAW...  turns raw traces recorded by liblethe-alloc-trace.so (one per process,
//           replayed one after another) into the replay file OUT (alloc_replay.h). Not timed.
//  replay TRACE [SETTLE_MS]  replays a compiled trace single-threaded, every block's bytes
//           written: time, exit RSS (total and anonymous), peak RSS, faults (record_traces.sh
//           makes the traces); with SETTLE_MS (1..60000), also the RSS that long after the end.
//  faultcost  a diagnosis of the machine, not of an allocator: microseconds per page of first-
//           write faults against madvise(MADV_POPULATE_WRITE) in runs of 1, 8 and 64 pages
//           (fault_cost.h), what Lethe's allocator weighs when it populates fresh small runs.
// Every mode but faultcost also prints minflt: minor page faults of the measured part (churn, mt,
// realloc, slop and pagemap: of the whole process).
// ALLOC_WORKLOAD_STATS=1: churn (after its loads), slop (after its figures) and replay (at the
// trace's end, what its exit RSS holds) also print the allocator's own view with malloc_stats
// (for Lethe: classes, dirty pages, thread caches, the huge regions).
#include <malloc.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "alloc_replay.h"
#include "fault_cost.h"
#include "proc_figures.h"
#include "suite_shapes.h"
#include "workload_support.h"

namespace {

using lethe::bench::LogUniform;
using lethe::bench::MallocOrAbort;
using lethe::bench::MinorFaults;
using lethe::bench::NowMs;
using lethe::bench::PrintAllocatorStatsIfAsked;
using lethe::bench::PeakRssKb;
using lethe::bench::Random;
using lethe::bench::ReallocOrAbort;
using lethe::bench::RssKb;
using lethe::bench::Touch;

// ---- churn ------------------------------------------------------------------------------------
struct Object {
  void* pointer;
  size_t size;
};

size_t BrowserSmallSize(Random& random) {
  size_t roll = random.Below(100);
  if (roll < 40) return random.Between(16, 48);
  if (roll < 75) return random.Between(49, 128);
  if (roll < 90) return random.Between(129, 256);
  return random.Between(257, 1024);
}

struct Churn {
  static constexpr int kPages = 29;
  static constexpr int kWindows = 30;
  static constexpr int kCycles = 11;
  static constexpr int kObjectsPerLoad = 10000;
  static constexpr size_t kGlobalCacheEntries = 4000;

  std::vector<std::vector<Object>> windows = std::vector<std::vector<Object>>(kWindows);
  std::vector<Object> global_cache = std::vector<Object>(kGlobalCacheEntries, Object{nullptr, 0});
  size_t live_bytes = 0;

  void* Make(size_t size, unsigned char value) {
    void* block = MallocOrAbort(size);
    Touch(block, size < 4096 ? size : 4096, value);
    live_bytes += size;
    return block;
  }
  void Drop(Object& object) {
    std::free(object.pointer);
    live_bytes -= object.size;
    object = Object{nullptr, 0};
  }
  void Close(int window) {
    for (Object& object : windows[window]) Drop(object);
    windows[window].clear();
  }
  // Frees every block still live (after the figures are taken).
  void CloseAll() {
    for (int window = 0; window < kWindows; ++window) Close(window);
    for (Object& object : global_cache) {
      if (object.pointer != nullptr) Drop(object);
    }
  }

  void Load(int page, int window, uint64_t load_index) {
    Close(window);
    Random random(static_cast<uint64_t>(page) * 1000003u + load_index);
    std::vector<Object>& kept = windows[window];
    std::vector<Object> temporary;
    for (int i = 0; i < kObjectsPerLoad; ++i) {
      size_t roll = random.Below(1000);
      size_t size;
      if (roll < 880) size = BrowserSmallSize(random);
      else if (roll < 990) size = random.Between(1024, 8192);
      else size = random.Between(16 * 1024, 96 * 1024);
      Object object{Make(size, static_cast<unsigned char>(i)), size};
      size_t fate = random.Below(100);
      if (fate < 45) {
        temporary.push_back(object);  // dies at the end of the load
      } else if (fate < 97) {
        kept.push_back(object);
      } else {
        Object& slot = global_cache[random.Below(kGlobalCacheEntries)];
        if (slot.pointer != nullptr) Drop(slot);
        slot = object;
      }
      if (temporary.size() > 200) {  // parsing: short-lived objects die in batches
        for (size_t j = 0; j < temporary.size(); j += 2) Drop(temporary[j]);
        std::vector<Object> survivors;
        for (size_t j = 1; j < temporary.size(); j += 2) survivors.push_back(temporary[j]);
        temporary.swap(survivors);
      }
    }
    for (Object& object : temporary) Drop(object);
    // Decoded images: 1-3 of 0.3-3 MiB, written in full.
    int images = 1 + static_cast<int>(random.Below(3));
    for (int i = 0; i < images; ++i) {
      size_t size = random.Between(300 * 1024, 3 * 1024 * 1024);
      void* pixels = MallocOrAbort(size);
      Touch(pixels, size, 0x7f);
      live_bytes += size;
      kept.push_back(Object{pixels, size});
    }
  }

  // Loads [0, count) of the cycle (kCycles * kPages in all).
  void RunLoads(uint64_t count) {
    for (uint64_t load_index = 0; load_index < count; ++load_index) {
      auto page = static_cast<int>(load_index % kPages);
      Load(page, static_cast<int>(load_index % kWindows), load_index);
    }
  }

  void Run() {
    double start = NowMs();
    uint64_t load_index = uint64_t{kCycles} * kPages;
    RunLoads(load_index);
    double load_ms = NowMs() - start;
    long peak_kb = PeakRssKb();
    PrintAllocatorStatsIfAsked();
    for (int window = 1; window < kWindows; ++window) Close(window);
    // Idle 1.5 s with light activity: a few small objects every 10 ms.
    Random random(7);
    for (int tick = 0; tick < 150; ++tick) {
      usleep(10000);
      Object objects[20];
      for (Object& object : objects) {
        object.size = BrowserSmallSize(random);
        object.pointer = Make(object.size, 1);
      }
      for (Object& object : objects) Drop(object);
    }
    long idle_kb = RssKb();
    std::printf("load_ms=%.1f peak_rss_kb=%ld idle_rss_kb=%ld live_kb=%zu loads=%llu minflt=%ld\n",
                load_ms, peak_kb, idle_kb, live_bytes / 1024,
                static_cast<unsigned long long>(load_index), MinorFaults());
    CloseAll();
  }
};

// ---- churn-residency ---------------------------------------------------------------------------
// Kinds of churn blocks, by size: what the workload writes of each differs (see Churn::Load).
enum BlockKind { kSmallBlock, kKiBBuffer, kLargeBuffer, kImage, kBlockKinds };
constexpr const char* kBlockKindNames[kBlockKinds] = {"small", "kib", "large", "image"};
BlockKind KindOf(size_t size) {
  if (size >= 300 * 1024) return kImage;        // written in full
  if (size >= 16 * 1024) return kLargeBuffer;   // 16-96 KiB, first page written
  if (size > 1024) return kKiBBuffer;           // 1-8 KiB, first 4 KiB written
  return kSmallBlock;
}

int RunChurnResidency(uint64_t loads) {
  Churn churn;
  churn.RunLoads(loads);
  constexpr uintptr_t kPage = 4096;
  std::unordered_set<uintptr_t> seen;  // a page shared by several blocks counts once
  size_t pages[kBlockKinds] = {}, resident[kBlockKinds] = {}, written[kBlockKinds] = {};
  std::vector<unsigned char> vector;
  auto visit = [&](const Object& object) {
    if (object.pointer == nullptr) return;
    BlockKind kind = KindOf(object.size);
    written[kind] += kind == kImage ? object.size : std::min<size_t>(object.size, 4096);
    auto start = reinterpret_cast<uintptr_t>(object.pointer) & ~(kPage - 1);
    uintptr_t end = (reinterpret_cast<uintptr_t>(object.pointer) + object.size + kPage - 1) &
                    ~(kPage - 1);
    vector.resize((end - start) / kPage);
    if (mincore(reinterpret_cast<void*>(start), end - start, vector.data()) != 0) {
      std::perror("mincore");
      std::exit(1);
    }
    for (size_t i = 0; i < vector.size(); ++i) {
      if (!seen.insert(start + i * kPage).second) continue;
      ++pages[kind];
      resident[kind] += vector[i] & 1;
    }
  };
  for (const std::vector<Object>& window : churn.windows) {
    for (const Object& object : window) visit(object);
  }
  for (const Object& object : churn.global_cache) visit(object);
  size_t resident_total = 0;
  std::printf("loads=%llu rss_kb=%ld", static_cast<unsigned long long>(loads), RssKb());
  for (int kind = 0; kind < kBlockKinds; ++kind) {
    std::printf(" %s_written_kb=%zu %s_resident_kb=%zu %s_pages_kb=%zu", kBlockKindNames[kind],
                written[kind] / 1024, kBlockKindNames[kind], resident[kind] * 4,
                kBlockKindNames[kind], pages[kind] * 4);
    resident_total += resident[kind];
  }
  std::printf(" outside_live_kb=%ld\n", RssKb() - static_cast<long>(resident_total * 4));
  churn.CloseAll();
  return 0;
}

// ---- multi-threaded throughput -----------------------------------------------------------------
struct Inbox {
  std::atomic<void*> slots[256];
};

void RunThroughput(int threads) {
  constexpr int kSlots = 1000;
  constexpr long kOps = 3000000;
  std::vector<Inbox> inboxes(static_cast<size_t>(threads));
  for (Inbox& inbox : inboxes) {
    for (auto& slot : inbox.slots) slot.store(nullptr);
  }
  std::atomic<int> ready{0};
  auto worker = [&](int index) {
    Random random(static_cast<uint64_t>(index) + 11);
    std::vector<void*> blocks(kSlots);
    for (void*& block : blocks) block = std::malloc(random.Between(16, 512));
    Inbox& mine = inboxes[static_cast<size_t>(index)];
    Inbox& next = inboxes[static_cast<size_t>((index + 1) % threads)];
    ready.fetch_add(1);
    while (ready.load() < threads) {
    }
    for (long op = 0; op < kOps; ++op) {
      size_t slot = random.Below(kSlots);
      void* old = blocks[slot];
      if ((op & 15) == 0) {
        // Hand the old block to the next thread; free whatever was waiting in our inbox slot.
        void* previous = next.slots[op / 16 % 256].exchange(old);
        std::free(previous);
        std::free(mine.slots[op / 16 % 256].exchange(nullptr));
      } else {
        std::free(old);
      }
      auto* block = static_cast<char*>(std::malloc(random.Between(16, 512)));
      block[0] = static_cast<char>(op);
      blocks[slot] = block;
    }
    for (void* block : blocks) std::free(block);
  };
  double start = NowMs();
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back(worker, i);
  for (auto& thread : pool) thread.join();
  double elapsed = NowMs() - start;
  for (Inbox& inbox : inboxes) {
    for (auto& slot : inbox.slots) std::free(slot.load());
  }
  double mops = static_cast<double>(kOps) * threads / elapsed / 1000.0;
  std::printf("threads=%d ms=%.1f mops=%.2f minflt=%ld\n", threads, elapsed, mops, MinorFaults());
}

// ---- realloc growth ----------------------------------------------------------------------------
void RunRealloc() {
  double start = NowMs();
  std::vector<char*> buffers(200, nullptr);
  for (size_t size = 16; size <= 64 * 1024; size += 16) {
    for (char*& buffer : buffers) {
      buffer = static_cast<char*>(ReallocOrAbort(buffer, size));
      buffer[size - 1] = 1;
    }
  }
  char* big = nullptr;
  for (size_t size = 4096; size <= 32u * 1024 * 1024; size += 4096) {
    big = static_cast<char*>(ReallocOrAbort(big, size));
    big[size - 1] = 1;
  }
  double exact_ms = NowMs() - start;
  long exact_peak = PeakRssKb();
  for (char* buffer : buffers) std::free(buffer);
  std::free(big);
  start = NowMs();
  for (int round = 0; round < 20; ++round) {
    char* buffer = nullptr;
    for (size_t size = 16; size <= 32u * 1024 * 1024; size *= 2) {
      buffer = static_cast<char*>(ReallocOrAbort(buffer, size));
      std::memset(buffer + size / 2, 1, size / 2);
    }
    std::free(buffer);
  }
  double doubling_ms = NowMs() - start;
  std::printf("exact_ms=%.1f exact_peak_kb=%ld doubling_ms=%.1f peak_kb=%ld minflt=%ld\n", exact_ms,
              exact_peak, doubling_ms, PeakRssKb(), MinorFaults());
}

// ---- slop and RSS per object -------------------------------------------------------------------
void RunSlop() {
  constexpr size_t kCount = 200000;
  Random random(3);
  std::vector<void*> blocks(kCount);
  long before = RssKb();
  size_t requested = 0, usable = 0;
  for (size_t i = 0; i < kCount; ++i) {
    size_t size = random.Below(100) < 97 ? BrowserSmallSize(random) : random.Between(1025, 6000);
    blocks[i] = std::malloc(size);
    Touch(blocks[i], size, 1);
    requested += size;
    usable += malloc_usable_size(blocks[i]);
  }
  long after = RssKb();
  double rss_bytes = static_cast<double>(after - before) * 1024.0;
  std::printf("slop_pct=%.2f overhead_per_object=%.1f requested_kb=%zu rss_growth_kb=%ld"
              " minflt=%ld\n",
              100.0 * static_cast<double>(usable - requested) / static_cast<double>(requested),
              (rss_bytes - static_cast<double>(requested)) / kCount, requested / 1024,
              after - before, MinorFaults());
  PrintAllocatorStatsIfAsked();
  for (void* block : blocks) std::free(block);
}

// ---- page map: large alloc/free with few or many live runs -------------------------------------
// LIVE_RUNS blocks of 16-48 KiB are allocated and every other one freed, so the allocator holds
// LIVE_RUNS / 2 live runs and as many free holes. Then each step allocates two blocks and frees
// them: the cost of finding, splitting and coalescing runs among that population (the blocks
// themselves are never touched, so the figure is the allocator's bookkeeping).
void RunPageMap(size_t live_runs) {
  constexpr long kOps = 400000;
  Random random(5);
  std::vector<void*> live(live_runs);
  for (void*& block : live) block = std::malloc(random.Between(16, 48) * 1024);
  for (size_t i = 0; i < live_runs; i += 2) {
    std::free(live[i]);
    live[i] = nullptr;
  }
  double start = NowMs();
  for (long op = 0; op < kOps; ++op) {
    void* first = std::malloc(random.Between(16, 48) * 1024);
    void* second = std::malloc(random.Between(16, 48) * 1024);
    // Keeps the compiler from pairing malloc with free and removing both.
    asm volatile("" : : "r"(first), "r"(second) : "memory");
    std::free(first);
    std::free(second);
  }
  double elapsed = NowMs() - start;
  std::printf("live=%zu ns_per_op=%.1f minflt=%ld\n", live_runs, elapsed * 1e6 / kOps / 2,
              MinorFaults());
  for (void* block : live) std::free(block);
}

// ---- appends: buffers grown a few bytes at a time ---------------------------------------------
void RunAppends(bool exact) {
  constexpr size_t kBuffers = 64;
  constexpr long kAppends = 3000000;
  struct Buffer {
    char* data = nullptr;
    size_t length = 0;
    size_t capacity = 0;
    size_t target = 0;
  };
  Random random(17);
  std::vector<Buffer> buffers(kBuffers);
  for (Buffer& buffer : buffers) buffer.target = LogUniform(random, 64, 1 << 20);
  long faults = MinorFaults();
  long moves = 0;  // reallocs that moved the buffer, and the bytes they copied
  size_t moved_bytes = 0;
  double start = NowMs();
  for (long step = 0; step < kAppends; ++step) {
    Buffer& buffer = buffers[random.Below(kBuffers)];
    size_t add = random.Below(64) == 0 ? random.Between(256, 4096) : random.Between(1, 32);
    size_t length = buffer.length + add;
    if (length > buffer.capacity) {
      size_t capacity = exact ? length : std::max(length, buffer.capacity * 2);
      auto* data = static_cast<char*>(ReallocOrAbort(buffer.data, capacity));
      if (data != buffer.data && buffer.data != nullptr) {
        ++moves;
        moved_bytes += buffer.length;
      }
      buffer.data = data;
      buffer.capacity = capacity;
    }
    std::memset(buffer.data + buffer.length, static_cast<int>(step), add);
    buffer.length = length;
    if (buffer.length >= buffer.target) {
      std::free(buffer.data);
      buffer = Buffer{};
      buffer.target = LogUniform(random, 64, 1 << 20);
    }
  }
  double elapsed = NowMs() - start;
  faults = MinorFaults() - faults;
  for (Buffer& buffer : buffers) std::free(buffer.data);
  std::printf("ms=%.1f peak_kb=%ld minflt=%ld moves=%ld moved_kb=%zu\n", elapsed, PeakRssKb(),
              faults, moves, moved_bytes / 1024);
}

// ---- big buffers: decoded images allocated, written in full, freed -----------------------------
// One shape of bigbuf: `count` buffers of `low`..`high` bytes (log-uniform), at most `live` at
// once (a random one freed to make room), each written in full.
struct BigBufferShape {
  const char* name;
  int count;
  size_t live;
  size_t low, high;
};
constexpr BigBufferShape kBigBufferShapes[] = {
    {"reuse", 400, 1, 4 << 20, 4 << 20},        // one decoded image at a time, one size
    {"mixed", 400, 4, 1 << 20, 16 << 20},       // a few live, sizes 1-16 MiB
    {"interleaved", 400, 16, 1 << 20, 16 << 20},  // a screenful of images live
    {"large", 400, 20, 5 << 20, 25 << 20},  // many big buffers live, some past 16 MiB
};

void RunBigBuffers(const BigBufferShape& shape) {
  Random random(23);
  std::vector<std::pair<void*, size_t>> live;
  size_t allocated = 0;
  long faults = MinorFaults();
  double start = NowMs();
  for (int i = 0; i < shape.count; ++i) {
    if (live.size() == shape.live) {
      size_t victim = random.Below(shape.live);
      std::free(live[victim].first);
      live.erase(live.begin() + static_cast<long>(victim));
    }
    size_t size = shape.low == shape.high ? shape.low : LogUniform(random, shape.low, shape.high);
    void* block = MallocOrAbort(size);
    Touch(block, size, static_cast<unsigned char>(i));
    allocated += size;
    live.emplace_back(block, size);
  }
  double elapsed = NowMs() - start;
  faults = MinorFaults() - faults;
  for (auto& [block, size] : live) std::free(block);
  double mib = static_cast<double>(allocated) / (1 << 20);
  std::printf("ms=%.1f ms_per_gib=%.1f peak_kb=%ld minflt=%ld faults_per_mib=%.1f\n", elapsed,
              elapsed / (mib / 1024), PeakRssKb(), faults, static_cast<double>(faults) / mib);
}

// The entry of `shapes` named `name`, or nullptr (a mode's SHAPE argument).
template <typename Shape, size_t N>
const Shape* FindShape(const Shape (&shapes)[N], const char* name) {
  for (const Shape& shape : shapes) {
    if (std::strcmp(shape.name, name) == 0) return &shape;
  }
  return nullptr;
}

// ---- scatter: random replacement over a large working set, blocks written at their start ----
struct ScatterShape {
  const char* name;
  size_t low, high;
};
constexpr ScatterShape kScatterShapes[] = {
    {"mixed", 16, 32 << 10},      // rptest-like: every class from 16 B to 32 KiB
    {"mid", 16 << 10, 64 << 10},  // only the first large lengths: buffers of 16-64 KiB
};

// 4000 slots; each of 3*10^6 steps frees a random slot and fills it with a new block of a
// log-uniform size, of which only the first 64 bytes are written (a header, a buffer with spare
// capacity). What it shows: whether a freed block's written page is the next block's first page
// again (size-class slots) or is left resident in the middle of another block.
void RunScatter(const ScatterShape& shape) {
  constexpr size_t kSlots = 4000;
  constexpr long kSteps = 3000000;
  Random random(41);
  std::vector<void*> slots(kSlots, nullptr);
  long faults = MinorFaults();
  double start = NowMs();
  for (long i = 0; i < kSteps; ++i) {
    void*& slot = slots[random.Below(kSlots)];
    std::free(slot);
    size_t size = LogUniform(random, shape.low, shape.high);
    slot = MallocOrAbort(size);
    Touch(slot, size < 64 ? size : 64, static_cast<unsigned char>(i));
  }
  double elapsed = NowMs() - start;
  faults = MinorFaults() - faults;
  for (void* slot : slots) std::free(slot);
  std::printf("ms=%.1f peak_kb=%ld minflt=%ld\n", elapsed, PeakRssKb(), faults);
}

// ---- aligned: posix_memalign over a page --------------------------------------------------------
// buffers: 200,000 work buffers of 64 KiB aligned to 64 KiB, 4 live, each written in full (SIMD
// or I/O buffers, reused at the rate they are freed). mixed: 4000 slots, 10^6 replacements of
// 1 B-96 KiB (log-uniform) aligned to 16 B-64 KiB (log-uniform over the powers of two), the first
// 64 bytes written. huge: 2000 buffers of 2 MiB aligned to 2 MiB (huge pages' size), 2 live,
// written in full. What they show: whether a freed aligned block serves the next aligned request
// (an allocator that takes size + alignment bytes of fresh pages each time faults them in).
struct Timed {
  double ms;
  long faults;
};

// `count` buffers of `bytes` aligned to `bytes`, `live` (<= 4) at once, written in full.
Timed AlignedBuffers(size_t bytes, size_t live, long count) {
  long faults = MinorFaults();
  double start = NowMs();
  void* buffers[4] = {};
  for (long i = 0; i < count; ++i) {
    void*& slot = buffers[static_cast<size_t>(i) % live];
    std::free(slot);
    if (posix_memalign(&slot, bytes, bytes) != 0) std::abort();
    Touch(slot, bytes, static_cast<unsigned char>(i));
  }
  for (void* buffer : buffers) std::free(buffer);
  return Timed{NowMs() - start, MinorFaults() - faults};
}

Timed AlignedMixed() {
  Random random(47);
  std::vector<void*> slots(4000, nullptr);
  long faults = MinorFaults();
  double start = NowMs();
  for (long i = 0; i < 1000000; ++i) {
    void*& slot = slots[random.Below(slots.size())];
    std::free(slot);
    size_t size = LogUniform(random, 1, 96 << 10);
    size_t alignment = size_t{16} << random.Below(13);  // 16 B .. 64 KiB
    if (posix_memalign(&slot, alignment, size) != 0) std::abort();
    Touch(slot, size < 64 ? size : 64, static_cast<unsigned char>(i));
  }
  Timed timed{NowMs() - start, MinorFaults() - faults};
  for (void* slot : slots) std::free(slot);
  return timed;
}

void RunAligned() {
  Timed buffers = AlignedBuffers(64 << 10, 4, 200000);
  Timed mixed = AlignedMixed();
  Timed huge = AlignedBuffers(2 << 20, 2, 2000);
  std::printf("buffers_ms=%.1f buffers_minflt=%ld mixed_ms=%.1f mixed_minflt=%ld huge_ms=%.1f "
              "huge_minflt=%ld peak_kb=%ld\n",
              buffers.ms, buffers.faults, mixed.ms, mixed.faults, huge.ms, huge.faults,
              PeakRssKb());
}

// ---- bursts: many blocks of a few classes allocated together, then all freed -----------------
// 2000 rounds; a round allocates 1000 blocks of base + (i % 64) bytes (base 1-1000 B, new each
// round: one or two classes), writes the first 8 bytes of each (all of a shorter one), then frees
// them all: even rounds every other block first and then the rest, odd rounds newest first
// (sh6bench's shape). A burst is larger than any thread-cache bin: what it costs is the round
// trips between the cache and the runs.
void RunBursts() {
  constexpr int kRounds = 2000;
  constexpr int kBlocks = 1000;
  Random random(43);
  std::vector<void*> blocks(kBlocks);
  long faults = MinorFaults();
  double start = NowMs();
  for (int round = 0; round < kRounds; ++round) {
    size_t base = random.Between(1, 1000);
    for (int i = 0; i < kBlocks; ++i) {
      size_t size = base + static_cast<size_t>(i % 64);
      blocks[i] = MallocOrAbort(size);
      Touch(blocks[i], size < 8 ? size : 8, static_cast<unsigned char>(i));
    }
    if (round % 2 == 0) {
      for (int i = 0; i < kBlocks; i += 2) std::free(blocks[i]);
      for (int i = 1; i < kBlocks; i += 2) std::free(blocks[i]);
    } else {
      for (int i = kBlocks - 1; i >= 0; --i) std::free(blocks[i]);
    }
  }
  double elapsed = NowMs() - start;
  std::printf("ms=%.1f peak_kb=%ld minflt=%ld\n", elapsed, PeakRssKb(), MinorFaults() - faults);
}

// ---- shrinks: blocks trimmed by realloc ---------------------------------------------------------
void RunShrinks() {
  constexpr int kSteps = 400000;
  constexpr size_t kSlots = 64;
  Random random(47);
  std::vector<void*> slots(kSlots, nullptr);
  long faults = MinorFaults();
  double start = NowMs();
  for (int step = 0; step < kSteps; ++step) {
    void*& slot = slots[random.Below(kSlots)];
    std::free(slot);
    size_t size = random.Between(16, 64 * 1024);
    void* block = MallocOrAbort(size);
    Touch(block, size < 256 ? size : 256, static_cast<unsigned char>(step));
    slot = ReallocOrAbort(block, size / 4 + 1);
  }
  double elapsed = NowMs() - start;
  for (void* block : slots) std::free(block);
  std::printf("ms=%.1f peak_kb=%ld minflt=%ld\n", elapsed, PeakRssKb(), MinorFaults() - faults);
}

// ---- rounding: what large size classes cost in RSS ---------------------------------------------
void RunRounding() {
  constexpr size_t kBlocks = 3000;
  Random random(29);
  std::vector<void*> blocks(kBlocks);
  size_t requested = 0, usable = 0;
  long before = RssKb();
  long faults = MinorFaults();
  for (void*& block : blocks) {
    size_t size = LogUniform(random, 16 << 10, 1 << 20);
    block = MallocOrAbort(size);
    Touch(block, size, 1);
    requested += size;
    usable += malloc_usable_size(block);
  }
  long growth = RssKb() - before;
  faults = MinorFaults() - faults;
  std::printf("requested_kb=%zu usable_kb=%zu rss_growth_kb=%ld rss_over_requested_pct=%.2f"
              " usable_over_requested_pct=%.2f minflt=%ld\n",
              requested / 1024, usable / 1024, growth,
              100.0 * (static_cast<double>(growth) * 1024 - static_cast<double>(requested)) /
                  static_cast<double>(requested),
              100.0 * static_cast<double>(usable - requested) / static_cast<double>(requested),
              faults);
  for (void* block : blocks) std::free(block);
}

// ---- cross-thread frees: producers and consumers ----------------------------------------------
// Each producer hands its blocks over to its consumer in batches of kBatch (a decode thread
// handing surfaces to the main thread, many per wake-up) through a ring of kQueued slots; a side
// that finds its slot not ready yields the CPU. The hand-over makes no system call of its own,
// so the futex calls strace counts in a run are the allocator's. A consumer only frees: it never
// calls malloc (the batches are the producer's too).
struct CrossThreadShape {
  const char* name;
  int pairs;          // producer/consumer pairs running at once (the main thread is producer 0)
  long blocks;        // in all, shared among the pairs
  bool surfaces;      // 16 KiB-4 MiB blocks, else small ones
  bool written;       // surfaces written in full
};
constexpr CrossThreadShape kCrossThreadShapes[] = {
    {"small", 1, 4000000, false, false},
    {"small-4x4", 4, 4000000, false, false},
    {"surfaces", 1, 20000, true, false},
    {"surfaces-written", 1, 20000, true, true},
};

class CrossThreadPair {
 public:
  static constexpr size_t kBatch = 256;
  static constexpr size_t kQueued = 8;

  CrossThreadPair(const CrossThreadShape& shape, long blocks) : shape_(shape), blocks_(blocks) {
    for (auto& slot : ring_) slot.store(nullptr);
  }
  void Consume() {
    const long batches = (blocks_ + static_cast<long>(kBatch) - 1) / static_cast<long>(kBatch);
    for (long i = 0; i < batches; ++i) {
      std::atomic<Batch*>& slot = ring_[static_cast<size_t>(i) % kQueued];
      Batch* batch;
      while ((batch = slot.exchange(nullptr, std::memory_order_acquire)) == nullptr) {
        std::this_thread::yield();
      }
      for (size_t j = 0; j < batch->count; ++j) std::free(batch->blocks[j]);
      delete batch;
    }
  }
  void Produce(uint64_t seed) {
    Random random(seed);
    Batch* batch = new Batch;
    long handed = 0;
    for (long i = 0; i < blocks_; ++i) {
      size_t size = shape_.surfaces        ? LogUniform(random, 16 << 10, 4 << 20)
                    : random.Below(16) == 0 ? random.Between(1025, 4096)
                                            : random.Between(16, 512);
      auto* block = static_cast<char*>(MallocOrAbort(size));
      block[0] = static_cast<char>(i);
      if (shape_.written) std::memset(block, static_cast<int>(i), size);
      if (shape_.surfaces) block[size - 1] = 1;
      batch->blocks[batch->count++] = block;
      if (batch->count == kBatch || i + 1 == blocks_) {
        std::atomic<Batch*>& slot = ring_[static_cast<size_t>(handed++) % kQueued];
        while (slot.load(std::memory_order_relaxed) != nullptr) std::this_thread::yield();
        slot.store(batch, std::memory_order_release);
        if (i + 1 < blocks_) batch = new Batch;
      }
    }
  }

 private:
  struct Batch {
    size_t count = 0;
    void* blocks[kBatch];
  };
  const CrossThreadShape& shape_;
  const long blocks_;
  std::atomic<Batch*> ring_[kQueued];
};

void RunCrossThread(const CrossThreadShape& shape) {
  const long per_pair = shape.blocks / shape.pairs;
  std::vector<std::unique_ptr<CrossThreadPair>> pairs;
  for (int i = 0; i < shape.pairs; ++i) {
    pairs.push_back(std::make_unique<CrossThreadPair>(shape, per_pair));
  }
  long faults = MinorFaults();
  double start = NowMs();
  std::vector<std::thread> threads;
  for (auto& pair : pairs) threads.emplace_back([&pair] { pair->Consume(); });
  for (int i = 1; i < shape.pairs; ++i) {
    threads.emplace_back([&pairs, i] { pairs[static_cast<size_t>(i)]->Produce(31 + i); });
  }
  pairs[0]->Produce(31);
  for (std::thread& thread : threads) thread.join();
  double elapsed = NowMs() - start;
  std::printf("ms=%.1f mops=%.4f minflt=%ld peak_kb=%ld\n", elapsed,
              static_cast<double>(per_pair * shape.pairs) / elapsed / 1000.0,
              MinorFaults() - faults,
              PeakRssKb());
}

// ---- scratch: blocks handed to threads, freed, and their space reused -------------------------
// Hoard's cache-scratch: the main thread allocates one 8-byte block per worker (neighbours on one
// cache line), hands each to its worker, which frees it and then, 1000 times, allocates 8 bytes,
// writes them 20,000 times and frees them. An allocator that gives a worker the region another
// thread's block shares a line with makes the workers' writes contend for that line (passive
// false sharing): the time grows with the threads though no memory is shared.
void RunScratch(int workers) {
  constexpr int kBlocks = 1000;
  constexpr int kWrites = 20000;
  constexpr size_t kBytes = 8;
  std::vector<char*> handed(static_cast<size_t>(workers));
  for (char*& block : handed) {
    block = static_cast<char*>(MallocOrAbort(kBytes));
  }
  double start = NowMs();
  std::vector<std::thread> threads;
  for (char* block : handed) {
    threads.emplace_back([block] {
      std::free(block);
      for (int i = 0; i < kBlocks; ++i) {
        auto* mine = static_cast<volatile char*>(MallocOrAbort(kBytes));
        for (int write = 0; write < kWrites; ++write) {
          for (size_t byte = 0; byte < kBytes; ++byte) mine[byte] = static_cast<char>(mine[byte] + 1);
        }
        std::free(const_cast<char*>(mine));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::printf("ms=%.1f workers=%d\n", NowMs() - start, workers);
}

// ---- handoff: batches of mixed sizes allocated by one thread, freed by the next ---------------
// sh8bench's shape: each of THREADS threads, 2000 rounds, allocates a batch of 1000 blocks of
// 1-1000 B (the first 16 bytes written), posts it to the next thread's mailbox, and frees the
// batch posted to its own (oldest first or newest first, alternately). With more than one
// thread, every block is freed by a thread that did not allocate it, in bursts larger than a
// thread-cache bin.
void RunHandoff(int threads) {
  constexpr int kRounds = 2000;
  constexpr int kBatch = 1000;
  std::vector<std::vector<void*>> mailboxes(static_cast<size_t>(threads));
  // A round: allocate; all have freed the last batches; post; all have posted; free.
  std::barrier freed(threads), posted(threads);
  double start = NowMs();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      Random random(static_cast<uint64_t>(t) + 53);
      std::vector<void*>& next = mailboxes[static_cast<size_t>((t + 1) % threads)];
      std::vector<void*>& mine = mailboxes[static_cast<size_t>(t)];
      std::vector<void*> batch;
      for (int round = 0; round < kRounds; ++round) {
        for (int i = 0; i < kBatch; ++i) {
          size_t size = random.Between(1, 1000);
          batch.push_back(MallocOrAbort(size));
          Touch(batch.back(), size < 16 ? size : 16, static_cast<unsigned char>(i));
        }
        freed.arrive_and_wait();
        next.swap(batch);  // empty since the last round: its owner freed it
        posted.arrive_and_wait();
        if (round % 2 == 0) std::reverse(mine.begin(), mine.end());
        for (void* block : mine) std::free(block);
        mine.clear();
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  std::printf("ms=%.1f peak_kb=%ld threads=%d\n", NowMs() - start, PeakRssKb(), threads);
}

// ---- reallocs over live slots: a small trace with every kind of call, for the tracer's test
// ------
void RunReallocs(long steps) {
  Random random(41);
  void* slots[64] = {};
  for (long i = 0; i < steps; ++i) {
    void*& slot = slots[random.Below(64)];
    const uint64_t pick = random.Below(8);
    if (slot != nullptr && pick >= 5) {
      std::free(slot);
      slot = nullptr;
      continue;
    }
    if (slot != nullptr) {
      slot = std::realloc(slot, random.Between(16, 64 << 10));  // moves often, grows in place too
    } else if (pick == 0) {
      slot = std::calloc(1, random.Between(16, 4096));
    } else {
      slot = std::malloc(random.Between(16, 4096));
    }
    if (slot == nullptr) {
      std::fputs("reallocs: out of memory\n", stderr);
      std::exit(1);
    }
  }
  for (void* slot : slots) std::free(slot);
  std::printf("reallocs=%ld minflt=%ld\n", steps, MinorFaults());
}

// ---- malloc/free pairs: the fast paths, for instruction counts -------------------------------
void RunPairs(long pairs) {
  Random random(37);
  void* slots[64] = {};
  for (long i = 0; i < pairs; ++i) {
    void*& slot = slots[random.Below(64)];
    std::free(slot);
    slot = std::malloc(random.Between(16, 512));
    asm volatile("" : : "r"(slot) : "memory");
  }
  for (void* slot : slots) std::free(slot);
  std::printf("pairs=%ld minflt=%ld anon_kb=%ld\n", pairs, MinorFaults(), lethe::bench::AnonRssKb());
}

// replay's SETTLE_MS argument: 1..60000, or 0 when it is anything else (a usage error).
unsigned SettleMs(const char* text) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  return end != text && *end == '\0' && value >= 1 && value <= 60000 ? static_cast<unsigned>(value)
                                                                      : 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "churn") {
    Churn().Run();
  } else if (mode == "churn-residency" && argc > 2 && std::atol(argv[2]) > 0 &&
             std::atol(argv[2]) <= Churn::kCycles * Churn::kPages) {
    return RunChurnResidency(static_cast<uint64_t>(std::atol(argv[2])));
  } else if (mode == "mt" && argc > 2) {
    RunThroughput(std::atoi(argv[2]));
  } else if (mode == "realloc") {
    RunRealloc();
  } else if (mode == "slop") {
    RunSlop();
  } else if (mode == "pagemap" && argc > 2) {
    RunPageMap(static_cast<size_t>(std::atol(argv[2])));
  } else if (mode == "appends" && argc > 2 &&
             (std::strcmp(argv[2], "exact") == 0 || std::strcmp(argv[2], "doubling") == 0)) {
    RunAppends(std::strcmp(argv[2], "exact") == 0);
  } else if (mode == "reallocs" && argc > 2 && std::atol(argv[2]) > 0) {
    RunReallocs(std::atol(argv[2]));
  } else if (mode == "pairs" && argc > 2 && std::atol(argv[2]) > 0) {
    RunPairs(std::atol(argv[2]));
  } else if (mode == "bigbuf" && argc > 2 && FindShape(kBigBufferShapes, argv[2]) != nullptr) {
    RunBigBuffers(*FindShape(kBigBufferShapes, argv[2]));
  } else if (mode == "rounding") {
    RunRounding();
  } else if (mode == "bursts") {
    RunBursts();
  } else if (mode == "shrinks") {
    RunShrinks();
  } else if (mode == "aligned") {
    RunAligned();
  } else if (mode == "scatter" && argc > 2 && FindShape(kScatterShapes, argv[2]) != nullptr) {
    RunScatter(*FindShape(kScatterShapes, argv[2]));
  } else if (mode == "xthread" && argc > 2 && FindShape(kCrossThreadShapes, argv[2]) != nullptr) {
    RunCrossThread(*FindShape(kCrossThreadShapes, argv[2]));
  } else if (mode == "scratch" && argc > 2 && std::atoi(argv[2]) >= 1 && std::atoi(argv[2]) <= 64) {
    RunScratch(std::atoi(argv[2]));
  } else if (mode == "handoff" && argc > 2 && std::atoi(argv[2]) >= 1 && std::atoi(argv[2]) <= 64) {
    RunHandoff(std::atoi(argv[2]));
  } else if (mode == "suite" && (argc == 3 || (argc == 4 && std::strcmp(argv[3], "quick") == 0))) {
    // "quick": a hundredth of the steps, for the tests.
    const int status = lethe::bench::RunSuiteShape(argv[2], argc == 4 ? 100 : 1);
    if (status != 2) return status;
    std::fprintf(stderr, "usage: %s suite %s [quick]\n", argv[0], lethe::bench::SuiteShapeNames());
    return 2;
  } else if (mode == "compile-trace" && argc > 3) {
    std::string error = lethe::bench::CompileTrace(std::vector<std::string>(argv + 3, argv + argc), argv[2]);
    if (!error.empty()) std::fprintf(stderr, "compile-trace: %s\n", error.c_str());
    return error.empty() ? 0 : 1;
  } else if (mode == "faultcost" && argc == 2) {
    return lethe::bench::RunFaultCost();
  } else if (mode == "replay" && (argc == 3 || (argc == 4 && SettleMs(argv[3]) > 0))) {
    std::string error = lethe::bench::RunReplay(argv[2], argc == 4 ? SettleMs(argv[3]) : 0);
    if (!error.empty()) std::fprintf(stderr, "replay: %s\n", error.c_str());
    return error.empty() ? 0 : 1;
  } else {
    const bool help = mode == "--help" || mode == "-h";
    std::fprintf(help ? stdout : stderr,
                 "usage: %s churn | churn-residency LOADS (1..%d) | mt THREADS | realloc | slop |"
                 " pagemap LIVE_RUNS | appends exact|doubling |"
                 " bigbuf reuse|mixed|interleaved|large | rounding | scatter mixed|mid | bursts |"
                 " shrinks | aligned |"
                 " xthread small|small-4x4|surfaces|surfaces-written | scratch THREADS (1..64) |"
                 " handoff THREADS (1..64) |"
                 " pairs N | reallocs N | suite SHAPE [quick] (SHAPE: %s) |"
                 " compile-trace OUT RAW... | replay TRACE [SETTLE_MS] | faultcost\n",
                 argv[0], Churn::kCycles * Churn::kPages, lethe::bench::SuiteShapeNames());
    return help ? 0 : 2;
  }
  return 0;
}
