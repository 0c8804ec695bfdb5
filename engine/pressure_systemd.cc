#include "lethe/pressure_systemd.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "posix_util.h"

namespace lethe {

namespace {

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::optional<std::string> DecodeBase64(std::string_view text) {
  std::string out;
  uint32_t bits = 0;
  int bit_count = 0;
  size_t symbols = 0;
  size_t padding = 0;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    if (padding != 0) return std::nullopt;  // data after padding
    int value = Base64Value(c);
    if (value < 0) return std::nullopt;
    ++symbols;
    bits = (bits << 6) | static_cast<uint32_t>(value);
    bit_count += 6;
    if (bit_count >= 8) {
      bit_count -= 8;
      out.push_back(static_cast<char>((bits >> bit_count) & 0xff));
    }
  }
  // 4n symbols, or 4n+2 / 4n+3 (padded to 4 or not); 4n+1 cannot encode whole bytes.
  if (symbols % 4 == 1 || padding > 2 || (padding != 0 && (symbols + padding) % 4 != 0)) {
    return std::nullopt;
  }
  return out;
}

std::optional<SystemdPressureOptions> SystemdPressureOptions::FromEnvironment(
    const std::function<const char*(const char*)>& get_env) {
  auto lookup = [&](const char* name) -> const char* {
    return get_env ? get_env(name) : std::getenv(name);
  };
  const char* watch = lookup("MEMORY_PRESSURE_WATCH");
  if (watch == nullptr || watch[0] == '\0') return std::nullopt;
  SystemdPressureOptions options;
  options.watch = watch;
  if (const char* write_bytes = lookup("MEMORY_PRESSURE_WRITE"); write_bytes != nullptr) {
    options.write_base64 = write_bytes;
  }
  return options;
}

SystemdPressureSource::SystemdPressureSource(PressureContext context, SystemdPressureOptions options)
    : PressureSource(std::move(context), "systemd"), options_(std::move(options)) {}

SystemdPressureSource::~SystemdPressureSource() {
  if (watch_ != 0) loop().UnwatchFd(watch_);
  if (fd_ >= 0) close(fd_);
}

bool SystemdPressureSource::Start() {
  if (options_.off()) {
    ReportOnce("off", "MEMORY_PRESSURE_WATCH=/dev/null: the service manager turned memory-pressure "
                      "watching off");
    return false;
  }
  auto write_bytes = DecodeBase64(options_.write_base64);
  if (!write_bytes) {
    ReportOnce("base64", "MEMORY_PRESSURE_WRITE is not valid base64; the systemd source is off");
    return false;
  }
  if (!Open(*write_bytes)) return false;
  watch_ = loop().WatchFd(fd_, watched_events_, [this](short revents) { OnEvent(revents); });
  set_active(true);
  return true;
}

bool SystemdPressureSource::Open(const std::string& write_bytes) {
  const std::string& path = options_.watch;
  auto fail = [&](std::string_view what, int error) {
    ReportOnce("open", "MEMORY_PRESSURE_WATCH=" + path + ": cannot " + std::string(what) + " (" +
                           internal::ErrnoText(error) + "); the systemd source is off");
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
    return false;
  };
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return fail("stat it", errno);

  if (S_ISSOCK(info.st_mode)) {
    mode_ = Mode::kSocket;
    watched_events_ = POLLIN;
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof(address.sun_path)) return fail("connect to it", ENAMETOOLONG);
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return fail("create a socket", errno);
    if (connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
      return fail("connect to it", errno);
    }
    if (!write_bytes.empty()) {
      if (int error = internal::WriteAll(fd_, write_bytes.data(), write_bytes.size()); error != 0) {
        return fail("write MEMORY_PRESSURE_WRITE to it", error);
      }
    }
    int flags = fcntl(fd_, F_GETFL);
    fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
  } else if (S_ISFIFO(info.st_mode)) {
    mode_ = Mode::kFifo;
    watched_events_ = POLLIN;
    fd_ = open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) return fail("open it", errno);
  } else if (S_ISREG(info.st_mode)) {
    mode_ = Mode::kPsiFile;
    watched_events_ = POLLPRI;
    fd_ = open(path.c_str(), (write_bytes.empty() ? O_RDONLY : O_RDWR) | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) return fail("open it", errno);
    if (!write_bytes.empty()) {
      // One write(2): a PSI file takes the trigger in a single write.
      ssize_t written = write(fd_, write_bytes.data(), write_bytes.size());
      if (written != static_cast<ssize_t>(write_bytes.size())) {
        return fail("write MEMORY_PRESSURE_WRITE to it", written < 0 ? errno : EIO);
      }
    }
  } else {
    return fail("watch it", EINVAL);  // a directory or a device: not a pressure source
  }
  ReportOnce("using", "memory pressure from systemd's MEMORY_PRESSURE_WATCH=" + path + " (" +
                          (mode_ == Mode::kSocket ? "socket, POLLIN"
                           : mode_ == Mode::kFifo ? "FIFO, POLLIN"
                                                  : "PSI file, POLLPRI") +
                          ")");
  return true;
}

void SystemdPressureSource::OnEvent(short revents) {
  if (mode_ == Mode::kPsiFile) {
    if ((revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) return Stop("POLLERR");
    if ((revents & POLLPRI) != 0) Dispatch(MemoryPressureLevel::kModerate);
    return;
  }
  // FIFO or socket: drain what arrived; any data is one event.
  bool data = false;
  bool end = false;
  char buffer[512];
  while (true) {
    ssize_t got = read(fd_, buffer, sizeof(buffer));
    if (got > 0) {
      data = true;
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) end = true;
    break;
  }
  if (data) Dispatch(MemoryPressureLevel::kModerate);
  if (end || (revents & (POLLERR | POLLNVAL)) != 0) Stop("closed by the other end");
}

void SystemdPressureSource::Stop(std::string_view why) {
  ReportOnce("gone", "MEMORY_PRESSURE_WATCH=" + options_.watch + ": " + std::string(why) +
                         "; the source is gone and the systemd source is off");
  loop().UnwatchFd(watch_);
  watch_ = 0;
  close(fd_);
  fd_ = -1;
  set_active(false);
}

}  // namespace lethe
