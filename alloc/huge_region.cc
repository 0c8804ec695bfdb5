// Huge regions (see huge_region.h). The span records of every region are packed in one array at
// [0, g_span_count): best fit is a linear scan (a few dozen spans, a hundred with 64 growing
// buffers interleaved, next to blocks of 128 KiB and more that get written), and removing a
// record moves the last one into its place and rewrites that record's two map entries.
#include "huge_region.h"

#include <algorithm>
#include <atomic>

#include "decay.h"
#include "decay_adaptation.h"
#include "lethe/check.h"
#include "mutex.h"
#include "options.h"
#include "os.h"

namespace lethe::internal {

LETHE_TABLE constinit std::atomic<uint8_t> g_huge_region_at[kHugeRegionRanges] = {};
constinit std::atomic<uint32_t*> g_huge_region_maps[kMaxHugeRegions] = {};

namespace {

enum class SpanState : uint8_t { kDirty, kClean, kPurging };

struct Span {
  uint32_t region;
  uint32_t first;  // page index in the region
  uint32_t pages;
  SpanState state;
  uint64_t freed_ns;  // dirty spans: when the newest of their pages was freed (decay)
};

// A region's side map (kHugeRegionPages entries, huge_region.h "Layout") is its slot's
// g_huge_region_maps entry.
struct Region {
  unsigned char* base;  // nullptr: the slot is free
};

constexpr size_t kMapBytes = size_t{kHugeRegionPages} * sizeof(uint32_t);
// kHugeLiveHead marks a live block's first page entry: span records number far fewer.
static_assert(kHugeSpanRecords < kHugeLiveHead && kHugeRegionPages < kHugeLiveHead);
constexpr long kNone = -1;

constinit Mutex g_lock;
constinit Region g_regions[kMaxHugeRegions] = {};
constinit size_t g_region_count = 0;
LETHE_TABLE constinit Span g_spans[kHugeSpanRecords] = {};
constinit size_t g_span_count = 0;
constinit size_t g_span_limit = kHugeSpanRecords;
constinit uint64_t g_dirty_pages = 0;
constinit uint64_t g_live_pages = 0;  // in live blocks (and shrunk tails not yet released)
constinit uint64_t g_reused_bytes = 0;
constinit uint64_t g_grown_in_place = 0;
constinit uint64_t g_clean_taken_pages = 0;  // cut for blocks from clean spans (a fault each)
constinit DecayAdaptation g_decay;           // the regions' decay time (decay_adaptation.h)
// Which pages of g_huge_region_at were ever written (metadata: they stay resident).
constexpr size_t kRangePages = kHugeRegionRanges / kPageBytes;
constinit uint64_t g_range_page_written[kRangePages / 64] = {};
constinit uint64_t g_range_pages_written = 0;
// HugeRegionTake calls, in quarters of a block over kLargeMaxBytes (kHugeWarmupBlocks).
constinit std::atomic<uint64_t> g_warmup_quarters{0};

uint64_t MaxDirtyPages() { return (HugeCacheKbOption() << 10) >> kLgPageBytes; }

uint32_t& MapAt(uint32_t region, uint32_t page) {
  return g_huge_region_maps[region].load(std::memory_order_relaxed)[page];
}

uintptr_t RangeOf(const void* pointer) {
  return reinterpret_cast<uintptr_t>(pointer) >> kLgHugeRegionBytes;
}

void NoteRangeWritten(uintptr_t range) {
  uint64_t page = range / kPageBytes;
  uint64_t& word = g_range_page_written[page / 64];
  if ((word >> (page % 64) & 1) == 0) ++g_range_pages_written;
  word |= uint64_t{1} << (page % 64);
}

unsigned char* AddressOf(uint32_t region, uint32_t page) {
  return g_regions[region].base + (size_t{page} << kLgPageBytes);
}

void MarkEnds(size_t index) {
  const Span& span = g_spans[index];
  MapAt(span.region, span.first) = static_cast<uint32_t>(index + 1);
  MapAt(span.region, span.first + span.pages - 1) = static_cast<uint32_t>(index + 1);
}

// The last page of a live block carries 0, its first kHugeLiveHead | its length (for
// HugeRegionLiveBytes, which reads it without the lock; hence the atomic store).
void MarkLive(uint32_t region, uint32_t first, uint32_t pages) {
  MapAt(region, first + pages - 1) = 0;
  __atomic_store_n(&MapAt(region, first), kHugeLiveHead | pages, __ATOMIC_RELAXED);
}

// The free span whose first (or last) page is `page`; kNone when a live block's page is there.
long SpanStartingAt(uint32_t region, uint32_t page) {
  if (page >= kHugeRegionPages) return kNone;
  uint32_t entry = MapAt(region, page);
  if (entry == 0 || entry > g_span_count) return kNone;
  const Span& span = g_spans[entry - 1];
  return span.region == region && span.first == page ? static_cast<long>(entry) - 1 : kNone;
}
long SpanEndingAt(uint32_t region, uint32_t page) {
  if (page >= kHugeRegionPages) return kNone;  // also page -1 of a block at the region's start
  uint32_t entry = MapAt(region, page);
  if (entry == 0 || entry > g_span_count) return kNone;
  const Span& span = g_spans[entry - 1];
  return span.region == region && span.first + span.pages - 1 == page ? static_cast<long>(entry) - 1
                                                                      : kNone;
}

void RemoveSpan(size_t index) {
  size_t last = --g_span_count;
  if (index == last) return;
  g_spans[index] = g_spans[last];
  MarkEnds(index);
}

// Records [first, first + pages) as free, merged with free neighbours of the same state (a
// merged dirty span decays with its newest pages). Needs a record when nothing merges: the
// caller made sure one is there.
size_t InsertFree(uint32_t region, uint32_t first, uint32_t pages, SpanState state,
                  uint64_t freed_ns) {
  if (long prev = SpanEndingAt(region, first - 1);
      prev != kNone && g_spans[prev].state == state && state != SpanState::kPurging) {
    first = g_spans[prev].first;
    pages += g_spans[prev].pages;
    freed_ns = std::max(freed_ns, g_spans[prev].freed_ns);
    RemoveSpan(static_cast<size_t>(prev));
  }
  if (long next = SpanStartingAt(region, first + pages);
      next != kNone && g_spans[next].state == state && state != SpanState::kPurging) {
    pages += g_spans[next].pages;
    freed_ns = std::max(freed_ns, g_spans[next].freed_ns);
    RemoveSpan(static_cast<size_t>(next));
  }
  LETHE_CHECK(g_span_count < kHugeSpanRecords, "huge region span records exhausted");
  g_spans[g_span_count] = Span{region, first, pages, state, freed_ns};
  MarkEnds(g_span_count);
  return g_span_count++;
}

// Cuts `pages` from the front of free span `index`; returns the first page cut. The caller marks
// the block's ends live.
uint32_t CutFront(size_t index, uint32_t pages) {
  Span& span = g_spans[index];
  uint32_t first = span.first;
  if (span.state == SpanState::kDirty) g_dirty_pages -= pages;
  if (pages == span.pages) {
    RemoveSpan(index);
  } else {
    span.first += pages;
    span.pages -= pages;
    MarkEnds(index);
  }
  return first;
}

bool Usable(const Span& span) { return span.state != SpanState::kPurging; }

// Where a block of `pages` goes: a dirty span that holds it (best fit), else the dirty span with
// the most pages that a clean span after it completes, else a clean span (best fit). kNone when
// no span can.
long ChooseSpan(uint32_t pages) {
  long best_dirty = kNone, best_clean = kNone, best_pair = kNone;
  for (size_t i = 0; i < g_span_count; ++i) {
    const Span& span = g_spans[i];
    if (span.state == SpanState::kPurging) continue;
    long* best = span.state == SpanState::kDirty ? &best_dirty : &best_clean;
    if (span.pages >= pages) {
      if (*best == kNone || span.pages < g_spans[*best].pages) *best = static_cast<long>(i);
    } else if (span.state == SpanState::kDirty) {
      long next = SpanStartingAt(span.region, span.first + span.pages);
      if (next != kNone && g_spans[next].state == SpanState::kClean &&
          span.pages + g_spans[next].pages >= pages &&
          (best_pair == kNone || span.pages > g_spans[best_pair].pages)) {
        best_pair = static_cast<long>(i);
      }
    }
  }
  return best_dirty != kNone ? best_dirty : best_pair != kNone ? best_pair : best_clean;
}

// Reserves a region: one clean span of all its pages. kNone when the OS refuses or every slot is
// taken.
long AddRegion() {
  size_t slot = 0;
  while (slot < kMaxHugeRegions && g_regions[slot].base != nullptr) ++slot;
  if (slot == kMaxHugeRegions || g_span_count >= g_span_limit) return kNone;
  auto* base = static_cast<unsigned char*>(OsReserve(kHugeRegionBytes, kHugeRegionBytes));
  if (base == nullptr) return kNone;
  if (RangeOf(base) >= kHugeRegionRanges) {  // past the 47-bit space g_huge_region_at covers
    OsUnmap(base, kHugeRegionBytes);
    return kNone;
  }
  auto* map = static_cast<uint32_t*>(OsMap(kMapBytes, kPageBytes));
  if (map == nullptr) {
    OsUnmap(base, kHugeRegionBytes);
    return kNone;
  }
  // The map before the range's entry: HugeRegionLiveBytes reads them in the other order, unlocked.
  g_regions[slot].base = base;
  g_huge_region_maps[slot].store(map, std::memory_order_relaxed);
  NoteRangeWritten(RangeOf(base));
  g_huge_region_at[RangeOf(base)].store(static_cast<uint8_t>(slot + 1), std::memory_order_release);
  g_region_count = std::max(g_region_count, slot + 1);
  return static_cast<long>(
      InsertFree(static_cast<uint32_t>(slot), 0, kHugeRegionPages, SpanState::kClean, 0));
}

// The region holding `pointer`, or kNone (under the lock).
long RegionOf(const void* pointer) { return static_cast<long>(HugeRegionSlotAt(pointer)) - 1; }

uint32_t PageIn(uint32_t region, const void* pointer) {
  return static_cast<uint32_t>((static_cast<const unsigned char*>(pointer) -
                                g_regions[region].base) >> kLgPageBytes);
}

// Unmaps a region that is one clean span (nothing live, nothing dirty).
void UnmapIfEmpty(size_t index) {
  const Span& span = g_spans[index];
  if (span.state != SpanState::kClean || span.pages != kHugeRegionPages) return;
  Region& region = g_regions[span.region];
  unsigned char* base = region.base;
  uint32_t* map = g_huge_region_maps[span.region].load(std::memory_order_relaxed);
  // The range's entry first, then the map: see HugeRegionLiveBytes.
  g_huge_region_at[RangeOf(base)].store(0, std::memory_order_relaxed);
  g_huge_region_maps[span.region].store(nullptr, std::memory_order_release);
  region.base = nullptr;
  OsUnmap(base, kHugeRegionBytes);
  OsUnmap(map, kMapBytes);
  RemoveSpan(index);
}

// Purges every dirty span under the lock, the way out when span records run short (rare: see
// kHugeSpanRecords). Each purged span merges with its clean neighbours.
void PurgeAllDirtyLocked() {
  OsPurgeBatch batch;
  for (size_t i = 0; i < g_span_count; ++i) {
    if (g_spans[i].state == SpanState::kDirty) {
      batch.Add(AddressOf(g_spans[i].region, g_spans[i].first),
                size_t{g_spans[i].pages} << kLgPageBytes);
    }
  }
  batch.Flush();
  for (size_t i = 0; i < g_span_count;) {
    if (g_spans[i].state != SpanState::kDirty) {
      ++i;
      continue;
    }
    Span span = g_spans[i];
    g_dirty_pages -= span.pages;
    RemoveSpan(i);
    InsertFree(span.region, span.first, span.pages, SpanState::kClean, 0);
    i = 0;  // merging moved records around; rescan (rare path, see above)
  }
}

// Makes sure the next InsertFree has a record.
void EnsureRecordLocked() {
  if (g_span_count + 1 >= g_span_limit) PurgeAllDirtyLocked();
}

// Purges the dirty spans that `pick` names (it returns kNone when done), madvise without the lock:
// the spans are marked purging meanwhile, so nothing cuts or merges them.
template <typename Pick>
void PurgeChosen(Pick pick, bool unmap_empty) {
  struct Pending {
    uint32_t region, first, pages;
  };
  constexpr size_t kBatch = OsPurgeBatch::kMaxRanges;
  for (bool more = true; more;) {
    Pending pending[kBatch];
    size_t count = 0;
    {
      MutexLock lock(&g_lock);
      for (long i; count < kBatch && (i = pick()) != kNone;) {
        Span& span = g_spans[i];
        span.state = SpanState::kPurging;
        g_dirty_pages -= span.pages;
        pending[count++] = Pending{span.region, span.first, span.pages};
      }
    }
    more = count == kBatch;
    if (count == 0) return;
    OsPurgeBatch batch;
    for (size_t i = 0; i < count; ++i) {
      batch.Add(AddressOf(pending[i].region, pending[i].first),
                size_t{pending[i].pages} << kLgPageBytes);
    }
    batch.Flush();
    MutexLock lock(&g_lock);
    for (size_t i = 0; i < count; ++i) {
      long index = SpanStartingAt(pending[i].region, pending[i].first);
      LETHE_CHECK(index != kNone && g_spans[index].state == SpanState::kPurging,
                  "huge region: a purging span changed");
      RemoveSpan(static_cast<size_t>(index));
      size_t clean = InsertFree(pending[i].region, pending[i].first, pending[i].pages,
                                SpanState::kClean, 0);
      if (unmap_empty) UnmapIfEmpty(clean);
    }
  }
}

long OldestDirtyLocked() {
  long oldest = kNone;
  for (size_t i = 0; i < g_span_count; ++i) {
    if (g_spans[i].state == SpanState::kDirty &&
        (oldest == kNone || g_spans[i].freed_ns < g_spans[oldest].freed_ns)) {
      oldest = static_cast<long>(i);
    }
  }
  return oldest;
}

// Purges the oldest dirty spans while the dirty pages exceed huge_cache_kb, those freed within
// the excess grace (decay.h) excepted: the purge thread comes back for them. Returns true when
// the dirty pages are left over the limit.
bool EnforceDirtyLimit(uint64_t now_ns, uint64_t grace_ns) {
  uint64_t cutoff = now_ns >= grace_ns ? now_ns - grace_ns : 0;
  bool over = false;  // as the last pick saw it, under the lock: no second lock on the free path
  PurgeChosen(
      [cutoff, &over] {
        over = g_dirty_pages > MaxDirtyPages();
        if (!over) return kNone;
        long oldest = OldestDirtyLocked();
        return oldest != kNone && g_spans[oldest].freed_ns <= cutoff ? oldest : kNone;
      },
      false);
  return over;
}

bool Warm() { return g_warmup_quarters.load(std::memory_order_relaxed) >= 4 * kHugeWarmupBlocks; }

// The excess grace (decay.h) once warm: before, a process has made a huge block or two and gains
// nothing from keeping them (kHugeWarmupBlocks).
uint64_t WarmGrace(uint64_t grace_ns) { return Warm() ? grace_ns : 0; }

// Whether `pages` being freed stay dirty: past the warm-up (kHugeWarmupBlocks), or while the
// dirty pages with them would not outnumber the pages of the blocks still live; a block over
// kHugeRegionKeepMaxBytes only in the second case.
bool KeepFreedPagesLocked(uint32_t pages) {
  if (MaxDirtyPages() == 0) return false;
  const bool under_live = g_dirty_pages + pages <= g_live_pages - pages;
  if ((size_t{pages} << kLgPageBytes) > kHugeRegionKeepMaxBytes) return under_live;
  return Warm() || under_live;
}

// Under the lock: records a freed block's pages as a free span of `state`.
void InsertFreedLocked(uint32_t region, uint32_t first, uint32_t pages, SpanState state) {
  EnsureRecordLocked();
  // No longer a live head, even where the pages join a free span before them (and the entry is
  // not rewritten as a span's end).
  __atomic_store_n(&MapAt(region, first), 0u, __ATOMIC_RELAXED);
  if (state == SpanState::kDirty) g_dirty_pages += pages;
  g_live_pages -= pages;
  InsertFree(region, first, pages, state, state == SpanState::kDirty ? DecayNowNs() : 0);
}

// Frees [first, first + pages) of `region`: as dirty when they are kept (one lock), else as clean
// after purging them without the lock. The pages are the caller's until this returns.
void FreePages(uint32_t region, uint32_t first, uint32_t pages) {
  {
    MutexLock lock(&g_lock);
    if (KeepFreedPagesLocked(pages)) {
      InsertFreedLocked(region, first, pages, SpanState::kDirty);
      return;
    }
  }
  {
    OsPurgeBatch batch;
    batch.Add(AddressOf(region, first), size_t{pages} << kLgPageBytes);
  }
  MutexLock lock(&g_lock);
  InsertFreedLocked(region, first, pages, SpanState::kClean);
}

// HugeRegionValidate at LETHE_DEBUG_LEVEL >= 2, after the operations that free or purge spans
// (as PageHeap::ValidateIfExpensive).
void ValidateIfExpensive() {
#if LETHE_DEBUG_LEVEL >= 2
  HugeRegionValidate();
#endif
}

// Frees pages of a block (all of it, or a shrunk block's tail) and keeps the dirty bound.
void Release(uint32_t region, uint32_t first, uint32_t pages) {
  FreePages(region, first, pages);
  uint64_t grace_ns = WarmGrace(ExcessGraceNs());
  if (EnforceDirtyLimit(DecayNowNs(), grace_ns) && grace_ns != 0) DeferExcessPurge();
  ValidateIfExpensive();
}

struct Place {
  uint32_t region, first;
};

// Under the lock: the region and first page of a live block, which must lie in a region.
Place PlaceOfLocked(const void* block) {
  long found = RegionOf(block);
  LETHE_CHECK(found != kNone, "huge region: a block given back lies in no region");
  auto region = static_cast<uint32_t>(found);
  return Place{region, PageIn(region, block)};
}

}  // namespace

namespace {

// Under the lock: cuts a block of `pages` from a span (ChooseSpan), reserving a region when none
// has room; false when none can be. *dirty: how many of its first pages were dirty (the rest
// were clean).
bool TakeLocked(uint32_t pages, Place* out, uint32_t* dirty) {
  long index = ChooseSpan(pages);
  if (index == kNone) {
    EnsureRecordLocked();
    if ((index = AddRegion()) == kNone) return false;
  }
  Span span = g_spans[index];
  if (span.pages < pages) {  // a dirty span completed by the clean one after it
    *dirty = span.pages;
    CutFront(static_cast<size_t>(index), span.pages);
    CutFront(static_cast<size_t>(SpanStartingAt(span.region, span.first + span.pages)),
             pages - span.pages);
  } else {
    *dirty = span.state == SpanState::kDirty ? pages : 0;
    CutFront(static_cast<size_t>(index), pages);
  }
  g_clean_taken_pages += pages - *dirty;
  MarkLive(span.region, span.first, pages);
  g_live_pages += pages;
  *out = Place{span.region, span.first};
  return true;
}

// Under the lock: gives back [first, first + pages) of a block just cut, as the spans it came
// from were: its first `dirty` pages dirty, the rest clean.
void ReturnCutLocked(uint32_t region, uint32_t first, uint32_t pages, uint32_t dirty) {
  dirty = std::min(dirty, pages);
  if (dirty > 0) InsertFreedLocked(region, first, dirty, SpanState::kDirty);
  if (pages > dirty) InsertFreedLocked(region, first + dirty, pages - dirty, SpanState::kClean);
}

}  // namespace

void* HugeRegionTake(size_t bytes, size_t* reused_bytes) {
  *reused_bytes = 0;
  if (bytes > kHugeRegionMaxBlockBytes) return nullptr;
  auto pages = static_cast<uint32_t>(bytes >> kLgPageBytes);
  MutexLock lock(&g_lock);
  g_warmup_quarters.fetch_add(bytes > kLargeMaxBytes ? 4 : 1, std::memory_order_relaxed);
  Place place;
  uint32_t dirty = 0;
  if (!TakeLocked(pages, &place, &dirty)) return nullptr;
  *reused_bytes = size_t{dirty} << kLgPageBytes;
  g_reused_bytes += *reused_bytes;
  return AddressOf(place.region, place.first);
}

namespace {

// The pages from `first` of `region` to the first page aligned to `alignment`.
uint32_t AlignedLead(uint32_t region, uint32_t first, size_t alignment) {
  auto start = reinterpret_cast<uintptr_t>(AddressOf(region, first));
  uintptr_t aligned = AlignUp(start, alignment);
  return static_cast<uint32_t>((aligned - start) >> kLgPageBytes);
}

// Under the lock: a span that holds `pages` at `alignment`, the shortest dirty one, else the
// shortest clean one; kNone when none does. A freed aligned block is such a span for the next
// one, where a padded length would fit only beside a free neighbour.
long ChooseAlignedSpan(uint32_t pages, size_t alignment) {
  long best_dirty = kNone, best_clean = kNone;
  for (size_t i = 0; i < g_span_count; ++i) {
    const Span& span = g_spans[i];
    if (span.state == SpanState::kPurging || span.pages < pages ||
        AlignedLead(span.region, span.first, alignment) + pages > span.pages) {
      continue;
    }
    long* best = span.state == SpanState::kDirty ? &best_dirty : &best_clean;
    if (*best == kNone || span.pages < g_spans[*best].pages) *best = static_cast<long>(i);
  }
  return best_dirty != kNone ? best_dirty : best_clean;
}

}  // namespace

void* HugeRegionTakeAligned(size_t bytes, size_t alignment, size_t* reused_bytes) {
  *reused_bytes = 0;
  if (alignment <= kPageBytes) return HugeRegionTake(bytes, reused_bytes);
  if (bytes > kHugeRegionMaxBlockBytes || alignment > kHugeRegionMaxBlockBytes ||
      bytes + alignment - kPageBytes > kHugeRegionMaxBlockBytes) {
    return nullptr;
  }
  auto pages = static_cast<uint32_t>(bytes >> kLgPageBytes);
  auto padded = static_cast<uint32_t>(pages + (alignment >> kLgPageBytes) - 1);
  MutexLock lock(&g_lock);
  g_warmup_quarters.fetch_add(4, std::memory_order_relaxed);
  Place place;
  uint32_t dirty = 0;
  // A span that holds the block at its alignment gives up its front (lead and block); else a
  // padded block is cut, as HugeRegionTake would, and both its ends go back.
  if (long index = ChooseAlignedSpan(pages, alignment); index != kNone) {
    const Span& span = g_spans[index];  // not read after CutFront, which may move records
    uint32_t cut = AlignedLead(span.region, span.first, alignment) + pages;
    dirty = span.state == SpanState::kDirty ? cut : 0;
    place.region = span.region;
    place.first = CutFront(static_cast<size_t>(index), cut);
    MarkLive(place.region, place.first, cut);
    g_live_pages += cut;
    padded = cut;
  } else if (!TakeLocked(padded, &place, &dirty)) {
    return nullptr;
  }
  uint32_t lead = AlignedLead(place.region, place.first, alignment);
  uint32_t trail = padded - lead - pages;
  uintptr_t aligned = reinterpret_cast<uintptr_t>(AddressOf(place.region, place.first + lead));
  // The block first, so that neither end merges into it when it goes back.
  MarkLive(place.region, place.first + lead, pages);
  if (lead > 0) ReturnCutLocked(place.region, place.first, lead, dirty);
  if (trail > 0) {
    uint32_t before_trail = lead + pages;
    ReturnCutLocked(place.region, place.first + before_trail, trail,
                    dirty > before_trail ? dirty - before_trail : 0);
  }
  uint32_t block_dirty = dirty > lead ? std::min(dirty - lead, pages) : 0;
  *reused_bytes = size_t{block_dirty} << kLgPageBytes;
  g_reused_bytes += *reused_bytes;
  return reinterpret_cast<void*>(aligned);
}

void HugeRegionPut(void* block, size_t bytes) {
  Place place;
  {
    MutexLock lock(&g_lock);
    place = PlaceOfLocked(block);
  }
  Release(place.region, place.first, static_cast<uint32_t>(bytes >> kLgPageBytes));
}

size_t HugeRegionGrowInPlace(void* block, size_t old_bytes, size_t new_bytes,
                             size_t room_bytes) {
  room_bytes = std::min(std::max(room_bytes, new_bytes), kHugeRegionMaxBlockBytes);
  if (new_bytes > room_bytes) return 0;
  auto old_pages = static_cast<uint32_t>(old_bytes >> kLgPageBytes);
  MutexLock lock(&g_lock);
  auto [region, first] = PlaceOfLocked(block);
  long next = SpanStartingAt(region, first + old_pages);
  if (next == kNone || !Usable(g_spans[next])) return 0;
  uint32_t available = g_spans[next].pages;
  long after = SpanStartingAt(region, first + old_pages + available);
  if (after != kNone && Usable(g_spans[after])) available += g_spans[after].pages;
  auto extra = static_cast<uint32_t>((room_bytes - old_bytes) >> kLgPageBytes);
  if (available < extra) extra = static_cast<uint32_t>((new_bytes - old_bytes) >> kLgPageBytes);
  if (available < extra) return 0;
  uint32_t from_next = std::min(extra, g_spans[next].pages);
  CutFront(static_cast<size_t>(next), from_next);
  if (from_next < extra) {
    CutFront(static_cast<size_t>(SpanStartingAt(region, first + old_pages + from_next)),
             extra - from_next);
  }
  MarkLive(region, first, old_pages + extra);
  ++g_grown_in_place;
  g_live_pages += extra;
  return size_t{old_pages + extra} << kLgPageBytes;
}

void HugeRegionShrink(void* block, size_t old_bytes, size_t new_bytes) {
  auto old_pages = static_cast<uint32_t>(old_bytes >> kLgPageBytes);
  auto new_pages = static_cast<uint32_t>(new_bytes >> kLgPageBytes);
  Place place;
  {
    MutexLock lock(&g_lock);
    place = PlaceOfLocked(block);
    MarkLive(place.region, place.first, new_pages);
    // Until Release frees it, the tail is a block of its own: the region stays tiled.
    MarkLive(place.region, place.first + new_pages, old_pages - new_pages);
  }
  Release(place.region, place.first + new_pages, old_pages - new_pages);
}

uint64_t HugeRegionPurge(uint64_t now_ns, uint64_t base_decay_ns, uint64_t excess_grace_ns) {
  bool everything = now_ns == UINT64_MAX && base_decay_ns == 0;
  uint64_t decay_ns;
  {
    MutexLock lock(&g_lock);
    decay_ns = g_decay.DecayNs(base_decay_ns);
  }
  uint64_t cutoff = now_ns >= decay_ns ? now_ns - decay_ns : 0;
  size_t decayed = 0;
  PurgeChosen(
      [cutoff, &decayed] {
        for (size_t i = 0; i < g_span_count; ++i) {
          if (g_spans[i].state == SpanState::kDirty && g_spans[i].freed_ns <= cutoff) {
            decayed += g_spans[i].pages;
            return static_cast<long>(i);
          }
        }
        return kNone;
      },
      true);
  uint64_t grace_ns = everything ? 0 : WarmGrace(excess_grace_ns);
  bool excess = EnforceDirtyLimit(now_ns, grace_ns);
  ValidateIfExpensive();
  MutexLock lock(&g_lock);
  if (!everything) {
    g_decay.AfterPass(now_ns, g_clean_taken_pages, decayed, base_decay_ns);
    decay_ns = g_decay.DecayNs(base_decay_ns);
  } else {
    for (size_t i = g_span_count; i-- > 0;) {
      if (i < g_span_count) UnmapIfEmpty(i);
    }
  }
  long oldest = OldestDirtyLocked();
  if (oldest == kNone) return UINT64_MAX;
  return g_spans[oldest].freed_ns + (excess ? std::min(grace_ns, decay_ns) : decay_ns);
}

uint64_t HugeRegionDecayNs(uint64_t base_decay_ns) {
  MutexLock lock(&g_lock);
  return g_decay.DecayNs(base_decay_ns);
}

HugeRegionStats GetHugeRegionStats() {
  MutexLock lock(&g_lock);
  uint64_t regions = 0;
  for (size_t i = 0; i < g_region_count; ++i) regions += g_regions[i].base != nullptr;
  return HugeRegionStats{g_dirty_pages << kLgPageBytes, g_span_count, regions,
                         regions * kMapBytes + g_range_pages_written * kPageBytes,
                         g_reused_bytes, g_grown_in_place};
}

bool HugeRegionContains(const void* pointer) {
  MutexLock lock(&g_lock);
  return RegionOf(pointer) != kNone;
}

void HugeRegionValidate() {
  MutexLock lock(&g_lock);
  uint64_t dirty = 0;
  uint64_t free_pages[kMaxHugeRegions] = {};
  LETHE_CHECK(g_span_count <= kHugeSpanRecords, "more spans than records");
  for (size_t i = 0; i < g_span_count; ++i) {
    const Span& span = g_spans[i];
    LETHE_CHECK(span.region < g_region_count && g_regions[span.region].base != nullptr,
                "huge span in no region");
    LETHE_CHECK(span.pages > 0 && span.first + span.pages <= kHugeRegionPages,
                "huge span out of its region");
    LETHE_CHECK(SpanStartingAt(span.region, span.first) == static_cast<long>(i) &&
                    SpanEndingAt(span.region, span.first + span.pages - 1) == static_cast<long>(i),
                "huge span's map entries do not name it");
    long next = SpanStartingAt(span.region, span.first + span.pages);
    LETHE_CHECK(next == kNone || g_spans[next].state != span.state ||
                    span.state == SpanState::kPurging,
                "two free huge spans of the same state touch");
    if (span.state == SpanState::kDirty) dirty += span.pages;
    free_pages[span.region] += span.pages;
    for (size_t j = i + 1; j < g_span_count; ++j) {
      const Span& other = g_spans[j];
      LETHE_CHECK(other.region != span.region || other.first >= span.first + span.pages ||
                      span.first >= other.first + other.pages,
                  "huge spans overlap");
    }
  }
  LETHE_CHECK(dirty == g_dirty_pages, "huge region dirty count is off");
  // Every region is tiled by free spans and live blocks, each live block's first entry naming
  // its length; the live blocks' pages add up to g_live_pages.
  uint64_t live = 0;
  for (uint32_t region = 0; region < g_region_count; ++region) {
    if (g_regions[region].base == nullptr) continue;
    for (uint32_t page = 0; page < kHugeRegionPages;) {
      long span = SpanStartingAt(region, page);
      uint32_t entry = MapAt(region, page);
      uint32_t pages = span != kNone ? g_spans[span].pages : entry & ~kHugeLiveHead;
      LETHE_CHECK(span != kNone || ((entry & kHugeLiveHead) != 0 && pages > 0 &&
                                    page + pages <= kHugeRegionPages),
                  "huge region page is neither a free span's nor a live block's first");
      if (span == kNone) live += pages;
      page += pages;
    }
  }
  LETHE_CHECK(live == g_live_pages, "huge region live page count is off");
  for (size_t i = 0; i < g_region_count; ++i) {
    LETHE_CHECK(free_pages[i] <= kHugeRegionPages, "huge region has more free pages than pages");
  }
}

void HugeRegionResetDecayForTesting() {
  MutexLock lock(&g_lock);
  g_decay = DecayAdaptation{};
}

void HugeRegionLimitRecordsForTesting(size_t records) {
  MutexLock lock(&g_lock);
  g_span_limit = records == 0 || records > kHugeSpanRecords ? kHugeSpanRecords : records;
}

void HugeRegionLockForFork() { g_lock.Lock(); }
void HugeRegionUnlockAfterFork(bool child) {
  if (child) g_lock.ResetAfterFork(); else g_lock.Unlock();
}

}  // namespace lethe::internal
