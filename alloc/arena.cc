// Arenas (see arena.h).
#include "arena.h"

#include <algorithm>
#include <atomic>

#include "compiler.h"
#include "decay.h"
#include "lethe/check.h"
#include "stats.h"

namespace lethe::internal {

LETHE_TABLE constinit Arena g_arenas[kMaxArenas] = {};
constinit unsigned g_arena_count = 1;
LETHE_TABLE constinit Arena* g_caller_arenas[kMaxCallerArenas] = {};
constinit std::atomic<uint32_t> g_caller_arena_slots{0};
LETHE_TLS Arena* t_bound_arena = nullptr;

namespace {
constinit std::atomic<unsigned> g_next_arena{0};
LETHE_TLS Arena* t_arena = nullptr;

// Under the arena's lock after a free: claims the release of a closed arena that just emptied
// (clearing `closed` so that nobody claims it twice); the caller releases it after unlocking.
bool ClaimRelease(Arena* arena) {
  if (!ArenaMustRelease(arena)) return false;
  arena->closed = false;
  return true;
}

// dirty_percent of the active pages, or the dirty floor; once the arena has shed half the active
// pages it churned at, the floor counts only up to the active pages (never under its least).
size_t DirtyLimit(const Arena& arena) {
  size_t active = arena.heap.active_pages();
  size_t limit = active * DirtyPercentOption() / 100;
  size_t floor = DirtyFloorPages(arena);
  if (active < arena.churn_active_pages / 2) {
    floor = std::min(floor, std::max(active, kDirtyFloorMinPages));
  }
  return std::max(limit, floor);
}

// Whether the dirty pages are past the limit and past the last sample's count (kDirtySampleRuns).
bool OverDirtyLimit(const Arena& arena, size_t limit) {
  size_t dirty = arena.heap.dirty_pages();
  return dirty > limit && dirty > arena.dirty_checked_pages + limit / 2;
}

// Under the lock, past OverDirtyLimit: whether the excess holds memory (kDirtyResidentShare).
// When it does not, notes the count, so that the next sample waits for more dirty pages.
bool ExcessIsResident(Arena* arena, size_t limit) {
  size_t dirty = arena->heap.dirty_pages();
  PageHeap::DirtySample sample = arena->heap.SampleDirty(kDirtySampleRuns);
  uint64_t resident = sample.pages == 0 ? dirty : uint64_t{dirty} * sample.resident / sample.pages;
  bool costs = resident > limit || sample.resident * kDirtyResidentShare > sample.pages;
  arena->dirty_checked_pages = costs ? 0 : dirty;
  return costs;
}

// Under the lock, when the dirty limit was exceeded: on a quick repeat, grows the floor and notes
// the active pages the arena churns at.
void NoteExcess(Arena* arena) {
  uint64_t now = DecayNowNs();
  uint64_t window = DecayMsOption() * 1000000u;
  if (now - arena->last_excess_ns < window) {
    if (DirtyFloorPages(*arena) < kDirtyFloorMaxPages) ++arena->dirty_floor_doublings;
    arena->churn_active_pages = arena->heap.active_pages();
  }
  arena->last_excess_ns = now;
}

// Under the lock: frees the live large run at `page` (checked: a racing double free must see a
// free or parked run here).
void FreeLargeLocked(Arena* arena, Chunk* chunk, uint32_t page, void* pointer, uint64_t now,
                     bool park) {
  uint32_t current = chunk->map[page];
  if (!MapLiveLargeHead(current)) lethe_fatal_pointer("free(): invalid pointer ", pointer, "");
  arena->large_bytes_out -= size_t{MapCount(current)} << kLgPageBytes;
  SubtractHeldBytes(uint64_t{MapCount(current)} << kLgPageBytes);
  ++arena->large_frees;
  ++arena->frees;
  arena->heap.FreeLarge(chunk, page, now, park);
}
}  // namespace

void ArenasInit(unsigned count) {
  if (count == 0) count = 1;
  if (count > kMaxArenas) count = kMaxArenas;
  // Nothing is written into the arenas: an automatic arena's zero bytes are a valid empty arena
  // (ArenaOf needs no owner pointer), so that the pages of one no thread uses stay unwritten
  // .bss. Writing each one's heap owner here made 4 KiB resident per CPU: 252 KiB more for a
  // one-thread process on a 64-CPU machine than on one CPU (issue 15 item 5).
  g_arena_count = count;
}

Arena* ThreadArena() {
  if (LETHE_UNLIKELY(t_bound_arena != nullptr)) return t_bound_arena;
  return AutomaticArena();
}

Arena* AutomaticArena() {
  Arena* arena = t_arena;
  if (LETHE_LIKELY(arena != nullptr)) return arena;
  unsigned index = g_next_arena.fetch_add(1, std::memory_order_relaxed) % g_arena_count;
  t_arena = &g_arenas[index];
  return t_arena;
}

uint32_t ArenaAllocateSmall(Arena* arena, uint32_t klass, void** out, uint32_t count) {
  uint32_t got;
  FreshPages fresh;
  {
    ArenaLock lock(arena);
    got = TransferTake(&arena->transfer, klass, out, count);
    arena->bins[klass].regions_out += got;
    if (got < count) got += BinAllocate(&arena->bins[klass], klass, &arena->heap, out + got,
                                        count - got, &fresh);
    arena->allocations += got;
  }
  // The regions are the caller's: no other thread frees their run meanwhile.
  fresh.Populate();
  AddHeldBytes(uint64_t{got} * kSmallSizes[klass]);
  return got;
}

void* ArenaAllocateLarge(Arena* arena, uint32_t pages, size_t alignment, bool* zeroed,
                         bool written) {
  void* block;
  {
    ArenaLock lock(arena);
    if (alignment <= kPageBytes) {
      block = arena->heap.AllocateLarge(pages, zeroed, written);
    } else {
      *zeroed = false;
      block = arena->heap.AllocateLargeAligned(pages, alignment, DecayNowNs());
    }
    if (block == nullptr) return nullptr;
    arena->large_bytes_out += size_t{pages} << kLgPageBytes;
    ++arena->large_allocations;
    ++arena->allocations;
  }
  AddHeldBytes(uint64_t{pages} << kLgPageBytes);
  return block;
}

void ArenaFree(Arena* arena, Chunk* chunk, uint32_t page, uint32_t entry, void* pointer,
               bool park) {
  bool release;
  {
    ArenaLock lock(arena);
    if (MapKind(entry) == PageKind::kSmall) {
      BinFree(&arena->bins[MapClass(entry)], &arena->heap, chunk, page, entry, pointer,
              DecayNowNs());
      SubtractHeldBytes(kSmallSizes[MapClass(entry)]);
      ++arena->frees;
    } else {
      FreeLargeLocked(arena, chunk, page, pointer, DecayNowNs(), park);
    }
    ArenaAfterRelease(arena);
    release = ClaimRelease(arena);
  }
  if (release) ArenaRelease(arena);
}

void ArenaFreeLargeBatch(Arena* arena, void** pointers, uint32_t count) {
  LETHE_DCHECK(!arena->caller, "a caller arena's block in a thread cache");
  uint64_t freed_bytes = 0;
  {
    ArenaLock lock(arena);
    uint64_t now = DecayNowNs();
    for (uint32_t i = 0; i < count; ++i) {
      Chunk* chunk = ChunkOf(pointers[i]);
      uint32_t page = PageOf(chunk, pointers[i]);
      uint64_t bytes = uint64_t{MapCount(chunk->map[page])} << kLgPageBytes;
      arena->large_bytes_out -= bytes;
      freed_bytes += bytes;
      arena->heap.FreeLarge(chunk, page, now);
    }
    arena->frees += count;
    ArenaAfterRelease(arena);
  }
  SubtractHeldBytes(freed_bytes);
}

void ArenaFreeSmallBatch(Arena* arena, uint32_t klass, void** pointers, uint32_t count,
                         bool park) {
  LETHE_DCHECK(!arena->caller, "a caller arena's block in a thread cache");
  if (count == 0) return;
  park = park && TransferReady(&arena->transfer);
  uint64_t freed_bytes;
  {
    ArenaLock lock(arena);
    uint32_t left = park ? TransferPark(&arena->transfer, klass, pointers, count) : count;
    arena->bins[klass].regions_out -= count - left;
    freed_bytes = uint64_t{count - left} * kSmallSizes[klass];
    arena->frees += count;
    if (left < count) DecayAfterPark();
    if (left > 0) {
      freed_bytes += BinFreeBatch(arena->bins, klass, &arena->heap, pointers, left, DecayNowNs());
      ArenaAfterRelease(arena);
    }
  }
  SubtractHeldBytes(freed_bytes);
}

bool ArenaTrimTransfer(Arena* arena, uint64_t now_ns, bool all) {
  return TransferTrim(&arena->transfer, arena->bins, &arena->heap, now_ns, all) > 0;
}

void ArenaTrimTransferAll(Arena* arena) {
  if (arena->transfer.slots.load(std::memory_order_relaxed) == nullptr) return;
  {
    ArenaLock lock(arena);
    ArenaTrimTransfer(arena, DecayNowNs(), true);
    ArenaAfterRelease(arena);
  }
  PurgerAfterUnlock();
}

bool ArenaResizeLargeInPlace(Arena* arena, Chunk* chunk, uint32_t page, uint32_t new_pages) {
  ArenaLock lock(arena);
  uint32_t old_pages = MapCount(chunk->map[page]);
  if (new_pages < old_pages) {
    arena->heap.ShrinkLarge(chunk, page, new_pages, DecayNowNs());
    arena->large_bytes_out -= size_t{old_pages - new_pages} << kLgPageBytes;
    SubtractHeldBytes(uint64_t{old_pages - new_pages} << kLgPageBytes);
    ArenaAfterRelease(arena);
    return true;
  }
  if (!arena->heap.GrowLargeInPlace(chunk, page, new_pages)) return false;
  arena->large_bytes_out += size_t{new_pages - old_pages} << kLgPageBytes;
  AddHeldBytes(uint64_t{new_pages - old_pages} << kLgPageBytes);
  return true;
}


void ArenaPurgeExcess(Arena* arena) {
  size_t limit = DirtyLimit(*arena);
  // Purge down to half the limit, so that a steady alloc/free pattern at the limit does not make
  // a madvise call per free.
  if (OverDirtyLimit(*arena, limit) && ExcessIsResident(arena, limit)) {
    NoteExcess(arena);
    arena->heap.PurgeExcess(limit / 2);
  }
}

void (*g_purge_unlocked_hook)(Arena* arena) = nullptr;

uint64_t ArenaPurgeUnlocked(Arena* arena, uint64_t now_ns, uint64_t base_decay_ns,
                           uint64_t excess_grace_ns) {
  PurgingRuns runs;
  arena->lock.Lock();
  ArenaDrainRemoteFrees(arena);
  uint64_t decay_ns = arena->decay.DecayNs(base_decay_ns);
  // Its own clock reading: a run freed since now_ns was read is already newer in the dirty LRU.
  bool parked = ArenaTrimTransfer(arena, DecayNowNs(), false);
  // A grace only for batches: more dirty pages than the floor's ceiling, or a floor grown to it.
  // Below, the floor holds what the arena frees and takes back, and a process that frees its
  // data and exits keeps no excess.
  if (DirtyFloorPages(*arena) < kDirtyFloorMaxPages &&
      arena->heap.dirty_pages() <= kDirtyFloorMaxPages) {
    excess_grace_ns = 0;
  }
  size_t limit = DirtyLimit(*arena);
  // As ArenaPurgeExcess: down to half the limit once it is exceeded, and its grace is over (a pass
  // that leaves the excess to its grace is no excess purge for the dirty floor's count).
  // No residency sample here (ExcessIsResident): its mincore calls would hold the lock that
  // threads freeing at this rate wait for.
  size_t max_dirty = SIZE_MAX;
  if (arena->heap.dirty_pages() > limit) {
    max_dirty = limit / 2;
    uint64_t since = arena->heap.OldestDirtyNs();
    if (now_ns >= excess_grace_ns && since <= now_ns - excess_grace_ns) NoteExcess(arena);
  }
  // At most the pages dirty now: runs freed meanwhile wait for the next pass (with decay_ms:0 a
  // thread freeing in a loop would otherwise keep this one here).
  size_t budget = arena->heap.dirty_pages();
  size_t decayed = 0;
  while (budget > 0 &&
         arena->heap.TakeForPurge(now_ns, decay_ns, max_dirty, excess_grace_ns, &runs) > 0) {
    arena->lock.Unlock();
    if (g_purge_unlocked_hook != nullptr) g_purge_unlocked_hook(arena);
    runs.Purge();
    arena->lock.Lock();
    arena->heap.ReturnPurged(runs);
    decayed += runs.decayed_pages;
    size_t pages = runs.pages();
    budget = pages < budget ? budget - pages : 0;
  }
  ArenaNoteDecayPass(arena, now_ns, decayed, base_decay_ns);
  decay_ns = arena->decay.DecayNs(base_decay_ns);  // the deadline's: the judged one
  uint64_t oldest = ArenaFinishDecayPass(&arena->heap, now_ns, decay_ns);
  uint64_t deadline = oldest == UINT64_MAX ? UINT64_MAX : oldest + decay_ns;
  if (arena->heap.dirty_pages() > limit) {  // left to its grace
    uint64_t since = arena->heap.OldestDirtyNs();  // not UINT64_MAX: runs are dirty
    deadline = std::min(deadline, since + excess_grace_ns);
  }
  if (parked) deadline = std::min(deadline, now_ns + kTransferTrimNs);
  arena->lock.Unlock();
  return deadline;
}

void ArenaAfterRelease(Arena* arena, bool remote) {
  PageHeap& heap = arena->heap;
  if (heap.dirty_pages() == 0) return;
  size_t limit = DirtyLimit(*arena);
  if (heap.dirty_pages() <= limit) {
    arena->dirty_checked_pages = 0;  // the next excess is sampled afresh
  } else if (OverDirtyLimit(*arena, limit) && !DeferExcessPurge(!remote)) {
    ArenaPurgeExcess(arena);
  }
  DecayAfterRelease(arena);
}

void ArenaFreeRemote(Arena* arena, Chunk* chunk, uint32_t page) {
  uint32_t pages = MapCount(chunk->map[page]);  // before the push: a drain may free it at once
  FreeRunNode* node = &chunk->nodes[page];
  FreeRunNode* head = arena->remote_frees.load(std::memory_order_relaxed);
  do {
    node->size_next = head;
  } while (!arena->remote_frees.compare_exchange_weak(head, node, std::memory_order_release,
                                                      std::memory_order_relaxed));
  uint32_t pending = arena->remote_pages.fetch_add(pages, std::memory_order_relaxed) + pages;
  // Only when the lock is free: the frees of a consumer thread must not wait behind its producer's
  // allocations.
  // Every acquisition drains the stack (ArenaLock, and the purger's pass); until the next one,
  // the next push tries again.
  if (pending > kRemoteFreeMaxPages && arena->lock.TryLock()) {
    ArenaDrainRemoteFrees(arena);
    arena->lock.Unlock();
  }
}

void ArenaDrainRemoteFreesSlow(Arena* arena) {
  FreeRunNode* node = arena->remote_frees.exchange(nullptr, std::memory_order_acquire);
  uint64_t now = DecayNowNs();
  uint32_t pages = 0;
  while (node != nullptr) {
    FreeRunNode* next = node->size_next;  // read first: freeing reuses the node
    Chunk* chunk = ChunkOf(node);
    uint32_t page = NodePage(chunk, node);
    pages += MapCount(chunk->map[page]);
    FreeLargeLocked(arena, chunk, page, PageAddress(chunk, page), now, true);
    node = next;
  }
  arena->remote_pages.fetch_sub(pages, std::memory_order_relaxed);
  ArenaAfterRelease(arena, /*remote=*/true);
}

void ArenasLockForFork() {
  g_arena_handles_lock.Lock();
  ForEachArena([](Arena& arena) { arena.lock.Lock(); });
}

void ArenasUnlockAfterFork(bool child) {
  ForEachArena([child](Arena& arena) {
    if (child) arena.lock.ResetAfterFork(); else arena.lock.Unlock();
  });
  if (child) g_arena_handles_lock.ResetAfterFork(); else g_arena_handles_lock.Unlock();
}

}  // namespace lethe::internal
