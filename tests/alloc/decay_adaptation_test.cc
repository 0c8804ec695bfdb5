// DecayAdaptation: an arena's decay time doubles when what decay purged comes back within the
// next epoch, halves when little of it does, and judges only epochs it can date.
#include "decay_adaptation.h"

#include <gtest/gtest.h>

namespace lethe::internal {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;
constexpr uint64_t kBase = kSecond;  // decay_ms 1000

// Passes of a purger that wakes every 100 ms, over a heap whose cumulative clean takes the test
// sets; times are in ms from an arbitrary start.
class Passes {
 public:
  explicit Passes(DecayAdaptation* adaptation) : adaptation_(adaptation) {}
  void At(uint64_t ms, size_t purged = 0) {
    adaptation_->AfterPass(kStart + ms * 1'000'000, clean_taken_, purged, kBase);
  }
  void Take(uint64_t pages) { clean_taken_ += pages; }
  // One load: `pages` purged at `ms`, the same number taken back `back_after_ms` later; passes
  // every 100 ms in between and for a second after.
  void PurgeThenTake(uint64_t ms, size_t pages, size_t taken, uint64_t back_after_ms) {
    At(ms, pages);
    for (uint64_t t = ms + 100; t < ms + back_after_ms; t += 100) At(t);
    Take(taken);
    for (uint64_t t = ms + back_after_ms; t <= ms + back_after_ms + 1000; t += 100) At(t);
  }
  // An epoch at 0 of `pages` purged, `taken` back 600 ms later, then judged: the next epoch
  // opens at 1.7 s and is a decay old at 2.7 s.
  void FirstEpochJudged(size_t pages, size_t taken) {
    PurgeThenTake(0, pages, taken, 600);
    At(1700, 300);
    At(2700);
  }

 private:
  static constexpr uint64_t kStart = 1000 * kSecond;
  DecayAdaptation* adaptation_;
  uint64_t clean_taken_ = 0;
};

TEST(DecayAdaptation, StartsAtTheBaseDecay) {
  DecayAdaptation adaptation;
  EXPECT_EQ(adaptation.doublings(), 0u);
  EXPECT_EQ(adaptation.DecayNs(kBase), kBase);
}

TEST(DecayAdaptation, DoublesWhenHalfOfAnEpochsPurgedPagesComeBack) {
  DecayAdaptation adaptation;
  Passes passes(&adaptation);
  passes.PurgeThenTake(0, 1000, 500, 600);  // epoch A: 1000 purged, 500 back
  EXPECT_EQ(adaptation.doublings(), 0u);     // A is judged at the end of the next epoch
  passes.At(1700, 300);                      // epoch B opens
  passes.At(2700);                           // B is a decay old: A is judged
  EXPECT_EQ(adaptation.doublings(), 1u);
  EXPECT_EQ(adaptation.DecayNs(kBase), 2 * kBase);
}

TEST(DecayAdaptation, StaysWhenLessThanHalfComesBack) {
  DecayAdaptation adaptation;
  Passes passes(&adaptation);
  passes.FirstEpochJudged(1000, 499);
  EXPECT_EQ(adaptation.doublings(), 0u);
}

TEST(DecayAdaptation, ClimbsToItsCapAndHalvesWhenLittleComesBack) {
  DecayAdaptation adaptation;
  Passes passes(&adaptation);
  uint64_t t = 0;
  for (int load = 0; load < 10; ++load) {  // every purge fully taken back
    uint64_t decay_ms = adaptation.DecayNs(kBase) / 1'000'000;
    passes.PurgeThenTake(t, 1000, 1000, 300);
    t += 300 + 1000 + decay_ms;
  }
  EXPECT_EQ(adaptation.doublings(), kMaxDecayDoublings);
  passes.At(t, 1000);  // nothing comes back any more
  uint64_t decay_ms = adaptation.DecayNs(kBase) / 1'000'000;
  passes.At(t + decay_ms, 1000);
  passes.At(t + 2 * decay_ms, 1000);
  EXPECT_EQ(adaptation.doublings(), kMaxDecayDoublings - 1);
}

TEST(DecayAdaptation, SmallEpochsAreNotJudged) {
  DecayAdaptation adaptation;
  Passes passes(&adaptation);
  passes.FirstEpochJudged(kMinJudgedPages - 1, kMinJudgedPages - 1);
  EXPECT_EQ(adaptation.doublings(), 0u);
}

// Takes that come after a gap of two decay times without a pass cannot be dated: the epochs
// are dropped, not judged.
TEST(DecayAdaptation, AGapBetweenPassesDropsTheEpochs) {
  DecayAdaptation adaptation;
  Passes passes(&adaptation);
  passes.At(0, 1000);
  passes.Take(1000);
  passes.At(2000);  // two decay times later: A is dropped with the takes
  passes.At(2100, 300);
  passes.At(3100);
  passes.At(4100, 300);
  passes.At(5100);
  EXPECT_EQ(adaptation.doublings(), 0u);
}

// Takes beyond what an epoch purged do not count for the next one: the pages the program grew
// by are not pages decay took from it.
TEST(DecayAdaptation, TakesCountOnlyAgainstPagesPurgedBefore) {
  DecayAdaptation adaptation;
  Passes passes(&adaptation);
  passes.Take(5000);  // growth before any purge
  passes.At(0, 1000);
  passes.At(1000);  // A closes with nothing back
  passes.At(1100, 1000);
  passes.At(2100);  // A judged: nothing came back
  EXPECT_EQ(adaptation.doublings(), 0u);
}

}  // namespace
}  // namespace lethe::internal
