// Statistics (see stats.h).
#include "stats.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "arena.h"
#include "base.h"
#include "chunk_registry.h"
#include "decay.h"
#include "huge.h"
#include "huge_region.h"
#include "oom.h"
#include "thread_cache.h"

namespace lethe::internal {
namespace {

constinit std::atomic<uint64_t> g_uncached_allocations{0};
constinit std::atomic<uint64_t> g_uncached_frees{0};
constinit std::atomic<uint64_t> g_huge_allocations{0};
constinit std::atomic<uint64_t> g_huge_frees{0};
constinit std::atomic<uint64_t> g_oom_events{0};
constinit std::atomic<uint64_t> g_requested_bytes{0};
constinit std::atomic<uint64_t> g_served_bytes{0};
// Own cache lines: every arena's slow path writes g_held_bytes, and the statistics counters above
// should not bounce with it.
alignas(64) constinit std::atomic<uint64_t> g_held_bytes{0};
alignas(64) constinit std::atomic<uint64_t> g_peak_held_bytes{0};

void Bump(std::atomic<uint64_t>& counter, uint64_t by = 1) {
  counter.fetch_add(by, std::memory_order_relaxed);
}

}  // namespace

void CountUncachedAllocation() { Bump(g_uncached_allocations); }
void CountUncachedFree() { Bump(g_uncached_frees); }
void CountHugeAllocation() { Bump(g_huge_allocations); }
void CountHugeFree() { Bump(g_huge_frees); }
void CountOomEvent() { Bump(g_oom_events); }

void RecordSlop(size_t requested, size_t usable) {
  Bump(g_requested_bytes, requested);
  Bump(g_served_bytes, usable);
}

void AddHeldBytes(uint64_t bytes) {
  uint64_t held = g_held_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  uint64_t peak = g_peak_held_bytes.load(std::memory_order_relaxed);
  while (held > peak &&
         !g_peak_held_bytes.compare_exchange_weak(peak, held, std::memory_order_relaxed)) {
  }
}

void SubtractHeldBytes(uint64_t bytes) { g_held_bytes.fetch_sub(bytes, std::memory_order_relaxed); }

void ResetPeakHeldBytes() {
  g_peak_held_bytes.store(g_held_bytes.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

void CollectStats(lethe_stats_t* out, ClassStats* classes, uint64_t* parked_bytes) {
  std::memset(out, 0, sizeof(*out));
  if (classes != nullptr) std::memset(classes, 0, sizeof(ClassStats) * kSmallClassCount);
  uint64_t small_out = 0, large_out = 0, active_pages = 0, dirty_pages = 0, chunks = 0;
  uint64_t purged_pages = 0, bin_unused = 0, arena_allocations = 0, arena_frees = 0;
  uint64_t parked_pages = 0, transfer = 0;
  uint64_t arenas = 0;
  ForEachArena([&](Arena& arena) {
    ArenaLock lock(&arena);
    if (!arena.caller || arena.heap.chunk_count() > 0 || arena.huge_count > 0) ++arenas;
    for (uint32_t klass = 0; klass < kSmallClassCount; ++klass) {
      const Bin& bin = arena.bins[klass];
      small_out += bin.regions_out * kSmallSizes[klass];
      uint64_t parked = arena.transfer.count[klass];  // neither out nor free in the bitmaps
      transfer += parked * kSmallSizes[klass];
      bin_unused += (bin.run_count * kSmallClasses[klass].region_count - bin.regions_out - parked) *
                    kSmallSizes[klass];
      if (classes != nullptr) {
        classes[klass].live_regions += bin.regions_out;
        classes[klass].run_count += bin.run_count;
        classes[klass].runs_created += bin.runs_created;
        classes[klass].transfer_regions += parked;
      }
    }
    large_out += arena.large_bytes_out;
    arena_allocations += arena.large_allocations;
    arena_frees += arena.large_frees;
    active_pages += arena.heap.active_pages();
    dirty_pages += arena.heap.unreturned_pages();
    parked_pages += arena.heap.parked_pages();
    chunks += arena.heap.chunk_count();
    purged_pages += arena.heap.purged_pages_total();
  });
  CacheTotals caches;
  ThreadCacheTotals(&caches);
  if (classes != nullptr) {
    for (uint32_t klass = 0; klass < kSmallClassCount; ++klass) {
      uint64_t cached = caches.cached_regions[klass];
      classes[klass].cached_regions = cached;
      classes[klass].live_regions -= cached < classes[klass].live_regions
                                         ? cached : classes[klass].live_regions;
    }
  }
  HugeStats huge = GetHugeStats();
  uint64_t metadata = chunks * kChunkHeaderPages * kPageBytes + BaseMappedBytes() +
                      RegistryMetadataBytes() + huge.metadata_bytes;
  uint64_t held = small_out + large_out;
  out->allocated_bytes = (held > caches.cached_bytes ? held - caches.cached_bytes : 0) +
                         huge.live_bytes;
  out->active_bytes = active_pages * kPageBytes + huge.live_bytes;
  out->mapped_bytes = chunks * kChunkBytes + huge.live_bytes + huge.cached_bytes + BaseMappedBytes() +
                      RegistryMetadataBytes() + huge.metadata_bytes + ReserveBytes();
  out->dirty_bytes = dirty_pages * kPageBytes + huge.cached_bytes;
  out->metadata_bytes = metadata;
  out->resident_bytes = out->active_bytes + out->dirty_bytes + metadata;
  out->purged_bytes = purged_pages * kPageBytes;
  out->bin_unused_bytes = bin_unused;
  out->transfer_cache_bytes = transfer;
  out->thread_cache_bytes = caches.cached_bytes;
  out->allocation_count = caches.allocation_count + arena_allocations +
                          g_uncached_allocations.load(std::memory_order_relaxed) +
                          g_huge_allocations.load(std::memory_order_relaxed);
  out->free_count = caches.free_count + arena_frees +
                    g_uncached_frees.load(std::memory_order_relaxed) +
                    g_huge_frees.load(std::memory_order_relaxed);
  out->huge_bytes = huge.live_bytes;
  out->oom_reserve_bytes_used = ReserveUsedBytes();
  out->low_memory_callbacks = LowMemoryCallbackCount();
  out->chunk_count = chunks;
  out->huge_count = huge.live_count;
  out->arena_count = arenas;
  out->oom_count = g_oom_events.load(std::memory_order_relaxed);
  out->requested_bytes = g_requested_bytes.load(std::memory_order_relaxed);
  out->served_bytes = g_served_bytes.load(std::memory_order_relaxed);
  // Read last: every block counted above was counted in g_held_bytes before it was handed out.
  if (parked_bytes != nullptr) *parked_bytes = parked_pages * kPageBytes;
  out->peak_allocated_bytes = g_peak_held_bytes.load(std::memory_order_relaxed);
}

namespace {
// The longest decay time an arena or the huge regions have now (decay_adaptation.h), in ms.
uint64_t LongestDecayMs() {
  uint64_t longest = HugeRegionDecayNs(DecayMsOption());
  ForEachArena([&](Arena& arena) {
    ArenaLock lock(&arena);
    longest = std::max(longest, arena.decay.DecayNs(DecayMsOption()));
  });
  return longest;
}
}  // namespace

void PrintStats(FILE* out) {
  lethe_stats_t stats;
  ClassStats classes[kSmallClassCount];
  uint64_t parked = 0;
  CollectStats(&stats, classes, &parked);
  char buffer[4096];
  auto u = [](uint64_t value) { return static_cast<unsigned long long>(value); };
  int length = snprintf(
      buffer, sizeof(buffer),
      "lethe allocator: bundled (arenas %llu, purge thread %s, decay %llu ms, now up to %llu)\n"
      "  allocated %llu  active %llu  mapped %llu  resident~ %llu\n"
      "  dirty %llu (parked runs %llu)  purged %llu  metadata %llu  bin unused %llu"
      "  transfer caches %llu  thread caches %llu\n"
      "  allocations %llu  frees %llu  chunks %llu  huge %llu (%llu bytes)\n"
      "  oom events %llu  low-memory callbacks %llu  reserve used %llu  peak allocated %llu\n",
      u(stats.arena_count), PurgerRunning() ? "on" : "off", u(DecayMsOption()),
      u(LongestDecayMs()),
      u(stats.allocated_bytes), u(stats.active_bytes), u(stats.mapped_bytes),
      u(stats.resident_bytes), u(stats.dirty_bytes), u(parked), u(stats.purged_bytes),
      u(stats.metadata_bytes), u(stats.bin_unused_bytes), u(stats.transfer_cache_bytes),
      u(stats.thread_cache_bytes),
      u(stats.allocation_count), u(stats.free_count), u(stats.chunk_count), u(stats.huge_count),
      u(stats.huge_bytes), u(stats.oom_count), u(stats.low_memory_callbacks),
      u(stats.oom_reserve_bytes_used), u(stats.peak_allocated_bytes));
  if (stats.requested_bytes != 0) {
    length += snprintf(buffer + length, sizeof(buffer) - static_cast<size_t>(length),
                       "  slop: requested %llu, served %llu (%.2f%% waste)\n",
                       u(stats.requested_bytes), u(stats.served_bytes),
                       100.0 * static_cast<double>(stats.served_bytes - stats.requested_bytes) /
                           static_cast<double>(stats.served_bytes));
  }
  HugeRegionStats regions = GetHugeRegionStats();
  length += snprintf(buffer + length, sizeof(buffer) - static_cast<size_t>(length),
                     "  huge regions: %llu, %llu dirty bytes in %llu free spans; reused %llu bytes,"
                     " %llu grown in place\n",
                     u(regions.regions), u(regions.dirty_bytes), u(regions.free_spans),
                     u(regions.reused_bytes), u(regions.grown_in_place));
  fwrite(buffer, 1, static_cast<size_t>(length), out);
  fputs("  class    size  pages regions   live  cached transfer   runs\n", out);
  for (uint32_t klass = 0; klass < kSmallClassCount; ++klass) {
    if (classes[klass].runs_created == 0) continue;
    length = snprintf(buffer, sizeof(buffer), "  %5u %7u %6u %7u %6llu %7llu %8llu %6llu\n",
                      klass, kSmallSizes[klass], kSmallClasses[klass].run_pages,
                      kSmallClasses[klass].region_count, u(classes[klass].live_regions),
                      u(classes[klass].cached_regions), u(classes[klass].transfer_regions),
                      u(classes[klass].run_count));
    fwrite(buffer, 1, static_cast<size_t>(length), out);
  }
}

}  // namespace lethe::internal
