// The control socket's client (see control_client.h).
#include "control_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lethe::pressure {

std::unique_ptr<ControlClient> ControlClient::Connect(const std::string& socket_path,
                                                      std::string* error) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path.empty() || socket_path.size() >= sizeof(address.sun_path)) {
    *error = "the socket path must have 1 to " + std::to_string(sizeof(address.sun_path) - 1) +
             " bytes";
    return nullptr;
  }
  std::memcpy(address.sun_path, socket_path.c_str(), socket_path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket() failed (") + std::strerror(errno) + ")";
    return nullptr;
  }
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    const int saved = errno;
    close(fd);
    if (saved == ENOENT) {
      *error = "no control socket at " + socket_path + " (is the engine running with it?)";
    } else if (saved == ECONNREFUSED) {
      *error = "no engine is listening on " + socket_path + " (connection refused: a dead socket)";
    } else {
      *error = "cannot connect to " + socket_path + " (" + std::strerror(saved) + ")";
    }
    return nullptr;
  }
  ucred credentials{};
  socklen_t length = sizeof(credentials);
  pid_t peer = 0;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0) peer = credentials.pid;
  return std::unique_ptr<ControlClient>(new ControlClient(fd, peer));
}

ControlClient::~ControlClient() { close(fd_); }

bool ControlClient::Request(const std::string& line, std::chrono::milliseconds timeout,
                            std::string* reply, std::string* error) {
  const std::string out = line + "\n";
  for (size_t sent = 0; sent < out.size();) {
    ssize_t wrote = send(fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) {
      *error = std::string("cannot send to the engine (") + std::strerror(errno) + ")";
      return false;
    }
    sent += static_cast<size_t>(wrote);
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const size_t newline = pending_.find('\n');
    if (newline != std::string::npos) {
      *reply = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      return true;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      *error = "the engine did not answer '" + line + "' within " +
               std::to_string(timeout.count()) + " ms";
      return false;
    }
    pollfd waiting{fd_, POLLIN, 0};
    const int ready = poll(&waiting, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[4096];
    ssize_t got = recv(fd_, buffer, sizeof(buffer), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      *error = "the engine closed the connection before answering '" + line + "'";
      return false;
    }
    pending_.append(buffer, static_cast<size_t>(got));
  }
}

}  // namespace lethe::pressure
