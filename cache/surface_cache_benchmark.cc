// Benchmarks of the SurfaceCache: lookup cost from 10^3 to 10^5 cached surfaces (hit and miss),
// and a critical pressure dispatch on a cache holding 500 MB of real, touched surfaces.
//   build/release/cache/lethe_cache_benchmark --benchmark_filter='SurfaceCache|Pressure'
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>

#include "lethe/alloc.h"
#include "lethe/memory_pressure.h"
#include "lethe/surface_cache.h"

namespace lethe {
namespace {

class CostOnlySurface : public CachedSurface {
 public:
  size_t MemoryBytes() const override { return 4096; }
};

// Pixels in a block of Lethe's allocator, touched so that they are resident.
class PixelSurface : public CachedSurface {
 public:
  explicit PixelSurface(size_t bytes) : pixels_(lethe_malloc(bytes)) {
    if (pixels_ != nullptr) std::memset(pixels_, 0x5a, bytes);
  }
  ~PixelSurface() override { lethe_free(pixels_); }
  size_t MemoryBytes() const override { return lethe_usable_size(pixels_); }

 private:
  void* pixels_;
};

uint64_t NextRandom(uint64_t& x) {
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return x;
}

void BM_SurfaceCacheLookupHit(benchmark::State& state) {
  const uint64_t count = static_cast<uint64_t>(state.range(0));
  ManualClock clock;
  SurfaceCache cache(clock);
  auto surface = std::make_shared<CostOnlySurface>();
  for (uint64_t i = 0; i < count; ++i) {
    (void)cache.Insert(SurfaceKey{i, 256, 256, 0}, surface, std::chrono::microseconds(100));
  }
  uint64_t x = 88172645463325252ull;
  for (auto _ : state) {
    auto found = cache.Lookup(SurfaceKey{NextRandom(x) % count, 256, 256, 0});
    benchmark::DoNotOptimize(found);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SurfaceCacheLookupHit)->RangeMultiplier(10)->Range(1000, 100000);

void BM_SurfaceCacheLookupMiss(benchmark::State& state) {
  const uint64_t count = static_cast<uint64_t>(state.range(0));
  ManualClock clock;
  SurfaceCache cache(clock);
  auto surface = std::make_shared<CostOnlySurface>();
  for (uint64_t i = 0; i < count; ++i) {
    (void)cache.Insert(SurfaceKey{i, 256, 256, 0}, surface, std::chrono::microseconds(100));
  }
  uint64_t x = 88172645463325252ull;
  for (auto _ : state) {
    auto found = cache.Lookup(SurfaceKey{NextRandom(x) % count, 128, 128, 0});
    benchmark::DoNotOptimize(found);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SurfaceCacheLookupMiss)->RangeMultiplier(10)->Range(1000, 100000);

// 500 MB in surfaces of range(0) bytes each; each iteration refills (untimed) and times one
// critical dispatch: discarding, freeing the pixels and the allocator purge.
void BM_PressureCriticalDispatch500MB(benchmark::State& state) {
  const size_t surface_bytes = static_cast<size_t>(state.range(0));
  const size_t count = (size_t{500} << 20) / surface_bytes;
  ManualClock clock;
  SurfaceCacheOptions options;
  options.max_bytes = uint64_t{1} << 30;
  SurfaceCache cache(clock, options);
  MemoryPressure pressure(clock);
  auto subscription = cache.SubscribeTo(pressure);
  uint64_t freed = 0;
  double listener_seconds = 0;
  double purge_seconds = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (size_t i = 0; i < count; ++i) {
      (void)cache.Insert(SurfaceKey{i, 1, 1, 0}, std::make_shared<PixelSurface>(surface_bytes),
                         std::chrono::microseconds(100));
    }
    pressure.Dispatch(MemoryPressureLevel::kNone);  // each event fresh, never "ongoing"
    state.ResumeTiming();
    MemoryPressureDispatchResult result = pressure.Dispatch(MemoryPressureLevel::kCritical);
    freed += result.total_freed_bytes;
    listener_seconds += std::chrono::duration<double>(result.listeners.at(0).elapsed).count();
    purge_seconds += std::chrono::duration<double>(result.purge.elapsed).count();
  }
  double n = static_cast<double>(state.iterations());
  state.counters["freed_MB"] = static_cast<double>(freed) / n / (1 << 20);
  state.counters["surfaces"] = static_cast<double>(count);
  state.counters["cache_ms"] = listener_seconds / n * 1e3;
  state.counters["purge_ms"] = purge_seconds / n * 1e3;
}
BENCHMARK(BM_PressureCriticalDispatch500MB)
    ->Arg(256 << 10)
    ->Arg(4 << 20)
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace lethe
