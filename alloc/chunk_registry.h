// chunk_registry.h — which 1 MiB-aligned address ranges are arena chunks of this allocator.
//
// free() must tell its own chunks from any other pointer (a stack address, a block from another
// allocator) before it reads a chunk header, or an invalid free would read unmapped memory. A
// two-level radix table over the 47-bit user address space answers in two loads: 2^13 root slots
// (64 KiB of .bss, untouched until used), each pointing to a leaf of 2^14 one-byte marks (16 KiB,
// mapped on first use and never freed).
//
// Thread-safety: Register/Unregister under the owning arena's lock (leaves are created with a
// compare-and-swap); IsChunk from any thread without a lock (a pointer being freed is live, so its
// chunk's mark cannot change concurrently).
#ifndef LETHE_ALLOC_CHUNK_REGISTRY_H_
#define LETHE_ALLOC_CHUNK_REGISTRY_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "size_classes.h"

namespace lethe::internal {

inline constexpr size_t kAddressBits = 47;
inline constexpr size_t kRegistryLeafBits = 14;
inline constexpr size_t kRegistryRootBits = kAddressBits - kLgChunkBytes - kRegistryLeafBits;

struct RegistryLeaf {
  std::atomic<uint8_t> marks[size_t{1} << kRegistryLeafBits];
};

extern constinit std::atomic<RegistryLeaf*> g_registry_root[size_t{1} << kRegistryRootBits];

// True when `pointer` lies in a registered arena chunk.
inline bool IsArenaChunk(const void* pointer) {
  uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  if ((address >> kAddressBits) != 0) return false;
  uintptr_t index = address >> kLgChunkBytes;
  RegistryLeaf* leaf =
      g_registry_root[index >> kRegistryLeafBits].load(std::memory_order_acquire);
  if (leaf == nullptr) return false;
  return leaf->marks[index & ((uintptr_t{1} << kRegistryLeafBits) - 1)].load(
             std::memory_order_relaxed) != 0;
}

// Marks the chunk at `chunk` (aligned) as ours. false if the leaf could not be mapped.
bool RegisterChunk(void* chunk);
void UnregisterChunk(void* chunk);
// Bytes of registry leaves mapped (metadata).
size_t RegistryMetadataBytes();

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_CHUNK_REGISTRY_H_
