#include "lethe/disk_cache.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "disk_cache_test_util.h"
#include "lethe/sqlite_allocator.h"

namespace lethe::cache {
namespace {

using testing::Payload;
using testing::TempDir;

std::string Url(int n) { return "https://example.test/images/" + std::to_string(n) + ".png"; }

class DiskCacheTest : public ::testing::Test {
 protected:
  DiskCacheOptions Options() {
    DiskCacheOptions options;
    options.now_unix_ms = [this] { return now_ms_.load(); };
    options.log = [this](std::string_view line) { log_.emplace_back(line); };
    return options;
  }

  std::unique_ptr<DiskCache> OpenOrDie(DiskCacheOptions options) {
    auto opened = DiskCache::Open(path_, std::move(options));
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(opened).value() : nullptr;
  }

  void PutOrDie(DiskCache& cache, const std::string& url, const std::vector<std::uint8_t>& bytes,
                const DiskCacheMetadata& metadata = {}) {
    DiskCacheStatus status = cache.Put(url, bytes, metadata);
    ASSERT_TRUE(status.ok()) << status.ToString();
  }

  TempDir dir_;
  std::string path_ = dir_.File("cache.db");
  std::atomic<std::int64_t> now_ms_{1'700'000'000'000};
  std::vector<std::string> log_;
};

TEST_F(DiskCacheTest, PutThenGetReturnsTheSameBytesAndMetadata) {
  auto cache = OpenOrDie(Options());
  ASSERT_NE(cache, nullptr);
  std::vector<std::uint8_t> bytes = Payload(1, 5000);
  DiskCacheMetadata metadata{"image/png", "\"abc123\"", "Tue, 15 Nov 1994 12:45:26 GMT"};
  PutOrDie(*cache, Url(1), bytes, metadata);

  now_ms_ += 5000;
  auto got = cache->Get(Url(1));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->bytes, bytes);
  EXPECT_EQ(got->info.metadata.content_type, "image/png");
  EXPECT_EQ(got->info.metadata.etag, "\"abc123\"");
  EXPECT_EQ(got->info.metadata.last_modified, "Tue, 15 Nov 1994 12:45:26 GMT");
  EXPECT_EQ(got->info.size_bytes, 5000u);
  EXPECT_EQ(got->info.stored_time_ms, 1'700'000'000'000);
  EXPECT_EQ(got->info.last_used_time_ms, 1'700'000'005'000);
  EXPECT_EQ(got->info.charged_bytes,
            5000u + Url(1).size() + metadata.content_type.size() + metadata.etag.size() +
                metadata.last_modified.size());
}

TEST_F(DiskCacheTest, GetOfAnAbsentUrlIsNotFoundAndCountsAMiss) {
  auto cache = OpenOrDie(Options());
  auto got = cache->Get(Url(7));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error(), DiskCacheError::kNotFound);
  EXPECT_NE(got.status().message().find(Url(7)), std::string::npos);
  EXPECT_EQ(cache->Stats().miss_count, 1u);
}

TEST_F(DiskCacheTest, RemoveDeletesTheEntryAndReportsNotFoundTheSecondTime) {
  auto cache = OpenOrDie(Options());
  PutOrDie(*cache, Url(1), Payload(1, 100));
  EXPECT_TRUE(cache->Contains(Url(1)));
  EXPECT_TRUE(cache->Remove(Url(1)).ok());
  EXPECT_FALSE(cache->Contains(Url(1)));
  EXPECT_EQ(cache->Get(Url(1)).error(), DiskCacheError::kNotFound);
  EXPECT_EQ(cache->Remove(Url(1)).error(), DiskCacheError::kNotFound);
  DiskCacheStats stats = cache->Stats();
  EXPECT_EQ(stats.entry_count, 0u);
  EXPECT_EQ(stats.stored_bytes, 0u);
  EXPECT_EQ(stats.remove_count, 1u);
}

TEST_F(DiskCacheTest, PutReplacesTheEntryOfTheSameUrl) {
  auto cache = OpenOrDie(Options());
  PutOrDie(*cache, Url(1), Payload(1, 1000), {"image/png", "\"v1\"", ""});
  PutOrDie(*cache, Url(1), Payload(2, 300), {"image/gif", "\"v2\"", ""});
  auto got = cache->Get(Url(1));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->bytes, Payload(2, 300));
  EXPECT_EQ(got->info.metadata.etag, "\"v2\"");
  DiskCacheStats stats = cache->Stats();
  EXPECT_EQ(stats.entry_count, 1u);
  EXPECT_EQ(stats.stored_bytes, got->info.charged_bytes);
}

TEST_F(DiskCacheTest, LargeAndEmptyEntriesRoundTripThroughIncrementalBlobIo) {
  DiskCacheOptions options = Options();
  options.large_entry_bytes = 64 * 1024;
  auto cache = OpenOrDie(options);
  const std::size_t sizes[] = {0, 1, 64 * 1024 - 1, 64 * 1024, 3 * 1024 * 1024 + 17};
  int n = 0;
  for (std::size_t size : sizes) PutOrDie(*cache, Url(n++), Payload(size, size));
  n = 0;
  for (std::size_t size : sizes) {
    auto got = cache->Get(Url(n++));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->bytes, Payload(size, size)) << "size " << size;
  }
}

TEST_F(DiskCacheTest, GetInfoReadsMetadataWithoutTouchingTheEntry) {
  auto cache = OpenOrDie(Options());
  PutOrDie(*cache, Url(1), Payload(1, 10), {"image/jpeg", "", ""});
  auto info = cache->GetInfo(Url(1));
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->metadata.content_type, "image/jpeg");
  EXPECT_EQ(info->size_bytes, 10u);
  EXPECT_EQ(cache->Stats().pending_touch_count, 0u);
  EXPECT_EQ(cache->GetInfo(Url(2)).error(), DiskCacheError::kNotFound);
}

TEST_F(DiskCacheTest, EvictsTheLeastRecentlyUsedEntryToStayUnderTheCap) {
  DiskCacheOptions options = Options();
  std::string url0 = Url(0);
  const std::uint64_t entry_bytes = 1000 + url0.size();  // every Url(n) below 10 has this size
  options.capacity_bytes = entry_bytes * 4;
  auto cache = OpenOrDie(options);
  for (int i = 0; i < 4; ++i) PutOrDie(*cache, Url(i), Payload(i, 1000));
  ASSERT_TRUE(cache->Get(Url(0)).ok());  // 0 is now the most recently used; 1 the least

  PutOrDie(*cache, Url(4), Payload(4, 1000));
  EXPECT_TRUE(cache->Contains(Url(0)));
  EXPECT_FALSE(cache->Contains(Url(1)));
  PutOrDie(*cache, Url(5), Payload(5, 1000));
  EXPECT_FALSE(cache->Contains(Url(2)));
  EXPECT_TRUE(cache->Contains(Url(0)));

  DiskCacheStats stats = cache->Stats();
  EXPECT_EQ(stats.entry_count, 4u);
  EXPECT_EQ(stats.stored_bytes, entry_bytes * 4);
  EXPECT_EQ(stats.eviction_count, 2u);
  EXPECT_EQ(stats.evicted_bytes, entry_bytes * 2);
}

TEST_F(DiskCacheTest, StoredBytesStayUnderTheCapWhateverTheSizes) {
  DiskCacheOptions options = Options();
  options.capacity_bytes = 200 * 1024;
  options.max_pending_touches = 7;
  auto cache = OpenOrDie(options);
  std::uint32_t state = 12345;
  for (int i = 0; i < 300; ++i) {
    state = state * 1103515245u + 12345u;
    std::size_t size = (state >> 8) % (40 * 1024);
    PutOrDie(*cache, Url(static_cast<int>(state % 97)), Payload(i, size));
    if (i % 3 == 0) (void)cache->Get(Url(static_cast<int>((state >> 4) % 97)));
    DiskCacheStats stats = cache->Stats();
    ASSERT_LE(stats.stored_bytes, options.capacity_bytes);
  }
  auto verdict = cache->IntegrityCheck();
  ASSERT_TRUE(verdict.ok());
  EXPECT_EQ(verdict.value(), "ok");
}

TEST_F(DiskCacheTest, EntriesAndLruOrderSurviveReopening) {
  DiskCacheOptions options = Options();
  std::uint64_t entry_bytes = 1000 + Url(0).size();
  options.capacity_bytes = entry_bytes * 3;
  {
    auto cache = OpenOrDie(options);
    for (int i = 0; i < 3; ++i) PutOrDie(*cache, Url(i), Payload(i, 1000));
    ASSERT_TRUE(cache->Get(Url(0)).ok());  // a pending touch, written on close
    EXPECT_EQ(cache->Stats().pending_touch_count, 1u);
  }
  auto cache = OpenOrDie(options);
  DiskCacheStats stats = cache->Stats();
  EXPECT_EQ(stats.entry_count, 3u);
  EXPECT_EQ(stats.stored_bytes, entry_bytes * 3);
  PutOrDie(*cache, Url(3), Payload(3, 1000));
  EXPECT_TRUE(cache->Contains(Url(0)));
  EXPECT_FALSE(cache->Contains(Url(1)));
  auto got = cache->Get(Url(2));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->bytes, Payload(2, 1000));
}

TEST_F(DiskCacheTest, FlushWritesPendingTouches) {
  auto cache = OpenOrDie(Options());
  PutOrDie(*cache, Url(1), Payload(1, 10));
  ASSERT_TRUE(cache->Get(Url(1)).ok());
  EXPECT_EQ(cache->Stats().pending_touch_count, 1u);
  EXPECT_TRUE(cache->Flush().ok());
  DiskCacheStats stats = cache->Stats();
  EXPECT_EQ(stats.pending_touch_count, 0u);
  EXPECT_EQ(stats.touch_flush_count, 1u);
}

TEST_F(DiskCacheTest, ClearRemovesEverything) {
  auto cache = OpenOrDie(Options());
  for (int i = 0; i < 5; ++i) PutOrDie(*cache, Url(i), Payload(i, 100));
  ASSERT_TRUE(cache->Clear().ok());
  EXPECT_EQ(cache->Stats().entry_count, 0u);
  EXPECT_FALSE(cache->Contains(Url(3)));
}

TEST_F(DiskCacheTest, UrlsAreKeysByTheirExactBytes) {
  auto cache = OpenOrDie(Options());
  const std::string with_nul("https://a.test/x\0y.png", 23);
  const std::string not_utf8 = "https://a.test/\xff\xfe.png";
  const std::string upper = "HTTPS://A.TEST/X.PNG";
  PutOrDie(*cache, with_nul, Payload(1, 10));
  PutOrDie(*cache, not_utf8, Payload(2, 10));
  PutOrDie(*cache, "https://a.test/x.png", Payload(3, 10));
  EXPECT_EQ(cache->Get(with_nul)->bytes, Payload(1, 10));
  EXPECT_EQ(cache->Get(not_utf8)->bytes, Payload(2, 10));
  EXPECT_FALSE(cache->Contains("https://a.test/x"));  // the part before the NUL is another key
  EXPECT_FALSE(cache->Contains(upper));
  EXPECT_EQ(cache->Stats().entry_count, 3u);
}

// ---- limits --------------------------------------------------------------------------------

TEST_F(DiskCacheTest, RefusesAUrlOverTheLimitWithAReason) {
  DiskCacheOptions options = Options();
  options.max_url_bytes = 100;
  auto cache = OpenOrDie(options);
  std::string url = "https://example.test/" + std::string(200, 'a');
  DiskCacheStatus status = cache->Put(url, Payload(1, 10), {});
  EXPECT_EQ(status.error(), DiskCacheError::kUrlTooLong);
  EXPECT_NE(status.message().find("221 bytes, over the limit of 100"), std::string::npos)
      << status.message();
  EXPECT_FALSE(cache->Contains(url));
  EXPECT_EQ(cache->Stats().rejected_count, 1u);
}

TEST_F(DiskCacheTest, RefusesAnEntryOverTheLimitWithAReason) {
  DiskCacheOptions options = Options();
  options.max_entry_bytes = 10'000;
  auto cache = OpenOrDie(options);
  DiskCacheStatus status = cache->Put(Url(1), Payload(1, 20'000), {});
  EXPECT_EQ(status.error(), DiskCacheError::kEntryTooLarge);
  EXPECT_NE(status.message().find("over the limit of 10000 bytes"), std::string::npos)
      << status.message();
  EXPECT_FALSE(cache->Contains(Url(1)));
}

TEST_F(DiskCacheTest, RefusesAnEntryLargerThanTheWholeCapWithoutEvictingAnything) {
  DiskCacheOptions options = Options();
  options.capacity_bytes = 50'000;
  auto cache = OpenOrDie(options);
  PutOrDie(*cache, Url(1), Payload(1, 1000));
  EXPECT_EQ(cache->Put(Url(2), Payload(2, 60'000), {}).error(), DiskCacheError::kEntryTooLarge);
  EXPECT_TRUE(cache->Contains(Url(1)));
}

TEST_F(DiskCacheTest, RefusesAnEmptyUrlAndOversizedMetadata) {
  auto cache = OpenOrDie(Options());
  EXPECT_EQ(cache->Put("", Payload(1, 10), {}).error(), DiskCacheError::kInvalidArgument);
  DiskCacheMetadata metadata;
  metadata.etag = std::string(10'000, 'e');
  DiskCacheStatus status = cache->Put(Url(1), Payload(1, 10), metadata);
  EXPECT_EQ(status.error(), DiskCacheError::kInvalidArgument);
  EXPECT_NE(status.message().find("ETag"), std::string::npos);
}

// ---- threads -------------------------------------------------------------------------------

TEST_F(DiskCacheTest, ThreadsPutGetAndRemoveTogether) {
  auto cache = OpenOrDie(Options());
  constexpr int kThreads = 4;
  constexpr int kOps = 150;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kOps; ++i) {
        int key = t * 1000 + i;
        std::vector<std::uint8_t> bytes = Payload(key, 100 + (key % 5000));
        if (!cache->Put(Url(key), bytes, {}).ok()) ++failures;
        auto got = cache->Get(Url(key));
        if (!got.ok() || got->bytes != bytes) ++failures;
        int other_key = ((t + 1) % kThreads) * 1000 + i / 2;  // another thread's entry
        auto other = cache->Get(Url(other_key));
        if (other.ok() && other->bytes != Payload(other_key, 100 + (other_key % 5000))) ++failures;
        if (i % 10 == 9 && !cache->Remove(Url(key)).ok()) ++failures;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  DiskCacheStats stats = cache->Stats();
  EXPECT_EQ(stats.entry_count, static_cast<std::uint64_t>(kThreads * (kOps - kOps / 10)));
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kOps; ++i) {
      int key = t * 1000 + i;
      EXPECT_EQ(cache->Contains(Url(key)), i % 10 != 9);
    }
  }
  auto verdict = cache->IntegrityCheck();
  ASSERT_TRUE(verdict.ok());
  EXPECT_EQ(verdict.value(), "ok");
}

// ---- schema --------------------------------------------------------------------------------

void ExecOrDie(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  ASSERT_EQ(rc, SQLITE_OK) << (error != nullptr ? error : "") << " in " << sql;
  sqlite3_free(error);
}

TEST_F(DiskCacheTest, MigratesAVersion1CacheWrittenByHand) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ExecOrDie(db,
            "CREATE TABLE cache(url TEXT PRIMARY KEY, content_type TEXT, body BLOB NOT NULL,"
            " stored_ms INTEGER NOT NULL, last_used_ms INTEGER NOT NULL);"
            "PRAGMA user_version=1;");
  // Three entries; b was used most recently, a least.
  sqlite3_stmt* insert = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "INSERT INTO cache VALUES(?1, ?2, ?3, 100, ?4)", -1, &insert,
                               nullptr),
            SQLITE_OK);
  const struct { const char* url; const char* type; int seed; int used; } rows[] = {
      {"https://v1.test/a.png", "image/png", 1, 10},
      {"https://v1.test/b.gif", "image/gif", 2, 30},
      {"https://v1.test/c.jpg", nullptr, 3, 20}};
  for (const auto& row : rows) {
    std::vector<std::uint8_t> bytes = Payload(row.seed, 3000);
    sqlite3_bind_text(insert, 1, row.url, -1, SQLITE_STATIC);
    if (row.type != nullptr) sqlite3_bind_text(insert, 2, row.type, -1, SQLITE_STATIC);
    else sqlite3_bind_null(insert, 2);
    sqlite3_bind_blob(insert, 3, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
    sqlite3_bind_int(insert, 4, row.used);
    ASSERT_EQ(sqlite3_step(insert), SQLITE_DONE);
    sqlite3_reset(insert);
  }
  sqlite3_finalize(insert);
  sqlite3_close(db);

  DiskCacheOptions options = Options();
  options.capacity_bytes = 3 * (3000 + 30);
  auto cache = OpenOrDie(options);
  ASSERT_NE(cache, nullptr);
  EXPECT_NE(cache->open_notice().find("migrated schema 1 -> 2"), std::string::npos);
  auto a = cache->Get("https://v1.test/a.png");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->bytes, Payload(1, 3000));
  EXPECT_EQ(a->info.metadata.content_type, "image/png");
  EXPECT_EQ(a->info.stored_time_ms, 100);
  auto c = cache->GetInfo("https://v1.test/c.jpg");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->metadata.content_type, "");
  EXPECT_EQ(c->last_used_time_ms, 20);
  // LRU order came along: after the Get of a, c (used at 20) is the least recently used.
  PutOrDie(*cache, "https://v1.test/d.png", Payload(4, 3000));
  EXPECT_FALSE(cache->Contains("https://v1.test/c.jpg"));
  EXPECT_TRUE(cache->Contains("https://v1.test/b.gif"));
  cache.reset();

  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* version = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &version, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(version), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(version, 0), DiskCache::kSchemaVersion);
  sqlite3_finalize(version);
  sqlite3_close(db);
}

// ---- unusable files ------------------------------------------------------------------------

std::vector<std::string> AsideFiles(const TempDir& dir, const std::string& word) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    std::string name = entry.path().filename().string();
    if (name.find(word) != std::string::npos) names.push_back(name);
  }
  return names;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST_F(DiskCacheTest, MovesANonSqliteFileAsideAndCreatesANewCache) {
  const std::string garbage = "this is not a database, just some text that happens to be here\n";
  { std::ofstream(path_, std::ios::binary) << std::string(100, 'x') << garbage; }
  now_ms_ = 1'700'000'000'000;  // 2023-11-14T22:13:20Z
  auto cache = OpenOrDie(Options());
  ASSERT_NE(cache, nullptr);
  EXPECT_NE(cache->open_notice().find("corrupt"), std::string::npos) << cache->open_notice();
  EXPECT_NE(cache->open_notice().find("cache.db.corrupt-20231114T221320Z"), std::string::npos)
      << cache->open_notice();
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_EQ(log_[0], cache->open_notice());
  EXPECT_EQ(ReadFile(dir_.File("cache.db.corrupt-20231114T221320Z")),
            std::string(100, 'x') + garbage);
  EXPECT_EQ(cache->Stats().moved_aside_count, 1u);
  PutOrDie(*cache, Url(1), Payload(1, 100));
  EXPECT_TRUE(cache->Get(Url(1)).ok());
}

// Damages b-tree pages of a cleanly closed cache (page 1, header and schema, stays intact).
void DamagePages(const std::string& path) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(4096 * 3);
  std::string noise(4096 * 4, '\0');
  for (std::size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>(i * 31 + 7);
  file.write(noise.data(), static_cast<std::streamsize>(noise.size()));
}

TEST_F(DiskCacheTest, QuickCheckFindsDamagedPagesAndTheFileIsMovedAside) {
  DiskCacheOptions options = Options();
  options.page_size_bytes = 4096;
  {
    auto cache = OpenOrDie(options);
    for (int i = 0; i < 40; ++i) PutOrDie(*cache, Url(i), Payload(i, 3000));
  }
  DamagePages(path_);
  auto cache = OpenOrDie(options);
  ASSERT_NE(cache, nullptr);
  EXPECT_NE(cache->open_notice().find("was corrupt"), std::string::npos) << cache->open_notice();
  EXPECT_EQ(AsideFiles(dir_, ".corrupt-").size(), 1u);
  EXPECT_EQ(cache->Stats().entry_count, 0u);
}

TEST_F(DiskCacheTest, QuickCheckAfterCrashChecksOnlyWhenAWalWasLeftBehind) {
  DiskCacheOptions options = Options();
  options.page_size_bytes = 4096;
  options.open_check = DiskCacheOptions::OpenCheck::kQuickAfterCrash;
  {
    auto cache = OpenOrDie(options);
    for (int i = 0; i < 40; ++i) PutOrDie(*cache, Url(i), Payload(i, 3000));
  }
  ASSERT_FALSE(std::filesystem::exists(path_ + "-wal")) << "a clean close removes the WAL";
  DamagePages(path_);
  {
    auto cache = OpenOrDie(options);  // clean last close: no full scan, the damage is not seen yet
    ASSERT_NE(cache, nullptr);
    EXPECT_EQ(cache->open_notice(), "");
  }
  DamagePages(path_);
  { std::ofstream(path_ + "-wal", std::ios::binary); }  // what a crash leaves (an empty WAL)
  auto cache = OpenOrDie(options);
  ASSERT_NE(cache, nullptr);
  EXPECT_NE(cache->open_notice().find("was corrupt"), std::string::npos) << cache->open_notice();
  EXPECT_EQ(AsideFiles(dir_, ".corrupt-").size(), 1u);
}

TEST_F(DiskCacheTest, DamageFoundWhileLoadingTheTotalsAlsoMovesTheFileAside) {
  DiskCacheOptions options = Options();
  options.page_size_bytes = 4096;
  options.open_check = DiskCacheOptions::OpenCheck::kNone;
  {
    auto cache = OpenOrDie(options);
    for (int i = 0; i < 40; ++i) PutOrDie(*cache, Url(i), Payload(i, 300));
  }
  {
    // Page 2 is the root of `entries`, the first table created.
    std::fstream file(path_, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(4096);
    std::string noise(4096, '\x5a');
    file.write(noise.data(), static_cast<std::streamsize>(noise.size()));
  }
  auto cache = OpenOrDie(options);
  ASSERT_NE(cache, nullptr);
  EXPECT_NE(cache->open_notice().find("was corrupt"), std::string::npos) << cache->open_notice();
  EXPECT_EQ(cache->Stats().entry_count, 0u);
}

TEST_F(DiskCacheTest, MovesAsideAForeignDatabaseAndANewerSchema) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ExecOrDie(db, "CREATE TABLE bookmarks(url TEXT)");
  sqlite3_close(db);
  auto cache = OpenOrDie(Options());
  ASSERT_NE(cache, nullptr);
  EXPECT_NE(cache->open_notice().find("foreign"), std::string::npos) << cache->open_notice();
  EXPECT_EQ(AsideFiles(dir_, ".foreign-").size(), 1u);
  cache.reset();

  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ExecOrDie(db, "PRAGMA user_version=99");
  sqlite3_close(db);
  cache = OpenOrDie(Options());
  ASSERT_NE(cache, nullptr);
  EXPECT_NE(cache->open_notice().find("schema version 99"), std::string::npos)
      << cache->open_notice();
  EXPECT_EQ(AsideFiles(dir_, ".newer-schema-").size(), 1u);
}

TEST_F(DiskCacheTest, TwoAsideMovesInTheSameSecondGetDistinctNames) {
  for (int i = 0; i < 2; ++i) {
    { std::ofstream(path_, std::ios::binary) << "garbage garbage garbage garbage " << i; }
    auto cache = OpenOrDie(Options());
    ASSERT_NE(cache, nullptr);
  }
  EXPECT_EQ(AsideFiles(dir_, ".corrupt-").size(), 2u);
}

TEST_F(DiskCacheTest, ASecondOpenOfTheSameFileIsBusyAndMovesNothingAside) {
  auto first = OpenOrDie(Options());
  PutOrDie(*first, Url(1), Payload(1, 10));
  auto second = DiskCache::Open(path_, Options());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error(), DiskCacheError::kBusy) << second.status().ToString();
  EXPECT_TRUE(AsideFiles(dir_, ".corrupt-").empty());
  EXPECT_TRUE(first->Get(Url(1)).ok());
}

TEST_F(DiskCacheTest, OpenFailsWithAClearErrorWhenTheDirectoryDoesNotExist) {
  auto opened = DiskCache::Open(dir_.File("missing/dir/cache.db"), Options());
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error(), DiskCacheError::kCannotOpen) << opened.status().ToString();
  EXPECT_NE(opened.status().message().find("missing/dir/cache.db"), std::string::npos);
}

TEST_F(DiskCacheTest, StatsReportTheFileAndTheCounters) {
  auto cache = OpenOrDie(Options());
  PutOrDie(*cache, Url(1), Payload(1, 100'000));
  (void)cache->Get(Url(1));
  (void)cache->Get(Url(2));
  DiskCacheStats stats = cache->Stats();
  EXPECT_GT(stats.file_bytes, 100'000u);
  EXPECT_GE(stats.memory_bytes, 1 * sizeof(std::int64_t) * 3);  // one pending touch at least
  EXPECT_LT(stats.memory_bytes, 64u * 1024);
  int visited = 0;
  stats.ForEachCounter([&](const char* name, const char* description, std::uint64_t value) {
    ++visited;
    EXPECT_NE(std::string(description), "");
    std::string counter(name);
    if (counter == "hit_count" || counter == "miss_count" || counter == "put_count") {
      EXPECT_EQ(value, 1u) << counter;
    }
  });
  EXPECT_EQ(visited, 12);
}

TEST_F(DiskCacheTest, ReleaseMemoryEmptiesThePageCacheAndOnlyCriticalPressureCallsIt) {
  DiskCacheOptions options = Options();
  options.mmap_bytes = 0;  // reads fill SQLite's page cache instead of going through a map
  auto cache = OpenOrDie(std::move(options));
  ASSERT_NE(cache, nullptr);
  for (int i = 0; i < 8; ++i) PutOrDie(*cache, Url(i), Payload(i, 50'000));
  auto read_all = [&] {
    for (int i = 0; i < 8; ++i) ASSERT_TRUE(cache->Get(Url(i)).ok());
  };
  read_all();
  const std::uint64_t held = SqliteMemoryInUse().in_use_bytes;
  const std::uint64_t freed = cache->ReleaseMemory();
  EXPECT_GE(freed, 4u * 64 * 1024) << "of " << held;  // the 64 KiB pages of the bodies read
  EXPECT_LE(SqliteMemoryInUse().in_use_bytes, held - freed);
  EXPECT_EQ(cache->ReleaseMemory(), 0u);  // nothing left to give back

  ManualClock clock;
  MemoryPressure pressure(clock);
  MemoryPressure::Subscription subscription = cache->SubscribeTo(pressure);
  read_all();  // the reads still work, and refill the cache
  EXPECT_EQ(pressure.Dispatch(MemoryPressureLevel::kModerate).total_freed_bytes, 0u);
  EXPECT_GE(pressure.Dispatch(MemoryPressureLevel::kCritical).total_freed_bytes, 4u * 64 * 1024);
  read_all();
}

TEST_F(DiskCacheTest, ReporterAddsTheCountersAndTheDiskBytesAndNothingUnderExplicit) {
  auto cache = OpenOrDie(Options());
  MemoryReporter reporter("disk-test");
  {
    auto registration = cache->RegisterReporter(reporter);
    PutOrDie(*cache, Url(1), Payload(1, 100'000));
    (void)cache->Get(Url(1));
    (void)cache->Get(Url(2));
    MemoryReport report = reporter.Collect();
    EXPECT_EQ(report.Amount("lethe-counters/disk-cache/hit-count"), 1);
    EXPECT_EQ(report.Amount("lethe-counters/disk-cache/miss-count"), 1);
    EXPECT_EQ(report.Amount("lethe-counters/disk-cache/put-count"), 1);
    EXPECT_EQ(report.Amount("lethe-counters/disk-cache/moved-aside-count"), 0);
    DiskCacheStats stats = cache->Stats();
    EXPECT_EQ(report.Amount("lethe-disk-cache/stored"), static_cast<std::int64_t>(stats.stored_bytes));
    EXPECT_GT(report.Amount("lethe-disk-cache/file"), 100'000);
    int counters = 0;
    for (const MemoryReportEntry& entry : report.entries) {
      if (entry.path.rfind("lethe-counters/disk-cache/", 0) == 0) {
        ++counters;
        EXPECT_EQ(entry.kind, ReportKind::kOther) << entry.path;
        EXPECT_EQ(entry.units, ReportUnits::kCountCumulative) << entry.path;
        EXPECT_FALSE(entry.description.empty()) << entry.path;
      }
      // Disk bytes are not memory: the cache adds nothing under explicit/ (the process figures
      // under explicit/heap-overhead are the MemoryReporter's own).
      bool explicit_path = entry.path.rfind("explicit/", 0) == 0;
      EXPECT_TRUE(!explicit_path || entry.path.rfind("explicit/heap-overhead/", 0) == 0) << entry.path;
    }
    EXPECT_EQ(counters, 12);
  }
  EXPECT_EQ(reporter.Collect().Amount("lethe-counters/disk-cache/hit-count"), -1);
}

}  // namespace
}  // namespace lethe::cache
