// Full disk and I/O errors under DiskCache, injected with the fault VFS shim: every failing
// operation returns a clear error, rolls back, and every earlier entry stays readable.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "disk_cache_test_util.h"
#include "lethe/disk_cache.h"
#include "sqlite_fault_vfs.h"

namespace lethe::cache {
namespace {

using testing::DisarmFaults;
using testing::FailedWriteCount;
using testing::FailWritesAfter;
using testing::Payload;
using testing::TempDir;

std::string Url(int n) { return "https://faults.test/" + std::to_string(n) + ".jpg"; }

// Sizes that cover inline bodies, overflow pages and incremental blob writes.
std::size_t SizeOf(int n) { return n % 4 == 3 ? 150'000 + n : 500 + (n * 977) % 20'000; }

class DiskCacheFaultTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::RegisterFaultVfs(); }
  void TearDown() override { DisarmFaults(); }

  DiskCacheOptions Options() {
    DiskCacheOptions options;
    options.sqlite_vfs_for_testing = testing::kFaultVfsName;
    options.log = [](std::string_view) {};
    return options;
  }

  std::unique_ptr<DiskCache> OpenOrDie(const DiskCacheOptions& options) {
    auto opened = DiskCache::Open(path_, options);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(opened).value() : nullptr;
  }

  // Puts entries [first, last) that must succeed.
  void Fill(DiskCache& cache, int first, int last) {
    for (int n = first; n < last; ++n) {
      DiskCacheStatus status = cache.Put(Url(n), Payload(n, SizeOf(n)), {"image/jpeg", "", ""});
      ASSERT_TRUE(status.ok()) << status.ToString();
    }
  }

  // Every entry in `present` is there and byte-identical.
  void ExpectReadable(DiskCache& cache, const std::vector<int>& present) {
    for (int n : present) {
      auto got = cache.Get(Url(n));
      ASSERT_TRUE(got.ok()) << n << ": " << got.status().ToString();
      EXPECT_EQ(got->bytes, Payload(n, SizeOf(n))) << n;
    }
  }

  TempDir dir_;
  std::string path_ = dir_.File("cache.db");
};

std::vector<int> Range(int first, int last) {
  std::vector<int> out;
  for (int n = first; n < last; ++n) out.push_back(n);
  return out;
}

TEST_F(DiskCacheFaultTest, ADiskFullDuringPutIsReportedAndEarlierEntriesStayReadable) {
  auto cache = OpenOrDie(Options());
  ASSERT_NE(cache, nullptr);
  Fill(*cache, 0, 20);
  DiskCacheStats before = cache->Stats();

  FailWritesAfter(8 * 1024, SQLITE_FULL);
  DiskCacheStatus status = cache->Put(Url(100), Payload(100, 200'000), {});
  DisarmFaults();

  EXPECT_EQ(status.error(), DiskCacheError::kDiskFull) << status.ToString();
  EXPECT_NE(status.message().find("disk full"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find(Url(100)), std::string::npos) << status.message();
  EXPECT_GT(FailedWriteCount(), 0);
  EXPECT_FALSE(cache->Contains(Url(100)));
  ExpectReadable(*cache, Range(0, 20));
  DiskCacheStats after = cache->Stats();
  EXPECT_EQ(after.entry_count, before.entry_count);
  EXPECT_EQ(after.stored_bytes, before.stored_bytes);
  EXPECT_EQ(after.put_failed_count, 1u);
  EXPECT_EQ(after.disk_full_count, 1u);

  // The disk has room again: the cache works on, and everything survives a reopen.
  Fill(*cache, 20, 22);
  cache.reset();
  cache = OpenOrDie(Options());
  ASSERT_NE(cache, nullptr);
  ExpectReadable(*cache, Range(0, 22));
  auto verdict = cache->IntegrityCheck();
  ASSERT_TRUE(verdict.ok());
  EXPECT_EQ(verdict.value(), "ok");
}

TEST_F(DiskCacheFaultTest, AnIoErrorDuringPutIsReportedAndEarlierEntriesStayReadable) {
  auto cache = OpenOrDie(Options());
  ASSERT_NE(cache, nullptr);
  Fill(*cache, 0, 10);
  FailWritesAfter(0, SQLITE_IOERR_WRITE);
  DiskCacheStatus status = cache->Put(Url(50), Payload(50, 5000), {});
  DisarmFaults();
  EXPECT_EQ(status.error(), DiskCacheError::kIoError) << status.ToString();
  EXPECT_NE(status.message().find("I/O error"), std::string::npos) << status.message();
  EXPECT_EQ(cache->Stats().io_error_count, 1u);
  ExpectReadable(*cache, Range(0, 10));
  EXPECT_FALSE(cache->Contains(Url(50)));
}

// The same Put failing at every point of its writes (SQLite's own fault-injection pattern): each
// attempt either succeeds whole or fails whole, evictions included.
TEST_F(DiskCacheFaultTest, APutThatFailsAtAnyWriteLeavesTheCacheAsItWas) {
  DiskCacheOptions options = Options();
  options.capacity_bytes = 600'000;  // the big entry below needs evictions
  options.page_cache_kib = 128;       // and spills pages in the middle of its blob write
  for (int error : {SQLITE_FULL, SQLITE_IOERR_WRITE}) {
    TempDir dir;
    path_ = dir.File("cache.db");
    auto cache = OpenOrDie(options);
    ASSERT_NE(cache, nullptr);
    Fill(*cache, 0, 12);
    std::vector<int> present;
    for (int n = 0; n < 12; ++n) {
      if (cache->Contains(Url(n))) present.push_back(n);
    }
    int failures = 0;
    for (std::int64_t budget = 0; budget < 600'000; budget = budget * 2 + 1000) {
      DiskCacheStats before = cache->Stats();
      FailWritesAfter(budget, error);
      DiskCacheStatus status = cache->Put(Url(999), Payload(999, 300'000), {});
      DisarmFaults();
      if (status.ok()) {
        // Enough budget: the Put is whole, then removed again for the next round. Evicted
        // entries are gone for good; the rest must be intact.
        auto got = cache->Get(Url(999));
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        EXPECT_EQ(got->bytes, Payload(999, 300'000));
        ASSERT_TRUE(cache->Remove(Url(999)).ok());
        std::vector<int> still;
        for (int n : present) {
          if (cache->Contains(Url(n))) still.push_back(n);
        }
        present = still;
        continue;
      }
      ++failures;
      EXPECT_TRUE(status.error() == DiskCacheError::kDiskFull ||
                  status.error() == DiskCacheError::kIoError)
          << status.ToString();
      EXPECT_FALSE(cache->Contains(Url(999))) << "budget " << budget;
      DiskCacheStats after = cache->Stats();
      EXPECT_EQ(after.entry_count, before.entry_count) << "budget " << budget;
      EXPECT_EQ(after.stored_bytes, before.stored_bytes) << "budget " << budget;
      ExpectReadable(*cache, present);
    }
    EXPECT_GE(failures, 5);
    auto verdict = cache->IntegrityCheck();
    ASSERT_TRUE(verdict.ok());
    EXPECT_EQ(verdict.value(), "ok");
    cache.reset();
    cache = OpenOrDie(options);
    ASSERT_NE(cache, nullptr);
    ExpectReadable(*cache, present);
  }
}

TEST_F(DiskCacheFaultTest, AFailedLruFlushDoesNotFailTheGetThatTriggeredIt) {
  DiskCacheOptions options = Options();
  options.max_pending_touches = 4;
  auto cache = OpenOrDie(options);
  ASSERT_NE(cache, nullptr);
  Fill(*cache, 0, 4);
  FailWritesAfter(0, SQLITE_FULL);
  for (int n = 0; n < 4; ++n) {
    auto got = cache->Get(Url(n));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
  }
  DisarmFaults();
  DiskCacheStats stats = cache->Stats();
  EXPECT_EQ(stats.pending_touch_count, 0u);  // the batch was dropped, not kept growing
  EXPECT_EQ(stats.disk_full_count, 1u);
  ExpectReadable(*cache, Range(0, 4));
}

TEST_F(DiskCacheFaultTest, AFullDiskWhileCreatingTheCacheIsReportedOnOpen) {
  FailWritesAfter(0, SQLITE_FULL);
  auto opened = DiskCache::Open(path_, Options());
  DisarmFaults();
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error(), DiskCacheError::kDiskFull) << opened.status().ToString();
}

}  // namespace
}  // namespace lethe::cache
