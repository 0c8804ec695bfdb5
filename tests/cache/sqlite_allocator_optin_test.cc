// SQLite on Lethe's allocator. The opt-in is process-wide and must come before sqlite3_initialize,
// so this executable makes it first thing (a gtest Environment, before any test touches SQLite),
// and records what the allocator held before, so that every test can compare the reported figure
// with the allocator's own view: nothing else in this process allocates through lethe_*.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <string>

#include "about_memory_rules.h"
#include "disk_cache_test_util.h"
#include "lethe/alloc.h"
#include "lethe/disk_cache.h"
#include "lethe/sqlite_allocator.h"

namespace lethe::cache {
namespace {

std::uint64_t g_allocated_before_sqlite = 0;
SqliteAllocatorOutcome g_outcome = SqliteAllocatorOutcome::kRejected;

class OptInEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    lethe_stats_t stats;
    lethe_stats(&stats);
    g_allocated_before_sqlite = stats.allocated_bytes;
    g_outcome = UseLetheAllocatorForSqlite();
  }
};

const auto* const g_environment = ::testing::AddGlobalTestEnvironment(new OptInEnvironment);

// What the allocator holds now beyond what it held before SQLite started.
std::uint64_t AllocatorHoldsForSqlite() {
  lethe_stats_t stats;
  lethe_stats(&stats);
  return stats.allocated_bytes - g_allocated_before_sqlite;
}

TEST(SqliteAllocatorOptIn, InstallsBeforeSqliteIsInitialisedAndOnlyOnce) {
  EXPECT_EQ(g_outcome, SqliteAllocatorOutcome::kInstalled)
      << SqliteAllocatorOutcomeMessage(g_outcome);
  EXPECT_EQ(UseLetheAllocatorForSqlite(), SqliteAllocatorOutcome::kAlreadyInstalled);
  EXPECT_EQ(SqliteMemoryInUse().allocator, SqliteAllocatorKind::kLethe);
  EXPECT_STREQ(SqliteAllocatorKindName(SqliteAllocatorKind::kLethe), "lethe");
}

TEST(SqliteAllocatorOptIn, TheReportedFigureEqualsWhatTheAllocatorHoldsForSqlite) {
  ASSERT_EQ(g_outcome, SqliteAllocatorOutcome::kInstalled);
  testing::TempDir dir;
  {
    auto opened = DiskCache::Open(dir.File("cache.db"));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    DiskCache& cache = *opened.value();
    for (int i = 0; i < 50; ++i) {
      std::string url = "https://optin.test/" + std::to_string(i);
      ASSERT_TRUE(cache.Put(url, testing::Payload(i, 1000 + i * 3000), {"image/png", "", ""}).ok());
      ASSERT_TRUE(cache.Get(url).ok());
    }
    SqliteMemoryUsage usage = SqliteMemoryInUse();
    EXPECT_EQ(usage.allocator, SqliteAllocatorKind::kLethe);
    EXPECT_GT(usage.in_use_bytes, 64u * 1024);  // at least a page cache page and the schema
    EXPECT_EQ(usage.in_use_bytes, AllocatorHoldsForSqlite());
    // SQLite's own count reads sizes from xSize = lethe_usable_size: the same figure.
    EXPECT_EQ(usage.in_use_bytes, static_cast<std::uint64_t>(sqlite3_memory_used()));
    EXPECT_GE(usage.high_water_bytes, usage.in_use_bytes);
    EXPECT_GT(usage.block_count, 0u);
  }
  // Closing the connection gives its memory back, and the figures still agree.
  SqliteMemoryUsage closed = SqliteMemoryInUse();
  EXPECT_EQ(closed.in_use_bytes, AllocatorHoldsForSqlite());
  EXPECT_EQ(closed.in_use_bytes, static_cast<std::uint64_t>(sqlite3_memory_used()));
}

// The reporter test of the issue: `explicit/storage/sqlite` in a collected memory report equals
// what the allocator holds for SQLite, is heap (inside heap-allocated), and follows about:memory.
TEST(SqliteAllocatorOptIn, TheReportShowsExplicitStorageSqliteEqualToTheAllocatorsView) {
  ASSERT_EQ(g_outcome, SqliteAllocatorOutcome::kInstalled);
  testing::TempDir dir;
  auto opened = DiskCache::Open(dir.File("cache.db"));
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  DiskCache& cache = *opened.value();
  for (int i = 0; i < 20; ++i) {
    std::string url = "https://report.test/" + std::to_string(i);
    ASSERT_TRUE(cache.Put(url, testing::Payload(i, 5000 + i * 7000), {"image/jpeg", "", ""}).ok());
    ASSERT_TRUE(cache.Get(url).ok());
  }
  MemoryReporter reporter("sqlite-on-lethe");
  auto sqlite_registration = RegisterSqliteReporter(reporter);
  auto cache_registration = cache.RegisterReporter(reporter);
  // Collect() allocates only with the system malloc here, and nothing touches SQLite in between.
  MemoryReport report = reporter.Collect();
  std::uint64_t allocator_view = AllocatorHoldsForSqlite();
  EXPECT_GT(allocator_view, 64u * 1024);
  EXPECT_EQ(report.Amount("explicit/storage/sqlite"), static_cast<std::int64_t>(allocator_view));
  for (const MemoryReportEntry& entry : report.entries) {
    if (entry.path != "explicit/storage/sqlite") continue;
    EXPECT_EQ(entry.kind, ReportKind::kHeap);
    EXPECT_EQ(entry.units, ReportUnits::kBytes);
    EXPECT_NE(entry.description.find("Lethe's allocator"), std::string::npos);
  }
  auto json = nlohmann::ordered_json::parse(MemoryReportToJson(report));
  EXPECT_EQ(lethe::testing::AboutMemoryViolations(json), std::vector<std::string>{});
  // Everything on lethe_* since the opt-in is SQLite's: unclassified is only what came before.
  EXPECT_EQ(lethe::testing::HeapUnclassified(json), static_cast<int64_t>(g_allocated_before_sqlite));
}

TEST(SqliteAllocatorOptIn, SqliteBlocksAreTheAllocatorsBlocksWithNoSizeHeader) {
  ASSERT_EQ(g_outcome, SqliteAllocatorOutcome::kInstalled);
  ASSERT_EQ(sqlite3_initialize(), SQLITE_OK);
  std::uint64_t before = SqliteMemoryInUse().in_use_bytes;
  void* block = sqlite3_malloc(1024);
  ASSERT_NE(block, nullptr);
  // The pointer SQLite hands out is the allocator's block itself (with a header in front it would
  // be an interior pointer): its usable size is what the figure grew by, and what SQLite reports.
  EXPECT_EQ(SqliteMemoryInUse().in_use_bytes - before, lethe_usable_size(block));
  EXPECT_EQ(static_cast<std::uint64_t>(sqlite3_msize(block)), lethe_usable_size(block));
  EXPECT_GE(lethe_usable_size(block), lethe_good_size(1024));
  void* grown = sqlite3_realloc(block, 5000);
  ASSERT_NE(grown, nullptr);
  EXPECT_EQ(SqliteMemoryInUse().in_use_bytes - before, lethe_usable_size(grown));
  sqlite3_free(grown);
  EXPECT_EQ(SqliteMemoryInUse().in_use_bytes, before);
}

// SQLite's out-of-memory paths, reached through Lethe's fail-after hook (SQLite's own pattern: the
// same operation with the n-th allocation failing, for every n until it succeeds).
TEST(SqliteAllocatorOptIn, PutAndGetFailCleanlyWhenAnySqliteAllocationFails) {
  ASSERT_EQ(g_outcome, SqliteAllocatorOutcome::kInstalled);
  testing::TempDir dir;
  DiskCacheOptions options;
  options.log = [](std::string_view) {};
  auto opened = DiskCache::Open(dir.File("cache.db"), options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  DiskCache& cache = *opened.value();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(cache.Put("https://oom.test/" + std::to_string(i), testing::Payload(i, 2000 + i * 40'000),
                          {})
                    .ok());
  }
  int failed_puts = 0;
  bool put_succeeded = false;
  for (long n = 1; n < 2000 && !put_succeeded; ++n) {
    lethe_fail_after(n);
    DiskCacheStatus status = cache.Put("https://oom.test/new", testing::Payload(99, 150'000), {});
    lethe_fail_after(0);
    if (status.ok()) {
      put_succeeded = true;
    } else {
      ++failed_puts;
      EXPECT_EQ(status.error(), DiskCacheError::kNoMemory) << "n=" << n << ": " << status.ToString();
      EXPECT_FALSE(cache.Contains("https://oom.test/new")) << "n=" << n;
    }
    for (int i = 0; i < 5; ++i) {
      auto got = cache.Get("https://oom.test/" + std::to_string(i));
      ASSERT_TRUE(got.ok()) << "n=" << n << ": " << got.status().ToString();
      ASSERT_EQ(got->bytes, testing::Payload(i, 2000 + i * 40'000));
    }
  }
  EXPECT_TRUE(put_succeeded);
  EXPECT_GT(failed_puts, 0);
  for (long n = 1; n < 200; ++n) {
    lethe_fail_after(n);
    auto got = cache.Get("https://oom.test/3");
    lethe_fail_after(0);
    if (got.ok()) {
      EXPECT_EQ(got->bytes, testing::Payload(3, 2000 + 3 * 40'000));
      break;
    }
    EXPECT_EQ(got.error(), DiskCacheError::kNoMemory) << got.status().ToString();
  }
  auto verdict = cache.IntegrityCheck();
  ASSERT_TRUE(verdict.ok());
  EXPECT_EQ(verdict.value(), "ok");
  std::printf("out-of-memory test: Put failed cleanly at %d allocation points\n", failed_puts);
}

}  // namespace
}  // namespace lethe::cache
