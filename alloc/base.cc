// Bump allocation of metadata (see base.h).
#include "base.h"

#include <cstdint>

#include "mutex.h"
#include "os.h"
#include "size_classes.h"

namespace lethe::internal {
namespace {

constexpr size_t kBaseBlockBytes = 64 * 1024;
constinit Mutex g_base_lock;
constinit char* g_cursor = nullptr;
constinit char* g_end = nullptr;
constinit size_t g_mapped_bytes = 0;

}  // namespace

void* BaseAllocate(size_t bytes) {
  bytes = (bytes + 63) & ~size_t{63};
  MutexLock lock(&g_base_lock);
  if (g_cursor == nullptr || static_cast<size_t>(g_end - g_cursor) < bytes) {
    size_t block_bytes = bytes > kBaseBlockBytes ? PagesFor(bytes) << kLgPageBytes : kBaseBlockBytes;
    auto* block = static_cast<char*>(OsMap(block_bytes, kPageBytes));
    if (block == nullptr) return nullptr;
    g_mapped_bytes += block_bytes;
    g_cursor = block;
    g_end = block + block_bytes;
  }
  void* result = g_cursor;
  g_cursor += bytes;
  return result;
}

size_t BaseMappedBytes() {
  MutexLock lock(&g_base_lock);
  return g_mapped_bytes;
}

void BaseLockForFork() { g_base_lock.Lock(); }
void BaseUnlockAfterFork(bool child) {
  if (child) g_base_lock.ResetAfterFork(); else g_base_lock.Unlock();
}

}  // namespace lethe::internal
