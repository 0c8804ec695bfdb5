#include "lethe/session_history.h"

#include <atomic>

#include "lethe/check.h"

namespace lethe {

namespace {
std::atomic<uint64_t> g_next_entry_id{1};
}  // namespace

SessionHistory::SessionHistory(size_t max_entries) : max_entries_(max_entries) {
  LETHE_CHECK(max_entries_ >= 1, "a session history holds at least one entry");
}

std::vector<uint64_t> SessionHistory::Navigate(const std::string& url) {
  std::vector<uint64_t> dropped;
  if (!entries_.empty()) {
    for (size_t i = index_ + 1; i < entries_.size(); ++i) dropped.push_back(entries_[i].id);
    entries_.resize(index_ + 1);
  }
  entries_.push_back(HistoryEntry{g_next_entry_id.fetch_add(1), url, 0});
  if (entries_.size() > max_entries_) {
    dropped.push_back(entries_.front().id);
    entries_.erase(entries_.begin());
    ++dropped_front_count_;
  }
  index_ = entries_.size() - 1;
  return dropped;
}

bool SessionHistory::GoBack() {
  if (!CanGoBack()) return false;
  --index_;
  return true;
}

bool SessionHistory::GoForward() {
  if (!CanGoForward()) return false;
  ++index_;
  return true;
}

const HistoryEntry* SessionHistory::current() const {
  return entries_.empty() ? nullptr : &entries_[index_];
}

HistoryEntry* SessionHistory::mutable_current() {
  return entries_.empty() ? nullptr : &entries_[index_];
}

std::optional<size_t> SessionHistory::DistanceFromCurrent(uint64_t id) const {
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].id == id) return i > index_ ? i - index_ : index_ - i;
  }
  return std::nullopt;
}

}  // namespace lethe
