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
  size_t bytes;
  void* owner;        // the caller arena it counts to, or nullptr
  bool in_region;     // cut from a huge region (huge_region.h), else a mapping of its own
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
  g_live_bytes += slot.bytes;
  AddHeldBytes(slot.bytes);
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

// A huge block is at most 2^32 pages (16 TiB), so that its page count fits 32 bits.
bool HugeBytesOk(size_t bytes) { return bytes <= SIZE_MAX / 2 && PagesFor(bytes) <= UINT32_MAX; }

// Gives a block back: to its region, or to the OS.
void Release(const Slot& slot) {
  if (slot.in_region) {
    HugeRegionPut(reinterpret_cast<void*>(slot.address), slot.bytes);
  } else {
    OsUnmap(reinterpret_cast<void*>(slot.address), slot.bytes);
  }
}

// A new block of `bytes` (page multiple): cut from a region when it fits one with its
// alignment, else mapped on its own, else (chunk-aligned at most) from the OOM reserve.
Slot NewBlock(size_t bytes, size_t alignment, size_t* reused_bytes, void* owner) {
  *reused_bytes = 0;
  if (void* block = HugeRegionTakeAligned(bytes, alignment, reused_bytes)) {
    return Slot{reinterpret_cast<uintptr_t>(block), bytes, owner, true};
  }
  if (void* block = OsMap(bytes, alignment)) {
    return Slot{reinterpret_cast<uintptr_t>(block), bytes, owner, false};
  }
  size_t reserve_bytes = (bytes + kChunkBytes - 1) & ~(kChunkBytes - 1);
  void* block = alignment <= kChunkBytes ? ReserveTake(reserve_bytes) : nullptr;
  return Slot{reinterpret_cast<uintptr_t>(block), reserve_bytes, owner, false};
}

}  // namespace

void* HugeAllocate(size_t bytes, size_t alignment, size_t* reused_bytes, void* owner) {
  *reused_bytes = 0;
  if (!HugeBytesOk(bytes)) return nullptr;
  Slot slot = NewBlock(PagesFor(bytes) << kLgPageBytes, alignment, reused_bytes, owner);
  if (slot.address == 0) return nullptr;
  bool inserted;
  {
    MutexLock lock(&g_huge_lock);
    inserted = Insert(slot);
  }
  if (!inserted) {  // given back without the table's lock (mutex.h, lock order)
    Release(slot);
    *reused_bytes = 0;
    return nullptr;
  }
  return reinterpret_cast<void*>(slot.address);
}

size_t HugeSize(const void* pointer) {
  MutexLock lock(&g_huge_lock);
  Slot* slot = Find(reinterpret_cast<uintptr_t>(pointer));
  return slot == nullptr ? 0 : slot->bytes;
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
  *bytes = freed.bytes;
  Release(freed);
  return true;
}

namespace {

// The block `old` at `bytes` (page multiple, != old.bytes); its address is 0 when nothing could
// be had (`old` is then intact). Region blocks shrink and grow in place where they can (growing by
// a whole GrowthPages step when the room is there), else move by copy into a new block with that
// room; mappings of their own use mremap.
Slot Resized(const Slot& old, size_t bytes) {
  Slot resized = old;
  resized.bytes = bytes;
  void* pointer = reinterpret_cast<void*>(old.address);
  if (!old.in_region) {
    // The tail of a shrunk mapping goes back to the OS at once: the caller is done with it.
    resized.address = reinterpret_cast<uintptr_t>(OsRemap(pointer, old.bytes, bytes));
  } else if (bytes < old.bytes) {
    HugeRegionShrink(pointer, old.bytes, bytes);
  } else {
    // A growth step at once, in place or by copy: a buffer grown by appends grows O(log n) times.
    size_t roomy = GrowthPages(bytes >> kLgPageBytes) << kLgPageBytes;
    resized.bytes = HugeRegionGrowInPlace(pointer, old.bytes, bytes, roomy);
    if (resized.bytes == 0) {
      size_t reused = 0;
      resized = NewBlock(roomy, kPageBytes, &reused, old.owner);
      if (resized.address != 0) {
        // Its fresh pages faulted in by one system call rather than one by one (os.h); the
        // room after the copy stays unfaulted until written.
        if (reused < old.bytes) {
          OsPopulate(reinterpret_cast<char*>(resized.address) + reused, old.bytes - reused);
        }
        std::memcpy(reinterpret_cast<void*>(resized.address), pointer, old.bytes);
        HugeRegionPut(pointer, old.bytes);
      }
    }
  }
  return resized;
}

}  // namespace

void* HugeReallocate(void* pointer, size_t bytes, void** owner, size_t* old_bytes_out,
                     size_t* new_bytes_out) {
  if (!HugeBytesOk(bytes)) {
    *old_bytes_out = HugeSize(pointer);
    return nullptr;
  }
  bytes = PagesFor(bytes) << kLgPageBytes;
  Slot old;
  {
    MutexLock lock(&g_huge_lock);
    Slot* slot = Find(reinterpret_cast<uintptr_t>(pointer));
    if (slot == nullptr) {
      *old_bytes_out = 0;
      return nullptr;
    }
    // A region block stays as it is within a growth step (GrowthPages): a buffer that grows by
    // realloc into the room a copy gave it, or shrinks by less than a quarter, keeps its place.
    if (slot->bytes == bytes || (slot->in_region && HugeRegionBlockKept(slot->bytes, bytes))) {
      *owner = slot->owner;
      *old_bytes_out = slot->bytes;
      *new_bytes_out = slot->bytes;
      return pointer;
    }
    old = *slot;
    Erase(slot);
  }
  // The block is live and owned by the caller: nobody else can free it meanwhile.
  *owner = old.owner;
  *old_bytes_out = old.bytes;
  Slot resized = Resized(old, bytes);
  MutexLock lock(&g_huge_lock);
  // Capacity for one entry was there a moment ago, so neither Insert can fail.
  if (resized.address == 0) {
    Insert(old);
    return nullptr;
  }
  Insert(resized);
  *new_bytes_out = resized.bytes;
  return reinterpret_cast<void*>(resized.address);
}

HugeStats GetHugeStats() {
  HugeRegionStats regions = GetHugeRegionStats();
  MutexLock lock(&g_huge_lock);
  return HugeStats{g_live_bytes, g_count, TableBytes(g_capacity) + regions.metadata_bytes,
                   regions.dirty_bytes};
}

// No path holds both locks at once, so taking them in this order cannot deadlock.
void HugeLockForFork() {
  g_huge_lock.Lock();
  HugeRegionLockForFork();
}
void HugeUnlockAfterFork(bool child) {
  HugeRegionUnlockAfterFork(child);
  if (child) g_huge_lock.ResetAfterFork(); else g_huge_lock.Unlock();
}

}  // namespace lethe::internal
