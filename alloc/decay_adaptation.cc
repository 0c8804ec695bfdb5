// An arena's decay time, lengthened while what decay purges comes back (see decay_adaptation.h).
#include "decay_adaptation.h"

#include <algorithm>

namespace lethe::internal {

void DecayAdaptation::AfterPass(uint64_t now_ns, uint64_t clean_taken_total, size_t purged_pages,
                                uint64_t base_ns) {
  uint64_t taken = clean_taken_total - clean_taken_seen_;
  clean_taken_seen_ = clean_taken_total;
  uint64_t decay_ns = DecayNs(base_ns);
  // Wrapped (a clock switched to the caller's ticks, which may be behind) counts as a gap too.
  if (last_pass_ns_ != 0 && (now_ns < last_pass_ns_ || now_ns - last_pass_ns_ >= 2 * decay_ns)) {
    previous_ = Epoch{};
    current_ = Epoch{};
  } else {
    MatchTakes(taken);
  }
  last_pass_ns_ = now_ns;
  bool current_is_old = now_ns < current_.start_ns || now_ns - current_.start_ns >= decay_ns;
  if (current_.purged > 0 && current_is_old) {
    if (previous_.purged >= kMinJudgedPages) Judge(previous_);
    previous_ = current_;
    current_ = Epoch{};
  }
  if (purged_pages > 0) {
    if (current_.purged == 0) current_.start_ns = now_ns;
    current_.purged += purged_pages;
    current_.outstanding += purged_pages;
  }
}

void DecayAdaptation::MatchTakes(uint64_t taken) {
  for (Epoch* epoch : {&previous_, &current_}) {
    size_t matched = static_cast<size_t>(std::min<uint64_t>(taken, epoch->outstanding));
    epoch->outstanding -= matched;
    taken -= matched;
  }
}

void DecayAdaptation::Judge(const Epoch& epoch) {
  size_t back = epoch.purged - epoch.outstanding;
  if (back * 2 >= epoch.purged) {
    if (doublings_ < kMaxDecayDoublings) ++doublings_;
  } else if (back * 8 < epoch.purged && doublings_ > 0) {
    --doublings_;
  }
}

}  // namespace lethe::internal
