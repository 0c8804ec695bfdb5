#include "posix_util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

namespace lethe::internal {

void UniqueFd::Reset(int fd) {
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
}

std::string ErrnoText(int error) {
  const char* name = strerrorname_np(error);
  const char* description = strerrordesc_np(error);
  std::string text = name != nullptr ? name : "errno " + std::to_string(error);
  if (description != nullptr) {
    text += ": ";
    text += description;
  }
  return text;
}

int ReadSmallFile(const std::string& path, std::string* out, size_t limit_bytes) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) return errno;
  out->clear();
  char buffer[4096];
  while (out->size() < limit_bytes) {
    ssize_t got = read(fd.get(), buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return errno;
    if (got == 0) break;
    out->append(buffer, static_cast<size_t>(got));
  }
  return 0;
}

int WriteAll(int fd, const void* data, size_t size_bytes) {
  const char* bytes = static_cast<const char*>(data);
  while (size_bytes > 0) {
    ssize_t written = write(fd, bytes, size_bytes);
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) return errno;
    bytes += written;
    size_bytes -= static_cast<size_t>(written);
  }
  return 0;
}

}  // namespace lethe::internal
