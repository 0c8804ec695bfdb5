// The memory hog of lethe-pressure --squeeze (see squeeze.h).
#include "squeeze.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace lethe::pressure {

namespace {

constexpr uint64_t kChunkBytes = uint64_t{16} << 20;

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  return static_cast<bool>(out);
}

// The hog: allocate in chunks, touch every page, then keep re-touching so that reclaimed pages
// come back (sustained pressure) until killed. Only async-signal-safe calls after fork.
[[noreturn]] void RunHog(uint64_t bytes) {
  const long page = sysconf(_SC_PAGESIZE);
  unsigned char* chunks[4096];
  size_t chunk_count = 0;
  for (uint64_t done = 0; done < bytes && chunk_count < 4096; done += kChunkBytes) {
    void* chunk = mmap(nullptr, kChunkBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (chunk == MAP_FAILED) break;
    chunks[chunk_count++] = static_cast<unsigned char*>(chunk);
    for (uint64_t at = 0; at < kChunkBytes; at += static_cast<uint64_t>(page)) {
      static_cast<unsigned char*>(chunk)[at] = static_cast<unsigned char>(at);
    }
  }
  for (unsigned round = 1;; ++round) {
    for (size_t i = 0; i < chunk_count; ++i) {
      for (uint64_t at = 0; at < kChunkBytes; at += static_cast<uint64_t>(page)) {
        chunks[i][at] = static_cast<unsigned char>(round);
      }
    }
  }
}

}  // namespace

std::string CiRefusal(const char* ci_value) {
  if (ci_value == nullptr) return "";
  const std::string value = ci_value;
  if (value.empty() || value == "0" || value == "false") return "";
  return "--squeeze refuses to run in CI (CI=" + value +
         "): it would put a shared runner under real memory pressure";
}

std::string FindWritableCgroup(const std::string& proc_self_cgroup, const std::string& mountinfo,
                               std::string* why) {
  // The unified hierarchy's line is "0::/path".
  std::string relative;
  bool found = false;
  std::istringstream lines(proc_self_cgroup);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("0::", 0) == 0) {
      relative = line.substr(3);
      found = true;
    }
  }
  if (!found) {
    *why = "this process is in no cgroup v2 (no 0:: line in /proc/self/cgroup)";
    return "";
  }
  // Where cgroup2 is mounted (mountinfo field 5 is the mount point; the type follows " - ").
  std::string mount_point;
  std::istringstream mounts(mountinfo);
  for (std::string line; std::getline(mounts, line);) {
    const size_t separator = line.find(" - ");
    if (separator == std::string::npos) continue;
    std::istringstream after(line.substr(separator + 3));
    std::string type;
    after >> type;
    if (type != "cgroup2") continue;
    std::istringstream fields(line);
    std::string field;
    for (int i = 0; i < 5 && fields >> field; ++i) {
    }
    mount_point = field;
    break;
  }
  if (mount_point.empty()) {
    *why = "no cgroup2 file system is mounted";
    return "";
  }
  std::string directory = mount_point + (relative == "/" ? "" : relative);
  const std::string controllers = ReadText(directory + "/cgroup.subtree_control");
  if (controllers.find("memory") == std::string::npos) {
    *why = "the memory controller is not enabled for children of " + directory +
           " (cgroup.subtree_control; the machine may use cgroup v1 for memory)";
    return "";
  }
  if (access(directory.c_str(), W_OK) != 0) {
    *why = directory + " is not writable (" + std::strerror(errno) + ")";
    return "";
  }
  return directory;
}

Squeeze::~Squeeze() { Stop(); }

bool Squeeze::Start(uint64_t bytes, std::string* error) {
  std::string why;
  const std::string parent = FindWritableCgroup(ReadText("/proc/self/cgroup"),
                                                ReadText("/proc/self/mountinfo"), &why);
  const std::string mib = std::to_string(bytes >> 20) + " MiB";
  if (!parent.empty()) {
    cgroup_dir_ = parent + "/lethe-squeeze-" + std::to_string(getpid());
    if (mkdir(cgroup_dir_.c_str(), 0755) != 0 ||
        !WriteText(cgroup_dir_ + "/memory.high", std::to_string(bytes / 2)) ||
        !WriteText(cgroup_dir_ + "/memory.max", std::to_string(bytes / 4 * 3))) {
      why = "cannot set up " + cgroup_dir_ + " (" + std::strerror(errno) + ")";
      rmdir(cgroup_dir_.c_str());
      cgroup_dir_.clear();
    }
  }
  const std::string procs = cgroup_dir_.empty() ? "" : cgroup_dir_ + "/cgroup.procs";
  pid_ = fork();
  if (pid_ < 0) {
    *error = std::string("fork failed (") + std::strerror(errno) + ")";
    Stop();
    return false;
  }
  if (pid_ == 0) {
    if (!procs.empty()) {
      // Join the cgroup before touching anything, with write(2) only.
      char digits[24];
      size_t length = 0;
      for (long value = getpid(); value > 0 && length < sizeof(digits); value /= 10) {
        digits[sizeof(digits) - 1 - length++] = static_cast<char>('0' + value % 10);
      }
      int fd = open(procs.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd >= 0) {
        ssize_t wrote = write(fd, digits + sizeof(digits) - length, length);
        (void)wrote;
        close(fd);
      }
    }
    RunHog(bytes);
  }
  description_ = mib + " hog, pid " + std::to_string(pid_) +
                 (cgroup_dir_.empty()
                      ? ", unconfined (" + why + ")"
                      : ", in cgroup " + cgroup_dir_ + " (memory.high " +
                            std::to_string(bytes / 2 >> 20) + " MiB, memory.max " +
                            std::to_string(bytes / 4 * 3 >> 20) + " MiB)");
  return true;
}

void Squeeze::Stop() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  if (!cgroup_dir_.empty()) {
    rmdir(cgroup_dir_.c_str());
    cgroup_dir_.clear();
  }
}

}  // namespace lethe::pressure
