// Small-object runs and bins (see bin.h). Which run a bin allocates from: the head of its
// non-full list. A run that gains a free region is pushed at the head when its address is below
// the head's, else at the tail, so allocation favours low runs and high runs drain and return to
// the page heap (an O(1) approximation of jemalloc's lowest-address run).
#include "bin.h"

#include "compiler.h"
#include "lethe/check.h"
#include "os.h"
#include "ring.h"

namespace lethe::internal {
namespace {

using RunRing = Ring<RunHeader, &RunHeader::prev, &RunHeader::next>;

void ListPush(Bin* bin, RunHeader* run) { RunRing::AppendLowFirst(bin->nonfull, run); }
void ListRemove(Bin* bin, RunHeader* run) { RunRing::Unlink(bin->nonfull, run); }

// Whether each page of a run, up to the one where its last region starts, holds a region's
// start: true up to a page, and for some classes over it (4608 B: 7 regions on 7 of 8 pages);
// where a page holds only a region's middle, which may never be written, the run is not
// populated (FreshPages).
bool EveryPageHoldsAStart(const SmallClass& layout) {
  if (layout.size_bytes <= kPageBytes) return true;
  for (size_t i = 1; i < layout.region_count; ++i) {
    size_t page = (i * layout.size_bytes) >> kLgPageBytes;
    size_t before = ((i - 1) * layout.size_bytes) >> kLgPageBytes;
    if (page - before > 1) return false;
  }
  return true;
}

RunHeader* NewRun(Bin* bin, uint32_t klass, PageHeap* heap) {
  const SmallClass& layout = kSmallClasses[klass];
  bool zeroed = false;
  auto* start = static_cast<char*>(heap->AllocateSmallRun(layout.run_pages, klass, &zeroed));
  if (start == nullptr) return nullptr;
  RunHeader* run = RunHeaderOf(start, klass);
  run->klass = static_cast<uint16_t>(klass);
  run->free_count = static_cast<uint16_t>(layout.region_count);
  run->hint = 0;
  // Dirty pages are resident already (or some were purged: those fault in one by one).
  run->populated =
      static_cast<uint16_t>(zeroed && EveryPageHoldsAStart(layout) ? 0 : layout.run_pages);
  uint64_t* bitmap = run->bitmap();
  for (uint32_t word = 0; word < layout.bitmap_words; ++word) bitmap[word] = ~uint64_t{0};
  uint32_t tail_bits = layout.region_count % 64;
  if (tail_bits != 0) bitmap[layout.bitmap_words - 1] = (uint64_t{1} << tail_bits) - 1;
  ListPush(bin, run);
  ++bin->run_count;
  ++bin->runs_created;
  return run;
}

}  // namespace

namespace {

// Regions of a run are handed out lowest first until the last one has been (the hint only moves
// down when a region comes back, below it), so the pages up to the one holding the start of the
// highest region handed out are those its regions begin on: the run's populated pages extend to
// them. Not past that page: a region's tail may never be written.
void NotePopulated(RunHeader* run, char* start, const char* last_region, FreshPages* fresh) {
  auto end_page = static_cast<uint32_t>(((last_region - start) >> kLgPageBytes) + 1);
  if (end_page <= run->populated) return;
  fresh->Add(start + (size_t{run->populated} << kLgPageBytes),
             size_t{end_page - run->populated} << kLgPageBytes);
  run->populated = static_cast<uint16_t>(end_page);
}

}  // namespace

void FreshPages::Add(char* start, size_t bytes) {
  // Runs cut one after another from clean pages are adjacent: one range, one system call (a fill
  // of 8 regions of 2 KiB spans 4 one-page runs).
  if (count > 0 && ranges[count - 1].start + ranges[count - 1].bytes == start) {
    ranges[count - 1].bytes += bytes;
    return;
  }
  // Past the last range, the pages fault in one by one as before: a fill seldom spans more runs.
  if (count == kMaxRanges) return;
  ranges[count++] = Range{start, bytes};
}

void FreshPages::Populate() const {
  for (uint32_t i = 0; i < count; ++i) OsPopulate(ranges[i].start, ranges[i].bytes);
}

uint32_t BinAllocate(Bin* bin, uint32_t klass, PageHeap* heap, void** out, uint32_t count,
                     FreshPages* fresh) {
  const SmallClass& layout = kSmallClasses[klass];
  const size_t size = layout.size_bytes;  // a local: see ClassFacts
  uint32_t filled = 0;
  while (filled < count) {
    RunHeader* run = bin->nonfull;
    if (run == nullptr && (run = NewRun(bin, klass, heap)) == nullptr) break;
    char* start = RunStartOf(run, layout);
    uint64_t* bitmap = run->bitmap();
    uint32_t word = run->hint;
    uint32_t take = count - filled < run->free_count ? count - filled : run->free_count;
    // Each bitmap word is read and written once however many regions it gives: free_count > 0
    // means a set bit at or past the hint, so the scan stays within the bitmap.
    void** next = out + filled;
    for (uint32_t left = take; left > 0;) {
      uint64_t bits = bitmap[word];
      while (bits == 0) bits = bitmap[++word];
      char* base = start + size_t{word} * 64 * size;
      do {
        *next++ = base + static_cast<size_t>(__builtin_ctzll(bits)) * size;
        bits &= bits - 1;
      } while (--left > 0 && bits != 0);
      bitmap[word] = bits;
    }
    filled += take;
    run->free_count = static_cast<uint16_t>(run->free_count - take);
    run->hint = static_cast<uint16_t>(word);
    if (run->populated < layout.run_pages) {
      NotePopulated(run, start, static_cast<char*>(out[filled - 1]), fresh);
    }
    if (run->free_count == 0) ListRemove(bin, run);
  }
  bin->regions_out += filled;
  return filled;
}

namespace {

// The regions of one run that a free gives back one after another (a batch's regions cached
// together were mostly handed out together): each one's bit is set as it comes (Free), so that a
// region freed twice is caught, and the run's count, hint and place in the bin's list are settled
// once, when the batch leaves the run (Settle). Kept in registers, this is what BinFreeBatch does
// per region; BinFree is a tally of one.
struct RunTally {
  char* start = nullptr;  // nullptr: none (every region is in a chunk, at 1 MiB or above)
  RunHeader* header = nullptr;
  uint32_t freed = 0;
  uint32_t low_word = UINT32_MAX;  // the lowest bitmap word a bit was set in

  // Sets the bit of the region at `offset` from the run's start (`pointer`): aborts when that is
  // no region start or the region is already free.
  LETHE_ALWAYS_INLINE void Free(const void* pointer, uintptr_t offset, const ClassFacts& facts) {
    uint32_t index = RegionAt(static_cast<uint32_t>(offset), facts.check);
    if (LETHE_UNLIKELY(index >= facts.check.region_count)) {
      lethe_fatal_pointer("free(): invalid pointer ", pointer, "");
    }
    uint64_t* word = &header->bitmap()[index / 64];
    uint64_t bit = uint64_t{1} << (index % 64);
    if (LETHE_UNLIKELY((*word & bit) != 0)) {
      lethe_fatal_pointer("free(): double free ", pointer, "");
    }
    *word |= bit;
    if (index / 64 < low_word) low_word = index / 64;
    ++freed;
  }

  // Gives the run its freed regions: listed when it gains its first free one, back to the page
  // heap when none is out. The batch then has no run until it finds the next.
  void Settle(Bin* bin, PageHeap* heap, const ClassFacts& facts, uint64_t now_ns) {
    RunHeader* run = header;
    uint32_t before = run->free_count;
    uint32_t after = before + freed;
    if (low_word < run->hint) run->hint = static_cast<uint16_t>(low_word);
    char* run_start = start;
    start = nullptr;
    freed = 0;
    low_word = UINT32_MAX;
    if (after < facts.check.region_count) {
      run->free_count = static_cast<uint16_t>(after);
      if (before == 0) ListPush(bin, run);
      return;
    }
    if (before != 0) ListRemove(bin, run);
    --bin->run_count;
    Chunk* chunk = ChunkOf(run_start);
    heap->FreeSmallRun(chunk, PageOf(chunk, run_start), facts.run_pages, now_ns);
  }
};

uintptr_t OffsetIn(const char* start, const void* pointer) {
  return reinterpret_cast<uintptr_t>(pointer) - reinterpret_cast<uintptr_t>(start);
}

}  // namespace

void BinFree(Bin* bin, PageHeap* heap, Chunk* chunk, uint32_t page, uint32_t entry,
             void* pointer, uint64_t now_ns) {
  const ClassFacts facts = FactsOf(MapClass(entry));
  RunTally tally;
  tally.start = RunStart(chunk, page, entry);
  tally.header = RunHeaderOf(chunk, RunPage(page, entry), facts.header_offset);
  tally.Free(pointer, OffsetIn(tally.start, pointer), facts);
  tally.Settle(bin, heap, facts, now_ns);
  --bin->regions_out;
}

uint64_t BinFreeBatch(Bin* bins, uint32_t klass, PageHeap* heap, void* const* pointers,
                      uint32_t count, uint64_t now_ns) {
  const ClassFacts facts = FactsOf(klass);
  const uintptr_t run_bytes = uintptr_t{facts.run_pages} << kLgPageBytes;
  Bin* bin = &bins[klass];
  RunTally tally;
  uint32_t strays = 0;
  uint64_t stray_bytes = 0;
  for (uint32_t i = 0; i < count; ++i) {
    void* pointer = pointers[i];
    uintptr_t offset = OffsetIn(tally.start, pointer);
    if (offset >= run_bytes) {
      if (tally.start != nullptr) tally.Settle(bin, heap, facts, now_ns);
      Chunk* chunk = ChunkOf(pointer);
      uint32_t page = PageOf(chunk, pointer);
      uint32_t entry = chunk->map[page];
      if (LETHE_UNLIKELY(MapKind(entry) != PageKind::kSmall || MapClass(entry) != klass)) {
        // Its page changed since the region was cached: only an invalid or double free can see
        // that.
        if (MapKind(entry) != PageKind::kSmall) {
          lethe_fatal_pointer("free(): invalid pointer ", pointer, "");
        }
        BinFree(&bins[MapClass(entry)], heap, chunk, page, entry, pointer, now_ns);
        ++strays;
        stray_bytes += kSmallSizes[MapClass(entry)];
        continue;
      }
      tally.start = RunStart(chunk, page, entry);
      tally.header = RunHeaderOf(chunk, RunPage(page, entry), facts.header_offset);
      offset = OffsetIn(tally.start, pointer);
    }
    tally.Free(pointer, offset, facts);
  }
  if (tally.start != nullptr) tally.Settle(bin, heap, facts, now_ns);
  bin->regions_out -= count - strays;
  return uint64_t{count - strays} * kSmallSizes[klass] + stray_bytes;
}

void BinValidate(const Bin& bin, uint32_t klass) {
  const SmallClass& layout = kSmallClasses[klass];
  const RunHeader* head = bin.nonfull;
  if (head == nullptr) return;
  const RunHeader* run = head;
  do {
    LETHE_CHECK(run->klass == klass, "run in the wrong bin");
    LETHE_CHECK(run->next->prev == run, "broken run list");
    uint32_t free_bits = 0;
    for (uint32_t word = 0; word < layout.bitmap_words; ++word) {
      free_bits += static_cast<uint32_t>(__builtin_popcountll(run->bitmap()[word]));
      if (word < run->hint) LETHE_CHECK(run->bitmap()[word] == 0, "free bit below the hint");
    }
    LETHE_CHECK(free_bits == run->free_count, "free count disagrees with the bitmap");
    LETHE_CHECK(run->free_count > 0 && run->free_count < layout.region_count,
                "listed run is full or empty");
    const char* start = RunStartOf(run, layout);
    const Chunk* chunk = ChunkOf(start);
    uint32_t entry = chunk->map[PageOf(chunk, start)];
    LETHE_CHECK(MapKind(entry) == PageKind::kSmall && MapClass(entry) == klass &&
                    MapCount(entry) == 0,
                "page map does not show the run");
    run = run->next;
  } while (run != head);
}

}  // namespace lethe::internal
