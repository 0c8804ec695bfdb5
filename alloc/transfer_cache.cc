// The arenas' transfer caches (see transfer_cache.h).
#include "transfer_cache.h"

#include <array>
#include <cstring>

#include "base.h"
#include "chunk.h"
#include "compiler.h"
#include "lethe/check.h"

namespace lethe::internal {
namespace {
constexpr uint32_t Capacity(uint32_t klass) { return CacheMaxCapacity(kSmallSizes[klass]); }

// Where each class's stack starts in the slots: the ceilings of the classes before it.
constexpr std::array<uint32_t, kSmallClassCount> BuildOffsets() {
  std::array<uint32_t, kSmallClassCount> offsets{};
  uint32_t next = 0;
  for (uint32_t klass = 0; klass < kSmallClassCount; ++klass) {
    offsets[klass] = next;
    next += Capacity(klass);
  }
  return offsets;
}
constexpr std::array<uint32_t, kSmallClassCount> kOffsets = BuildOffsets();
static_assert(CacheMaxCapacity(kSmallSizes[0]) <= UINT16_MAX);

}  // namespace

void** TransferStack(const TransferCache& cache, uint32_t klass) {
  return cache.slots.load(std::memory_order_relaxed) + kOffsets[klass];
}

bool TransferReady(TransferCache* cache) {
  if (LETHE_LIKELY(cache->slots.load(std::memory_order_acquire) != nullptr)) return true;
  auto* slots = static_cast<void**>(BaseAllocate(TotalCacheSlots() * sizeof(void*)));
  if (slots == nullptr) return false;
  void** expected = nullptr;
  // Two threads mapping at once: the loser's slots stay unused (base memory is never returned).
  cache->slots.compare_exchange_strong(expected, slots, std::memory_order_acq_rel);
  return true;
}

uint32_t TransferPark(TransferCache* cache, uint32_t klass, void** pointers, uint32_t count) {
  void** stack = TransferStack(*cache, klass);
  uint32_t parked = cache->count[klass];
  uint32_t room = Capacity(klass) - parked;
  if (room == 0) return count;  // full (a long run of frees): all of them to BinFreeBatch
  uint32_t left = 0;
  const ClassFacts facts = FactsOf(klass);
  RunCursor cursor;
  uint32_t i = 0;
  for (; i < count && room > 0; ++i) {
    void* pointer = pointers[i];
    if (!IsRegionOut(pointer, klass, facts, &cursor)) {
      pointers[left++] = pointer;
      continue;
    }
#if LETHE_DEBUG_LEVEL >= 1
    for (uint32_t j = 0; j < parked; ++j) {
      if (stack[j] == pointer) lethe_fatal_pointer("free(): double free ", pointer, "");
    }
#endif
    stack[parked++] = pointer;
    --room;
  }
  cache->count[klass] = static_cast<uint16_t>(parked);
  // Those past the capacity follow the ones that failed a check.
  std::memmove(pointers + left, pointers + i, (count - i) * sizeof(void*));
  return left + (count - i);
}

uint32_t TransferTake(TransferCache* cache, uint32_t klass, void** out, uint32_t count) {
  uint32_t parked = cache->count[klass];
  if (parked == 0) return 0;
  uint32_t taken = count < parked ? count : parked;
  parked -= taken;
  std::memcpy(out, TransferStack(*cache, klass) + parked, taken * sizeof(void*));
  cache->count[klass] = static_cast<uint16_t>(parked);
  if (parked < cache->low_water[klass]) cache->low_water[klass] = static_cast<uint16_t>(parked);
  return taken;
}

uint64_t TransferTrim(TransferCache* cache, Bin* bins, PageHeap* heap, uint64_t now_ns, bool all) {
  if (cache->slots.load(std::memory_order_relaxed) == nullptr) return 0;
  uint64_t kept = 0;
  for (uint32_t klass = 0; klass < kSmallClassCount; ++klass) {
    uint32_t parked = cache->count[klass];
    uint32_t idle = all ? parked : cache->low_water[klass];
    if (idle > 0) {
      void** stack = TransferStack(*cache, klass);
      bins[klass].regions_out += idle;  // BinFreeBatch takes them out again
      BinFreeBatch(bins, klass, heap, stack, idle, now_ns);
      std::memmove(stack, stack + idle, (parked - idle) * sizeof(void*));
      parked -= idle;
      cache->count[klass] = static_cast<uint16_t>(parked);
    }
    cache->low_water[klass] = static_cast<uint16_t>(parked);
    kept += parked;
  }
  return kept;
}

void TransferValidate(const TransferCache& cache) {
  if (cache.slots.load(std::memory_order_relaxed) == nullptr) {
    for (uint16_t count : cache.count) LETHE_CHECK(count == 0, "regions parked without slots");
    return;
  }
  for (uint32_t klass = 0; klass < kSmallClassCount; ++klass) {
    uint32_t parked = cache.count[klass];
    LETHE_CHECK(parked <= Capacity(klass), "transfer cache over capacity");
    LETHE_CHECK(cache.low_water[klass] <= parked, "low-water mark above the count");
    void** stack = TransferStack(cache, klass);
    for (uint32_t i = 0; i < parked; ++i) {
      LETHE_CHECK(IsRegionOut(stack[i], klass), "parked region not an allocated region of its class");
      for (uint32_t j = i + 1; j < parked; ++j) {
        LETHE_CHECK(stack[i] != stack[j], "region parked twice");
      }
    }
  }
}

}  // namespace lethe::internal
