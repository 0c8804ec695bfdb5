// decay_adaptation.h — an arena's decay time, lengthened while what decay purges comes back.
//
// The rule: an arena's dirty pages are purged once dirty for decay_ms << doublings. After every
// decay pass the arena reports the pages the pass purged and how many clean pages (purged or
// never written: each one a page fault) its heap has handed out in all. Purges are grouped in
// epochs one decay time long; an epoch is judged at the end of the next, so that every purge in
// it had at least one decay time to be taken back. The clean pages taken meanwhile are matched
// against the purged ones, older epoch first. When at least half of an epoch's purged pages came
// back, the decay doubles (up to kMaxDecayDoublings); when less than an eighth did, it halves.
// Epochs under kMinJudgedPages are not judged, and a gap of two decay times between passes drops
// both epochs unjudged (the takes in it cannot be dated).
//
// Why: a program that frees a page's worth of buffers and allocates the next batch a few seconds
// later (a browser loading page after page) had those pages purged and faulted in again at every
// load; a fixed longer decay would keep a process that has gone idle at its peak for that long.
// This one lengthens only on evidence of refaults, and only the decay: the dirty limits
// (dirty_percent and the dirty floor of an arena, huge_cache_kb) bound the dirty pages as before.
// The cap keeps the longest decay (8 s at the default) under jemalloc's default of 10 s. (The
// measurements: tools/bench/alloc/README.md, "Stop 50".)
//
// Under its owner's lock: an arena's, or the huge regions' (a plain struct; all zero is the
// initial state).
#ifndef LETHE_ALLOC_DECAY_ADAPTATION_H_
#define LETHE_ALLOC_DECAY_ADAPTATION_H_

#include <cstddef>
#include <cstdint>

namespace lethe::internal {

inline constexpr uint32_t kMaxDecayDoublings = 3;
inline constexpr size_t kMinJudgedPages = 256;  // 1 MiB

class DecayAdaptation {
 public:
  // The arena's decay time for a base of `base_ns` (decay_ms).
  uint64_t DecayNs(uint64_t base_ns) const { return base_ns << doublings_; }
  uint32_t doublings() const { return doublings_; }

  // After a decay pass at `now_ns` that purged `purged_pages`; `clean_taken_total` is the heap's
  // cumulative count of clean pages handed out (PageHeap::clean_pages_taken).
  void AfterPass(uint64_t now_ns, uint64_t clean_taken_total, size_t purged_pages,
                 uint64_t base_ns);

 private:
  struct Epoch {
    uint64_t start_ns = 0;
    size_t purged = 0;       // pages purged by the epoch's passes
    size_t outstanding = 0;  // of those, not yet matched by a clean page taken
  };
  void MatchTakes(uint64_t taken);
  void Judge(const Epoch& epoch);

  uint32_t doublings_ = 0;
  uint64_t last_pass_ns_ = 0;
  uint64_t clean_taken_seen_ = 0;
  Epoch previous_;  // closed, waiting to be judged at the end of current_
  Epoch current_;   // open since its first purge (purged == 0: none yet)
};

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_DECAY_ADAPTATION_H_
