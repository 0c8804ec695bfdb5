// Huge blocks (see huge.h). The table is open addressing with linear probing over page-aligned
// keys, at most half full, grown by doubling into a new mapping; deletion shifts the following
// entries back so that lookups never need tombstones.
#include "huge.h"

#include "decay.h"
#include "options.h"
#include "mutex.h"
#include "oom.h"
#include "os.h"
#include "size_classes.h"
#include "stats.h"

namespace lethe::internal {
namespace {

struct Slot {
  uintptr_t address;  // 0 = empty
  size_t bytes;
};

constinit Mutex g_huge_lock;
constinit Slot* g_slots = nullptr;
constinit size_t g_capacity = 0;  // power of two
constinit size_t g_count = 0;
constinit uint64_t g_live_bytes = 0;

// Freed huge mappings kept for reuse (their pages are resident: no faults when reused), resized
// with mremap to the next request. Bounded; purged by decay like dirty pages (decay.cc).
struct Cached {
  uintptr_t address;
  size_t bytes;
  uint64_t since_ns;
};
constexpr size_t kCacheSlots = 16;
size_t CacheMaxBytes() { return static_cast<size_t>(g_options.huge_cache_kb) << 10; }
constinit Cached g_cache[kCacheSlots] = {};
constinit size_t g_cache_count = 0;
constinit size_t g_cache_bytes = 0;

// Takes the cached mapping that best fits `bytes` (the smallest that holds it, else the largest).
bool TakeCached(size_t bytes, Cached* out) {
  int best = -1;
  for (size_t i = 0; i < g_cache_count; ++i) {
    bool holds = g_cache[i].bytes >= bytes;
    if (best < 0) {
      best = static_cast<int>(i);
      continue;
    }
    const Cached& current = g_cache[best];
    bool current_holds = current.bytes >= bytes;
    if ((holds && (!current_holds || g_cache[i].bytes < current.bytes)) ||
        (!holds && !current_holds && g_cache[i].bytes > current.bytes)) {
      best = static_cast<int>(i);
    }
  }
  if (best < 0) return false;
  *out = g_cache[best];
  g_cache_bytes -= out->bytes;
  g_cache[best] = g_cache[--g_cache_count];
  return true;
}

size_t Hash(uintptr_t address) {
  return static_cast<size_t>((address >> kLgPageBytes) * 0x9E3779B97F4A7C15ull);
}

Slot* Find(uintptr_t address) {
  if (g_capacity == 0) return nullptr;
  for (size_t i = Hash(address) & (g_capacity - 1);; i = (i + 1) & (g_capacity - 1)) {
    if (g_slots[i].address == address) return &g_slots[i];
    if (g_slots[i].address == 0) return nullptr;
  }
}

void InsertNoGrow(Slot* slots, size_t capacity, uintptr_t address, size_t bytes) {
  size_t i = Hash(address) & (capacity - 1);
  while (slots[i].address != 0) i = (i + 1) & (capacity - 1);
  slots[i] = Slot{address, bytes};
}

bool Grow() {
  size_t capacity = g_capacity == 0 ? kPageBytes / sizeof(Slot) : g_capacity * 2;
  auto* slots = static_cast<Slot*>(OsMap(capacity * sizeof(Slot), kPageBytes));
  if (slots == nullptr) return false;
  for (size_t i = 0; i < g_capacity; ++i) {
    if (g_slots[i].address != 0) InsertNoGrow(slots, capacity, g_slots[i].address, g_slots[i].bytes);
  }
  if (g_slots != nullptr) OsUnmap(g_slots, g_capacity * sizeof(Slot));
  g_slots = slots;
  g_capacity = capacity;
  return true;
}

bool Insert(uintptr_t address, size_t bytes) {
  if ((g_count + 1) * 2 > g_capacity && !Grow()) return false;
  InsertNoGrow(g_slots, g_capacity, address, bytes);
  ++g_count;
  g_live_bytes += bytes;
  AddHeldBytes(bytes);
  return true;
}

void Erase(Slot* slot) {
  g_live_bytes -= slot->bytes;
  SubtractHeldBytes(slot->bytes);
  --g_count;
  size_t hole = static_cast<size_t>(slot - g_slots);
  g_slots[hole].address = 0;
  // Shift back every following entry whose probe sequence passes over the hole.
  for (size_t i = (hole + 1) & (g_capacity - 1); g_slots[i].address != 0;
       i = (i + 1) & (g_capacity - 1)) {
    size_t home = Hash(g_slots[i].address) & (g_capacity - 1);
    bool movable = hole <= i ? (home <= hole || home > i) : (home <= hole && home > i);
    if (movable) {
      g_slots[hole] = g_slots[i];
      g_slots[i].address = 0;
      hole = i;
    }
  }
}

}  // namespace

void* HugeAllocate(size_t bytes, size_t alignment, bool* zeroed) {
  if (bytes > SIZE_MAX / 2) return nullptr;
  bytes = PagesFor(bytes) << kLgPageBytes;
  *zeroed = false;
  void* block = nullptr;
  Cached cached{};
  bool reuse = false;
  if (alignment <= kPageBytes) {
    MutexLock lock(&g_huge_lock);
    reuse = TakeCached(bytes, &cached);
  }
  if (reuse) {
    block = cached.bytes == bytes
                ? reinterpret_cast<void*>(cached.address)
                : OsRemap(reinterpret_cast<void*>(cached.address), cached.bytes, bytes);
    if (block == nullptr) OsUnmap(reinterpret_cast<void*>(cached.address), cached.bytes);
  }
  if (block == nullptr) {
    block = OsMap(bytes, alignment);
    *zeroed = block != nullptr;
  }
  if (block == nullptr) {
    size_t reserve_bytes = (bytes + kChunkBytes - 1) & ~(kChunkBytes - 1);
    if (alignment <= kChunkBytes && (block = ReserveTake(reserve_bytes)) != nullptr) {
      bytes = reserve_bytes;
      *zeroed = true;
    } else {
      return nullptr;
    }
  }
  MutexLock lock(&g_huge_lock);
  if (!Insert(reinterpret_cast<uintptr_t>(block), bytes)) {
    OsUnmap(block, bytes);
    return nullptr;
  }
  return block;
}

size_t HugeSize(const void* pointer) {
  MutexLock lock(&g_huge_lock);
  Slot* slot = Find(reinterpret_cast<uintptr_t>(pointer));
  return slot == nullptr ? 0 : slot->bytes;
}

bool HugeFree(void* pointer) {
  size_t bytes;
  Cached evicted{};
  {
    MutexLock lock(&g_huge_lock);
    Slot* slot = Find(reinterpret_cast<uintptr_t>(pointer));
    if (slot == nullptr) return false;
    bytes = slot->bytes;
    Erase(slot);
    if (bytes <= CacheMaxBytes() / 4) {
      if (g_cache_count == kCacheSlots || g_cache_bytes + bytes > CacheMaxBytes()) {
        // Evict the oldest to make room.
        size_t oldest = 0;
        for (size_t i = 1; i < g_cache_count; ++i) {
          if (g_cache[i].since_ns < g_cache[oldest].since_ns) oldest = i;
        }
        if (g_cache_count > 0) {
          evicted = g_cache[oldest];
          g_cache_bytes -= evicted.bytes;
          g_cache[oldest] = g_cache[--g_cache_count];
        }
      }
      if (g_cache_bytes + bytes <= CacheMaxBytes()) {
        g_cache[g_cache_count++] = Cached{reinterpret_cast<uintptr_t>(pointer), bytes, DecayNowNs()};
        g_cache_bytes += bytes;
        bytes = 0;
      }
    }
  }
  if (evicted.address != 0) OsUnmap(reinterpret_cast<void*>(evicted.address), evicted.bytes);
  if (bytes != 0) OsUnmap(pointer, bytes);
  return true;
}

uint64_t HugeCachePurge(uint64_t now_ns, uint64_t decay_ns) {
  Cached victims[kCacheSlots];
  size_t victim_count = 0;
  uint64_t next = UINT64_MAX;
  {
    MutexLock lock(&g_huge_lock);
    for (size_t i = 0; i < g_cache_count;) {
      if (now_ns >= decay_ns && g_cache[i].since_ns <= now_ns - decay_ns) {
        victims[victim_count++] = g_cache[i];
        g_cache_bytes -= g_cache[i].bytes;
        g_cache[i] = g_cache[--g_cache_count];
      } else {
        if (g_cache[i].since_ns + decay_ns < next) next = g_cache[i].since_ns + decay_ns;
        ++i;
      }
    }
  }
  for (size_t i = 0; i < victim_count; ++i) {
    OsUnmap(reinterpret_cast<void*>(victims[i].address), victims[i].bytes);
  }
  return next;
}

void* HugeReallocate(void* pointer, size_t bytes) {
  bytes = PagesFor(bytes) << kLgPageBytes;
  size_t old_bytes;
  {
    MutexLock lock(&g_huge_lock);
    Slot* slot = Find(reinterpret_cast<uintptr_t>(pointer));
    if (slot == nullptr) return nullptr;
    old_bytes = slot->bytes;
    if (old_bytes == bytes) return pointer;
    Erase(slot);
  }
  // The block is live and owned by the caller: nobody else can free it meanwhile.
  void* moved = OsRemap(pointer, old_bytes, bytes);
  MutexLock lock(&g_huge_lock);
  if (moved == nullptr) {
    Insert(reinterpret_cast<uintptr_t>(pointer), old_bytes);  // capacity was there a moment ago
    return nullptr;
  }
  Insert(reinterpret_cast<uintptr_t>(moved), bytes);
  return moved;
}

HugeStats GetHugeStats() {
  MutexLock lock(&g_huge_lock);
  return HugeStats{g_live_bytes, g_count, g_capacity * sizeof(Slot), g_cache_bytes};
}

void HugeLockForFork() { g_huge_lock.Lock(); }
void HugeUnlockAfterFork(bool child) {
  if (child) g_huge_lock.ResetAfterFork(); else g_huge_lock.Unlock();
}

}  // namespace lethe::internal
