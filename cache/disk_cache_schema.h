// disk_cache_schema.h — the DiskCache's database: connection settings, schema, migrations, and the
// checks that decide whether a file at the cache path is usable (internal).
//
// Schema versions (PRAGMA user_version):
//   0  an empty file: the current schema is created.
//   1  the first layout: one table `cache(url PRIMARY KEY, content_type, body, stored_ms,
//      last_used_ms)`; bodies inline, so touching an entry rewrote its body. Migrated to 2.
//   2  `entries` (metadata, LRU sequence, indexed by URL and by sequence) and `bodies` (id, body).
//
// Threads: called by DiskCache::Open before the cache is shared, on the opening thread.
#ifndef LETHE_CACHE_DISK_CACHE_SCHEMA_H_
#define LETHE_CACHE_DISK_CACHE_SCHEMA_H_

#include <sqlite3.h>

#include <cstdint>
#include <string>

#include "lethe/disk_cache.h"

namespace lethe::cache::internal {

// Why a file cannot be used as it is and must be moved aside; kNone when it can.
enum class UnusableReason : std::uint8_t { kNone, kCorrupt, kForeign, kNewerSchema };
// "corrupt", "foreign", "newer-schema": the word that goes into the aside name.
const char* UnusableReasonName(UnusableReason reason);

// The outcome of preparing an open connection: ok, an unusable file (moved aside by the caller),
// or an error that moving aside cannot fix.
struct PrepareOutcome {
  DiskCacheStatus status;
  UnusableReason unusable = UnusableReason::kNone;
  std::string detail;    // for an unusable file: what was found
  std::string migrated;  // "migrated schema 1 -> 2" when a migration ran
};

// Sets the pragmas (exclusive locking, WAL, synchronous, cache and mmap sizes), runs the open check,
// then creates or migrates the schema.
// `unclean` says that a -wal file was left by the previous session (see OpenCheck).
PrepareOutcome PrepareDatabase(sqlite3* db, const DiskCacheOptions& options, bool unclean);

// Renames `path` (and its -wal) to "<path>.<reason>-<UTC yyyymmddThhmmssZ>[-n]" and removes its -shm.
// Returns the new name, or an error status when the rename failed.
DiskCacheResult<std::string> MoveAside(const std::string& path, UnusableReason reason,
                                       std::int64_t now_unix_ms);

}  // namespace lethe::cache::internal

#endif  // LETHE_CACHE_DISK_CACHE_SCHEMA_H_
