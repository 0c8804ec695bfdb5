// lethe/disk_cache.h — compressed image bytes by URL, on disk, in one SQLite database file.
//
// What it is: the bottom of the image path (DESIGN.md, "One image, end to end"). The bytes that came
// from the network are kept by URL with their HTTP metadata, under a byte cap with least-recently-used
// eviction, so that the next session (or the next time an image is needed after its in-memory copy
// expired) reads them from disk instead of the network.
//
// How it stores them:
//   - one SQLite file in WAL mode, exclusive locking (one process owns a cache, as a browser owns its
//     profile), synchronous=NORMAL: a Put that returned success survives a crash of the process
//     (SIGKILL); a power loss may lose the last transactions but never corrupts the file;
//   - metadata rows (`entries`) apart from the bodies (`bodies`), so that touching an entry for LRU
//     never rewrites its body; bodies at or above DiskCacheOptions::large_entry_bytes are written with
//     incremental blob I/O (no body-sized copy inside SQLite), every body is read that way;
//   - reads go through a memory map (PRAGMA mmap_size) and share one read transaction until the next
//     write, so that a load makes almost no system call (tools/bench/syscall: ~0.06 per load against
//     4 for one file per entry);
//   - LRU order is a sequence number per entry; a Get records its touch in memory and the touches are
//     written in batches (at the next Put/Remove, every max_pending_touches Gets, on Flush() and on
//     close), so that a read costs no write. A crash loses only those recency updates, never data;
//   - the schema version lives in PRAGMA user_version; older versions are migrated on open.
//
// Bad input and faults: a file at the path that is not a SQLite database, fails quick_check, or has a
// schema this code does not know, is renamed aside ("<path>.corrupt-<UTC time>", ".foreign-...",
// ".newer-schema-...") and a new cache is created; open_notice() and the log say so. A full disk or an
// I/O error during Put returns kDiskFull / kIoError and rolls back; earlier entries stay readable.
// Expected failures are returned as DiskCacheStatus / DiskCacheResult, never thrown.
//
// Threads: every method may be called from any thread (main thread and decode threads together);
// one mutex serialises them, since a SQLite connection runs one statement at a time.
// Ownership: DiskCache owns its connection; Get returns a copy of the bytes that the caller owns.
// Do not open the same path twice at once: the second Open fails with kBusy.
#ifndef LETHE_DISK_CACHE_H_
#define LETHE_DISK_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lethe/check.h"
#include "lethe/memory_pressure.h"
#include "lethe/memory_reporter.h"

namespace lethe::cache {

// Why an operation failed. kOk only in a successful status.
enum class DiskCacheError : std::uint8_t {
  kOk,
  kNotFound,           // no entry for the URL (Get, GetInfo, Remove)
  kInvalidArgument,    // empty URL, metadata field over its limit
  kUrlTooLong,         // URL over DiskCacheOptions::max_url_bytes
  kEntryTooLarge,      // entry over max_entry_bytes (or over the whole capacity)
  kDiskFull,           // SQLITE_FULL: the disk (or quota) is full
  kIoError,            // SQLITE_IOERR*: the OS failed a read, write or sync
  kCorrupt,            // SQLITE_CORRUPT / SQLITE_NOTADB that could not be recovered by moving aside
  kBusy,               // the file is locked by another process or another DiskCache
  kNoMemory,           // SQLITE_NOMEM
  kCannotOpen,         // SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_READONLY: path or permissions
  kInternal,           // any other SQLite error (a bug here, most likely)
};

// "not-found", "disk-full", ...: stable names for logs and counters.
const char* DiskCacheErrorName(DiskCacheError error);

// Success, or an error kind with a message a person can read ("Put(https://a/b.png): disk full
// while writing 1048576 bytes (sqlite: database or disk is full)").
class [[nodiscard]] DiskCacheStatus {
 public:
  DiskCacheStatus() = default;
  DiskCacheStatus(DiskCacheError error, std::string message)
      : error_(error), message_(std::move(message)) {}

  bool ok() const { return error_ == DiskCacheError::kOk; }
  DiskCacheError error() const { return error_; }
  const std::string& message() const { return message_; }
  // "disk-full: <message>", or "ok".
  std::string ToString() const;

 private:
  DiskCacheError error_ = DiskCacheError::kOk;
  std::string message_;
};

// A value or a failed status.
template <typename T>
class [[nodiscard]] DiskCacheResult {
 public:
  DiskCacheResult(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  DiskCacheResult(DiskCacheStatus status) : status_(std::move(status)) {  // NOLINT
    LETHE_DCHECK(!status_.ok(), "a failed result needs an error");
  }

  bool ok() const { return value_.has_value(); }
  const DiskCacheStatus& status() const { return status_; }
  DiskCacheError error() const { return status_.error(); }

  T& value() & {
    LETHE_CHECK(ok(), "value() of a failed DiskCacheResult");
    return *value_;
  }
  const T& value() const& {
    LETHE_CHECK(ok(), "value() of a failed DiskCacheResult");
    return *value_;
  }
  T&& value() && {
    LETHE_CHECK(ok(), "value() of a failed DiskCacheResult");
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::optional<T> value_;
  DiskCacheStatus status_;
};

// HTTP metadata stored with the bytes. Strings are kept as received (an ETag keeps its quotes, a
// Last-Modified stays an HTTP-date); each is limited to DiskCacheOptions::max_metadata_field_bytes.
struct DiskCacheMetadata {
  std::string content_type;   // "image/png"
  std::string etag;           // validator for If-None-Match
  std::string last_modified;  // validator for If-Modified-Since
};

// What the cache knows about an entry. Times are Unix milliseconds from DiskCacheOptions::now_unix_ms.
struct DiskCacheEntryInfo {
  DiskCacheMetadata metadata;
  std::uint64_t size_bytes = 0;     // body bytes
  std::uint64_t charged_bytes = 0;  // what counts against the cap: body + URL + metadata strings
  std::int64_t stored_time_ms = 0;
  std::int64_t last_used_time_ms = 0;
};

struct DiskCacheEntry {
  std::vector<std::uint8_t> bytes;
  DiskCacheEntryInfo info;
};

struct DiskCacheOptions {
  // What Open checks. quick_check reads every page: about 0.1 s of CPU for a warm 170 MB cache,
  // more from a cold disk. kQuickAfterCrash runs it only when the last session did not close
  // cleanly (a -wal file is left; a clean close removes it); a file that is not a database at all is
  // detected by every mode, since reading its header fails.
  enum class OpenCheck : std::uint8_t { kNone, kQuickAfterCrash, kQuick, kFull };

  std::uint64_t capacity_bytes = std::uint64_t{256} << 20;  // cap on the sum of charged_bytes
  std::uint64_t max_entry_bytes = std::uint64_t{32} << 20;  // clamped to capacity_bytes
  std::size_t max_url_bytes = 8 * 1024;
  std::size_t max_metadata_field_bytes = 4 * 1024;
  std::size_t large_entry_bytes = 64 * 1024;  // at or above: zeroblob + sqlite3_blob_write
  // Page size of a new file (an existing file keeps its own). 64 KiB keeps a typical image inside
  // one b-tree page, read through the memory map; SQLite reads overflow pages with one pread each.
  std::uint32_t page_size_bytes = 64 * 1024;
  std::int64_t page_cache_kib = 1024;         // SQLite's page cache (PRAGMA cache_size = -KiB)
  std::uint64_t mmap_bytes = std::uint64_t{256} << 20;  // PRAGMA mmap_size; 0 reads with pread
  // WAL size at which a commit checkpoints it into the database (PRAGMA wal_autocheckpoint).
  std::uint64_t wal_checkpoint_bytes = std::uint64_t{4} << 20;
  std::size_t max_pending_touches = 1024;     // LRU touches kept in memory before a batch write
  OpenCheck open_check = OpenCheck::kQuick;
  // Wall-clock time for stored/last-used times and aside names; empty: the system clock.
  std::function<std::int64_t()> now_unix_ms;
  // Where notices go (a file moved aside, a migration); empty: one line to stderr.
  std::function<void(std::string_view)> log;
  // SQLite's allocator. It is process-wide and fixed at SQLite's first allocation, so the first
  // Open decides (before SQLite initialises); later opens find it chosen. kAuto: Lethe's
  // (UseLetheAllocatorForSqlite: usable sizes from the allocator, no 8-byte size header, reported
  // as heap) when the process runs on Lethe's allocator (lethe_* is the bundled one), else
  // SQLite's own. When SQLite was initialised before (the embedder uses it too), it keeps its own
  // and the log says so once. kSqliteOwn: never change it.
  enum class SqliteAllocator : std::uint8_t { kAuto, kSqliteOwn };
  SqliteAllocator sqlite_allocator = SqliteAllocator::kAuto;
  // Name of a registered sqlite3_vfs to use instead of the default (fault-injection tests).
  std::string sqlite_vfs_for_testing;
};

// The counters of a DiskCache, as one list: the struct, ForEach (for printers and the memory
// reporter) are generated from it. X(name, description).
#define LETHE_DISK_CACHE_COUNTERS(X)                                                      \
  X(hit_count, "Get calls that found their entry")                                       \
  X(miss_count, "Get calls that found nothing")                                           \
  X(put_count, "entries written")                                                         \
  X(put_failed_count, "Put calls that failed in storage (disk full, I/O error, ...)")     \
  X(rejected_count, "Put calls refused before storage: URL or entry over a limit")        \
  X(remove_count, "entries removed by Remove")                                            \
  X(eviction_count, "entries evicted to stay under the cap")                              \
  X(evicted_bytes, "charged bytes evicted to stay under the cap")                         \
  X(disk_full_count, "operations that failed with a full disk")                           \
  X(io_error_count, "operations that failed with an I/O error")                           \
  X(touch_flush_count, "batches of LRU touches written")                                  \
  X(moved_aside_count, "unusable files moved aside on open (corrupt, foreign, newer)")

struct DiskCacheStats {
  std::uint64_t entry_count = 0;
  std::uint64_t stored_bytes = 0;    // sum of charged_bytes of the entries
  std::uint64_t capacity_bytes = 0;
  std::uint64_t file_bytes = 0;      // database file + WAL on disk
  std::uint64_t pending_touch_count = 0;
  // Heap bytes of the DiskCache object itself (pending touches, options, strings); SQLite's memory
  // (page cache, statements, schema) is reported apart, by SqliteMemoryInUse().
  std::uint64_t memory_bytes = 0;
#define LETHE_DISK_CACHE_COUNTER_FIELD_(name, description) std::uint64_t name = 0;
  LETHE_DISK_CACHE_COUNTERS(LETHE_DISK_CACHE_COUNTER_FIELD_)
#undef LETHE_DISK_CACHE_COUNTER_FIELD_

  // Calls visit(name, description, value) for each cumulative counter, in list order.
  template <typename Visit>
  void ForEachCounter(Visit&& visit) const {
#define LETHE_DISK_CACHE_COUNTER_VISIT_(name, description) visit(#name, description, name);
    LETHE_DISK_CACHE_COUNTERS(LETHE_DISK_CACHE_COUNTER_VISIT_)
#undef LETHE_DISK_CACHE_COUNTER_VISIT_
  }
};

class DiskCache {
 public:
  // The schema version this code writes (PRAGMA user_version). Older versions are migrated.
  static constexpr int kSchemaVersion = 2;

  // Opens or creates the cache at `path`. An unusable file is moved aside (see the top of this
  // file) and a new cache created; errors that moving aside cannot fix (kBusy, kCannotOpen, kIoError)
  // are returned.
  static DiskCacheResult<std::unique_ptr<DiskCache>> Open(const std::string& path,
                                                           DiskCacheOptions options = {});

  // Writes pending LRU touches and closes the connection (SQLite checkpoints the WAL).
  ~DiskCache();
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  // Stores `bytes` under `url`, replacing any entry for it, evicting least recently used entries
  // until it fits the cap. All or nothing: on failure the cache is as it was before the call.
  DiskCacheStatus Put(std::string_view url, std::span<const std::uint8_t> bytes,
                      const DiskCacheMetadata& metadata);
  // The bytes and metadata of `url` (kNotFound when absent); marks it most recently used.
  DiskCacheResult<DiskCacheEntry> Get(std::string_view url);
  // The metadata only (for revalidation); does not change the LRU order.
  DiskCacheResult<DiskCacheEntryInfo> GetInfo(std::string_view url);
  // Removes `url`; kNotFound when absent.
  DiskCacheStatus Remove(std::string_view url);
  // True when an entry exists (false on any error).
  bool Contains(std::string_view url);
  // Removes every entry.
  DiskCacheStatus Clear();
  // Writes the pending LRU touches now.
  DiskCacheStatus Flush();

  DiskCacheStats Stats() const;
  // Adds this cache to memory reports (its Stats() when a report is collected):
  //   lethe-counters/disk-cache/<counter>     every counter above (kind other, cumulative count)
  //   lethe-disk-cache/stored, .../file        stored bytes and the file on disk (kind other, bytes)
  // Disk bytes are not memory, so nothing goes under explicit/; SQLite's memory is reported once
  // per process by RegisterSqliteReporter (lethe/sqlite_allocator.h). The Registration must not
  // outlive this cache or `reporter`.
  [[nodiscard]] MemoryReporter::Registration RegisterReporter(MemoryReporter& reporter);
  // Frees what SQLite keeps for speed and can rebuild from the file: the pages of its page cache
  // (ending the shared read transaction, which pins the pages it read). Returns how far SQLite's
  // memory (SqliteMemoryInUse, process-wide) fell.
  std::uint64_t ReleaseMemory();
  // Calls ReleaseMemory on critical pressure events. Moderate ones keep the page cache: it is
  // bounded (page_cache_kib) and each page dropped costs a read to get back. The Subscription must
  // not outlive this cache or `pressure`.
  [[nodiscard]] MemoryPressure::Subscription SubscribeTo(MemoryPressure& pressure);
  const std::string& path() const;
  // What happened on open that a person should know ("moved ... aside ..., created a new cache"),
  // or empty.
  const std::string& open_notice() const;

  // PRAGMA integrity_check: "ok" or SQLite's list of problems.
  DiskCacheResult<std::string> IntegrityCheck();

  struct Impl;

 private:
  explicit DiskCache(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lethe::cache

#endif  // LETHE_DISK_CACHE_H_
