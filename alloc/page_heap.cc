// Runs of pages in chunks: best-fit segregated free lists, O(1) split and coalesce through the
// linear page map, dirty-run LRU and purging. See page_heap.h for the algorithm, chunk.h for the
// map entry and the invariants that Validate() checks.
#include "page_heap.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "chunk_registry.h"
#include "lethe/check.h"
#include "oom.h"
#include "os.h"
#include "ring.h"

namespace lethe::internal {
namespace {

// Insert-position markers for InsertFree's LRU argument.
FreeRunNode* const kLruTail = reinterpret_cast<FreeRunNode*>(uintptr_t{1});

// Index of the first set bit >= `from` in `words`, or -1.
int FindSetFrom(const uint64_t* words, size_t from) {
  size_t word = from / 64;
  if (word >= kFreeListWords) return -1;
  uint64_t bits = words[word] & (~uint64_t{0} << (from % 64));
  while (true) {
    if (bits != 0) return static_cast<int>(word * 64 + static_cast<size_t>(__builtin_ctzll(bits)));
    if (++word == kFreeListWords) return -1;
    bits = words[word];
  }
}

// The size lists and the parked lists, through size_prev/size_next.
using SizeRing = Ring<FreeRunNode, &FreeRunNode::size_prev, &FreeRunNode::size_next>;
// The dirty LRU (head: the oldest dirty run).
using LruRing = Ring<FreeRunNode, &FreeRunNode::dirty_prev, &FreeRunNode::dirty_next>;
using ChunkRing = Ring<Chunk, &Chunk::prev, &Chunk::next>;

// True when the chunk's usable pages are one free run.
bool IsEmpty(const Chunk* chunk) {
  uint32_t entry = chunk->map[kChunkHeaderPages];
  return MapKind(entry) == PageKind::kFree && MapCount(entry) == kChunkUsablePages;
}

}  // namespace

void PageHeap::InsertFree(Chunk* chunk, uint32_t page, uint32_t pages, bool dirty,
                          uint64_t since_ns, FreeRunNode* lru_after) {
  uint32_t entry = MapFree(pages, dirty);
  chunk->map[page] = entry;
  chunk->map[page + pages - 1] = entry;
  FreeRunNode* node = &chunk->nodes[page];
  FreeRunNode*& head = lists_[dirty][pages - 1];
  if (head == nullptr) nonempty_[dirty][(pages - 1) / 64] |= uint64_t{1} << ((pages - 1) % 64);
  SizeRing::AppendLowFirst(head, node);  // step 2
  if (pages == kChunkUsablePages) ++empty_chunks_;
  if (!dirty) {
    // A clean empty chunk: empty since the next decay pass (UnmapIdleChunks stamps it).
    if (pages == kChunkUsablePages) node->dirty_since_ns = kNotStamped;
    return;
  }
  dirty_pages_ += pages;
  LruInsert(node, since_ns, lru_after);
}

void PageHeap::LruInsert(FreeRunNode* node, uint64_t since_ns, FreeRunNode* after) {
  node->dirty_since_ns = since_ns;
  LruRing::InsertAfter(lru_, after == kLruTail ? LruRing::Tail(lru_) : after, node);
}

FreeRunNode* PageHeap::LruRemove(FreeRunNode* node) {
  FreeRunNode* prev = node == lru_ ? nullptr : node->dirty_prev;
  LruRing::Unlink(lru_, node);
  return prev;
}

FreeRunNode* PageHeap::RemoveFree(Chunk* chunk, uint32_t page) {
  uint32_t entry = chunk->map[page];
  LETHE_DCHECK(MapKind(entry) == PageKind::kFree && MapCount(entry) > 0, "not a free run");
  uint32_t pages = MapCount(entry);
  bool dirty = MapDirty(entry);
  FreeRunNode* node = &chunk->nodes[page];
  if (SizeRing::Unlink(lists_[dirty][pages - 1], node)) {
    nonempty_[dirty][(pages - 1) / 64] &= ~(uint64_t{1} << ((pages - 1) % 64));
  }
  if (pages == kChunkUsablePages) --empty_chunks_;
  if (!dirty) return kLruTail;
  dirty_pages_ -= pages;
  return LruRemove(node);
}

bool PageHeap::Park(Chunk* chunk, uint32_t page, uint32_t pages, uint64_t now_ns) {
  if (pages < kParkMinPages || pages > kParkMaxPages) return false;
  uint32_t length = pages - kParkMinPages;
  if (parked_count_[length] == kParkPerLength) {
    // The oldest of this length (the list's tail) makes room: coalesced like any freed run.
    FreeRunNode* oldest = parked_[length]->size_prev;
    Chunk* oldest_chunk = ChunkOf(oldest);
    uint32_t oldest_page = NodePage(oldest_chunk, oldest);
    Unpark(oldest_chunk, oldest_page);
    ReleaseRun(oldest_chunk, oldest_page, pages, true, now_ns);
  } else if (parked_pages_ + pages > kParkedMaxPages) {
    return false;
  }
  chunk->map[page] |= kMapParked;
  FreeRunNode* node = &chunk->nodes[page];
  SizeRing::Append(parked_[length], node);
  parked_[length] = node;  // the newest is the head: taken first, the tail goes first
  ++parked_count_[length];
  parked_pages_ += pages;
  dirty_pages_ += pages;
  LruInsert(node, now_ns, kLruTail);
  return true;
}

void PageHeap::Unpark(Chunk* chunk, uint32_t page) {
  uint32_t pages = MapCount(chunk->map[page]);
  LETHE_DCHECK(MapParked(chunk->map[page]), "not a parked run");
  uint32_t length = pages - kParkMinPages;
  FreeRunNode* node = &chunk->nodes[page];
  SizeRing::Unlink(parked_[length], node);
  --parked_count_[length];
  parked_pages_ -= pages;
  dirty_pages_ -= pages;
  LruRemove(node);
  chunk->map[page] &= ~kMapParked;
}

void* PageHeap::TakeParked(uint32_t pages) {
  if (pages < kParkMinPages || pages > kParkMaxPages) return nullptr;
  FreeRunNode* node = parked_[pages - kParkMinPages];
  if (node == nullptr) return nullptr;
  Chunk* chunk = ChunkOf(node);
  uint32_t page = NodePage(chunk, node);
  Unpark(chunk, page);
  active_pages_ += pages;
  return PageAddress(chunk, page);
}

Chunk* PageHeap::NewChunk() {
  void* memory = OsMap(kChunkBytes, kChunkBytes);
  if (memory == nullptr) memory = ReserveTakeChunk();
  if (memory == nullptr) return nullptr;
  RegisterChunk(memory);
  auto* chunk = static_cast<Chunk*>(memory);  // zero-filled: header map entries read kFree/0
  chunk->heap = this;
  ChunkRing::InsertAfter(chunks_, nullptr, chunk);
  ++chunk_count_;
  InsertFree(chunk, kChunkHeaderPages, kChunkUsablePages, false, 0, kLruTail);
  return chunk;
}

void PageHeap::UnmapChunk(Chunk* chunk) {
  ChunkRing::Unlink(chunks_, chunk);
  --chunk_count_;
  UnregisterChunk(chunk);
  if (purge_batch_ != nullptr) purge_batch_->Flush();
  OsUnmap(chunk, kChunkBytes);
}

bool PageHeap::TakeRun(uint32_t pages, bool clean_first, Span* out, bool* zeroed) {
  LETHE_DCHECK(pages >= 1 && pages <= kChunkUsablePages);
  for (int attempt = 0; attempt < 2; ++attempt) {
    for (int pass = 0; pass < 2; ++pass) {  // step 3
      int dirty = clean_first ? pass : 1 - pass;
      int index = FindSetFrom(nonempty_[dirty], pages - 1);
      if (index < 0) continue;
      FreeRunNode* node = lists_[dirty][index];
      Chunk* chunk = ChunkOf(node);
      uint32_t page = NodePage(chunk, node);
      auto run_pages = static_cast<uint32_t>(index + 1);
      uint64_t since = node->dirty_since_ns;
      FreeRunNode* lru_prev = RemoveFree(chunk, page);
      if (run_pages > pages) {  // step 4: keep the high end free, in the same LRU place
        InsertFree(chunk, page + pages, run_pages - pages, dirty != 0, since, lru_prev);
      }
      active_pages_ += pages;
      if (dirty == 0) clean_pages_taken_ += pages;
      *out = Span{chunk, page, pages};
      *zeroed = dirty == 0;
      return true;
    }
    if (NewChunk() == nullptr) return false;
  }
  return false;
}

void PageHeap::MarkLarge(Chunk* chunk, uint32_t page, uint32_t pages) {
  chunk->map[page] = MapLargeHead(pages);
  for (uint32_t i = 1; i < pages; ++i) chunk->map[page + i] = MapLargeInterior(i);
}

void* PageHeap::AllocateLarge(uint32_t pages, bool* zeroed, bool written) {
  if (void* parked = TakeParked(pages)) {
    *zeroed = false;
    return parked;
  }
  Span span;
  if (!TakeRun(pages, !written && pages < kDirtyFirstLargePages, &span, zeroed)) return nullptr;
  MarkLarge(span.chunk, span.page, pages);
  return PageAddress(span.chunk, span.page);
}

namespace {
// The pages before the first `alignment`-aligned page of the run at `page` of `chunk`, when a
// block of `pages` pages fits there within `length` pages; -1 when it does not.
long AlignedLead(Chunk* chunk, uint32_t page, uint32_t length, uint32_t pages, size_t alignment) {
  uintptr_t start = reinterpret_cast<uintptr_t>(PageAddress(chunk, page));
  uintptr_t aligned = AlignUp(start, alignment);
  auto lead = static_cast<uint32_t>((aligned - start) >> kLgPageBytes);
  return lead + pages <= length ? static_cast<long>(lead) : -1;
}

// The first of at most kAlignedScanPerLength runs of the ring at `head` (of `length` pages) that
// holds `pages` at `alignment`, or nullptr; each run looked at is taken from *budget.
FreeRunNode* FirstAlignedFit(FreeRunNode* head, uint32_t length, uint32_t pages,
                             size_t alignment, uint32_t* budget) {
  uint32_t seen = 0;
  FreeRunNode* fit = SizeRing::FindFirst(
      head, std::min(kAlignedScanPerLength, *budget), [&](FreeRunNode* node) {
        ++seen;
        Chunk* chunk = ChunkOf(node);
        return AlignedLead(chunk, NodePage(chunk, node), length, pages, alignment) >= 0;
      });
  *budget -= seen;
  return fit;
}
}  // namespace

bool PageHeap::TakeAlignedFit(uint32_t pages, uint32_t total, size_t alignment, Span* out) {
  uint32_t budget = kAlignedScanBudget;
  for (uint32_t length = pages; length < total; ++length) {
    if (length >= kParkMinPages && length <= kParkMaxPages) {
      if (FreeRunNode* node = FirstAlignedFit(parked_[length - kParkMinPages], length, pages,
                                              alignment, &budget)) {
        Chunk* chunk = ChunkOf(node);
        uint32_t page = NodePage(chunk, node);
        Unpark(chunk, page);
        *out = Span{chunk, page, length};
        return true;
      }
    }
    if (FreeRunNode* node =
            FirstAlignedFit(lists_[1][length - 1], length, pages, alignment, &budget)) {
      Chunk* chunk = ChunkOf(node);
      uint32_t page = NodePage(chunk, node);
      RemoveFree(chunk, page);
      *out = Span{chunk, page, length};
      return true;
    }
  }
  return false;
}

void* PageHeap::AllocateLargeAligned(uint32_t pages, size_t alignment, uint64_t now_ns) {
  size_t extra = alignment / kPageBytes - 1;
  if (pages + extra > kChunkUsablePages) return nullptr;
  auto total = static_cast<uint32_t>(pages + extra);
  Span span;
  bool zeroed = false;
  if (TakeAlignedFit(pages, total, alignment, &span)) {
    active_pages_ += span.pages;
  } else if (!TakeRun(total, false, &span, &zeroed)) {
    return nullptr;
  }
  auto lead = static_cast<uint32_t>(AlignedLead(span.chunk, span.page, span.pages, pages, alignment));
  uint32_t trail = span.pages - lead - pages;
  MarkLarge(span.chunk, span.page + lead, pages);
  active_pages_ -= lead + trail;
  // The trimmed ends go back with the dirtiness they had.
  if (lead > 0) ReleaseRun(span.chunk, span.page, lead, !zeroed, now_ns);
  if (trail > 0) ReleaseRun(span.chunk, span.page + lead + pages, trail, !zeroed, now_ns);
  return PageAddress(span.chunk, span.page + lead);
}

void* PageHeap::AllocateSmallRun(uint32_t pages, uint32_t klass, bool* zeroed) {
  Span span;
  *zeroed = false;
  if (!TakeRun(pages, false, &span, zeroed)) return nullptr;
  for (uint32_t i = 0; i < pages; ++i) span.chunk->map[span.page + i] = MapSmall(klass, i, small_flags_);
  return PageAddress(span.chunk, span.page);
}

void PageHeap::FreeLarge(Chunk* chunk, uint32_t page, uint64_t now_ns, bool park) {
  uint32_t pages = MapCount(chunk->map[page]);
  active_pages_ -= pages;
  if (!park || !Park(chunk, page, pages, now_ns)) ReleaseRun(chunk, page, pages, true, now_ns);
  ValidateIfExpensive();
}

void PageHeap::FreeSmallRun(Chunk* chunk, uint32_t page, uint32_t pages, uint64_t now_ns) {
  // Bounded (<= 16 pages): no stale kSmall entry may remain inside a free run.
  for (uint32_t i = 1; i < pages; ++i) chunk->map[page + i] = 0;
  active_pages_ -= pages;
  ReleaseRun(chunk, page, pages, true, now_ns);
  ValidateIfExpensive();  // the run's chunk may have been unmapped
}

void PageHeap::ReleaseRun(Chunk* chunk, uint32_t page, uint32_t pages, bool dirty,
                          uint64_t now_ns) {
  chunk->map[page] = 0;  // a freed head must not stay a head inside a merged free run
  Coalesce(chunk, page, pages, dirty, now_ns);
}

void PageHeap::Coalesce(Chunk* chunk, uint32_t page, uint32_t pages, bool dirty,
                        uint64_t since_ns) {
  uint32_t start = page;
  uint32_t count = pages;
  if (page > kChunkHeaderPages) {  // step 5: left neighbour, read at its last page
    uint32_t left = chunk->map[page - 1];
    if (MapKind(left) == PageKind::kFree && MapDirty(left) == dirty) {
      start -= MapCount(left);
      count += MapCount(left);
      RemoveFree(chunk, start);
    }
  }
  uint32_t right_page = page + pages;
  if (right_page < kChunkPages) {  // right neighbour, read at its first page
    uint32_t right = LoadSharedEntry(chunk, right_page);
    if (MapKind(right) == PageKind::kFree && MapDirty(right) == dirty) {
      count += MapCount(right);
      RemoveFree(chunk, right_page);
    }
  }
  InsertCoalesced(chunk, start, count, dirty, since_ns);
}

void PageHeap::InsertCoalesced(Chunk* chunk, uint32_t page, uint32_t pages, bool dirty,
                               uint64_t since_ns) {
  if (pages == kChunkUsablePages && empty_chunks_ >= kMaxEmptyChunks) {  // step 6
    UnmapChunk(chunk);
    return;
  }
  InsertFree(chunk, page, pages, dirty, since_ns, kLruTail);
}

bool PageHeap::GrowLargeInPlace(Chunk* chunk, uint32_t page, uint32_t new_pages) {
  uint32_t old_pages = MapCount(chunk->map[page]);
  if (new_pages <= old_pages) return true;
  uint32_t need = new_pages - old_pages;
  uint32_t right_page = page + old_pages;
  if (right_page >= kChunkPages) return false;
  uint32_t right = LoadSharedEntry(chunk, right_page);
  if (MapParked(right)) {
    // Growing in place beats keeping a parked run for a request that may not come: the run
    // becomes an ordinary dirty one (joining a dirty run after it), then the usual rule applies.
    uint64_t newest = LruRing::Tail(lru_)->dirty_since_ns;  // the parked run is in it: not empty
    Unpark(chunk, right_page);
    ReleaseRun(chunk, right_page, MapCount(right), true, newest);
    right = chunk->map[right_page];
  }
  if (MapKind(right) != PageKind::kFree || MapCount(right) < need) return false;
  uint32_t available = MapCount(right);
  bool dirty = MapDirty(right);
  uint64_t since = chunk->nodes[right_page].dirty_since_ns;
  FreeRunNode* lru_prev = RemoveFree(chunk, right_page);
  if (available > need) InsertFree(chunk, right_page + need, available - need, dirty, since, lru_prev);
  chunk->map[page] = MapLargeHead(new_pages);
  for (uint32_t i = old_pages; i < new_pages; ++i) chunk->map[page + i] = MapLargeInterior(i);
  active_pages_ += need;
  if (!dirty) clean_pages_taken_ += need;
  return true;
}

void PageHeap::ShrinkLarge(Chunk* chunk, uint32_t page, uint32_t new_pages, uint64_t now_ns) {
  uint32_t old_pages = MapCount(chunk->map[page]);
  if (new_pages >= old_pages) return;
  chunk->map[page] = MapLargeHead(new_pages);
  active_pages_ -= old_pages - new_pages;
  ReleaseRun(chunk, page + new_pages, old_pages - new_pages, true, now_ns);
}

void PageHeap::PurgeRun(FreeRunNode* node, OsPurgeBatch* batch) {
  Chunk* chunk = ChunkOf(node);
  uint32_t page = NodePage(chunk, node);
  uint32_t pages = MapCount(chunk->map[page]);
  if (MapParked(chunk->map[page])) {
    Unpark(chunk, page);
    chunk->map[page] = 0;  // the run is free now: no head may stay inside it
  } else {
    RemoveFree(chunk, page);
  }
  batch->Add(PageAddress(chunk, page), size_t{pages} << kLgPageBytes);
  purged_pages_total_ += pages;
  Coalesce(chunk, page, pages, false, 0);
}

template <typename KeepGoing>
size_t PageHeap::PurgeOldestWhile(KeepGoing keep_going) {
  size_t before = purged_pages_total_;
  OsPurgeBatch batch;
  purge_batch_ = &batch;
  while (lru_ != nullptr && keep_going()) PurgeRun(lru_, &batch);
  batch.Flush();
  purge_batch_ = nullptr;
  ValidateIfExpensive();
  return purged_pages_total_ - before;
}

void PurgingRuns::Purge() const {
  OsPurgeBatch batch;
  for (size_t i = 0; i < count; ++i) batch.Add(addresses[i], bytes[i]);
}

size_t PurgingRuns::pages() const {
  size_t total = 0;
  for (size_t i = 0; i < count; ++i) total += bytes[i] >> kLgPageBytes;
  return total;
}

size_t PageHeap::TakeForPurge(uint64_t now_ns, uint64_t decay_ns, size_t max_dirty_pages,
                              uint64_t excess_grace_ns, PurgingRuns* runs) {
  runs->count = 0;
  runs->decayed_pages = 0;
  auto dirty_for = [&](uint64_t ns) { return now_ns >= ns && lru_->dirty_since_ns <= now_ns - ns; };
  while (lru_ != nullptr && runs->count < PurgingRuns::kMax &&
         ((dirty_pages_ > max_dirty_pages && dirty_for(excess_grace_ns)) || dirty_for(decay_ns))) {
    FreeRunNode* node = lru_;
    bool decayed = dirty_for(decay_ns);  // before the run leaves the LRU
    Chunk* chunk = ChunkOf(node);
    uint32_t page = NodePage(chunk, node);
    uint32_t pages = MapCount(chunk->map[page]);
    if (MapParked(chunk->map[page])) {
      Unpark(chunk, page);  // its entries still read as a large run
    } else {
      RemoveFree(chunk, page);
      MarkLarge(chunk, page, pages);
    }
    if (decayed) runs->decayed_pages += pages;
    chunk->map[page] |= kMapPurging;
    purging_pages_ += pages;
    runs->addresses[runs->count] = PageAddress(chunk, page);
    runs->bytes[runs->count++] = size_t{pages} << kLgPageBytes;
  }
  ValidateIfExpensive();
  return runs->count;
}

void PageHeap::ReturnPurged(const PurgingRuns& runs) {
  for (size_t i = 0; i < runs.count; ++i) {
    Chunk* chunk = ChunkOf(runs.addresses[i]);
    uint32_t page = PageOf(chunk, runs.addresses[i]);
    uint32_t pages = MapCount(chunk->map[page]);
    LETHE_CHECK(MapPurging(chunk->map[page]), "returning a run that is not being purged");
    purging_pages_ -= pages;
    purged_pages_total_ += pages;
    ReleaseRun(chunk, page, pages, false, 0);
  }
  ValidateIfExpensive();
}

size_t PageHeap::PurgeDecayed(uint64_t now_ns, uint64_t decay_ns) {
  return PurgeOldestWhile(
      [&] { return now_ns >= decay_ns && lru_->dirty_since_ns <= now_ns - decay_ns; });
}

uint64_t PageHeap::UnmapIdleChunks(uint64_t now_ns, uint64_t decay_ns) {
  FreeRunNode*& ring = lists_[0][kChunkUsablePages - 1];
  size_t count = 0;
  SizeRing::ForEach(ring, [&count](const FreeRunNode*) { ++count; });
  uint64_t oldest = UINT64_MAX;
  FreeRunNode* node = ring;
  for (size_t i = 0; i < count; ++i) {
    FreeRunNode* following = node->size_next;  // read first: unmapping unlinks the node
    if (node->dirty_since_ns == kNotStamped) node->dirty_since_ns = now_ns | 1;
    uint64_t since = node->dirty_since_ns;
    if (now_ns >= decay_ns && since <= now_ns - decay_ns && empty_chunks_ > 1) {
      Chunk* chunk = ChunkOf(node);
      RemoveFree(chunk, kChunkHeaderPages);
      UnmapChunk(chunk);
    } else if (since < oldest) {
      oldest = since;
    }
    node = following;
  }
  ValidateIfExpensive();
  return empty_chunks_ > 1 ? oldest : UINT64_MAX;  // the last one stays: nothing pending
}

size_t PageHeap::PurgeExcess(size_t max_dirty_pages) {
  return PurgeOldestWhile([&] { return dirty_pages_ > max_dirty_pages; });
}

size_t PageHeap::PurgeAll() {
  size_t purged = PurgeOldestWhile([] { return true; });
  // Every chunk once: unlinking one leaves the others' order as it was.
  Chunk* chunk = chunks_;
  for (size_t i = 0, count = chunk_count_; i < count && empty_chunks_ > 0; ++i) {
    Chunk* next = chunk->next;
    if (IsEmpty(chunk)) {
      RemoveFree(chunk, kChunkHeaderPages);
      UnmapChunk(chunk);
    }
    chunk = next;
  }
  ValidateIfExpensive();
  return purged;
}

void PageHeap::ReleaseAll() {
  LETHE_CHECK(active_pages_ == 0 && purging_pages_ == 0, "releasing a heap with live runs");
  while (chunks_ != nullptr) UnmapChunk(chunks_);
  uint32_t small_flags = small_flags_;
  uint64_t purged = purged_pages_total_;
  uint64_t clean_taken = clean_pages_taken_;
  *this = PageHeap{};
  Init(small_flags);
  purged_pages_total_ = purged;
  clean_pages_taken_ = clean_taken;
}

PageHeap::DirtySample PageHeap::SampleDirty(uint32_t max_runs) const {
  DirtySample sample;
  if (lru_ == nullptr) return sample;
  auto add = [&sample](const FreeRunNode* node) {
    Chunk* chunk = ChunkOf(node);
    uint32_t page = NodePage(chunk, node);
    uint32_t pages = MapCount(chunk->map[page]);
    sample.pages += pages;
    sample.resident += OsResidentPages(PageAddress(chunk, page), pages);
  };
  // Half from each end, until the two walks meet (each run is added once).
  const FreeRunNode* oldest = lru_;
  const FreeRunNode* newest = lru_->dirty_prev;
  for (uint32_t taken = 0; taken < max_runs; taken += 2) {
    add(oldest);
    if (oldest == newest) break;
    add(newest);
    if (oldest->dirty_next == newest) break;
    oldest = oldest->dirty_next;
    newest = newest->dirty_prev;
  }
  return sample;
}

uint64_t PageHeap::OldestDirtyNs() const {
  return lru_ == nullptr ? UINT64_MAX : lru_->dirty_since_ns;
}

size_t PageHeap::largest_free_run() const {
  size_t largest = 0;
  for (int dirty = 0; dirty < 2; ++dirty) {
    for (size_t word = 0; word < kFreeListWords; ++word) {
      uint64_t bits = nonempty_[dirty][word];
      if (bits != 0) {
        size_t top = word * 64 + 63 - static_cast<size_t>(__builtin_clzll(bits)) + 1;
        if (top > largest) largest = top;
      }
    }
  }
  return largest;
}

namespace {
// A large head carries at most one of these (chunk.h); a thread-cached run is out, like a live one.
constexpr uint32_t kLargeHeadFlags = kMapParked | kMapPurging | kMapThreadCached;
}  // namespace

void PageHeap::Validate() const {
  size_t active = 0, dirty_pages = 0, parked = 0, purging = 0, free_runs = 0, chunks = 0;
  ChunkRing::ForEach(chunks_, [&](const Chunk* chunk) {
    ++chunks;
    LETHE_CHECK(chunk->heap == this, "chunk of another heap in the list");
    LETHE_CHECK(IsArenaChunk(chunk), "chunk not registered");
    LETHE_CHECK(chunk->next->prev == chunk, "broken chunk list");
    uint32_t page = kChunkHeaderPages;
    int previous_free = -1;  // dirtiness of the previous run when it was free
    while (page < kChunkPages) {
      uint32_t entry = LoadSharedEntry(chunk, page);
      uint32_t pages = 0;
      switch (MapKind(entry)) {
        case PageKind::kFree: {
          pages = MapCount(entry);
          LETHE_CHECK(pages > 0 && page + pages <= kChunkPages, "free run length out of range");
          LETHE_CHECK(chunk->map[page + pages - 1] == entry, "free run ends disagree");
          bool dirty = MapDirty(entry);
          LETHE_CHECK(MapZeroed(entry) == !dirty, "free run both dirty and zeroed");
          LETHE_CHECK(previous_free != static_cast<int>(dirty), "adjacent free runs not coalesced");
          previous_free = dirty;
          ++free_runs;
          if (dirty) dirty_pages += pages;
          break;
        }
        case PageKind::kLargeHead:
          pages = MapCount(entry);
          LETHE_CHECK(pages > 0 && page + pages <= kChunkPages, "large run length out of range");
          LETHE_CHECK(MapLiveLargeHead(entry & ~kLargeHeadFlags) &&
                          std::popcount(entry & kLargeHeadFlags) <= 1,
                      "large run head flags");
          for (uint32_t i = 1; i < pages; ++i) {
            LETHE_CHECK(chunk->map[page + i] == MapLargeInterior(i), "large run interior entry");
          }
          if (MapPurging(entry)) {
            purging += pages;
          } else if (MapParked(entry)) {
            LETHE_CHECK(pages >= kParkMinPages && pages <= kParkMaxPages, "parked length");
            parked += pages;
            dirty_pages += pages;
          } else {
            active += pages;
          }
          previous_free = -1;
          break;
        case PageKind::kSmall: {
          uint32_t klass = MapClass(entry);
          LETHE_CHECK(klass < kSmallClassCount && MapCount(entry) == 0, "small run head entry");
          pages = kSmallClasses[klass].run_pages;
          for (uint32_t i = 0; i < pages; ++i) {
            LETHE_CHECK(chunk->map[page + i] == MapSmall(klass, i, small_flags_),
                        "small run page entry");
          }
          active += pages;
          previous_free = -1;
          break;
        }
        case PageKind::kLargeInterior:
          LETHE_CHECK(false, "run interior where a run should start");
      }
      page += pages;
    }
    LETHE_CHECK(page == kChunkPages, "runs overrun the chunk");
  });
  LETHE_CHECK(chunks == chunk_count_, "chunk count");
  LETHE_CHECK(active == active_pages_, "active page count");
  LETHE_CHECK(purging == purging_pages_, "purging page count");
  LETHE_CHECK(dirty_pages == dirty_pages_, "dirty page count");
  size_t listed = 0;
  for (int dirty = 0; dirty < 2; ++dirty) {
    for (size_t index = 0; index < kFreeListCount; ++index) {
      const FreeRunNode* head = lists_[dirty][index];
      bool bit = (nonempty_[dirty][index / 64] >> (index % 64)) & 1;
      LETHE_CHECK(bit == (head != nullptr), "non-empty bitmap disagrees with the list");
      if (head == nullptr) continue;
      const FreeRunNode* node = head;
      do {
        const Chunk* chunk = ChunkOf(node);
        uint32_t entry = chunk->map[NodePage(chunk, node)];
        LETHE_CHECK(MapKind(entry) == PageKind::kFree && MapCount(entry) == index + 1 &&
                        MapDirty(entry) == (dirty != 0),
                    "run in the wrong free list");
        LETHE_CHECK(node->size_next->size_prev == node, "broken free list");
        ++listed;
        node = node->size_next;
      } while (node != head);
    }
  }
  LETHE_CHECK(listed == free_runs, "free runs missing from the lists");
  size_t parked_listed = 0;
  for (uint32_t length = 0; length < kParkLengths; ++length) {
    uint32_t count = 0;
    if (const FreeRunNode* head = parked_[length]; head != nullptr) {
      const FreeRunNode* node = head;
      do {
        const Chunk* chunk = ChunkOf(node);
        uint32_t entry = chunk->map[NodePage(chunk, node)];
        LETHE_CHECK(MapParked(entry) && MapCount(entry) == length + kParkMinPages,
                    "run in the wrong parked list");
        LETHE_CHECK(node->size_next->size_prev == node, "broken parked list");
        ++count;
        node = node->size_next;
      } while (node != head);
    }
    LETHE_CHECK(count == parked_count_[length] && count <= kParkPerLength, "parked count");
    parked_listed += size_t{count} * (length + kParkMinPages);
  }
  LETHE_CHECK(parked == parked_pages_ && parked_listed == parked_pages_ &&
                  parked_pages_ <= kParkedMaxPages,
              "parked runs missing from the lists");
  size_t lru_pages = 0;
  uint64_t last_since = 0;
  LruRing::ForEach(lru_, [&](const FreeRunNode* node) {
    const Chunk* chunk = ChunkOf(node);
    uint32_t entry = chunk->map[NodePage(chunk, node)];
    LETHE_CHECK((MapKind(entry) == PageKind::kFree && MapDirty(entry)) || MapParked(entry),
                "clean run in the LRU");
    LETHE_CHECK(node->dirty_since_ns >= last_since, "dirty LRU out of order");
    last_since = node->dirty_since_ns;
    lru_pages += MapCount(entry);
    LETHE_CHECK(node->dirty_next->dirty_prev == node, "broken LRU");
  });
  LETHE_CHECK(lru_pages == dirty_pages_, "dirty runs missing from the LRU");
  size_t empty = 0;
  ChunkRing::ForEach(chunks_, [&](const Chunk* chunk) { empty += IsEmpty(chunk); });
  LETHE_CHECK(empty == empty_chunks_, "empty chunk count is off");
}

}  // namespace lethe::internal
