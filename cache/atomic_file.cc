#include "lethe/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace lethe {

namespace {

bool WriteAll(int fd, std::string_view contents) {
  while (!contents.empty()) {
    ssize_t written = ::write(fd, contents.data(), contents.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    contents.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

}  // namespace

bool WriteFileAtomically(const std::string& path, std::string_view contents, std::string* error) {
  std::string temporary = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(temporary.data());
  if (fd < 0) {
    *error = path + ": cannot create: " + std::strerror(errno);
    return false;
  }
  // mkstemp creates 0600; a report or screenshot is an ordinary file.
  (void)::fchmod(fd, 0644);
  bool ok = WriteAll(fd, contents) && ::fsync(fd) == 0;
  int saved_errno = errno;
  ok = ::close(fd) == 0 && ok;
  if (ok && ::rename(temporary.c_str(), path.c_str()) != 0) {
    saved_errno = errno;
    ok = false;
  }
  if (!ok) {
    ::unlink(temporary.c_str());
    *error = path + ": write failed: " + std::strerror(saved_errno != 0 ? saved_errno : EIO);
  }
  return ok;
}

}  // namespace lethe
