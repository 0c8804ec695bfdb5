// disk_cache_schema.cc — see disk_cache_schema.h.
#include "disk_cache_schema.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include "sqlite_util.h"

namespace lethe::cache::internal {
namespace {

constexpr const char* kCreateSchemaV2 =
    "CREATE TABLE entries("
    "  id INTEGER PRIMARY KEY,"
    "  url TEXT NOT NULL UNIQUE,"
    "  content_type TEXT NOT NULL DEFAULT '',"
    "  etag TEXT NOT NULL DEFAULT '',"
    "  last_modified TEXT NOT NULL DEFAULT '',"
    "  size_bytes INTEGER NOT NULL,"
    "  charged_bytes INTEGER NOT NULL,"
    "  stored_ms INTEGER NOT NULL,"
    "  last_used_ms INTEGER NOT NULL,"
    "  use_seq INTEGER NOT NULL);"
    "CREATE INDEX entries_by_use ON entries(use_seq);"
    "CREATE TABLE bodies(id INTEGER PRIMARY KEY, body BLOB NOT NULL);";

// Version 1 kept the body inline and no validators. Ids keep the old rowids; the LRU sequence
// follows the old last-used times.
constexpr const char* kMigrateV1ToV2 =
    "INSERT INTO entries(id, url, content_type, size_bytes, charged_bytes, stored_ms, last_used_ms,"
    "                    use_seq)"
    "  SELECT rowid, url, coalesce(content_type, ''), length(body),"
    "         length(body) + length(CAST(url AS BLOB))"
    "           + length(CAST(coalesce(content_type, '') AS BLOB)),"
    "         stored_ms, last_used_ms, row_number() OVER (ORDER BY last_used_ms, rowid)"
    "  FROM cache;"
    "INSERT INTO bodies(id, body) SELECT rowid, body FROM cache;"
    "DROP TABLE cache;";

struct Migration {
  int from_version;
  const char* sql;  // runs after kCreateSchemaV2 when the target tables do not exist yet
  bool creates_current_tables;
};

// Step N migrates version N to N + 1, each in its own transaction together with the user_version.
constexpr Migration kMigrations[] = {{1, kMigrateV1ToV2, true}};

static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == DiskCache::kSchemaVersion - 1,
              "every schema version below the current one needs a migration");

int SetPragmas(sqlite3* db, const DiskCacheOptions& options, std::string* journal_mode) {
  // Exclusive locking before WAL: the WAL index then lives in heap memory (no -shm file, no shared
  // memory locks per transaction), which is where most of SQLite's per-read system calls go.
  int rc = Exec(db, "PRAGMA locking_mode=EXCLUSIVE");
  if (rc != SQLITE_OK) return rc;
  // A new file gets its page size before the first write; an existing file keeps its own.
  std::string set_page_size = "PRAGMA page_size=" + std::to_string(options.page_size_bytes);
  rc = Exec(db, set_page_size.c_str());
  if (rc != SQLITE_OK) return rc;
  rc = QueryText(db, "PRAGMA journal_mode=WAL", journal_mode);
  if (rc != SQLITE_OK) return rc;
  std::int64_t page_size = 4096;
  rc = QueryInt64(db, "PRAGMA page_size", &page_size);
  if (rc != SQLITE_OK) return rc;
  std::uint64_t checkpoint_pages =
      std::max<std::uint64_t>(1, options.wal_checkpoint_bytes / static_cast<std::uint64_t>(page_size));
  std::string sizes = "PRAGMA synchronous=NORMAL; PRAGMA secure_delete=FAST;"
                      "PRAGMA journal_size_limit=" + std::to_string(options.wal_checkpoint_bytes) +
                      "; PRAGMA wal_autocheckpoint=" + std::to_string(checkpoint_pages) +
                      "; PRAGMA cache_size=-" + std::to_string(options.page_cache_kib) +
                      "; PRAGMA mmap_size=" + std::to_string(options.mmap_bytes);
  return Exec(db, sizes.c_str());
}

DiskCacheStatus Failed(sqlite3* db, int rc, const char* what) {
  return StatusFromSqlite(db, rc, what);
}

// Runs `sql` and sets user_version to `version` in one transaction.
int RunInTransaction(sqlite3* db, const std::string& sql, int version) {
  std::string all = "BEGIN IMMEDIATE;" + sql + "PRAGMA user_version=" + std::to_string(version) +
                    ";COMMIT;";
  int rc = Exec(db, all.c_str());
  if (rc != SQLITE_OK && sqlite3_get_autocommit(db) == 0) Exec(db, "ROLLBACK");
  return rc;
}

bool IsCorruptCode(int rc) {
  return (rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB;
}

PrepareOutcome Unusable(UnusableReason reason, std::string detail) {
  PrepareOutcome outcome;
  outcome.unusable = reason;
  outcome.detail = std::move(detail);
  return outcome;
}

PrepareOutcome CorruptOrFailed(sqlite3* db, int rc, const char* what) {
  if (IsCorruptCode(rc)) return Unusable(UnusableReason::kCorrupt, sqlite3_errmsg(db));
  PrepareOutcome outcome;
  outcome.status = Failed(db, rc, what);
  return outcome;
}

PrepareOutcome CreateOrMigrate(sqlite3* db) {
  PrepareOutcome outcome;
  std::int64_t version = 0;
  std::int64_t table_count = 0;
  int rc = QueryInt64(db, "PRAGMA user_version", &version);
  if (rc == SQLITE_OK) {
    rc = QueryInt64(db, "SELECT count(*) FROM sqlite_schema WHERE type='table'", &table_count);
  }
  if (rc != SQLITE_OK) return CorruptOrFailed(db, rc, "reading the schema version");

  if (version > DiskCache::kSchemaVersion) {
    return Unusable(UnusableReason::kNewerSchema,
                    "schema version " + std::to_string(version) + ", this code knows up to " +
                        std::to_string(DiskCache::kSchemaVersion));
  }
  if (version == 0) {
    if (table_count != 0) {
      return Unusable(UnusableReason::kForeign,
                      "a SQLite database with " + std::to_string(table_count) +
                          " tables and no Lethe schema version");
    }
    rc = RunInTransaction(db, kCreateSchemaV2, DiskCache::kSchemaVersion);
    if (rc != SQLITE_OK) return CorruptOrFailed(db, rc, "creating the schema");
    return outcome;
  }
  for (const Migration& step : kMigrations) {
    if (step.from_version < version) continue;
    std::string sql = step.creates_current_tables ? std::string(kCreateSchemaV2) : std::string();
    sql += step.sql;
    rc = RunInTransaction(db, sql, step.from_version + 1);
    if (rc != SQLITE_OK) {
      // A version-1 file without the version-1 table is not one of ours after all.
      if ((rc & 0xff) == SQLITE_ERROR) {
        return Unusable(UnusableReason::kForeign,
                        "schema version " + std::to_string(version) +
                            " but migration failed: " + sqlite3_errmsg(db));
      }
      return CorruptOrFailed(db, rc, "migrating the schema");
    }
    if (!outcome.migrated.empty()) outcome.migrated += ", ";
    outcome.migrated += "migrated schema " + std::to_string(step.from_version) + " -> " +
                        std::to_string(step.from_version + 1);
    version = step.from_version + 1;
  }
  // The current version must have the current tables.
  std::int64_t ours = 0;
  rc = QueryInt64(db,
                  "SELECT count(*) FROM sqlite_schema WHERE type='table' AND name IN "
                  "('entries','bodies')",
                  &ours);
  if (rc != SQLITE_OK) return CorruptOrFailed(db, rc, "reading the schema");
  if (ours != 2) {
    return Unusable(UnusableReason::kForeign, "schema version " + std::to_string(version) +
                                                  " without the tables entries and bodies");
  }
  return outcome;
}

}  // namespace

const char* UnusableReasonName(UnusableReason reason) {
  switch (reason) {
    case UnusableReason::kNone: return "usable";
    case UnusableReason::kCorrupt: return "corrupt";
    case UnusableReason::kForeign: return "foreign";
    case UnusableReason::kNewerSchema: return "newer-schema";
  }
  return "unknown";
}

PrepareOutcome PrepareDatabase(sqlite3* db, const DiskCacheOptions& options, bool unclean) {
  std::string journal_mode;
  int rc = SetPragmas(db, options, &journal_mode);
  if (rc != SQLITE_OK) return CorruptOrFailed(db, rc, "configuring the connection");
  if (journal_mode != "wal") {
    PrepareOutcome outcome;
    outcome.status = DiskCacheStatus(DiskCacheError::kCannotOpen,
                                     "the file cannot use WAL mode (journal_mode is '" +
                                         journal_mode + "')");
    return outcome;
  }
  using OpenCheck = DiskCacheOptions::OpenCheck;
  if (options.open_check == OpenCheck::kQuick || options.open_check == OpenCheck::kFull ||
      (options.open_check == OpenCheck::kQuickAfterCrash && unclean)) {
    std::string verdict;
    const char* check = options.open_check == DiskCacheOptions::OpenCheck::kFull
                            ? "PRAGMA integrity_check(20)"
                            : "PRAGMA quick_check(20)";
    rc = QueryText(db, check, &verdict);
    if (rc != SQLITE_OK) return CorruptOrFailed(db, rc, "checking the database");
    if (verdict != "ok") return Unusable(UnusableReason::kCorrupt, verdict);
  }
  return CreateOrMigrate(db);
}

DiskCacheResult<std::string> MoveAside(const std::string& path, UnusableReason reason,
                                       std::int64_t now_unix_ms) {
  std::time_t seconds = static_cast<std::time_t>(now_unix_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &utc);
  std::string base = path + "." + UnusableReasonName(reason) + "-" + stamp;
  std::string target = base;
  struct stat info;
  for (int n = 1; ::lstat(target.c_str(), &info) == 0; ++n) target = base + "-" + std::to_string(n);

  if (std::rename(path.c_str(), target.c_str()) != 0) {
    return DiskCacheStatus(DiskCacheError::kCannotOpen, "cannot move " + path + " aside to " +
                                                            target + ": " + std::strerror(errno));
  }
  // The WAL belongs to the file it was written for: it moves with it, under SQLite's naming, so
  // that the aside copy can still be opened and examined.
  std::string wal = path + "-wal";
  if (::lstat(wal.c_str(), &info) == 0) std::rename(wal.c_str(), (target + "-wal").c_str());
  std::remove((path + "-shm").c_str());
  return target;
}

}  // namespace lethe::cache::internal
