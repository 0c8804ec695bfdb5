// disk_cache.cc — DiskCache: entries by URL in SQLite, LRU under a byte cap (see lethe/disk_cache.h).
//
// Invariants of Impl, while the mutex is not held (Validate() checks them when
// LETHE_DEBUG_LEVEL >= 2, after every write):
//   entry_count  == SELECT count(*) FROM entries == SELECT count(*) FROM bodies
//   stored_bytes == SELECT sum(charged_bytes) FROM entries  <= options.capacity_bytes
//   every entries.id has one bodies row of size_bytes bytes
//   next_seq > every use_seq on disk and in pending_touches
//   reading == a read transaction of ours is open (only between reads; never during a write)
// Put, Remove and Clear change the tables in one transaction and update the counts only after it
// committed, so a failure (disk full, I/O error, no memory) leaves both as they were.
#include "lethe/disk_cache.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "disk_cache_schema.h"
#include "lethe/alloc.h"
#include "lethe/sqlite_allocator.h"
#include "sqlite_util.h"

namespace lethe::cache {

using internal::BindText;
using internal::ColumnText;
using internal::Statement;
using internal::StatementScope;
using internal::StatusFromSqlite;

const char* DiskCacheErrorName(DiskCacheError error) {
  switch (error) {
    case DiskCacheError::kOk: return "ok";
    case DiskCacheError::kNotFound: return "not-found";
    case DiskCacheError::kInvalidArgument: return "invalid-argument";
    case DiskCacheError::kUrlTooLong: return "url-too-long";
    case DiskCacheError::kEntryTooLarge: return "entry-too-large";
    case DiskCacheError::kDiskFull: return "disk-full";
    case DiskCacheError::kIoError: return "io-error";
    case DiskCacheError::kCorrupt: return "corrupt";
    case DiskCacheError::kBusy: return "busy";
    case DiskCacheError::kNoMemory: return "no-memory";
    case DiskCacheError::kCannotOpen: return "cannot-open";
    case DiskCacheError::kInternal: return "internal";
  }
  return "unknown";
}

std::string DiskCacheStatus::ToString() const {
  if (ok()) return "ok";
  return std::string(DiskCacheErrorName(error_)) + ": " + message_;
}

namespace {

// URLs in messages are cut so that a hostile 2 MB URL does not become a 2 MB log line.
std::string ShortUrl(std::string_view url) {
  constexpr std::size_t kMax = 160;
  if (url.size() <= kMax) return std::string(url);
  return std::string(url.substr(0, kMax)) + "...(" + std::to_string(url.size()) + " bytes)";
}

std::int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::uint64_t FileBytes(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 ? static_cast<std::uint64_t>(info.st_size) : 0;
}

// The prepared statements of one connection. Column order of kFind is used by ReadInfo.
struct Statements {
  Statement begin, begin_read, commit, rollback;
  Statement find, find_id, oldest, insert_entry, insert_body, delete_entry, delete_body, touch;
  Statement clear_entries, clear_bodies;

  int PrepareAll(sqlite3* db) {
    const std::pair<Statement*, const char*> all[] = {
        {&begin, "BEGIN IMMEDIATE"},
        {&begin_read, "BEGIN"},
        {&commit, "COMMIT"},
        {&rollback, "ROLLBACK"},
        {&find,
         "SELECT id, size_bytes, charged_bytes, content_type, etag, last_modified, stored_ms,"
         " last_used_ms FROM entries WHERE url = ?1"},
        {&find_id, "SELECT id, charged_bytes FROM entries WHERE url = ?1"},
        {&oldest, "SELECT id, charged_bytes FROM entries ORDER BY use_seq LIMIT 1"},
        {&insert_entry,
         "INSERT INTO entries(url, content_type, etag, last_modified, size_bytes, charged_bytes,"
         " stored_ms, last_used_ms, use_seq) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8)"},
        {&insert_body, "INSERT INTO bodies(id, body) VALUES(?1, ?2)"},
        {&delete_entry, "DELETE FROM entries WHERE id = ?1"},
        {&delete_body, "DELETE FROM bodies WHERE id = ?1"},
        {&touch, "UPDATE entries SET use_seq = ?2, last_used_ms = ?3 WHERE id = ?1"},
        {&clear_entries, "DELETE FROM entries"},
        {&clear_bodies, "DELETE FROM bodies"},
    };
    for (const auto& [statement, sql] : all) {
      int rc = statement->Prepare(db, sql);
      if (rc != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
  }
};

int StepDone(const Statement& statement) {
  StatementScope scope(statement);
  int rc = sqlite3_step(scope.get());
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

}  // namespace

struct DiskCache::Impl {
  struct Touch {
    std::int64_t id;
    std::int64_t seq;
    std::int64_t time_ms;
  };

  std::string path;
  DiskCacheOptions options;
  std::string open_notice;

  mutable std::mutex mu;
  sqlite3* db = nullptr;
  std::unique_ptr<Statements> statements;
  std::uint64_t entry_count = 0;
  std::uint64_t stored_bytes = 0;
  std::int64_t next_seq = 1;
  std::vector<Touch> pending_touches;
  // Reads share one read transaction, kept open from the first read until the next write (or
  // close): each read transaction costs SQLite an fstat of the database, which would otherwise be
  // the one system call of every Get. Safe because this connection holds the file exclusively, so
  // no other writer can make the snapshot stale, and every write ends it first.
  bool reading = false;
  DiskCacheStats counters;  // only the cumulative counters are kept here

  ~Impl() { Close(); }

  std::int64_t Now() const { return options.now_unix_ms ? options.now_unix_ms() : SystemNowMs(); }

  void Log(const std::string& line) const {
    if (options.log) {
      options.log(line);
    } else {
      std::fprintf(stderr, "lethe: disk cache: %s\n", line.c_str());
    }
  }

  void Close() {
    if (db == nullptr) return;
    EndRead();
    if (!pending_touches.empty()) (void)WriteTouchesInTransaction();
    statements.reset();
    sqlite3_close(db);
    db = nullptr;
  }

  // Records the failure kind in the counters and returns the status.
  DiskCacheStatus Fail(int rc, const std::string& what) {
    DiskCacheStatus status = StatusFromSqlite(db, rc, what);
    EndRead();  // a failed read must not leave its (maybe rolled back) transaction behind
    if (status.error() == DiskCacheError::kDiskFull) ++counters.disk_full_count;
    if (status.error() == DiskCacheError::kIoError) ++counters.io_error_count;
    return status;
  }

  // ---- opening -------------------------------------------------------------------------------

  // Opens the connection and prepares the file. `unusable` is set when the file must be moved aside.
  DiskCacheStatus TryOpen(internal::PrepareOutcome* outcome) {
    const char* vfs =
        options.sqlite_vfs_for_testing.empty() ? nullptr : options.sqlite_vfs_for_testing.c_str();
    // NOMUTEX: this object serialises every use of the connection with its own mutex.
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX |
                SQLITE_OPEN_EXRESCODE;
    struct stat wal_info;
    bool unclean = ::stat((path + "-wal").c_str(), &wal_info) == 0;
    int rc = sqlite3_open_v2(path.c_str(), &db, flags, vfs);
    if (rc != SQLITE_OK) {
      DiskCacheStatus status = StatusFromSqlite(db, rc, "opening " + path);
      sqlite3_close(db);
      db = nullptr;
      return status;
    }
    *outcome = internal::PrepareDatabase(db, options, unclean);
    if (!outcome->status.ok() || outcome->unusable != internal::UnusableReason::kNone) {
      sqlite3_close(db);
      db = nullptr;
      return outcome->status;
    }
    statements = std::make_unique<Statements>();
    rc = statements->PrepareAll(db);
    if (rc == SQLITE_OK) rc = LoadTotals();
    if (rc != SQLITE_OK) {
      DiskCacheStatus status = StatusFromSqlite(db, rc, "preparing " + path);
      if (status.error() == DiskCacheError::kCorrupt) {
        // Damage that the open check did not run into (or was not asked to look for).
        outcome->unusable = internal::UnusableReason::kCorrupt;
        outcome->detail = sqlite3_errmsg(db);
        status = DiskCacheStatus();
      }
      Close();
      return status;
    }
    return DiskCacheStatus();
  }

  int LoadTotals() {
    Statement totals;
    int rc = totals.Prepare(db,
                            "SELECT count(*), coalesce(sum(charged_bytes), 0),"
                            " coalesce(max(use_seq), 0) FROM entries");
    if (rc != SQLITE_OK) return rc;
    rc = sqlite3_step(totals.get());
    if (rc != SQLITE_ROW) return rc;
    entry_count = static_cast<std::uint64_t>(sqlite3_column_int64(totals.get(), 0));
    stored_bytes = static_cast<std::uint64_t>(sqlite3_column_int64(totals.get(), 1));
    next_seq = sqlite3_column_int64(totals.get(), 2) + 1;
    return SQLITE_OK;
  }

  // Checks the invariants at the top of this file against the database (O(entries): debug only).
  void Validate() {
    if constexpr (LETHE_DEBUG_LEVEL >= 2) {
      std::int64_t entries = 0;
      std::int64_t bodies = 0;
      std::int64_t bytes = 0;
      std::int64_t max_seq = 0;
      // A query that fails (an injected fault, no memory) leaves nothing to compare: skip.
      if (internal::QueryInt64(db, "SELECT count(*) FROM entries", &entries) != SQLITE_OK ||
          internal::QueryInt64(db, "SELECT count(*) FROM bodies", &bodies) != SQLITE_OK ||
          internal::QueryInt64(db, "SELECT coalesce(sum(charged_bytes), 0) FROM entries",
                               &bytes) != SQLITE_OK ||
          internal::QueryInt64(db, "SELECT coalesce(max(use_seq), 0) FROM entries", &max_seq) !=
              SQLITE_OK) {
        return;
      }
      LETHE_CHECK(static_cast<std::uint64_t>(entries) == entry_count, "entry count drifted");
      LETHE_CHECK(entries == bodies, "an entry without its body, or a body without its entry");
      LETHE_CHECK(static_cast<std::uint64_t>(bytes) == stored_bytes, "stored bytes drifted");
      LETHE_CHECK(stored_bytes <= options.capacity_bytes, "over the cap");
      LETHE_CHECK(max_seq < next_seq, "LRU sequence went backwards");
      LETHE_CHECK(!reading && sqlite3_get_autocommit(db) != 0, "a transaction left open");
    }
  }

  // ---- transactions --------------------------------------------------------------------------

  int BeginRead() {
    if (reading) return SQLITE_OK;
    int rc = StepDone(statements->begin_read);
    reading = rc == SQLITE_OK;
    return rc;
  }

  // Ends the shared read transaction, if one is open (also after a failed read).
  void EndRead() {
    if (!reading) return;
    reading = false;
    if (sqlite3_get_autocommit(db) == 0) (void)StepDone(statements->commit);
  }

  int BeginWrite() {
    EndRead();
    return StepDone(statements->begin);
  }

  void RollbackIfOpen() {
    // After SQLITE_FULL or an I/O error SQLite may already have rolled back.
    if (sqlite3_get_autocommit(db) == 0) (void)StepDone(statements->rollback);
  }

  int WriteTouches() {
    for (const Touch& touch : pending_touches) {
      StatementScope scope(statements->touch);
      sqlite3_bind_int64(scope.get(), 1, touch.id);
      sqlite3_bind_int64(scope.get(), 2, touch.seq);
      sqlite3_bind_int64(scope.get(), 3, touch.time_ms);
      int rc = sqlite3_step(scope.get());
      if (rc != SQLITE_DONE) return rc;
    }
    return SQLITE_OK;
  }

  // Called after a commit that wrote the pending touches.
  void TouchesWritten() {
    if (pending_touches.empty()) return;
    pending_touches.clear();
    ++counters.touch_flush_count;
  }

  DiskCacheStatus WriteTouchesInTransaction() {
    if (pending_touches.empty()) return DiskCacheStatus();
    int rc = BeginWrite();
    if (rc == SQLITE_OK) rc = WriteTouches();
    if (rc == SQLITE_OK) rc = StepDone(statements->commit);
    if (rc != SQLITE_OK) {
      RollbackIfOpen();
      // Recency is advisory: dropping the batch keeps memory bounded when the disk keeps failing.
      pending_touches.clear();
      return Fail(rc, "writing LRU touches");
    }
    TouchesWritten();
    return DiskCacheStatus();
  }

  // ---- deleting ------------------------------------------------------------------------------

  int DeleteById(std::int64_t id) {
    for (const Statement* statement : {&statements->delete_entry, &statements->delete_body}) {
      StatementScope scope(*statement);
      sqlite3_bind_int64(scope.get(), 1, id);
      int rc = sqlite3_step(scope.get());
      if (rc != SQLITE_DONE) return rc;
    }
    return SQLITE_OK;
  }

  // Deletes the entry of `url` if there is one; *charged is its charged bytes (0 when absent).
  int DeleteByUrl(std::string_view url, bool* found, std::uint64_t* charged) {
    *found = false;
    *charged = 0;
    std::int64_t id = 0;
    {
      StatementScope scope(statements->find_id);
      BindText(scope.get(), 1, url);
      int rc = sqlite3_step(scope.get());
      if (rc == SQLITE_DONE) return SQLITE_OK;
      if (rc != SQLITE_ROW) return rc;
      id = sqlite3_column_int64(scope.get(), 0);
      *charged = static_cast<std::uint64_t>(sqlite3_column_int64(scope.get(), 1));
    }
    *found = true;
    return DeleteById(id);
  }

  // Evicts least recently used entries until `needed_bytes` more fit under the cap.
  // *stored is the running total inside the transaction; counts go to *evicted_*.
  int EvictFor(std::uint64_t needed_bytes, std::uint64_t* stored, std::uint64_t* evicted_count,
               std::uint64_t* evicted_bytes) {
    while (*stored + needed_bytes > options.capacity_bytes && *stored > 0) {
      std::int64_t id = 0;
      std::uint64_t charged = 0;
      {
        StatementScope scope(statements->oldest);
        int rc = sqlite3_step(scope.get());
        if (rc == SQLITE_DONE) break;
        if (rc != SQLITE_ROW) return rc;
        id = sqlite3_column_int64(scope.get(), 0);
        charged = static_cast<std::uint64_t>(sqlite3_column_int64(scope.get(), 1));
      }
      int rc = DeleteById(id);
      if (rc != SQLITE_OK) return rc;
      *stored -= std::min(*stored, charged);
      ++*evicted_count;
      *evicted_bytes += charged;
    }
    return SQLITE_OK;
  }

  // ---- writing -------------------------------------------------------------------------------

  DiskCacheStatus Validate(std::string_view url, std::uint64_t body_bytes,
                           const DiskCacheMetadata& metadata, std::uint64_t charged) const {
    if (url.empty()) return {DiskCacheError::kInvalidArgument, "Put: the URL is empty"};
    if (url.size() > options.max_url_bytes) {
      return {DiskCacheError::kUrlTooLong, "Put(" + ShortUrl(url) + "): the URL is " +
                                               std::to_string(url.size()) +
                                               " bytes, over the limit of " +
                                               std::to_string(options.max_url_bytes)};
    }
    const std::pair<const char*, const std::string*> fields[] = {
        {"content type", &metadata.content_type},
        {"ETag", &metadata.etag},
        {"Last-Modified", &metadata.last_modified}};
    for (const auto& [name, value] : fields) {
      if (value->size() > options.max_metadata_field_bytes) {
        return {DiskCacheError::kInvalidArgument,
                "Put(" + ShortUrl(url) + "): the " + name + " is " +
                    std::to_string(value->size()) + " bytes, over the limit of " +
                    std::to_string(options.max_metadata_field_bytes)};
      }
    }
    std::uint64_t limit = std::min(options.max_entry_bytes, options.capacity_bytes);
    // SQLite refuses a value over SQLITE_LIMIT_LENGTH; refuse it here with the same kind of reason.
    limit = std::min<std::uint64_t>(limit, static_cast<std::uint64_t>(
                                               sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1)));
    if (charged > limit) {
      return {DiskCacheError::kEntryTooLarge,
              "Put(" + ShortUrl(url) + "): the entry is " + std::to_string(charged) +
                  " bytes (body " + std::to_string(body_bytes) + "), over the limit of " +
                  std::to_string(limit) + " bytes"};
    }
    return DiskCacheStatus();
  }

  int InsertBody(std::int64_t id, std::span<const std::uint8_t> bytes) {
    bool incremental = bytes.size() >= options.large_entry_bytes;
    {
      StatementScope scope(statements->insert_body);
      sqlite3_bind_int64(scope.get(), 1, id);
      // A bound blob is copied into the record SQLite builds (a body-sized allocation inside
      // SQLite); a zeroblob is not, and the bytes then go straight to the pages.
      int rc = incremental ? sqlite3_bind_zeroblob64(scope.get(), 2, bytes.size())
                           : sqlite3_bind_blob64(scope.get(), 2,
                                                 bytes.empty() ? "" : static_cast<const void*>(
                                                                          bytes.data()),
                                                 bytes.size(), SQLITE_STATIC);
      if (rc != SQLITE_OK) return rc;
      rc = sqlite3_step(scope.get());
      if (rc != SQLITE_DONE) return rc;
    }
    if (!incremental) return SQLITE_OK;
    sqlite3_blob* blob = nullptr;
    int rc = sqlite3_blob_open(db, "main", "bodies", "body", id, 1, &blob);
    constexpr std::size_t kChunkBytes = 1 << 20;
    for (std::size_t offset = 0; rc == SQLITE_OK && offset < bytes.size(); offset += kChunkBytes) {
      std::size_t n = std::min(kChunkBytes, bytes.size() - offset);
      rc = sqlite3_blob_write(blob, bytes.data() + offset, static_cast<int>(n),
                              static_cast<int>(offset));
    }
    int close_rc = sqlite3_blob_close(blob);
    return rc != SQLITE_OK ? rc : close_rc;
  }

  // The body of Put inside its transaction. On success *stored, *count, *evicted_* are the new
  // figures; the caller commits and applies them.
  int PutLocked(std::string_view url, std::span<const std::uint8_t> bytes,
                const DiskCacheMetadata& metadata, std::uint64_t charged, std::uint64_t* stored,
                std::uint64_t* count, std::uint64_t* evicted_count,
                std::uint64_t* evicted_bytes) {
    // Step 1: pending touches first, so that eviction sees the true LRU order and no touch can
    // land on a row id that this transaction frees and reuses.
    int rc = WriteTouches();
    if (rc != SQLITE_OK) return rc;
    // Step 2: the old entry of this URL goes.
    bool found = false;
    std::uint64_t old_charged = 0;
    rc = DeleteByUrl(url, &found, &old_charged);
    if (rc != SQLITE_OK) return rc;
    if (found) {
      *stored -= std::min(*stored, old_charged);
      --*count;
    }
    // Step 3: least recently used entries go until the new one fits.
    std::uint64_t before = *evicted_count;
    rc = EvictFor(charged, stored, evicted_count, evicted_bytes);
    if (rc != SQLITE_OK) return rc;
    *count -= std::min(*count, *evicted_count - before);
    // Step 4: the entry row, then its body under the same id.
    std::int64_t now = Now();
    {
      StatementScope scope(statements->insert_entry);
      BindText(scope.get(), 1, url);
      BindText(scope.get(), 2, metadata.content_type);
      BindText(scope.get(), 3, metadata.etag);
      BindText(scope.get(), 4, metadata.last_modified);
      sqlite3_bind_int64(scope.get(), 5, static_cast<std::int64_t>(bytes.size()));
      sqlite3_bind_int64(scope.get(), 6, static_cast<std::int64_t>(charged));
      sqlite3_bind_int64(scope.get(), 7, now);
      sqlite3_bind_int64(scope.get(), 8, next_seq);
      rc = sqlite3_step(scope.get());
      if (rc != SQLITE_DONE) return rc;
    }
    rc = InsertBody(sqlite3_last_insert_rowid(db), bytes);
    if (rc != SQLITE_OK) return rc;
    *stored += charged;
    ++*count;
    return SQLITE_OK;
  }

  DiskCacheStatus Put(std::string_view url, std::span<const std::uint8_t> bytes,
                      const DiskCacheMetadata& metadata) {
    std::uint64_t charged = bytes.size() + url.size() + metadata.content_type.size() +
                            metadata.etag.size() + metadata.last_modified.size();
    std::lock_guard<std::mutex> lock(mu);
    if (DiskCacheStatus status = Validate(url, bytes.size(), metadata, charged); !status.ok()) {
      ++counters.rejected_count;
      return status;
    }
    std::uint64_t stored = stored_bytes;
    std::uint64_t count = entry_count;
    std::uint64_t evicted_count = 0;
    std::uint64_t evicted_bytes = 0;
    int rc = BeginWrite();
    if (rc == SQLITE_OK) {
      rc = PutLocked(url, bytes, metadata, charged, &stored, &count, &evicted_count,
                     &evicted_bytes);
    }
    if (rc == SQLITE_OK) rc = StepDone(statements->commit);
    if (rc != SQLITE_OK) {
      RollbackIfOpen();
      ++counters.put_failed_count;
      DiskCacheStatus status =
          Fail(rc, "Put(" + ShortUrl(url) + ", " + std::to_string(bytes.size()) + " bytes)");
      Validate();
      return status;
    }
    stored_bytes = stored;
    entry_count = count;
    ++next_seq;
    TouchesWritten();
    ++counters.put_count;
    counters.eviction_count += evicted_count;
    counters.evicted_bytes += evicted_bytes;
    Validate();
    return DiskCacheStatus();
  }

  // ---- reading -------------------------------------------------------------------------------

  // Finds `url`: SQLITE_ROW with *id and *info set, SQLITE_DONE when absent, or an error code.
  int Find(std::string_view url, std::int64_t* id, DiskCacheEntryInfo* info) {
    StatementScope scope(statements->find);
    BindText(scope.get(), 1, url);
    int rc = sqlite3_step(scope.get());
    if (rc != SQLITE_ROW) return rc;
    sqlite3_stmt* s = scope.get();
    *id = sqlite3_column_int64(s, 0);
    info->size_bytes = static_cast<std::uint64_t>(sqlite3_column_int64(s, 1));
    info->charged_bytes = static_cast<std::uint64_t>(sqlite3_column_int64(s, 2));
    info->metadata.content_type = ColumnText(s, 3);
    info->metadata.etag = ColumnText(s, 4);
    info->metadata.last_modified = ColumnText(s, 5);
    info->stored_time_ms = sqlite3_column_int64(s, 6);
    info->last_used_time_ms = sqlite3_column_int64(s, 7);
    return SQLITE_ROW;
  }

  // Reads the body of entry `id` (expected `size` bytes) with incremental blob I/O: straight from
  // the pages (or the memory map) into the caller's buffer, with no copy inside SQLite.
  DiskCacheStatus ReadBody(std::string_view url, std::int64_t id, std::uint64_t size,
                           std::vector<std::uint8_t>* out) {
    sqlite3_blob* blob = nullptr;
    int rc = sqlite3_blob_open(db, "main", "bodies", "body", id, 0, &blob);
    if (rc != SQLITE_OK) {
      sqlite3_blob_close(blob);
      if ((rc & 0xff) == SQLITE_ERROR) {
        return {DiskCacheError::kCorrupt, "Get(" + ShortUrl(url) + "): the entry has no body"};
      }
      return Fail(rc, "Get(" + ShortUrl(url) + ")");
    }
    std::uint64_t blob_bytes = static_cast<std::uint64_t>(sqlite3_blob_bytes(blob));
    if (blob_bytes != size) {
      sqlite3_blob_close(blob);
      return {DiskCacheError::kCorrupt, "Get(" + ShortUrl(url) + "): the body is " +
                                            std::to_string(blob_bytes) + " bytes, the entry says " +
                                            std::to_string(size)};
    }
    out->resize(size);
    if (size > 0) rc = sqlite3_blob_read(blob, out->data(), static_cast<int>(size), 0);
    sqlite3_blob_close(blob);
    if (rc != SQLITE_OK) {
      out->clear();
      return Fail(rc, "Get(" + ShortUrl(url) + ")");
    }
    return DiskCacheStatus();
  }

  DiskCacheResult<DiskCacheEntry> Get(std::string_view url) {
    std::lock_guard<std::mutex> lock(mu);
    DiskCacheEntry entry;
    std::int64_t id = 0;
    int rc = BeginRead();
    if (rc != SQLITE_OK) return Fail(rc, "Get(" + ShortUrl(url) + ")");
    rc = Find(url, &id, &entry.info);
    if (rc == SQLITE_DONE) {
      ++counters.miss_count;
      return DiskCacheStatus(DiskCacheError::kNotFound, "Get(" + ShortUrl(url) + "): not cached");
    }
    if (rc != SQLITE_ROW) return Fail(rc, "Get(" + ShortUrl(url) + ")");
    if (DiskCacheStatus status = ReadBody(url, id, entry.info.size_bytes, &entry.bytes);
        !status.ok()) {
      return status;
    }
    ++counters.hit_count;
    entry.info.last_used_time_ms = Now();
    pending_touches.push_back({id, next_seq++, entry.info.last_used_time_ms});
    if (pending_touches.size() >= std::max<std::size_t>(1, options.max_pending_touches)) {
      (void)WriteTouchesInTransaction();  // advisory; failures are counted, the read succeeded
    }
    return entry;
  }

  DiskCacheResult<DiskCacheEntryInfo> GetInfo(std::string_view url) {
    std::lock_guard<std::mutex> lock(mu);
    DiskCacheEntryInfo info;
    std::int64_t id = 0;
    int rc = BeginRead();
    if (rc != SQLITE_OK) return Fail(rc, "GetInfo(" + ShortUrl(url) + ")");
    rc = Find(url, &id, &info);
    if (rc == SQLITE_DONE) {
      return DiskCacheStatus(DiskCacheError::kNotFound, "GetInfo(" + ShortUrl(url) + "): not cached");
    }
    if (rc != SQLITE_ROW) return Fail(rc, "GetInfo(" + ShortUrl(url) + ")");
    return info;
  }

  // ---- removing ------------------------------------------------------------------------------

  DiskCacheStatus Remove(std::string_view url) {
    std::lock_guard<std::mutex> lock(mu);
    bool found = false;
    std::uint64_t charged = 0;
    int rc = BeginWrite();
    if (rc == SQLITE_OK) rc = WriteTouches();
    if (rc == SQLITE_OK) rc = DeleteByUrl(url, &found, &charged);
    if (rc == SQLITE_OK) rc = StepDone(statements->commit);
    if (rc != SQLITE_OK) {
      RollbackIfOpen();
      return Fail(rc, "Remove(" + ShortUrl(url) + ")");
    }
    TouchesWritten();
    if (!found) {
      return {DiskCacheError::kNotFound, "Remove(" + ShortUrl(url) + "): not cached"};
    }
    stored_bytes -= std::min(stored_bytes, charged);
    --entry_count;
    ++counters.remove_count;
    Validate();
    return DiskCacheStatus();
  }

  DiskCacheStatus Clear() {
    std::lock_guard<std::mutex> lock(mu);
    int rc = BeginWrite();
    if (rc == SQLITE_OK) rc = StepDone(statements->clear_entries);
    if (rc == SQLITE_OK) rc = StepDone(statements->clear_bodies);
    if (rc == SQLITE_OK) rc = StepDone(statements->commit);
    if (rc != SQLITE_OK) {
      RollbackIfOpen();
      return Fail(rc, "Clear()");
    }
    pending_touches.clear();
    counters.remove_count += entry_count;
    entry_count = 0;
    stored_bytes = 0;
    return DiskCacheStatus();
  }
};

// ---- the facade ------------------------------------------------------------------------------

namespace {

// Puts SQLite on Lethe's allocator where the process runs on it (see DiskCacheOptions::
// sqlite_allocator). Must run before the first sqlite3_* call that allocates: sqlite3_open_v2
// initialises SQLite, after which its allocator cannot change. Says once when it is too late.
void ChooseSqliteAllocator(DiskCacheOptions::SqliteAllocator wanted,
                           const std::function<void(const std::string&)>& log) {
  if (wanted != DiskCacheOptions::SqliteAllocator::kAuto) return;
  if (std::string_view(lethe_allocator_name()) != "lethe") return;  // sanitizer builds: forwarded
  static std::once_flag once;
  std::call_once(once, [&] {
    const SqliteAllocatorOutcome outcome = UseLetheAllocatorForSqlite();
    if (outcome != SqliteAllocatorOutcome::kInstalled &&
        outcome != SqliteAllocatorOutcome::kAlreadyInstalled) {
      log(SqliteAllocatorOutcomeMessage(outcome));
    }
  });
}

}  // namespace

DiskCacheResult<std::unique_ptr<DiskCache>> DiskCache::Open(const std::string& path,
                                                             DiskCacheOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->options = std::move(options);
  ChooseSqliteAllocator(impl->options.sqlite_allocator,
                        [&impl](const std::string& line) { impl->Log(line); });
  // Two attempts: the file as it is, then (if it was unusable and moved aside) a new one.
  for (int attempt = 0; attempt < 2; ++attempt) {
    internal::PrepareOutcome outcome;
    DiskCacheStatus status = impl->TryOpen(&outcome);
    if (!status.ok()) return status;
    if (outcome.unusable == internal::UnusableReason::kNone) {
      if (!outcome.migrated.empty()) {
        impl->Log(path + ": " + outcome.migrated);
        if (!impl->open_notice.empty()) impl->open_notice += "; ";
        impl->open_notice += outcome.migrated;
      }
      return std::unique_ptr<DiskCache>(new DiskCache(std::move(impl)));
    }
    if (attempt == 1) {
      return DiskCacheStatus(DiskCacheError::kCorrupt,
                             "a new cache at " + path + " is unusable too (" +
                                 internal::UnusableReasonName(outcome.unusable) + ": " +
                                 outcome.detail + ")");
    }
    DiskCacheResult<std::string> aside =
        internal::MoveAside(path, outcome.unusable, impl->Now());
    if (!aside.ok()) return aside.status();
    ++impl->counters.moved_aside_count;
    impl->open_notice = std::string("the file at ") + path + " was " +
                        internal::UnusableReasonName(outcome.unusable) + " (" + outcome.detail +
                        "); moved it aside to " + aside.value() + " and created a new cache";
    impl->Log(impl->open_notice);
  }
  return DiskCacheStatus(DiskCacheError::kInternal, "unreachable");
}

DiskCache::DiskCache(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

DiskCache::~DiskCache() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->Close();
}

DiskCacheStatus DiskCache::Put(std::string_view url, std::span<const std::uint8_t> bytes,
                               const DiskCacheMetadata& metadata) {
  return impl_->Put(url, bytes, metadata);
}

DiskCacheResult<DiskCacheEntry> DiskCache::Get(std::string_view url) { return impl_->Get(url); }

DiskCacheResult<DiskCacheEntryInfo> DiskCache::GetInfo(std::string_view url) {
  return impl_->GetInfo(url);
}

DiskCacheStatus DiskCache::Remove(std::string_view url) { return impl_->Remove(url); }

bool DiskCache::Contains(std::string_view url) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->BeginRead() != SQLITE_OK) {
    impl_->EndRead();
    return false;
  }
  StatementScope scope(impl_->statements->find_id);
  BindText(scope.get(), 1, url);
  return sqlite3_step(scope.get()) == SQLITE_ROW;
}

DiskCacheStatus DiskCache::Clear() { return impl_->Clear(); }

DiskCacheStatus DiskCache::Flush() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->WriteTouchesInTransaction();
}

DiskCacheStats DiskCache::Stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  DiskCacheStats stats = impl_->counters;
  stats.entry_count = impl_->entry_count;
  stats.stored_bytes = impl_->stored_bytes;
  stats.capacity_bytes = impl_->options.capacity_bytes;
  stats.file_bytes = FileBytes(impl_->path) + FileBytes(impl_->path + "-wal");
  stats.pending_touch_count = impl_->pending_touches.size();
  stats.memory_bytes = sizeof(Impl) + sizeof(Statements) +
                       impl_->pending_touches.capacity() * sizeof(Impl::Touch) +
                       impl_->path.capacity() + impl_->open_notice.capacity();
  return stats;
}

std::uint64_t DiskCache::ReleaseMemory() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  const std::uint64_t before = SqliteMemoryInUse().in_use_bytes;
  impl_->EndRead();
  (void)sqlite3_db_release_memory(impl_->db);
  const std::uint64_t after = SqliteMemoryInUse().in_use_bytes;
  return before > after ? before - after : 0;
}

MemoryPressure::Subscription DiskCache::SubscribeTo(MemoryPressure& pressure) {
  return pressure.Subscribe("disk-cache", [this](const MemoryPressureEvent& event) -> uint64_t {
    return event.level == MemoryPressureLevel::kCritical ? ReleaseMemory() : 0;
  });
}

MemoryReporter::Registration DiskCache::RegisterReporter(MemoryReporter& reporter) {
  return reporter.Register("disk-cache", [this](MemoryReportCollector& collector) {
    DiskCacheStats stats = Stats();
    stats.ForEachCounter([&](const char* name, const char* description, std::uint64_t value) {
      std::string path = std::string("disk-cache/") + name;
      std::replace(path.begin(), path.end(), '_', '-');
      collector.Counter(path, value, std::string(description) + ".");
    });
    auto disk_bytes = [&](const char* name, std::uint64_t bytes, const char* description) {
      collector.Add(MemoryReportEntry{std::string("lethe-disk-cache/") + name, ReportKind::kOther,
                                      ReportUnits::kBytes, static_cast<std::int64_t>(bytes),
                                      description});
    };
    disk_bytes("stored", stats.stored_bytes, "Bytes of the cached entries, as charged against the cap.");
    disk_bytes("file", stats.file_bytes, "The database file and its WAL on disk.");
  });
}

const std::string& DiskCache::path() const { return impl_->path; }

const std::string& DiskCache::open_notice() const { return impl_->open_notice; }

DiskCacheResult<std::string> DiskCache::IntegrityCheck() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::string verdict;
  impl_->EndRead();
  int rc = internal::QueryText(impl_->db, "PRAGMA integrity_check", &verdict);
  if (rc != SQLITE_OK) return impl_->Fail(rc, "integrity_check");
  return verdict;
}

}  // namespace lethe::cache
