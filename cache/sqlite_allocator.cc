// sqlite_allocator.cc — SQLite on Lethe's allocator (see lethe/sqlite_allocator.h).
//
// Invariant while installed: g_in_use_bytes == sum over SQLite's live blocks of lethe_usable_size(),
// g_block_count == their number. Both change only inside the hooks below, by the usable size that
// the allocator itself reports for the block, so the figure cannot drift from the allocator's view.
#include "lethe/sqlite_allocator.h"

#include <sqlite3.h>

#include <atomic>

#include "lethe/alloc.h"

namespace lethe::cache {
namespace {

std::atomic<bool> g_installed{false};
std::atomic<std::uint64_t> g_in_use_bytes{0};
std::atomic<std::uint64_t> g_high_water_bytes{0};
std::atomic<std::uint64_t> g_block_count{0};

void Added(const void* block) {
  std::uint64_t now = g_in_use_bytes.fetch_add(lethe_usable_size(block), std::memory_order_relaxed) +
                      lethe_usable_size(block);
  g_block_count.fetch_add(1, std::memory_order_relaxed);
  std::uint64_t high = g_high_water_bytes.load(std::memory_order_relaxed);
  while (now > high && !g_high_water_bytes.compare_exchange_weak(high, now)) {
  }
}

void Removed(const void* block) {
  g_in_use_bytes.fetch_sub(lethe_usable_size(block), std::memory_order_relaxed);
  g_block_count.fetch_sub(1, std::memory_order_relaxed);
}

// SQLite's contract: xMalloc(n > 0) returns 8-byte aligned memory or NULL; xFree(non-NULL);
// xRealloc(non-NULL, n > 0) keeps the old block on failure; xSize(non-NULL) the usable size.
void* SqliteMalloc(int bytes) {
  void* block = lethe_malloc(static_cast<size_t>(bytes));
  if (block != nullptr) Added(block);
  return block;
}

void SqliteFree(void* block) {
  if (block == nullptr) return;
  Removed(block);
  lethe_free(block);
}

void* SqliteRealloc(void* block, int bytes) {
  std::uint64_t old_bytes = lethe_usable_size(block);
  void* moved = lethe_realloc(block, static_cast<size_t>(bytes));
  if (moved == nullptr) return nullptr;  // the old block stays live and counted
  std::uint64_t new_bytes = lethe_usable_size(moved);
  if (new_bytes >= old_bytes) {
    g_in_use_bytes.fetch_add(new_bytes - old_bytes, std::memory_order_relaxed);
  } else {
    g_in_use_bytes.fetch_sub(old_bytes - new_bytes, std::memory_order_relaxed);
  }
  return moved;
}

int SqliteSize(void* block) { return static_cast<int>(lethe_usable_size(block)); }

int SqliteRoundup(int bytes) { return static_cast<int>(lethe_good_size(static_cast<size_t>(bytes))); }

int SqliteInit(void*) { return SQLITE_OK; }
void SqliteShutdown(void*) {}

}  // namespace

const char* SqliteAllocatorOutcomeMessage(SqliteAllocatorOutcome outcome) {
  switch (outcome) {
    case SqliteAllocatorOutcome::kInstalled:
      return "SQLite allocates with Lethe's allocator";
    case SqliteAllocatorOutcome::kAlreadyInstalled:
      return "SQLite already allocates with Lethe's allocator";
    case SqliteAllocatorOutcome::kSqliteAlreadyInitialized:
      return "SQLite was already initialised; it keeps its own allocator (call "
             "UseLetheAllocatorForSqlite before anything opens a database)";
    case SqliteAllocatorOutcome::kRejected:
      return "sqlite3_config(SQLITE_CONFIG_MALLOC) was refused; SQLite keeps its own allocator";
  }
  return "unknown";
}

SqliteAllocatorOutcome UseLetheAllocatorForSqlite() {
  if (g_installed.load()) return SqliteAllocatorOutcome::kAlreadyInstalled;
  static const sqlite3_mem_methods kMethods = {
      SqliteMalloc, SqliteFree,     SqliteRealloc, SqliteSize,
      SqliteRoundup, SqliteInit,    SqliteShutdown, nullptr};
  int rc = sqlite3_config(SQLITE_CONFIG_MALLOC, &kMethods);
  if (rc == SQLITE_MISUSE) return SqliteAllocatorOutcome::kSqliteAlreadyInitialized;
  if (rc != SQLITE_OK) return SqliteAllocatorOutcome::kRejected;
  g_installed.store(true);
  return SqliteAllocatorOutcome::kInstalled;
}

const char* SqliteAllocatorKindName(SqliteAllocatorKind kind) {
  return kind == SqliteAllocatorKind::kLethe ? "lethe" : "sqlite";
}

SqliteMemoryUsage SqliteMemoryInUse() {
  SqliteMemoryUsage usage;
  if (g_installed.load()) {
    usage.allocator = SqliteAllocatorKind::kLethe;
    usage.in_use_bytes = g_in_use_bytes.load(std::memory_order_relaxed);
    usage.high_water_bytes = g_high_water_bytes.load(std::memory_order_relaxed);
    usage.block_count = g_block_count.load(std::memory_order_relaxed);
    return usage;
  }
  usage.allocator = SqliteAllocatorKind::kSqliteOwn;
  usage.in_use_bytes = static_cast<std::uint64_t>(sqlite3_memory_used());
  usage.high_water_bytes = static_cast<std::uint64_t>(sqlite3_memory_highwater(0));
  return usage;
}

MemoryReporter::Registration RegisterSqliteReporter(MemoryReporter& reporter) {
  return reporter.Register("sqlite", [](MemoryReportCollector& collector) {
    SqliteMemoryUsage usage = SqliteMemoryInUse();
    bool lethe = usage.allocator == SqliteAllocatorKind::kLethe;
    collector.Add(MemoryReportEntry{
        "explicit/storage/sqlite", lethe ? ReportKind::kHeap : ReportKind::kNonHeap,
        ReportUnits::kBytes, static_cast<int64_t>(usage.in_use_bytes),
        lethe ? "SQLite's memory (page cache, schema, statements) on Lethe's allocator: the sum of "
                "the usable sizes of its live blocks."
              : "SQLite's memory (page cache, schema, statements) on SQLite's own allocator "
                "(sqlite3_memory_used; system malloc, outside Lethe's heap figures)."});
  });
}

}  // namespace lethe::cache
