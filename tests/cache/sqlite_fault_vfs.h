// sqlite_fault_vfs.h — a SQLite VFS shim for tests that makes writes fail on command.
//
// It wraps the default VFS ("unix") and forwards everything, except that once armed, xWrite (and
// xTruncate, xSync) fail after a budget of written bytes, with the error chosen: SQLITE_FULL as a
// full disk, SQLITE_IOERR_WRITE as a failing device. Register once, then open a DiskCache with
// DiskCacheOptions::sqlite_vfs_for_testing = kFaultVfsName.
//
// Process-wide state: one test thread arms and disarms it.
#ifndef LETHE_TESTS_CACHE_SQLITE_FAULT_VFS_H_
#define LETHE_TESTS_CACHE_SQLITE_FAULT_VFS_H_

#include <cstdint>

namespace lethe::cache::testing {

inline constexpr const char* kFaultVfsName = "lethe-fault";

// Registers the shim (not as the default VFS). Idempotent.
void RegisterFaultVfs();
// From now on, writes succeed until `budget_bytes` more bytes were written, then every write fails
// with `sqlite_error` (SQLITE_FULL or SQLITE_IOERR_WRITE) until Disarm. A budget of 0 fails the next
// write.
void FailWritesAfter(std::int64_t budget_bytes, int sqlite_error);
void DisarmFaults();
// Writes that failed since the last arm.
std::int64_t FailedWriteCount();
// Bytes written through the shim since registration.
std::int64_t WrittenBytes();

}  // namespace lethe::cache::testing

#endif  // LETHE_TESTS_CACHE_SQLITE_FAULT_VFS_H_
