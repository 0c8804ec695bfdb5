// SQLite's memory without the opt-in: it keeps its own allocator and is reported as such. (The
// opt-in is process-wide, so its tests live in their own executable: sqlite_allocator_optin_test.)
#include "lethe/sqlite_allocator.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

#include "disk_cache_test_util.h"
#include "lethe/disk_cache.h"

namespace lethe::cache {
namespace {

// These tests are about SQLite's own allocator: the disk cache must not move SQLite onto Lethe's.
DiskCacheOptions OwnAllocator() {
  DiskCacheOptions options;
  options.sqlite_allocator = DiskCacheOptions::SqliteAllocator::kSqliteOwn;
  return options;
}

TEST(SqliteAllocator, WithoutTheOptInReportsSqlitesOwnFigure) {
  testing::TempDir dir;
  auto cache = DiskCache::Open(dir.File("cache.db"), OwnAllocator());
  ASSERT_TRUE(cache.ok()) << cache.status().ToString();
  ASSERT_TRUE(cache.value()->Put("https://a.test/x.png", testing::Payload(1, 50'000), {}).ok());
  SqliteMemoryUsage usage = SqliteMemoryInUse();
  EXPECT_EQ(usage.allocator, SqliteAllocatorKind::kSqliteOwn);
  EXPECT_STREQ(SqliteAllocatorKindName(usage.allocator), "sqlite");
  EXPECT_GT(usage.in_use_bytes, 0u);
  EXPECT_EQ(usage.in_use_bytes, static_cast<std::uint64_t>(sqlite3_memory_used()));
  EXPECT_GE(usage.high_water_bytes, usage.in_use_bytes);
}

TEST(SqliteAllocator, TheOptInAfterSqliteWasInitialisedIsRefusedWithAReason) {
  ASSERT_EQ(sqlite3_initialize(), SQLITE_OK);
  SqliteAllocatorOutcome outcome = UseLetheAllocatorForSqlite();
  EXPECT_EQ(outcome, SqliteAllocatorOutcome::kSqliteAlreadyInitialized);
  EXPECT_NE(std::string(SqliteAllocatorOutcomeMessage(outcome)).find("already initialised"),
            std::string::npos);
  EXPECT_EQ(SqliteMemoryInUse().allocator, SqliteAllocatorKind::kSqliteOwn);
}

TEST(SqliteAllocator, WithoutTheOptInTheReportShowsSqlitesOwnFigureAsNonHeap) {
  testing::TempDir dir;
  auto cache = DiskCache::Open(dir.File("cache.db"), OwnAllocator());
  ASSERT_TRUE(cache.ok()) << cache.status().ToString();
  ASSERT_TRUE(cache.value()->Put("https://a.test/y.png", testing::Payload(2, 50'000), {}).ok());
  MemoryReporter reporter("sqlite-own");
  auto registration = RegisterSqliteReporter(reporter);
  MemoryReport report = reporter.Collect();
  const MemoryReportEntry* sqlite = nullptr;
  for (const MemoryReportEntry& entry : report.entries) {
    if (entry.path == "explicit/storage/sqlite") sqlite = &entry;
  }
  ASSERT_NE(sqlite, nullptr);
  EXPECT_EQ(sqlite->amount, static_cast<std::int64_t>(sqlite3_memory_used()));
  EXPECT_GT(sqlite->amount, 0);
  // Not lethe_malloc's blocks: never subtracted from heap-allocated.
  EXPECT_EQ(sqlite->kind, ReportKind::kNonHeap);
  EXPECT_EQ(sqlite->units, ReportUnits::kBytes);
  EXPECT_NE(sqlite->description.find("SQLite's own allocator"), std::string::npos);
}

}  // namespace
}  // namespace lethe::cache
