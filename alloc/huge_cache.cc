// The huge cache (see huge_cache.h): an unordered table of at most kHugeCachePieces pieces,
// scanned linearly (32 entries: cheaper than any index, and huge blocks are rare next to the
// system calls they cost).
#include "huge_cache.h"

#include <algorithm>
#include <atomic>

#include "decay.h"
#include "lethe/check.h"
#include "mutex.h"
#include "options.h"
#include "os.h"
#include "size_classes.h"

namespace lethe::internal {
namespace {

struct Piece {
  uintptr_t address;
  size_t bytes;
  uint64_t since_ns;  // when its pages were freed (decay)
  uint32_t id;        // its VMA (HugeLayout)
};

constinit Mutex g_cache_lock;
constinit Piece g_pieces[kHugeCachePieces] = {};
constinit size_t g_piece_count = 0;
constinit size_t g_cached_bytes = 0;
constinit uint64_t g_reused_bytes = 0;
constinit uint64_t g_moves = 0;
constinit uint64_t g_failed_moves = 0;
constinit std::atomic<uint32_t> g_next_vma_id{1};
constinit std::atomic<uint64_t> g_requests{0};  // HugeCacheTake calls (kHugeCacheWarmupBlocks)

size_t MaxBytes() { return static_cast<size_t>(g_options.huge_cache_kb) << 10; }

// Pieces to unmap. Declared before a MutexLock in the same scope, it is destroyed after the lock
// is released: the munmap calls are made unlocked.
class Victims {
 public:
  Victims() = default;
  Victims(const Victims&) = delete;
  Victims& operator=(const Victims&) = delete;
  ~Victims() {
    for (size_t i = 0; i < count_; ++i) {
      OsUnmap(reinterpret_cast<void*>(pieces_[i].address), pieces_[i].bytes);
    }
  }
  void Add(const Piece& piece) { pieces_[count_++] = piece; }

 private:
  // Enough for one call: every cached piece evicted plus the extents of one block.
  Piece pieces_[kHugeCachePieces + kMaxHugeExtents];
  size_t count_ = 0;
};

void RemoveLocked(size_t index) {
  g_cached_bytes -= g_pieces[index].bytes;
  g_pieces[index] = g_pieces[--g_piece_count];
}

// Merges the cached pieces of the same VMA that touch `piece` into it (decaying with the older).
void AbsorbNeighboursLocked(Piece* piece) {
  for (size_t i = 0; i < g_piece_count;) {
    const Piece& other = g_pieces[i];
    bool before = other.address + other.bytes == piece->address;
    if (other.id != piece->id || (!before && piece->address + piece->bytes != other.address)) {
      ++i;
      continue;
    }
    if (before) piece->address = other.address;
    piece->bytes += other.bytes;
    piece->since_ns = std::min(piece->since_ns, other.since_ns);
    RemoveLocked(i);
  }
}

// Keeps `piece` (merged with its neighbours), evicting the oldest pieces while the bounds say
// no; or hands it to `victims`.
void InsertLocked(Piece piece, Victims* victims) {
  AbsorbNeighboursLocked(&piece);
  if (piece.bytes < kHugeMinPieceBytes || piece.bytes > MaxBytes() / 4) {
    victims->Add(piece);
    return;
  }
  while (g_piece_count == kHugeCachePieces || g_cached_bytes + piece.bytes > MaxBytes()) {
    size_t oldest = 0;
    for (size_t i = 1; i < g_piece_count; ++i) {
      if (g_pieces[i].since_ns < g_pieces[oldest].since_ns) oldest = i;
    }
    victims->Add(g_pieces[oldest]);
    RemoveLocked(oldest);
  }
  g_pieces[g_piece_count++] = piece;
  g_cached_bytes += piece.bytes;
}

// The smallest piece that holds `bytes`, or -1.
int BestFitLocked(size_t bytes) {
  int best = -1;
  for (size_t i = 0; i < g_piece_count; ++i) {
    if (g_pieces[i].bytes >= bytes &&
        (best < 0 || g_pieces[i].bytes < g_pieces[static_cast<size_t>(best)].bytes)) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

size_t LargestLocked() {
  size_t largest = 0;
  for (size_t i = 1; i < g_piece_count; ++i) {
    if (g_pieces[i].bytes > g_pieces[largest].bytes) largest = i;
  }
  return largest;
}

// Takes the pieces for a block of `bytes` out of the table (see huge_cache.h, "Which pieces");
// returns how many. taken[0] holds the whole block when it is the only one and is large enough.
size_t TakeLocked(size_t bytes, Piece (&taken)[kMaxHugeExtents - 1]) {
  if (g_piece_count == 0) return 0;
  if (int best = BestFitLocked(bytes); best >= 0) {
    taken[0] = g_pieces[best];
    RemoveLocked(static_cast<size_t>(best));
    return 1;
  }
  size_t count = 0, covered = 0;
  while (count < kMaxHugeExtents - 1 && covered < bytes && g_piece_count > 0) {
    size_t largest = LargestLocked();
    taken[count++] = g_pieces[largest];
    covered += g_pieces[largest].bytes;
    RemoveLocked(largest);
  }
  return count;
}

// The block is the head of `piece`; the tail stays cached in place (same VMA).
void* Cut(const Piece& piece, size_t bytes, HugeLayout* layout, size_t* reused_bytes) {
  Victims victims;
  MutexLock lock(&g_cache_lock);
  if (piece.bytes > bytes) {
    InsertLocked(Piece{piece.address + bytes, piece.bytes - bytes, piece.since_ns, piece.id},
                 &victims);
  }
  g_reused_bytes += bytes;
  *layout = OneExtent(LayoutPages(bytes), piece.id);
  *reused_bytes = bytes;
  return reinterpret_cast<void*>(piece.address);
}

// Moves the pieces, in order, to the start of a fresh mapping of `bytes`; the fresh pages after
// them stay untouched. What is not needed of the last piece, and the pieces after a refused
// move, go back to the table; a piece the kernel refused to move is unmapped (it may break the
// one-VMA invariant, see the header). nullptr, every piece back, when the mapping fails.
void* Assemble(const Piece* pieces, size_t count, size_t bytes, HugeLayout* layout,
               size_t* reused_bytes) {
  auto* block = static_cast<unsigned char*>(OsMap(bytes, kPageBytes));
  Victims victims;
  Piece back[kMaxHugeExtents];
  size_t back_count = 0, moved = 0, failed = 0, offset = 0;
  HugeLayout made{};
  for (size_t i = 0; i < count; ++i) {
    const Piece& piece = pieces[i];
    if (block == nullptr || failed != 0 || offset == bytes) {
      back[back_count++] = piece;
      continue;
    }
    size_t length = std::min(piece.bytes, bytes - offset);
    if (!OsMove(reinterpret_cast<void*>(piece.address), length, block + offset)) {
      ++failed;
      victims.Add(piece);
      continue;
    }
    ++moved;
    offset += length;
    made.ends[made.count] = LayoutPages(offset);
    made.ids[made.count++] = HugeNewVmaId();
    if (length < piece.bytes) {
      back[back_count++] =
          Piece{piece.address + length, piece.bytes - length, piece.since_ns, piece.id};
    }
  }
  if (offset < bytes) {  // the rest of the fresh mapping
    made.ends[made.count] = LayoutPages(bytes);
    made.ids[made.count++] = HugeNewVmaId();
  }
  MutexLock lock(&g_cache_lock);
  for (size_t i = 0; i < back_count; ++i) InsertLocked(back[i], &victims);
  g_moves += moved;
  g_failed_moves += failed;
  if (block == nullptr) return nullptr;
  g_reused_bytes += offset;
  *layout = made;
  *reused_bytes = offset;
  return block;
}

}  // namespace

void* HugeCacheTake(size_t bytes, HugeLayout* layout, size_t* reused_bytes) {
  g_requests.fetch_add(1, std::memory_order_relaxed);
  Piece taken[kMaxHugeExtents - 1];
  size_t count;
  {
    MutexLock lock(&g_cache_lock);
    count = TakeLocked(bytes, taken);
  }
  if (count == 0) return nullptr;
  if (count == 1 && taken[0].bytes >= bytes) return Cut(taken[0], bytes, layout, reused_bytes);
  return Assemble(taken, count, bytes, layout, reused_bytes);
}

uint32_t HugeNewVmaId() { return g_next_vma_id.fetch_add(1, std::memory_order_relaxed); }

void HugeCachePutBlock(uintptr_t block, const HugeLayout& layout) {
  uint64_t now = DecayNowNs();
  bool keep = g_requests.load(std::memory_order_relaxed) >= kHugeCacheWarmupBlocks;
  Victims victims;
  MutexLock lock(&g_cache_lock);
  uint32_t start = 0;
  for (uint32_t i = 0; i < layout.count; ++i) {
    size_t offset = size_t{start} << kLgPageBytes;
    size_t length = size_t{layout.ends[i] - start} << kLgPageBytes;
    Piece piece{block + offset, length, now, layout.ids[i]};
    if (keep) InsertLocked(piece, &victims); else victims.Add(piece);
    start = layout.ends[i];
  }
}

uint64_t HugeCachePurge(uint64_t now_ns, uint64_t decay_ns) {
  Victims victims;
  uint64_t next = UINT64_MAX;
  MutexLock lock(&g_cache_lock);
  for (size_t i = 0; i < g_piece_count;) {
    const Piece& piece = g_pieces[i];
    if (now_ns >= decay_ns && piece.since_ns <= now_ns - decay_ns) {
      victims.Add(piece);
      RemoveLocked(i);
    } else {
      next = std::min(next, piece.since_ns + decay_ns);
      ++i;
    }
  }
  return next;
}

HugeCacheStats GetHugeCacheStats() {
  MutexLock lock(&g_cache_lock);
  return HugeCacheStats{g_cached_bytes, g_piece_count, g_reused_bytes, g_moves, g_failed_moves};
}

size_t HugeCacheCopyPieces(HugePieceView* out, size_t max) {
  MutexLock lock(&g_cache_lock);
  size_t count = std::min(max, g_piece_count);
  for (size_t i = 0; i < count; ++i) {
    out[i] = HugePieceView{g_pieces[i].address, g_pieces[i].bytes, g_pieces[i].id};
  }
  return count;
}

void HugeCacheValidate() {
  MutexLock lock(&g_cache_lock);
  LETHE_CHECK(g_piece_count <= kHugeCachePieces, "more pieces than slots");
  size_t total = 0;
  for (size_t i = 0; i < g_piece_count; ++i) {
    const Piece& piece = g_pieces[i];
    LETHE_CHECK(piece.address % kPageBytes == 0 && piece.bytes % kPageBytes == 0,
                "a cached piece is not page-aligned");
    LETHE_CHECK(piece.bytes >= kHugeMinPieceBytes && piece.bytes <= MaxBytes() / 4,
                "a cached piece is outside the length bounds");
    for (size_t j = i + 1; j < g_piece_count; ++j) {
      const Piece& other = g_pieces[j];
      LETHE_CHECK(piece.address + piece.bytes <= other.address ||
                      other.address + other.bytes <= piece.address,
                  "two cached pieces overlap");
      LETHE_CHECK(piece.id != other.id || (piece.address + piece.bytes != other.address &&
                                           other.address + other.bytes != piece.address),
                  "two touching pieces of one VMA were not merged");
    }
    total += piece.bytes;
  }
  LETHE_CHECK(total == g_cached_bytes && total <= MaxBytes(), "cached bytes miscounted");
}

void HugeCacheLockForFork() { g_cache_lock.Lock(); }
void HugeCacheUnlockAfterFork(bool child) {
  if (child) g_cache_lock.ResetAfterFork(); else g_cache_lock.Unlock();
}

}  // namespace lethe::internal
