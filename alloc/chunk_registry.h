// chunk_registry.h — which 1 MiB-aligned address ranges are arena chunks of this allocator.
//
// free() must tell its own chunks from any other pointer (a stack address, a block from another
// allocator) before it reads a chunk header, or an invalid free would read unmapped memory. One
// bit per 1 MiB of the 47-bit user address space answers with one load on free's fast path:
// 2^27 bits, a 16 MiB array in .bss. Only the pages holding set bits are ever written (a page of
// bits covers 32 GiB of address space, so a process touches one or two); the rest stay untouched
// zero pages, mapped by the kernel on read without taking memory.
//
// Thread-safety: Register/Unregister are atomic read-modify-writes of the chunk's word (two arenas
// may own neighbouring chunks); IsArenaChunk reads without a lock (a pointer being freed is live,
// so its chunk's bit cannot change concurrently).
#ifndef LETHE_ALLOC_CHUNK_REGISTRY_H_
#define LETHE_ALLOC_CHUNK_REGISTRY_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "compiler.h"
#include "size_classes.h"

namespace lethe::internal {

inline constexpr size_t kAddressBits = 47;
inline constexpr size_t kRegistryBits = size_t{1} << (kAddressBits - kLgChunkBytes);
inline constexpr size_t kRegistryWords = kRegistryBits / 64;

extern LETHE_HIDDEN constinit std::atomic<uint64_t> g_chunk_bits[kRegistryWords];

// True when `pointer` lies in a registered arena chunk.
inline bool IsArenaChunk(const void* pointer) {
  uintptr_t index = reinterpret_cast<uintptr_t>(pointer) >> kLgChunkBytes;
  if (index >= kRegistryBits) return false;  // kernel or non-canonical address
  uint64_t word = g_chunk_bits[index / 64].load(std::memory_order_relaxed);
  return ((word >> (index % 64)) & 1) != 0;
}

// Marks the chunk at `chunk` (aligned, below 2^47) as ours. Cannot fail: the bits are static.
void RegisterChunk(void* chunk);
void UnregisterChunk(void* chunk);
// Bytes of the bit array written so far (metadata): whole pages.
size_t RegistryMetadataBytes();

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_CHUNK_REGISTRY_H_
