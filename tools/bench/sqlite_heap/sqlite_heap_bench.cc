// lethe-bench-sqlite-heap — what SQLite's 8-byte size header costs per cached page on Lethe's heap.
//
// SQLite's own allocator puts an 8-byte size in front of each block (Debian's build has no
// malloc_usable_size), so a request of n bytes asks malloc for n + 8: where n sits at or just
// below a size class, the block lands in the next class (the "clownshoes" of DESIGN.md). On
// Lethe's allocator (UseLetheAllocatorForSqlite, what DiskCache does when the process runs on
// Lethe's allocator) SQLite reads sizes from the allocator and asks for n.
//
// Method: for each page size, two child processes (SQLite's allocator is process-wide and fixed
// at its first allocation) build the same in-memory database (every page of an in-memory
// database lives in the page cache) of --pages pages; each measures the heap it took (Lethe's
// allocated bytes, this tool runs on Lethe's malloc) and the pages cached. Printed side by side
// in one run: heap per cached page with each allocator, the bytes saved per page and the ratio.
//
//   lethe-bench-sqlite-heap [--pages N] [--page-size BYTES]...   (default 2000 pages of 1, 4, 64 KiB)
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "lethe/alloc.h"
#include "lethe/sqlite_allocator.h"

namespace {

struct Measure {
  uint64_t heap_bytes = 0;
  uint64_t pages = 0;
};

bool Exec(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) == SQLITE_OK) return true;
  std::fprintf(stderr, "lethe-bench-sqlite-heap: %s: %s\n", sql.c_str(), error ? error : "?");
  sqlite3_free(error);
  return false;
}

int64_t PageCount(sqlite3* db) {
  sqlite3_stmt* statement = nullptr;
  int64_t count = -1;
  if (sqlite3_prepare_v2(db, "PRAGMA page_count", -1, &statement, nullptr) == SQLITE_OK &&
      sqlite3_step(statement) == SQLITE_ROW) {
    count = sqlite3_column_int64(statement, 0);
  }
  sqlite3_finalize(statement);
  return count;
}

// In the child: an in-memory database of `pages` pages of `page_size` bytes; the heap it holds.
bool MeasureChild(bool on_lethe, int page_size, int pages, Measure* out) {
  if (on_lethe && lethe::cache::UseLetheAllocatorForSqlite() !=
                      lethe::cache::SqliteAllocatorOutcome::kInstalled) {
    return false;
  }
  if (sqlite3_initialize() != SQLITE_OK) return false;
  lethe_purge();
  lethe_stats_t before;
  lethe_stats(&before);
  sqlite3* db = nullptr;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) return false;
  bool ok = Exec(db, "PRAGMA page_size=" + std::to_string(page_size)) &&
            Exec(db, "PRAGMA cache_size=-1000000") &&
            Exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)");
  // Rows of a quarter page: b-tree leaves fill about as a real table's do.
  const std::string insert = "INSERT INTO t(v) VALUES(zeroblob(" + std::to_string(page_size / 4) + "))";
  while (ok && PageCount(db) < pages) ok = Exec(db, insert);
  lethe_stats_t after;
  lethe_stats(&after);
  out->heap_bytes = after.allocated_bytes + after.thread_cache_bytes -
                    before.allocated_bytes - before.thread_cache_bytes;
  out->pages = static_cast<uint64_t>(PageCount(db));
  sqlite3_close(db);
  return ok;
}

// Runs MeasureChild in a child process; false when it failed.
bool MeasureInChild(bool on_lethe, int page_size, int pages, Measure* out) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) {
    close(fds[0]);
    Measure measure;
    const bool ok = MeasureChild(on_lethe, page_size, pages, &measure);
    ssize_t ignored = write(fds[1], &measure, sizeof(measure));
    (void)ignored;
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  const bool got = read(fds[0], out, sizeof(*out)) == static_cast<ssize_t>(sizeof(*out));
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return got && WIFEXITED(status) && WEXITSTATUS(status) == 0 && out->pages > 0;
}

int Usage(FILE* out, int code) {
  std::fprintf(out,
               "usage: lethe-bench-sqlite-heap [--pages N] [--page-size BYTES]...\n"
               "Heap bytes per cached SQLite page with SQLite's own allocator (8-byte size header,\n"
               "over Lethe's malloc) and on Lethe's allocator (no header), side by side. Defaults:\n"
               "2000 pages; page sizes 1024, 4096 and 65536 (the DiskCache's).\n");
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  int pages = 2000;
  std::vector<int> page_sizes;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") return Usage(stdout, 0);
    if ((flag == "--pages" || flag == "--page-size") && i + 1 < argc) {
      char* end = nullptr;
      const long value = std::strtol(argv[++i], &end, 10);
      const bool power_of_two = value > 0 && (value & (value - 1)) == 0;
      if (*end != '\0' || value <= 0 || value > 1000000 ||
          (flag == "--page-size" && (!power_of_two || value < 512 || value > 65536))) {
        std::fprintf(stderr, "lethe-bench-sqlite-heap: bad %s '%s'%s\n", flag.c_str(), argv[i],
                     flag == "--page-size" ? " (a power of two, 512..65536)" : "");
        return 2;
      }
      (flag == "--pages" ? pages : page_sizes.emplace_back()) = static_cast<int>(value);
      continue;
    }
    std::fprintf(stderr, "lethe-bench-sqlite-heap: unknown flag '%s'\n", flag.c_str());
    return Usage(stderr, 2);
  }
  if (page_sizes.empty()) page_sizes = {1024, 4096, 65536};
  if (std::strcmp(lethe_allocator_name(), "lethe") != 0) {
    std::fprintf(stderr, "lethe-bench-sqlite-heap: needs the bundled allocator (not a sanitizer build)\n");
    return 1;
  }
  std::printf("%-10s %7s %16s %16s %14s %7s\n", "page size", "pages", "own B/page", "lethe B/page",
              "saved B/page", "ratio");
  for (int page_size : page_sizes) {
    Measure own, lethe;
    if (!MeasureInChild(false, page_size, pages, &own) ||
        !MeasureInChild(true, page_size, pages, &lethe)) {
      std::fprintf(stderr, "lethe-bench-sqlite-heap: a measuring child failed (page size %d)\n",
                   page_size);
      return 1;
    }
    const double own_per_page = static_cast<double>(own.heap_bytes) / static_cast<double>(own.pages);
    const double lethe_per_page =
        static_cast<double>(lethe.heap_bytes) / static_cast<double>(lethe.pages);
    std::printf("%-10d %7llu %16.1f %16.1f %14.1f %6.3fx\n", page_size,
                static_cast<unsigned long long>(lethe.pages), own_per_page, lethe_per_page,
                own_per_page - lethe_per_page, own_per_page / lethe_per_page);
  }
  return 0;
}
