#include "lethe/session_history.h"

#include <gtest/gtest.h>

namespace lethe {
namespace {

TEST(SessionHistory, StartsEmpty) {
  SessionHistory history;
  EXPECT_EQ(history.current(), nullptr);
  EXPECT_FALSE(history.CanGoBack());
  EXPECT_FALSE(history.CanGoForward());
  EXPECT_FALSE(history.GoBack());
  EXPECT_FALSE(history.GoForward());
}

TEST(SessionHistory, BackAndForwardMoveTheIndex) {
  SessionHistory history;
  history.Navigate("a");
  history.Navigate("b");
  history.Navigate("c");
  EXPECT_EQ(history.current()->url, "c");
  EXPECT_TRUE(history.GoBack());
  EXPECT_TRUE(history.GoBack());
  EXPECT_EQ(history.current()->url, "a");
  EXPECT_FALSE(history.GoBack());
  EXPECT_TRUE(history.GoForward());
  EXPECT_EQ(history.current()->url, "b");
}

TEST(SessionHistory, NavigatingFromTheMiddleDropsTheForwardList) {
  SessionHistory history;
  history.Navigate("a");
  history.Navigate("b");
  uint64_t c = (history.Navigate("c"), history.current()->id);
  uint64_t b = history.entries()[1].id;
  history.GoBack();
  history.GoBack();
  std::vector<uint64_t> dropped = history.Navigate("d");
  EXPECT_EQ(dropped, (std::vector<uint64_t>{b, c}));
  ASSERT_EQ(history.entries().size(), 2u);
  EXPECT_EQ(history.current()->url, "d");
  EXPECT_FALSE(history.CanGoForward());
}

TEST(SessionHistory, CapDropsTheOldestEntry) {
  SessionHistory history(3);
  history.Navigate("a");
  uint64_t a = history.current()->id;
  history.Navigate("b");
  history.Navigate("c");
  EXPECT_TRUE(history.Navigate("d") == std::vector<uint64_t>{a});
  ASSERT_EQ(history.entries().size(), 3u);
  EXPECT_EQ(history.entries().front().url, "b");
  EXPECT_EQ(history.index(), 2u);
}

TEST(SessionHistory, PositionsDoNotShiftWhenTheCapDropsAnEntry) {
  SessionHistory history(3);
  for (const char* url : {"a", "b", "c"}) history.Navigate(url);
  EXPECT_EQ(history.first_position(), 0u);
  EXPECT_EQ(history.position(), 2u);  // "c"
  history.Navigate("d");               // "a" dropped
  EXPECT_EQ(history.first_position(), 1u);
  EXPECT_EQ(history.index(), 2u);
  EXPECT_EQ(history.position(), 3u);  // "d"
  ASSERT_TRUE(history.GoBack());
  EXPECT_EQ(history.current()->url, "c");
  EXPECT_EQ(history.position(), 2u);  // the position "c" had before the drop
}

TEST(SessionHistory, DistanceFromCurrentCountsStepsEitherWay) {
  SessionHistory history;
  for (const char* url : {"a", "b", "c", "d", "e"}) history.Navigate(url);
  history.GoBack();
  history.GoBack();  // at "c"
  EXPECT_EQ(history.DistanceFromCurrent(history.entries()[0].id), 2u);
  EXPECT_EQ(history.DistanceFromCurrent(history.entries()[2].id), 0u);
  EXPECT_EQ(history.DistanceFromCurrent(history.entries()[4].id), 2u);
  EXPECT_EQ(history.DistanceFromCurrent(999999), std::nullopt);
}

TEST(SessionHistory, EntryIdsAreNeverReused) {
  SessionHistory first, second;
  first.Navigate("a");
  second.Navigate("a");
  EXPECT_NE(first.current()->id, second.current()->id);
}

TEST(SessionHistory, KeepsTheScrollPositionOfEachEntry) {
  SessionHistory history;
  history.Navigate("a");
  history.mutable_current()->scroll_y = 700;
  history.Navigate("b");
  history.GoBack();
  EXPECT_EQ(history.current()->scroll_y, 700);
}

TEST(SessionHistoryDeathTest, ZeroCapacityIsAProgrammingError) {
  EXPECT_DEATH(SessionHistory(0), "at least one entry");
}

}  // namespace
}  // namespace lethe
