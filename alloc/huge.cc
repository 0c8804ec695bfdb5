// Huge blocks (see huge.h). The table is open addressing with linear probing over page-aligned
// keys, at most half full, grown by doubling into a new mapping; deletion shifts the following
// entries back so that lookups never need tombstones.
#include "huge.h"

#include <bit>
#include <cstring>

#include "mutex.h"
#include "oom.h"
#include "os.h"
#include "size_classes.h"
#include "stats.h"

namespace lethe::internal {
namespace {

struct Slot {
  uintptr_t address;  // 0 = empty
  HugeLayout layout;
  void* owner;        // the caller arena it counts to, or nullptr
  size_t bytes() const { return size_t{layout.ends[layout.count - 1]} << kLgPageBytes; }
};
// The table starts with kFirstCapacity slots and doubles (hashes are masked with capacity - 1).
constexpr size_t kFirstCapacity = 64;
static_assert(std::has_single_bit(kFirstCapacity));
size_t TableBytes(size_t capacity) { return PagesFor(capacity * sizeof(Slot)) << kLgPageBytes; }

constinit Mutex g_huge_lock;
constinit Slot* g_slots = nullptr;
constinit size_t g_capacity = 0;  // power of two
constinit size_t g_count = 0;
constinit uint64_t g_live_bytes = 0;

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

void InsertNoGrow(Slot* slots, size_t capacity, const Slot& slot) {
  size_t i = Hash(slot.address) & (capacity - 1);
  while (slots[i].address != 0) i = (i + 1) & (capacity - 1);
  slots[i] = slot;
}

bool Grow() {
  size_t capacity = g_capacity == 0 ? kFirstCapacity : g_capacity * 2;
  auto* slots = static_cast<Slot*>(OsMap(TableBytes(capacity), kPageBytes));
  if (slots == nullptr) return false;
  for (size_t i = 0; i < g_capacity; ++i) {
    if (g_slots[i].address != 0) InsertNoGrow(slots, capacity, g_slots[i]);
  }
  if (g_slots != nullptr) OsUnmap(g_slots, TableBytes(g_capacity));
  g_slots = slots;
  g_capacity = capacity;
  return true;
}

bool Insert(const Slot& slot) {
  if ((g_count + 1) * 2 > g_capacity && !Grow()) return false;
  InsertNoGrow(g_slots, g_capacity, slot);
  ++g_count;
  g_live_bytes += slot.bytes();
  AddHeldBytes(slot.bytes());
  return true;
}

void Erase(Slot* slot) {
  g_live_bytes -= slot->bytes();
  SubtractHeldBytes(slot->bytes());
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

// A huge block is at most 2^32 pages (16 TiB): its layout counts pages in 32 bits.
bool HugeBytesOk(size_t bytes) { return bytes <= SIZE_MAX / 2 && PagesFor(bytes) <= UINT32_MAX; }

// The layout of the first `pages` pages of a block laid out as `layout`.
HugeLayout TruncatedLayout(const HugeLayout& layout, uint32_t pages) {
  HugeLayout truncated = layout;
  for (uint32_t i = 0; i < layout.count; ++i) {
    if (layout.ends[i] >= pages) {
      truncated.ends[i] = pages;
      truncated.count = i + 1;
      break;
    }
  }
  return truncated;
}

}  // namespace

void* HugeAllocate(size_t bytes, size_t alignment, size_t* reused_bytes, void* owner) {
  *reused_bytes = 0;
  if (!HugeBytesOk(bytes)) return nullptr;
  bytes = PagesFor(bytes) << kLgPageBytes;
  HugeLayout layout{};
  void* block = alignment <= kPageBytes ? HugeCacheTake(bytes, &layout, reused_bytes) : nullptr;
  if (block == nullptr) {
    block = OsMap(bytes, alignment);
    layout = OneExtent(LayoutPages(bytes), HugeNewVmaId());
  }
  if (block == nullptr) {
    size_t reserve_bytes = (bytes + kChunkBytes - 1) & ~(kChunkBytes - 1);
    if (alignment > kChunkBytes || (block = ReserveTake(reserve_bytes)) == nullptr) {
      return nullptr;
    }
    bytes = reserve_bytes;
    layout = OneExtent(LayoutPages(bytes), HugeNewVmaId());
  }
  MutexLock lock(&g_huge_lock);
  if (!Insert(Slot{reinterpret_cast<uintptr_t>(block), layout, owner})) {
    OsUnmap(block, bytes);  // munmap takes a range of several VMAs
    *reused_bytes = 0;
    return nullptr;
  }
  return block;
}

size_t HugeSize(const void* pointer) {
  MutexLock lock(&g_huge_lock);
  Slot* slot = Find(reinterpret_cast<uintptr_t>(pointer));
  return slot == nullptr ? 0 : slot->bytes();
}

bool HugeLayoutOf(const void* pointer, HugeLayout* layout) {
  MutexLock lock(&g_huge_lock);
  Slot* slot = Find(reinterpret_cast<uintptr_t>(pointer));
  if (slot == nullptr) return false;
  *layout = slot->layout;
  return true;
}

bool HugeFree(void* pointer, void** owner, size_t* bytes) {
  Slot freed;
  {
    MutexLock lock(&g_huge_lock);
    Slot* slot = Find(reinterpret_cast<uintptr_t>(pointer));
    if (slot == nullptr) return false;
    freed = *slot;
    Erase(slot);
  }
  *owner = freed.owner;
  *bytes = freed.bytes();
  HugeCachePutBlock(freed.address, freed.layout);
  return true;
}

void* HugeReallocate(void* pointer, size_t bytes, void** owner, size_t* old_bytes_out) {
  if (!HugeBytesOk(bytes)) return nullptr;
  bytes = PagesFor(bytes) << kLgPageBytes;
  Slot old;
  {
    MutexLock lock(&g_huge_lock);
    Slot* slot = Find(reinterpret_cast<uintptr_t>(pointer));
    if (slot == nullptr) return nullptr;
    if (slot->bytes() == bytes) {
      *owner = slot->owner;
      *old_bytes_out = bytes;
      return pointer;
    }
    old = *slot;
    Erase(slot);
  }
  // The block is live and owned by the caller: nobody else can free it meanwhile.
  size_t old_bytes = old.bytes();
  *owner = old.owner;
  *old_bytes_out = old_bytes;
  Slot resized{old.address, OneExtent(LayoutPages(bytes), HugeNewVmaId()), old.owner};
  if (bytes < old_bytes) {
    // The tail goes back to the OS at once: the caller said it is done with it. mremap shrinks
    // one VMA; the tail of an assembled block may span several, which munmap takes.
    resized.layout = TruncatedLayout(old.layout, LayoutPages(bytes));
    if (old.layout.count == 1) {
      resized.address = reinterpret_cast<uintptr_t>(OsRemap(pointer, old_bytes, bytes));
    } else {
      OsUnmap(static_cast<unsigned char*>(pointer) + bytes, old_bytes - bytes);
    }
  } else if (old.layout.count == 1) {
    void* moved = OsRemap(pointer, old_bytes, bytes);
    resized.address = reinterpret_cast<uintptr_t>(moved);
    // Grown in place, the block is still (part of) its VMA; moved, it is a VMA of its own.
    if (moved == pointer) resized.layout.ids[0] = old.layout.ids[0];
  } else {
    // Assembled from several VMAs, which mremap cannot grow as one: copied once into a single
    // fresh mapping, which later growth then extends with mremap.
    void* fresh = OsMap(bytes, kPageBytes);
    resized.address = reinterpret_cast<uintptr_t>(fresh);
    if (fresh != nullptr) {
      std::memcpy(fresh, pointer, old_bytes);
      HugeCachePutBlock(old.address, old.layout);
    }
  }
  MutexLock lock(&g_huge_lock);
  // Capacity for one entry was there a moment ago, so neither Insert can fail.
  if (resized.address == 0) {
    Insert(old);
    return nullptr;
  }
  Insert(resized);
  return reinterpret_cast<void*>(resized.address);
}

HugeStats GetHugeStats() {
  uint64_t cached = GetHugeCacheStats().cached_bytes;
  MutexLock lock(&g_huge_lock);
  return HugeStats{g_live_bytes, g_count, TableBytes(g_capacity), cached};
}

// No path holds both locks at once, so taking them in this order cannot deadlock.
void HugeLockForFork() {
  g_huge_lock.Lock();
  HugeCacheLockForFork();
}
void HugeUnlockAfterFork(bool child) {
  HugeCacheUnlockAfterFork(child);
  if (child) g_huge_lock.ResetAfterFork(); else g_huge_lock.Unlock();
}

}  // namespace lethe::internal
