// The bit array of arena chunks (see chunk_registry.h).
#include "chunk_registry.h"

#include "lethe/check.h"

namespace lethe::internal {

LETHE_TABLE constinit std::atomic<uint64_t> g_chunk_bits[kRegistryWords] = {};

namespace {

inline constexpr size_t kWordsPerPage = kPageBytes / sizeof(uint64_t);
// One flag per page of g_chunk_bits: set when a chunk in its range was first registered.
LETHE_TABLE constinit std::atomic<uint8_t> g_page_written[kRegistryWords / kWordsPerPage] = {};
constinit std::atomic<size_t> g_pages_written{0};

uintptr_t IndexOf(void* chunk) {
  uintptr_t address = reinterpret_cast<uintptr_t>(chunk);
  LETHE_CHECK((address >> kAddressBits) == 0, "chunk above the 47-bit address space");
  return address >> kLgChunkBytes;
}

}  // namespace

void RegisterChunk(void* chunk) {
  uintptr_t index = IndexOf(chunk);
  if (g_page_written[index / 64 / kWordsPerPage].exchange(1, std::memory_order_relaxed) == 0) {
    g_pages_written.fetch_add(1, std::memory_order_relaxed);
  }
  g_chunk_bits[index / 64].fetch_or(uint64_t{1} << (index % 64), std::memory_order_release);
}

void UnregisterChunk(void* chunk) {
  uintptr_t index = IndexOf(chunk);
  g_chunk_bits[index / 64].fetch_and(~(uint64_t{1} << (index % 64)), std::memory_order_release);
}

size_t RegistryMetadataBytes() {
  return g_pages_written.load(std::memory_order_relaxed) * kPageBytes;
}

}  // namespace lethe::internal
