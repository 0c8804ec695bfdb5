// lethe_vector.h (internal) — std::vector on Lethe's allocator, for the decoders' bookkeeping that
// grows with the input (an animation's frame table, its palettes), so that the allocator's figures
// (allocated, peak) see it even when the process's malloc is not Lethe's.
//
// Growth allocates through lethe_malloc; a refusal throws std::bad_alloc, which the decoder catches
// at the one place it grows such a vector and turns into kOutOfMemory. Any thread.
#ifndef LETHE_DECODERS_LETHE_VECTOR_H_
#define LETHE_DECODERS_LETHE_VECTOR_H_

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "lethe/alloc.h"

namespace lethe::internal {

template <typename T>
struct LetheAllocator {
  using value_type = T;
  LetheAllocator() = default;
  template <typename U>
  LetheAllocator(const LetheAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit

  T* allocate(size_t count) {
    if (count > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    void* block = lethe_malloc(count * sizeof(T));
    if (block == nullptr) throw std::bad_alloc();
    return static_cast<T*>(block);
  }
  void deallocate(T* block, size_t) noexcept { lethe_free(block); }

  template <typename U>
  bool operator==(const LetheAllocator<U>&) const noexcept { return true; }
};

template <typename T>
using LetheVector = std::vector<T, LetheAllocator<T>>;

// *to = from's elements; false (and *to empty) when the allocator refuses.
template <typename T, typename Source>
bool AssignOrFail(LetheVector<T>* to, const Source& from) noexcept {
  try {
    to->assign(from.begin(), from.end());
    return true;
  } catch (const std::bad_alloc&) {
    LetheVector<T>().swap(*to);
    return false;
  }
}

// Bytes a vector holds on the allocator (its capacity, as the allocator sized the block).
template <typename T>
uint64_t HeapBytesOf(const LetheVector<T>& vector) {
  return vector.capacity() == 0 ? 0 : lethe_usable_size(vector.data());
}

}  // namespace lethe::internal

#endif  // LETHE_DECODERS_LETHE_VECTOR_H_
