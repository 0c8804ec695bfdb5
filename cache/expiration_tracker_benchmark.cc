// Benchmarks of ExpirationTracker: Touch, Remove+Add and the cost per expired entry of Age(), from
// 10^3 to 10^6 tracked entries. All should be flat in the entry count (O(1) per operation).
//   build/release/cache/lethe_cache_benchmark --benchmark_filter=ExpirationTracker
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "lethe/expiration_tracker.h"

namespace lethe {
namespace {

struct BenchEntry {
  ExpirationState state;
  uint64_t payload = 0;
  ExpirationState& GetExpirationState() { return state; }
};

// xorshift: a cheap pseudo-random index so that touches hit entries all over memory.
uint64_t NextRandom(uint64_t& x) {
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return x;
}

void BM_ExpirationTrackerTouch(benchmark::State& state) {
  const size_t count = static_cast<size_t>(state.range(0));
  std::vector<BenchEntry> entries(count);
  ManualClock clock;
  ExpirationTracker<BenchEntry> tracker(3, std::chrono::seconds(10), clock.Now(),
                                        [](BenchEntry*) {});
  // Spread the entries over every generation, as a steady-state cache has them.
  for (size_t i = 0; i < count; ++i) {
    if (i == count / 3 || i == 2 * count / 3) tracker.Age();
    tracker.Add(&entries[i]);
  }
  uint64_t x = 88172645463325252ull;
  for (auto _ : state) {
    BenchEntry* entry = &entries[NextRandom(x) % count];
    tracker.Touch(entry);
    // Keep touched entries from all piling into the newest generation: every so often rotate.
    if ((x & 0xffff) == 0) tracker.Age();
    benchmark::DoNotOptimize(entry);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ExpirationTrackerTouch)->RangeMultiplier(10)->Range(1000, 1000000);

void BM_ExpirationTrackerRemoveAdd(benchmark::State& state) {
  const size_t count = static_cast<size_t>(state.range(0));
  std::vector<BenchEntry> entries(count);
  ManualClock clock;
  ExpirationTracker<BenchEntry> tracker(3, std::chrono::seconds(10), clock.Now(),
                                        [](BenchEntry*) {});
  for (BenchEntry& entry : entries) tracker.Add(&entry);
  uint64_t x = 88172645463325252ull;
  for (auto _ : state) {
    BenchEntry* entry = &entries[NextRandom(x) % count];
    tracker.Remove(entry);
    tracker.Add(entry);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ExpirationTrackerRemoveAdd)->RangeMultiplier(10)->Range(1000, 1000000);

// The same with a hot working set of 1000 entries while the tracker holds `count`: separates the
// algorithm's cost (flat) from the cache misses of touching entries spread over 10^6 x 24 bytes.
void BM_ExpirationTrackerRemoveAddHotSet(benchmark::State& state) {
  const size_t count = static_cast<size_t>(state.range(0));
  const size_t hot_count = std::min<size_t>(1000, count);
  std::vector<BenchEntry> entries(count);
  ManualClock clock;
  ExpirationTracker<BenchEntry> tracker(3, std::chrono::seconds(10), clock.Now(),
                                        [](BenchEntry*) {});
  for (BenchEntry& entry : entries) tracker.Add(&entry);
  uint64_t x = 88172645463325252ull;
  for (auto _ : state) {
    BenchEntry* entry = &entries[NextRandom(x) % hot_count];
    tracker.Remove(entry);
    tracker.Add(entry);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ExpirationTrackerRemoveAddHotSet)->RangeMultiplier(10)->Range(1000, 1000000);

// One Age() per iteration on a tracker holding `count` entries in steady state: the callback puts
// each expired entry back (as a cache re-inserting a re-decoded surface would), so each Age()
// expires count/K entries. Reported per expired entry: flat means Age is O(expired), nothing more.
void BM_ExpirationTrackerAgePerExpiredEntry(benchmark::State& state) {
  const size_t count = static_cast<size_t>(state.range(0));
  constexpr uint32_t kGenerations = 3;
  std::vector<BenchEntry> entries(count);
  ManualClock clock;
  ExpirationTracker<BenchEntry>* self = nullptr;
  ExpirationTracker<BenchEntry> tracker(kGenerations, std::chrono::seconds(10), clock.Now(),
                                        [&self](BenchEntry* entry) {
                                          ++entry->payload;
                                          self->Add(entry);
                                        });
  self = &tracker;
  for (size_t i = 0; i < count; ++i) {
    if (i == count / 3 || i == 2 * count / 3) tracker.Age();
    tracker.Add(&entries[i]);
  }
  size_t expired_count = 0;
  for (auto _ : state) expired_count += tracker.Age();
  state.SetItemsProcessed(static_cast<int64_t>(expired_count));
  state.counters["ns_per_expired_entry"] = benchmark::Counter(
      static_cast<double>(expired_count), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ExpirationTrackerAgePerExpiredEntry)->RangeMultiplier(10)->Range(1000, 1000000);

}  // namespace
}  // namespace lethe
