// sqlite_util.cc — see sqlite_util.h.
#include "sqlite_util.h"

#include <string>

namespace lethe::cache::internal {

int Statement::Prepare(sqlite3* db, std::string_view sql) {
  sqlite3_finalize(stmt_);
  stmt_ = nullptr;
  return sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                            &stmt_, nullptr);
}

int BindText(sqlite3_stmt* stmt, int index, std::string_view text) {
  // A zero-length string_view may have a null data(); SQLite would bind NULL for a null pointer.
  return sqlite3_bind_text64(stmt, index, text.empty() ? "" : text.data(), text.size(),
                             SQLITE_STATIC, SQLITE_UTF8);
}

std::string ColumnText(sqlite3_stmt* stmt, int column) {
  const unsigned char* text = sqlite3_column_text(stmt, column);
  if (text == nullptr) return std::string();
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt, column)));
}

DiskCacheError ErrorFromSqlite(int rc) {
  switch (rc & 0xff) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
      return DiskCacheError::kOk;
    case SQLITE_FULL:
      return DiskCacheError::kDiskFull;
    case SQLITE_IOERR:
      // SQLite reports ENOSPC during a write as SQLITE_FULL, but an out-of-space during fsync or
      // truncate surfaces as an I/O error; both leave the transaction rolled back.
      return rc == SQLITE_IOERR_NOMEM ? DiskCacheError::kNoMemory : DiskCacheError::kIoError;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return DiskCacheError::kCorrupt;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return DiskCacheError::kBusy;
    case SQLITE_NOMEM:
      return DiskCacheError::kNoMemory;
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_AUTH:
      return DiskCacheError::kCannotOpen;
    case SQLITE_TOOBIG:
      return DiskCacheError::kEntryTooLarge;
    default:
      return DiskCacheError::kInternal;
  }
}

namespace {

const char* Describe(DiskCacheError error) {
  switch (error) {
    case DiskCacheError::kDiskFull: return "disk full";
    case DiskCacheError::kIoError: return "I/O error";
    case DiskCacheError::kCorrupt: return "the database file is corrupt or not a database";
    case DiskCacheError::kBusy: return "locked by another process or another DiskCache";
    case DiskCacheError::kNoMemory: return "out of memory";
    case DiskCacheError::kCannotOpen: return "cannot open or write the file";
    case DiskCacheError::kEntryTooLarge: return "too large for SQLite";
    default: return "SQLite error";
  }
}

}  // namespace

DiskCacheStatus StatusFromSqlite(sqlite3* db, int rc, std::string_view what) {
  DiskCacheError error = ErrorFromSqlite(rc);
  if (error == DiskCacheError::kOk) error = DiskCacheError::kInternal;  // a misused success code
  std::string message(what);
  message += ": ";
  message += Describe(error);
  message += " (sqlite: ";
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  message += ", code ";
  message += std::to_string(rc);
  message += ")";
  return DiskCacheStatus(error, std::move(message));
}

int Exec(sqlite3* db, const char* sql) { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr); }

int QueryInt64(sqlite3* db, const char* sql, std::int64_t* out) {
  Statement statement;
  int rc = statement.Prepare(db, sql);
  if (rc != SQLITE_OK) return rc;
  rc = sqlite3_step(statement.get());
  if (rc == SQLITE_ROW) {
    *out = sqlite3_column_int64(statement.get(), 0);
    return SQLITE_OK;
  }
  return rc == SQLITE_DONE ? SQLITE_ERROR : rc;
}

int QueryText(sqlite3* db, const char* sql, std::string* out) {
  Statement statement;
  int rc = statement.Prepare(db, sql);
  if (rc != SQLITE_OK) return rc;
  out->clear();
  while ((rc = sqlite3_step(statement.get())) == SQLITE_ROW) {
    if (!out->empty()) *out += "; ";
    *out += ColumnText(statement.get(), 0);
  }
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

}  // namespace lethe::cache::internal
