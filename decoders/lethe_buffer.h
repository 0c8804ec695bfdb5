// lethe_buffer.h (internal) — a move-only byte block from lethe_malloc, sized to a whole size class.
#ifndef LETHE_DECODERS_LETHE_BUFFER_H_
#define LETHE_DECODERS_LETHE_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <utility>

#include "lethe/alloc.h"

namespace lethe::internal {

class LetheBuffer {
 public:
  LetheBuffer() = default;
  // Empty (data() == nullptr) when the allocator refuses; size 0 gives an empty buffer too.
  static LetheBuffer Allocate(size_t size) {
    LetheBuffer buffer;
    if (size == 0) return buffer;
    buffer.data_ = static_cast<uint8_t*>(lethe_malloc(lethe_good_size(size)));
    if (buffer.data_ != nullptr) buffer.size_ = size;
    return buffer;
  }
  LetheBuffer(LetheBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  LetheBuffer& operator=(LetheBuffer&& other) noexcept {
    if (this != &other) {
      lethe_free(data_);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  LetheBuffer(const LetheBuffer&) = delete;
  LetheBuffer& operator=(const LetheBuffer&) = delete;
  ~LetheBuffer() { lethe_free(data_); }

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }  // bytes requested
  bool empty() const { return data_ == nullptr; }
  size_t MemoryBytes() const { return lethe_usable_size(data_); }
  void Reset() { *this = LetheBuffer(); }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace lethe::internal

#endif  // LETHE_DECODERS_LETHE_BUFFER_H_
