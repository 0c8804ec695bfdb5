// bin.h — small objects: runs of 1..16 pages cut into regions of one size class, with a free
// bitmap, and the per-arena bin of each class that hands regions out.
//
// Who calls it: the arena (under its lock) for thread-cache fills and flushes and for uncached
// allocations. Run memory belongs to the arena's PageHeap; a run is returned to it when its last
// region is freed.
//
// Run layout (run_pages pages, page-aligned start), header out of line (every class but 8, 16):
//   [region 0][region 1]...[region n-1][unused]
//   RunHeader + bitmap in chunk->nodes[first page .. first page + run_pages) (free-run node
//   slots, unused while the pages form a run; size_classes.h LayoutRun decides)
// or, for the classes whose bitmap does not fit there, at the end of the run:
//   [region 0][region 1]...[region n-1][unused][RunHeader + bitmap]   <- header_offset
// Bit i of the bitmap is 1 when region i is free. Invariants (Validate):
//   free_count == popcount(bitmap) and 0 < free_count < region_count + 1;
//   a run is in its bin's non-full list  <=>  free_count > 0;
//   a run with free_count == region_count does not exist (it went back to the page heap).
#ifndef LETHE_ALLOC_BIN_H_
#define LETHE_ALLOC_BIN_H_

#include <cstddef>
#include <cstdint>

#include "chunk.h"
#include "compiler.h"
#include "page_heap.h"
#include "size_classes.h"

namespace lethe::internal {

struct RunHeader {
  RunHeader* prev;  // circular list of non-full runs of the bin
  RunHeader* next;
  uint16_t klass;
  uint16_t free_count;
  uint16_t hint;       // no free bit below this bitmap word
  uint16_t populated;  // the run's first pages populated or resident (FreshPages)
  uint64_t* bitmap() { return reinterpret_cast<uint64_t*>(this + 1); }
  const uint64_t* bitmap() const { return reinterpret_cast<const uint64_t*>(this + 1); }
};
static_assert(sizeof(RunHeader) == kRunHeaderFixedBytes);

struct Bin {
  RunHeader* nonfull = nullptr;  // head: the lowest-addressed run pushed so far (see bin.cc)
  uint64_t run_count = 0;        // runs currently held
  uint64_t regions_out = 0;      // regions handed out (to users or thread caches)
  uint64_t runs_created = 0;     // cumulative
};

// The first page of the small run that page `page` (whose entry is `entry`) belongs to.
inline uint32_t RunPage(uint32_t page, uint32_t entry) { return page - MapCount(entry); }
inline char* RunStart(Chunk* chunk, uint32_t page, uint32_t entry) {
  return PageAddress(chunk, RunPage(page, entry));
}
// The header of the run that starts at page `run_page` of `chunk` (SmallClass::header_offset).
inline RunHeader* RunHeaderOf(Chunk* chunk, uint32_t run_page, uint32_t header_offset) {
  if (header_offset == 0) return reinterpret_cast<RunHeader*>(&chunk->nodes[run_page]);
  return reinterpret_cast<RunHeader*>(PageAddress(chunk, run_page) + header_offset);
}
inline RunHeader* RunHeaderOf(char* run_start, uint32_t klass) {
  Chunk* chunk = ChunkOf(run_start);
  return RunHeaderOf(chunk, PageOf(chunk, run_start), kSmallClasses[klass].header_offset);
}
// The first byte of the run whose header is `run` (the inverse of RunHeaderOf).
inline char* RunStartOf(const RunHeader* run, const SmallClass& layout) {
  if (layout.header_in_chunk()) {
    Chunk* chunk = ChunkOf(run);
    return PageAddress(chunk, NodePage(chunk, reinterpret_cast<const FreeRunNode*>(run)));
  }
  return const_cast<char*>(reinterpret_cast<const char*>(run)) - layout.header_offset;
}

// The region index of `pointer` in the run at `run_start`, or -1 when it is not a region start.
inline long RegionIndex(const char* run_start, const void* pointer, const RegionCheck& check) {
  auto offset = static_cast<uint32_t>(static_cast<const char*>(pointer) - run_start);
  uint32_t index = RegionAt(offset, check);
  return index < check.region_count ? static_cast<long>(index) : -1;
}
inline long RegionIndex(const char* run_start, const void* pointer, uint32_t klass) {
  return RegionIndex(run_start, pointer, kRegionChecks[klass]);
}
// Whether region `index` of `run` is free in its bitmap.
inline bool RegionFree(const RunHeader* run, long index) {
  return ((run->bitmap()[index / 64] >> (index % 64)) & 1) != 0;
}
// What a loop over regions of one class needs of it (BinFreeBatch, TransferPark), copied into a
// local once per batch: read through the tables at each region, GCC reloads them (the loop's
// stores to run headers might alias them).
struct ClassFacts {
  RegionCheck check;  // its region_count is the run's
  uint32_t header_offset;
  uint32_t run_pages;
};
inline ClassFacts FactsOf(uint32_t klass) {
  return ClassFacts{kRegionChecks[klass], kSmallClasses[klass].header_offset,
                    kSmallClasses[klass].run_pages};
}

// The run a loop over regions of one class found last (TransferPark): regions
// cached together were mostly handed out together, and inside a live run of the class the page
// map can only show that run, so one compare replaces the page-map lookup. start nullptr: none;
// every region is in a chunk (at 1 MiB or above), so its offset from 0 is no run's.
struct RunCursor {
  char* start = nullptr;
  RunHeader* header = nullptr;

  // Finds the run of `klass` that `pointer` is in and sets *index to its region index there (-1:
  // no region start). False when its page does not show the class (an invalid free, or a region of
  // another class).
  LETHE_ALWAYS_INLINE bool Find(const void* pointer, uint32_t klass, const ClassFacts& facts,
                                long* index) {
    auto offset = reinterpret_cast<uintptr_t>(pointer) - reinterpret_cast<uintptr_t>(start);
    if (offset >= (uintptr_t{facts.run_pages} << kLgPageBytes)) {
      Chunk* chunk = ChunkOf(pointer);
      uint32_t page = PageOf(chunk, pointer);
      uint32_t entry = chunk->map[page];
      if (MapKind(entry) != PageKind::kSmall || MapClass(entry) != klass) return false;
      start = RunStart(chunk, page, entry);
      header = RunHeaderOf(chunk, RunPage(page, entry), facts.header_offset);
    }
    *index = RegionIndex(start, pointer, facts.check);
    return true;
  }
};

// Whether `pointer` is a region of `klass` (whose facts are `facts`) that is out (its page shows
// the class, it is a region start and its bitmap bit is clear): what a free of it checks before it
// sets the bit. `cursor`: the run of the region checked before (RunCursor).
inline bool IsRegionOut(const void* pointer, uint32_t klass, const ClassFacts& facts,
                        RunCursor* cursor) {
  long index;
  return cursor->Find(pointer, klass, facts, &index) && index >= 0 &&
         !RegionFree(cursor->header, index);
}
inline bool IsRegionOut(const void* pointer, uint32_t klass, const ClassFacts& facts) {
  RunCursor cursor;
  return IsRegionOut(pointer, klass, facts, &cursor);
}
inline bool IsRegionOut(const void* pointer, uint32_t klass) {
  return IsRegionOut(pointer, klass, FactsOf(klass));
}
// Pages that BinAllocate handed regions out on for the first time, to be populated (OsPopulate)
// by the caller once it has released the arena's lock: the regions are about to be written, and
// one system call for a fill's pages costs less than a fault on each once they are
// kPopulateMinPages or more (os.h OsPopulate, which leaves shorter ranges to fault in). Only the pages that
// hold a handed-out region's first byte, which its owner writes, in runs cut from clean pages
// (RunHeader::populated), and only in classes where every page up to the last region's start
// holds one (all up to a page; 4608 B, not 8192 B): the pages of regions still in the run, and
// those that only a region's middle or tail covers, stay unfaulted until written (programs often
// write a buffer at its ends only, and populated whole such runs raised peaks).
struct FreshPages {
  static constexpr uint32_t kMaxRanges = 4;
  struct Range {
    char* start;
    size_t bytes;
  } ranges[kMaxRanges];
  uint32_t count = 0;
  void Add(char* start, size_t bytes);
  // Populates every range (no lock held; OsPopulate leaves the short ones to fault in).
  void Populate() const;
};
// Hands out up to `count` regions of `klass` into out[]; returns how many (fewer only when the
// page heap cannot map a new run). Adds to *fresh the pages they are the first regions on.
uint32_t BinAllocate(Bin* bin, uint32_t klass, PageHeap* heap, void** out, uint32_t count,
                     FreshPages* fresh);
// Returns the region at `pointer` (in the small-run page `page` whose entry is `entry`). Aborts
// with "lethe: free(): invalid pointer" when it is not a region start and with "double free"
// when the bitmap says it is already free.
void BinFree(Bin* bin, PageHeap* heap, Chunk* chunk, uint32_t page, uint32_t entry,
             void* pointer, uint64_t now_ns);
// BinFree for `count` regions cached in the thread-cache bin of `klass` (bins: the arena's array),
// with the same checks; a region whose page no longer shows that class goes to its page's bin.
// Returns the bytes freed.
uint64_t BinFreeBatch(Bin* bins, uint32_t klass, PageHeap* heap, void* const* pointers,
                      uint32_t count, uint64_t now_ns);
// LETHE_CHECKs the invariants above for every run of the bin.
void BinValidate(const Bin& bin, uint32_t klass);

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_BIN_H_
