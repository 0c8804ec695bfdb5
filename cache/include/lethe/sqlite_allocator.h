// lethe/sqlite_allocator.h — SQLite's memory on Lethe's allocator (opt-in), and what SQLite holds.
//
// SQLite's allocator is process-wide and can only be changed before sqlite3_initialize() (which
// sqlite3_open() calls on first use). An embedder that uses SQLite itself decides, so this is an
// explicit call, made early in main() before any thread touches SQLite:
//
//   lethe::cache::SqliteAllocatorOutcome outcome = lethe::cache::UseLetheAllocatorForSqlite();
//
// On Lethe's allocator SQLite calls lethe_malloc/lethe_free/lethe_realloc directly, reads sizes
// with lethe_usable_size (xSize) and rounds requests with lethe_good_size (xRoundup): no 8-byte size
// header in front of each block, so a request of a class size stays in that class.
//
// SqliteMemoryInUse() is the figure for the memory report (`explicit/storage/sqlite`): on Lethe's
// allocator, the sum of lethe_usable_size() of SQLite's live blocks, i.e. exactly what the allocator
// holds for SQLite; otherwise sqlite3_memory_used() as SQLite's own allocator counts it. `allocator`
// says which. Any thread may call it.
//
// RegisterSqliteReporter() adds it to memory reports as `explicit/storage/sqlite` (see there).
#ifndef LETHE_SQLITE_ALLOCATOR_H_
#define LETHE_SQLITE_ALLOCATOR_H_

#include <cstdint>

#include "lethe/memory_reporter.h"

namespace lethe::cache {

enum class SqliteAllocatorOutcome : std::uint8_t {
  kInstalled,                // SQLite now allocates with lethe_*
  kAlreadyInstalled,         // an earlier call installed it; nothing changed
  kSqliteAlreadyInitialized, // too late: SQLite was initialised; it keeps its own allocator
  kRejected,                 // sqlite3_config refused for another reason
};
// A sentence that says what happened, for logs.
const char* SqliteAllocatorOutcomeMessage(SqliteAllocatorOutcome outcome);

// Not thread-safe with other SQLite use: call before anything opens a database.
[[nodiscard]] SqliteAllocatorOutcome UseLetheAllocatorForSqlite();

enum class SqliteAllocatorKind : std::uint8_t { kLethe, kSqliteOwn };
const char* SqliteAllocatorKindName(SqliteAllocatorKind kind);  // "lethe" / "sqlite"

struct SqliteMemoryUsage {
  std::uint64_t in_use_bytes = 0;      // see the top of this file
  std::uint64_t high_water_bytes = 0;  // the largest in_use_bytes seen
  std::uint64_t block_count = 0;       // live SQLite blocks (on Lethe's allocator; else 0)
  SqliteAllocatorKind allocator = SqliteAllocatorKind::kSqliteOwn;
};
SqliteMemoryUsage SqliteMemoryInUse();

// Registers the reporter of SQLite's memory: `explicit/storage/sqlite`, units bytes, amount
// SqliteMemoryInUse().in_use_bytes, the description naming the allocator. SQLite's memory is
// process-wide: register it once per MemoryReporter, not once per DiskCache.
//   - On Lethe's allocator: kind heap. Those blocks are lethe_malloc's, inside heap-allocated, and
//     the amount equals what the allocator holds for SQLite.
//   - On SQLite's own allocator (system malloc): kind nonheap. That memory is inside heap-allocated
//     only if the process's malloc is Lethe's, which cannot be known here; as nonheap it can never
//     push heap-unclassified below zero (at worst it is counted there as well).
// Any thread. The Registration must not outlive `reporter`.
[[nodiscard]] MemoryReporter::Registration RegisterSqliteReporter(MemoryReporter& reporter);

}  // namespace lethe::cache

#endif  // LETHE_SQLITE_ALLOCATOR_H_
