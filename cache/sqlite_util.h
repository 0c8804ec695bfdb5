// sqlite_util.h — the small layer between DiskCache and the SQLite C API (internal).
//
// Statement: owns a prepared statement (finalized on destruction). StatementScope: resets and
// clears a statement's bindings when it leaves scope, so that a cached statement never keeps a read
// transaction open by accident. StatusFromSqlite: maps a result code to a DiskCacheError with a
// message that names the operation.
//
// Threads: none of this locks; the caller (DiskCache) holds its mutex around every use.
#ifndef LETHE_CACHE_SQLITE_UTIL_H_
#define LETHE_CACHE_SQLITE_UTIL_H_

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "lethe/disk_cache.h"

namespace lethe::cache::internal {

class Statement {
 public:
  Statement() = default;
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Prepares `sql` (one statement) as persistent. Returns the SQLite result code.
  int Prepare(sqlite3* db, std::string_view sql);
  sqlite3_stmt* get() const { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

class StatementScope {
 public:
  explicit StatementScope(const Statement& statement) : stmt_(statement.get()) {}
  ~StatementScope() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  StatementScope(const StatementScope&) = delete;
  StatementScope& operator=(const StatementScope&) = delete;
  sqlite3_stmt* get() const { return stmt_; }

 private:
  sqlite3_stmt* stmt_;
};

// Binds text/blob without copying (SQLITE_STATIC: the caller keeps the bytes alive until reset).
int BindText(sqlite3_stmt* stmt, int index, std::string_view text);
std::string ColumnText(sqlite3_stmt* stmt, int column);

// The error kind of a SQLite result code (primary or extended).
DiskCacheError ErrorFromSqlite(int rc);
// "<what>: <kind description> (sqlite: <errmsg>, code <rc>)".
DiskCacheStatus StatusFromSqlite(sqlite3* db, int rc, std::string_view what);

// Runs SQL that returns no rows we need (one or more statements). Returns the SQLite result code.
int Exec(sqlite3* db, const char* sql);
// Runs a query that returns one integer (PRAGMA user_version, count(*)). Returns the result code.
int QueryInt64(sqlite3* db, const char* sql, std::int64_t* out);
// Runs a query whose rows are text (PRAGMA quick_check) and joins them with "; ".
int QueryText(sqlite3* db, const char* sql, std::string* out);

}  // namespace lethe::cache::internal

#endif  // LETHE_CACHE_SQLITE_UTIL_H_
