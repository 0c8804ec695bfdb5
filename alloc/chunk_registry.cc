// The radix table of arena chunks (see chunk_registry.h).
#include "chunk_registry.h"

#include "lethe/check.h"
#include "os.h"

namespace lethe::internal {

constinit std::atomic<RegistryLeaf*> g_registry_root[size_t{1} << kRegistryRootBits] = {};

namespace {
constinit std::atomic<size_t> g_leaf_count{0};

std::atomic<uint8_t>* MarkFor(void* chunk, bool create) {
  uintptr_t address = reinterpret_cast<uintptr_t>(chunk);
  LETHE_CHECK((address >> kAddressBits) == 0, "chunk above the 47-bit address space");
  uintptr_t index = address >> kLgChunkBytes;
  std::atomic<RegistryLeaf*>& slot = g_registry_root[index >> kRegistryLeafBits];
  RegistryLeaf* leaf = slot.load(std::memory_order_acquire);
  if (leaf == nullptr) {
    if (!create) return nullptr;
    auto* fresh = static_cast<RegistryLeaf*>(OsMap(sizeof(RegistryLeaf), kPageBytes));
    if (fresh == nullptr) return nullptr;
    RegistryLeaf* expected = nullptr;
    if (slot.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) {
      leaf = fresh;
      g_leaf_count.fetch_add(1, std::memory_order_relaxed);
    } else {
      OsUnmap(fresh, sizeof(RegistryLeaf));
      leaf = expected;
    }
  }
  return &leaf->marks[index & ((uintptr_t{1} << kRegistryLeafBits) - 1)];
}

}  // namespace

bool RegisterChunk(void* chunk) {
  std::atomic<uint8_t>* mark = MarkFor(chunk, true);
  if (mark == nullptr) return false;
  mark->store(1, std::memory_order_release);
  return true;
}

void UnregisterChunk(void* chunk) {
  std::atomic<uint8_t>* mark = MarkFor(chunk, false);
  if (mark != nullptr) mark->store(0, std::memory_order_release);
}

size_t RegistryMetadataBytes() {
  return g_leaf_count.load(std::memory_order_relaxed) * sizeof(RegistryLeaf);
}

}  // namespace lethe::internal
