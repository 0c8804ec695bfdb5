// lethe/session_history.h — one window's back/forward list, as browsers keep it.
//
// Entries are pages visited in order; `index` is the current one. Navigating to a new page drops
// every entry after the current one (the forward list) and appends. Back/Forward move the index.
// The list is capped (50 entries, like Chromium's default) by dropping the oldest.
//
// The history knows nothing about documents: the engine keeps the live document of the current
// entry and hands the ones left behind to the BfCache, keyed by the entry's id. The BfCache asks
// DistanceFromCurrent() to evict the entry farthest from where the user is.
// Main thread only.
#ifndef LETHE_SESSION_HISTORY_H_
#define LETHE_SESSION_HISTORY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lethe {

struct HistoryEntry {
  uint64_t id = 0;      // unique within the process; never reused
  std::string url;      // the page description's path or URL
  int scroll_y = 0;     // restored when the user comes back
};

class SessionHistory {
 public:
  static constexpr size_t kDefaultMaxEntries = 50;

  explicit SessionHistory(size_t max_entries = kDefaultMaxEntries);

  // Appends `url` after the current entry. Returns the ids of entries that no longer exist
  // (the forward list, and the oldest entry when over the cap): their documents must be dropped.
  std::vector<uint64_t> Navigate(const std::string& url);

  bool CanGoBack() const { return index_ > 0; }
  bool CanGoForward() const { return !entries_.empty() && index_ + 1 < entries_.size(); }
  // Move the index; false (and no change) at either end.
  bool GoBack();
  bool GoForward();

  // The current entry; nullptr when nothing was loaded yet.
  const HistoryEntry* current() const;
  HistoryEntry* mutable_current();
  const std::vector<HistoryEntry>& entries() const { return entries_; }
  size_t index() const { return index_; }
  // Positions count entries from the window's first page: index() plus the entries the cap dropped
  // from the front. An entry keeps its position while it exists (its index shifts at the cap), so
  // positions are what the BfCache's keys use.
  size_t position() const { return dropped_front_count_ + index_; }
  size_t first_position() const { return dropped_front_count_; }

  // |position of entry `id` - current index|, or nullopt when the entry is gone.
  std::optional<size_t> DistanceFromCurrent(uint64_t id) const;

 private:
  size_t max_entries_;
  std::vector<HistoryEntry> entries_;
  size_t index_ = 0;  // valid when !entries_.empty()
  size_t dropped_front_count_ = 0;  // entries the cap removed from the front, ever
};

}  // namespace lethe

#endif  // LETHE_SESSION_HISTORY_H_
