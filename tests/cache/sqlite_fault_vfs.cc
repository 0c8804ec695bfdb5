// sqlite_fault_vfs.cc — see sqlite_fault_vfs.h. Each FaultFile is followed in memory by the real
// file object of the wrapped VFS; every method forwards to it.
#include "sqlite_fault_vfs.h"

#include <sqlite3.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace lethe::cache::testing {
namespace {

std::atomic<bool> g_armed{false};
std::atomic<std::int64_t> g_budget_bytes{0};
std::atomic<int> g_error{SQLITE_FULL};
std::atomic<std::int64_t> g_failed_writes{0};
std::atomic<std::int64_t> g_written_bytes{0};

sqlite3_vfs* g_real = nullptr;
sqlite3_vfs g_vfs;
sqlite3_io_methods g_methods;

struct FaultFile {
  sqlite3_file base;  // must be first: SQLite sees a sqlite3_file*
  sqlite3_file* real;
};

sqlite3_file* Real(sqlite3_file* file) { return reinterpret_cast<FaultFile*>(file)->real; }

// True when an operation writing `bytes` must fail now.
bool ShouldFail(std::int64_t bytes) {
  if (!g_armed.load()) return false;
  if (g_budget_bytes.fetch_sub(bytes) - bytes >= 0) return false;
  g_budget_bytes.store(-1);  // once exhausted, every later write fails too
  g_failed_writes.fetch_add(1);
  return true;
}

int Close(sqlite3_file* f) {
  int rc = Real(f)->pMethods != nullptr ? Real(f)->pMethods->xClose(Real(f)) : SQLITE_OK;
  return rc;
}
int Read(sqlite3_file* f, void* p, int n, sqlite3_int64 o) {
  return Real(f)->pMethods->xRead(Real(f), p, n, o);
}
int Write(sqlite3_file* f, const void* p, int n, sqlite3_int64 o) {
  if (ShouldFail(n)) return g_error.load();
  g_written_bytes.fetch_add(n);
  return Real(f)->pMethods->xWrite(Real(f), p, n, o);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  if (ShouldFail(0)) return g_error.load() == SQLITE_FULL ? SQLITE_FULL : SQLITE_IOERR_TRUNCATE;
  return Real(f)->pMethods->xTruncate(Real(f), size);
}
int Sync(sqlite3_file* f, int flags) {
  if (ShouldFail(0)) return g_error.load() == SQLITE_FULL ? SQLITE_FULL : SQLITE_IOERR_FSYNC;
  return Real(f)->pMethods->xSync(Real(f), flags);
}
int FileSize(sqlite3_file* f, sqlite3_int64* size) {
  return Real(f)->pMethods->xFileSize(Real(f), size);
}
int Lock(sqlite3_file* f, int level) { return Real(f)->pMethods->xLock(Real(f), level); }
int Unlock(sqlite3_file* f, int level) { return Real(f)->pMethods->xUnlock(Real(f), level); }
int CheckReservedLock(sqlite3_file* f, int* out) {
  return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
}
int FileControl(sqlite3_file* f, int op, void* arg) {
  return Real(f)->pMethods->xFileControl(Real(f), op, arg);
}
int SectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int DeviceCharacteristics(sqlite3_file* f) {
  return Real(f)->pMethods->xDeviceCharacteristics(Real(f));
}
int ShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  return Real(f)->pMethods->xShmMap(Real(f), region, size, extend, out);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
int ShmUnmap(sqlite3_file* f, int delete_flag) {
  return Real(f)->pMethods->xShmUnmap(Real(f), delete_flag);
}
int Fetch(sqlite3_file* f, sqlite3_int64 offset, int n, void** out) {
  return Real(f)->pMethods->xFetch(Real(f), offset, n, out);
}
int Unfetch(sqlite3_file* f, sqlite3_int64 offset, void* p) {
  return Real(f)->pMethods->xUnfetch(Real(f), offset, p);
}

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  FaultFile* fault = reinterpret_cast<FaultFile*>(file);
  fault->real = reinterpret_cast<sqlite3_file*>(fault + 1);
  std::memset(fault->real, 0, static_cast<size_t>(g_real->szOsFile));
  int rc = g_real->xOpen(g_real, name, fault->real, flags, out_flags);
  // SQLite calls xClose only when pMethods is set; mirror the real file's state.
  fault->base.pMethods = fault->real->pMethods != nullptr ? &g_methods : nullptr;
  return rc;
}

int Delete(sqlite3_vfs*, const char* name, int sync_dir) {
  return g_real->xDelete(g_real, name, sync_dir);
}
int Access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return g_real->xAccess(g_real, name, flags, out);
}
int FullPathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return g_real->xFullPathname(g_real, name, n, out);
}
void* DlOpen(sqlite3_vfs*, const char* name) { return g_real->xDlOpen(g_real, name); }
void DlError(sqlite3_vfs*, int n, char* out) { g_real->xDlError(g_real, n, out); }
void (*DlSym(sqlite3_vfs*, void* handle, const char* symbol))(void) {
  return g_real->xDlSym(g_real, handle, symbol);
}
void DlClose(sqlite3_vfs*, void* handle) { g_real->xDlClose(g_real, handle); }
int Randomness(sqlite3_vfs*, int n, char* out) { return g_real->xRandomness(g_real, n, out); }
int Sleep(sqlite3_vfs*, int microseconds) { return g_real->xSleep(g_real, microseconds); }
int CurrentTime(sqlite3_vfs*, double* out) { return g_real->xCurrentTime(g_real, out); }
int GetLastError(sqlite3_vfs*, int n, char* out) { return g_real->xGetLastError(g_real, n, out); }
int CurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* out) {
  return g_real->xCurrentTimeInt64(g_real, out);
}

}  // namespace

void RegisterFaultVfs() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_real = sqlite3_vfs_find(nullptr);
    g_methods = sqlite3_io_methods{3,        Close,      Read,      Write,      Truncate,
                                   Sync,     FileSize,   Lock,      Unlock,     CheckReservedLock,
                                   FileControl, SectorSize, DeviceCharacteristics,
                                   ShmMap,   ShmLock,    ShmBarrier, ShmUnmap,  Fetch,
                                   Unfetch};
    std::memset(&g_vfs, 0, sizeof(g_vfs));
    g_vfs.iVersion = 2;
    g_vfs.szOsFile = static_cast<int>(sizeof(FaultFile)) + g_real->szOsFile;
    g_vfs.mxPathname = g_real->mxPathname;
    g_vfs.zName = kFaultVfsName;
    g_vfs.xOpen = Open;
    g_vfs.xDelete = Delete;
    g_vfs.xAccess = Access;
    g_vfs.xFullPathname = FullPathname;
    g_vfs.xDlOpen = DlOpen;
    g_vfs.xDlError = DlError;
    g_vfs.xDlSym = DlSym;
    g_vfs.xDlClose = DlClose;
    g_vfs.xRandomness = Randomness;
    g_vfs.xSleep = Sleep;
    g_vfs.xCurrentTime = CurrentTime;
    g_vfs.xGetLastError = GetLastError;
    g_vfs.xCurrentTimeInt64 = CurrentTimeInt64;
    sqlite3_vfs_register(&g_vfs, 0);
  });
}

void FailWritesAfter(std::int64_t budget_bytes, int sqlite_error) {
  g_error.store(sqlite_error);
  g_budget_bytes.store(budget_bytes);
  g_failed_writes.store(0);
  g_armed.store(true);
}

void DisarmFaults() { g_armed.store(false); }

std::int64_t FailedWriteCount() { return g_failed_writes.load(); }

std::int64_t WrittenBytes() { return g_written_bytes.load(); }

}  // namespace lethe::cache::testing
