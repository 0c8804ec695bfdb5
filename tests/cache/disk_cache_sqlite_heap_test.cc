// The disk cache puts SQLite on Lethe's heap when the process runs on Lethe's allocator, before
// SQLite's first allocation, and the memory report says where SQLite's memory is. SQLite's
// allocator is process-wide and fixed at its first allocation: this executable is the fresh
// process these tests need (the "too late" case re-executes it, as a death test).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "disk_cache_test_util.h"
#include "lethe/alloc.h"
#include "lethe/disk_cache.h"
#include "lethe/sqlite_allocator.h"

namespace lethe::cache {
namespace {

bool ProcessRunsOnLethe() { return std::string(lethe_allocator_name()) == "lethe"; }

const MemoryReportEntry* SqliteEntry(const MemoryReport& report) {
  for (const MemoryReportEntry& entry : report.entries) {
    if (entry.path == "explicit/storage/sqlite") return &entry;
  }
  return nullptr;
}

// Re-executed in a child (threadsafe death-test style): SQLite initialised before any cache.
void OpenAfterSqliteWasInitialised() {
  if (sqlite3_initialize() != SQLITE_OK) std::exit(3);
  testing::TempDir dir;
  DiskCacheOptions options;
  options.log = [](std::string_view line) {
    std::fprintf(stderr, "log: %.*s\n", static_cast<int>(line.size()), line.data());
  };
  auto cache = DiskCache::Open(dir.File("cache.db"), options);
  if (!cache.ok()) std::exit(4);
  if (!cache.value()->Put("https://a.test/late.png", testing::Payload(3, 20'000), {}).ok()) {
    std::exit(5);
  }
  if (SqliteMemoryInUse().allocator != SqliteAllocatorKind::kSqliteOwn) std::exit(6);
  MemoryReporter reporter("late");
  auto registration = RegisterSqliteReporter(reporter);
  const MemoryReport report = reporter.Collect();  // the entry points into it
  const MemoryReportEntry* sqlite = SqliteEntry(report);
  if (sqlite == nullptr || sqlite->kind != ReportKind::kNonHeap) std::exit(7);
  std::exit(0);
}

TEST(DiskCacheSqliteHeapDeathTest, SqliteInitialisedEarlierKeepsItsOwnAllocatorReportedAsNonHeap) {
  if (!ProcessRunsOnLethe()) GTEST_SKIP() << "lethe_* forwards to the system malloc in this build";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(OpenAfterSqliteWasInitialised(), ::testing::ExitedWithCode(0),
              "log: SQLite was already initialised; it keeps its own allocator");
}

TEST(DiskCacheSqliteHeap, OpeningACachePutsSqliteOnLethesHeapWhenTheProcessRunsOnIt) {
  testing::TempDir dir;
  auto cache = DiskCache::Open(dir.File("cache.db"));
  ASSERT_TRUE(cache.ok()) << cache.status().ToString();
  ASSERT_TRUE(cache.value()->Put("https://a.test/x.png", testing::Payload(1, 50'000), {}).ok());
  ASSERT_TRUE(cache.value()->Get("https://a.test/x.png").ok());
  const SqliteMemoryUsage usage = SqliteMemoryInUse();
  MemoryReporter reporter("heap");
  auto registration = RegisterSqliteReporter(reporter);
  const MemoryReport report = reporter.Collect();  // the entry points into it
  const MemoryReportEntry* sqlite = SqliteEntry(report);
  ASSERT_NE(sqlite, nullptr);
  if (ProcessRunsOnLethe()) {
    EXPECT_EQ(usage.allocator, SqliteAllocatorKind::kLethe);
    EXPECT_GT(usage.block_count, 0u);
    EXPECT_GT(usage.in_use_bytes, 0u);
    EXPECT_EQ(sqlite->kind, ReportKind::kHeap);
  } else {
    EXPECT_EQ(usage.allocator, SqliteAllocatorKind::kSqliteOwn);
    EXPECT_EQ(sqlite->kind, ReportKind::kNonHeap);
  }
  EXPECT_EQ(sqlite->amount, static_cast<int64_t>(usage.in_use_bytes));
}

TEST(DiskCacheSqliteHeap, ACacheThatAsksForSqlitesOwnAllocatorDoesNotChangeIt) {
  // Runs after the test above in this process: SQLite's allocator is already chosen; asking for
  // its own changes nothing and opens fine.
  testing::TempDir dir;
  DiskCacheOptions options;
  options.sqlite_allocator = DiskCacheOptions::SqliteAllocator::kSqliteOwn;
  const SqliteAllocatorKind before = SqliteMemoryInUse().allocator;
  auto cache = DiskCache::Open(dir.File("cache.db"), options);
  ASSERT_TRUE(cache.ok()) << cache.status().ToString();
  EXPECT_EQ(SqliteMemoryInUse().allocator, before);
}

}  // namespace
}  // namespace lethe::cache
