// posix_util.h — the small POSIX helpers the engine's OS-facing code shares (internal).
//
// UniqueFd owns one file descriptor. ErrnoText names an errno ("ENOENT: No such file or
// directory") without touching strerror's static buffer. ReadSmallFile reads a /proc or cgroup
// file whole. All of them are safe from any thread.
#ifndef LETHE_ENGINE_POSIX_UTIL_H_
#define LETHE_ENGINE_POSIX_UTIL_H_

#include <string>
#include <utility>

namespace lethe::internal {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) Reset(std::exchange(other.fd_, -1));
    return *this;
  }
  ~UniqueFd() { Reset(); }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() { return std::exchange(fd_, -1); }
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

// "ENOENT: No such file or directory".
std::string ErrnoText(int error);

// Reads the whole file (up to `limit_bytes`) into *out. Returns 0 or the errno of the failure.
int ReadSmallFile(const std::string& path, std::string* out, size_t limit_bytes = 1 << 20);

// Writes all of `data` to fd (retrying on EINTR and short writes). Returns 0 or an errno.
int WriteAll(int fd, const void* data, size_t size_bytes);

}  // namespace lethe::internal

#endif  // LETHE_ENGINE_POSIX_UTIL_H_
