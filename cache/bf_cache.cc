// BfCache: see lethe/bf_cache.h.
//
// Invariants: used_bytes_ = sum of cost_bytes over entries_; every entry is in tracker_;
// entries_.size() <= options_.max_document_count after every public call.
#include "lethe/bf_cache.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <utility>

#include "lethe/check.h"

namespace lethe {
namespace {

// K = 11 generations of T/10: the tracker's (t + (K-1)P, t + KP] is (t + T, t + 1.1 T].
constexpr uint32_t kBfCacheGenerations = 11;

}  // namespace

BfCache::BfCache(const Clock& clock, BfCacheOptions options)
    : clock_(clock),
      options_(options),
      tracker_(kBfCacheGenerations, options.time_to_live / (kBfCacheGenerations - 1), clock.Now(),
               [this](Entry* entry) { Discard(entry, aging_reason_); }) {
  LETHE_CHECK(options.max_document_count > 0, "BfCache needs room for one document at least");
}

BfCache::~BfCache() {
  for (auto& entry : entries_) tracker_.Remove(entry.get());
}

std::vector<std::unique_ptr<BfCache::Entry>>::iterator BfCache::Find(const HistoryEntryId& id) {
  return std::find_if(entries_.begin(), entries_.end(),
                      [&id](const std::unique_ptr<Entry>& entry) { return entry->id == id; });
}

uint64_t BfCache::Distance(const Entry& entry) const {
  auto it = current_index_.find(entry.id.session_id);
  if (it == current_index_.end()) return std::numeric_limits<uint64_t>::max();
  return static_cast<uint64_t>(std::llabs(static_cast<long long>(entry.id.index) - it->second));
}

void BfCache::Discard(Entry* entry, DiscardReason reason) {
  tracker_.Remove(entry);
  used_bytes_ -= entry->cost_bytes;
  switch (reason) {
    case DiscardReason::kExpired: ++stats_.expired_count; break;
    case DiscardReason::kCount: ++stats_.evicted_for_count_count; break;
    case DiscardReason::kPressure: ++stats_.discarded_by_pressure_count; break;
    case DiscardReason::kRemoved: break;
  }
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [entry](const std::unique_ptr<Entry>& e) { return e.get() == entry; });
  entries_.erase(it);  // destroys the document
}

uint64_t BfCache::DiscardIf(bool (*predicate)(const Entry&, uint64_t), uint64_t argument,
                            DiscardReason reason) {
  uint64_t before = used_bytes_;
  for (size_t i = entries_.size(); i-- > 0;) {
    if (predicate(*entries_[i], argument)) Discard(entries_[i].get(), reason);
  }
  return before - used_bytes_;
}

BfCacheStoreOutcome BfCache::Store(const HistoryEntryId& id,
                                   std::unique_ptr<CachedDocument> document) {
  if (document == nullptr) return BfCacheStoreOutcome::kInvalid;
  auto existing = Find(id);
  if (existing != entries_.end()) Discard(existing->get(), DiscardReason::kRemoved);
  auto entry = std::make_unique<Entry>();
  entry->id = id;
  entry->cost_bytes = document->MemoryBytes();
  entry->document = std::move(document);
  entry->sequence = next_sequence_++;
  Entry* stored = entry.get();
  used_bytes_ += stored->cost_bytes;
  tracker_.Add(stored);
  entries_.push_back(std::move(entry));
  ++stats_.stored_count;
  bool evicted_itself = false;
  while (entries_.size() > options_.max_document_count) {
    // Farthest from its session's current index; among equals, the earliest stored.
    Entry* victim = entries_.front().get();
    for (const auto& candidate : entries_) {
      uint64_t d = Distance(*candidate), best = Distance(*victim);
      if (d > best || (d == best && candidate->sequence < victim->sequence)) victim = candidate.get();
    }
    evicted_itself |= victim == stored;
    Discard(victim, DiscardReason::kCount);
  }
  return evicted_itself ? BfCacheStoreOutcome::kEvicted : BfCacheStoreOutcome::kStored;
}

std::unique_ptr<CachedDocument> BfCache::Take(const HistoryEntryId& id) {
  auto it = Find(id);
  if (it == entries_.end()) return nullptr;
  std::unique_ptr<CachedDocument> document = std::move((*it)->document);
  tracker_.Remove(it->get());
  used_bytes_ -= (*it)->cost_bytes;
  entries_.erase(it);
  ++stats_.restored_count;
  return document;
}

bool BfCache::Contains(const HistoryEntryId& id) const {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&id](const std::unique_ptr<Entry>& entry) { return entry->id == id; });
}

void BfCache::SetCurrentIndex(uint64_t session_id, int32_t index) {
  current_index_[session_id] = index;
}

uint64_t BfCache::RemoveSession(uint64_t session_id) {
  current_index_.erase(session_id);
  return DiscardIf([](const Entry& entry, uint64_t session) { return entry.id.session_id == session; },
                   session_id, DiscardReason::kRemoved);
}

uint64_t BfCache::Clear() {
  return DiscardIf([](const Entry&, uint64_t) { return true; }, 0, DiscardReason::kRemoved);
}

uint64_t BfCache::Tick() {
  uint64_t before = used_bytes_;
  aging_reason_ = DiscardReason::kExpired;
  tracker_.AgeIfDue(clock_.Now());
  return before - used_bytes_;
}

uint64_t BfCache::OnMemoryPressure(const MemoryPressureEvent& event) {
  uint64_t freed = 0;
  if (event.level == MemoryPressureLevel::kCritical) {
    freed = DiscardIf([](const Entry&, uint64_t) { return true; }, 0, DiscardReason::kPressure);
  } else if (event.level == MemoryPressureLevel::kModerate && !event.ongoing) {
    uint64_t before = used_bytes_;
    aging_reason_ = DiscardReason::kPressure;
    tracker_.Age();
    freed = before - used_bytes_;
  }
  stats_.freed_by_pressure_bytes += freed;
  return freed;
}

MemoryPressure::Subscription BfCache::SubscribeTo(MemoryPressure& pressure) {
  return pressure.Subscribe("bfcache",
                            [this](const MemoryPressureEvent& event) { return OnMemoryPressure(event); });
}

MemoryReporter::Registration BfCache::RegisterReporter(MemoryReporter& reporter) {
  return reporter.Register("bfcache", [this](MemoryReportCollector& collector) {
    collector.HeapBytes("bfcache", used_bytes_,
                        "Documents kept for back/forward navigation (frozen, up to 30 minutes).");
    auto counter = [&](const char* name, uint64_t value, const char* description) {
      collector.Counter(std::string("bfcache/") + name, value, description);
    };
    counter("stored", stats_.stored_count, "Documents stored on navigating away.");
    counter("restored", stats_.restored_count, "Documents restored by back/forward.");
    counter("expired", stats_.expired_count, "Documents that outlived their time to live.");
    counter("evicted-for-count", stats_.evicted_for_count_count,
            "Documents evicted to keep at most the maximum count.");
    counter("discarded-by-pressure", stats_.discarded_by_pressure_count,
            "Documents dropped by memory pressure.");
    counter("freed-by-pressure-bytes", stats_.freed_by_pressure_bytes,
            "Bytes released by memory-pressure events (a byte count, cumulative).");
  });
}

}  // namespace lethe
