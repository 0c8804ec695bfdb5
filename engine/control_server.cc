// The control channel: protocol (Execute) first, then the socket plumbing.
#include "lethe/control_server.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>

#include "lethe/check.h"
#include "lethe/json_string.h"
#include "posix_util.h"

namespace lethe {

namespace {

constexpr char kUsage[] = "expected: pressure moderate|critical, report PATH, stats";
constexpr size_t kMaxClients = 64;
// A client that sends commands without reading the answers is not read further until it has.
constexpr size_t kMaxPendingOutputBytes = 64 * 1024;

std::string_view Trim(std::string_view text) {
  size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos) return {};
  size_t end = text.find_last_not_of(" \t\r\n");
  return text.substr(start, end - start + 1);
}

std::string Quoted(std::string_view text) { return JsonString(text); }

}  // namespace

// ---- replies --------------------------------------------------------------------------------

ControlReply ControlReply::Error(std::string message) {
  ControlReply reply;
  reply.error_ = message.empty() ? "failed" : std::move(message);
  return reply;
}

ControlReply& ControlReply::SetFreedBytes(uint64_t bytes) {
  freed_bytes_ = bytes;
  has_freed_bytes_ = true;
  return *this;
}

void ControlReply::AppendKey(std::string_view key) {
  if (!fields_json_.empty()) fields_json_ += ',';
  fields_json_ += Quoted(key);
  fields_json_ += ':';
}

ControlReply& ControlReply::AddNumber(std::string_view key, int64_t value) {
  AppendKey(key);
  fields_json_ += std::to_string(value);
  return *this;
}

ControlReply& ControlReply::AddString(std::string_view key, std::string_view value) {
  AppendKey(key);
  fields_json_ += Quoted(value);
  return *this;
}

// ---- the protocol ---------------------------------------------------------------------------

std::string ControlServer::Execute(std::string_view line) {
  ++stats_.command_count;
  line = Trim(line);
  size_t space = line.find_first_of(" \t");
  std::string_view command = line.substr(0, space);
  std::string_view argument =
      space == std::string_view::npos ? std::string_view() : Trim(line.substr(space));

  std::string head = "\"command\":" + Quoted(command);
  auto error_line = [&](std::string message) {
    ++stats_.error_count;
    return "{\"ok\":false," + head + ",\"error\":" + Quoted(message) + "}";
  };

  const Clock::TimePoint start = loop_.clock().Now();
  ControlReply reply;
  try {
    if (command.empty()) {
      return error_line(std::string("empty command; ") + kUsage);
    } else if (command == "pressure") {
      auto level = ParseMemoryPressureLevel(argument);
      if (!level || *level == MemoryPressureLevel::kNone) {
        return error_line("pressure needs 'moderate' or 'critical', not '" + std::string(argument) + "'");
      }
      if (!handlers_.pressure) return error_line("this engine has no handler for 'pressure'");
      head += ",\"level\":" + Quoted(MemoryPressureLevelName(*level));
      reply = handlers_.pressure(*level);
    } else if (command == "report") {
      if (argument.empty()) return error_line("report needs a PATH to write to");
      if (!handlers_.report) return error_line("this engine has no handler for 'report'");
      head += ",\"path\":" + Quoted(argument);
      reply = handlers_.report(std::string(argument));
    } else if (command == "stats") {
      if (!argument.empty()) return error_line("stats takes no argument");
      if (!handlers_.stats) return error_line("this engine has no handler for 'stats'");
      reply = handlers_.stats();
    } else {
      return error_line("unknown command '" + std::string(command) + "'; " + kUsage);
    }
  } catch (const std::exception& failure) {
    return error_line(std::string("the handler failed: ") + failure.what());
  }
  const auto elapsed_us =
      std::chrono::duration_cast<std::chrono::microseconds>(loop_.clock().Now() - start).count();

  if (!reply.ok()) return error_line(reply.error());
  std::string out = "{\"ok\":true," + head;
  if (reply.has_freed_bytes_) out += ",\"freed_bytes\":" + std::to_string(reply.freed_bytes_);
  out += ",\"elapsed_us\":" + std::to_string(elapsed_us);
  if (!reply.fields_json().empty()) out += "," + reply.fields_json();
  out += "}";
  return out;
}

// ---- the socket -----------------------------------------------------------------------------

ControlServer::ControlServer(EventLoop& loop, std::string socket_path, ControlHandlers handlers,
                             LogFunction log)
    : loop_(loop),
      socket_path_(std::move(socket_path)),
      handlers_(std::move(handlers)),
      log_(log ? std::move(log) : StderrLog()) {}

ControlServer::~ControlServer() {
  while (!clients_.empty()) Close(clients_.begin()->first);
  if (listen_watch_ != 0) loop_.UnwatchFd(listen_watch_);
  if (listen_fd_ >= 0) close(listen_fd_);
  if (created_path_) unlink(socket_path_.c_str());
}

bool ControlServer::Start() {
  LETHE_DCHECK(loop_.OnLoopThread(), "start the control server on the loop thread");
  auto fail = [&](std::string why) {
    log_("control socket " + socket_path_ + ": " + why + "; no control channel");
    if (listen_fd_ >= 0) close(listen_fd_);
    listen_fd_ = -1;
    return false;
  };
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path_.empty() || socket_path_.size() >= sizeof(address.sun_path)) {
    return fail("the path must have 1 to " + std::to_string(sizeof(address.sun_path) - 1) + " bytes");
  }
  std::memcpy(address.sun_path, socket_path_.c_str(), socket_path_.size() + 1);

  struct stat existing {};
  if (lstat(socket_path_.c_str(), &existing) == 0) {
    if (!S_ISSOCK(existing.st_mode)) return fail("the path exists and is not a socket");
    // A socket file: live if someone accepts connections on it, else a leftover of a dead engine.
    internal::UniqueFd probe(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (probe.valid() &&
        connect(probe.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) {
      return fail("another process is listening on it");
    }
    unlink(socket_path_.c_str());
  }

  listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) return fail("socket() failed (" + internal::ErrnoText(errno) + ")");
  if (bind(listen_fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    return fail("bind() failed (" + internal::ErrnoText(errno) + ")");
  }
  created_path_ = true;
  chmod(socket_path_.c_str(), 0600);
  if (listen(listen_fd_, static_cast<int>(kMaxClients)) != 0) return fail("listen() failed (" + internal::ErrnoText(errno) + ")");
  listen_watch_ = loop_.WatchFd(listen_fd_, POLLIN, [this](short) { OnAccept(); });
  return true;
}

void ControlServer::OnAccept() {
  while (true) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // EAGAIN: all accepted; EMFILE and the like: the client waits in the backlog
    }
    ++stats_.clients_accepted_count;
    const uint64_t id = next_client_id_++;
    Client& client = clients_[id];
    client.fd = fd;
    if (clients_.size() > kMaxClients) {
      client.output = "{\"ok\":false,\"error\":\"too many clients\"}\n";
      client.closing = true;
    }
    Rewatch(id, client);
  }
}

void ControlServer::Rewatch(uint64_t id, Client& client) {
  const bool want_input = !client.closing && client.output.size() < kMaxPendingOutputBytes;
  const short events =
      static_cast<short>((want_input ? POLLIN : 0) | (client.output.empty() ? 0 : POLLOUT));
  if (client.watch != 0 && events == client.events) return;
  if (client.watch != 0) loop_.UnwatchFd(client.watch);
  client.events = events;
  client.watch = loop_.WatchFd(client.fd, events, [this, id](short revents) { OnClient(id, revents); });
}

void ControlServer::OnClient(uint64_t id, short revents) {
  auto found = clients_.find(id);
  if (found == clients_.end()) return;
  Client& client = found->second;
  if ((revents & (POLLERR | POLLNVAL)) != 0) return Close(id);
  if (!client.closing && (revents & (POLLIN | POLLHUP)) != 0) ReadFrom(client);
  if (!Flush(client)) return Close(id);
  if (client.closing && client.output.empty()) return Close(id);
  Rewatch(id, client);
}

void ControlServer::ReadFrom(Client& client) {
  char buffer[4096];
  while (!client.closing && client.output.size() < kMaxPendingOutputBytes) {
    ssize_t got = recv(client.fd, buffer, sizeof(buffer), 0);
    if (got > 0) {
      client.input.append(buffer, static_cast<size_t>(got));
      ProcessLines(client, false);
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    // End of stream (or a reset): answer what is complete, and a last line without its newline.
    ProcessLines(client, true);
    client.closing = true;
  }
  if (!client.closing) ++stats_.input_paused_count;  // stopped for the answers to drain
}

void ControlServer::ProcessLines(Client& client, bool at_end) {
  size_t start = 0;
  while (!client.closing) {
    size_t newline = client.input.find('\n', start);
    if (newline == std::string::npos) break;
    client.output += Execute(std::string_view(client.input).substr(start, newline - start));
    client.output += '\n';
    start = newline + 1;
  }
  client.input.erase(0, start);
  if (client.closing) return;
  if (client.input.size() > kMaxLineBytes) {
    ++stats_.error_count;
    client.output += "{\"ok\":false,\"error\":\"line longer than " + std::to_string(kMaxLineBytes) +
                     " bytes; closing\"}\n";
    client.input.clear();
    client.closing = true;
  } else if (at_end && !Trim(client.input).empty()) {
    client.output += Execute(client.input);
    client.output += '\n';
    client.input.clear();
  }
}

bool ControlServer::Flush(Client& client) {
  while (!client.output.empty()) {
    ssize_t sent = send(client.fd, client.output.data(), client.output.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0) return errno == EAGAIN || errno == EWOULDBLOCK;
    client.output.erase(0, static_cast<size_t>(sent));
  }
  return true;
}

void ControlServer::Close(uint64_t id) {
  auto found = clients_.find(id);
  if (found == clients_.end()) return;
  if (found->second.watch != 0) loop_.UnwatchFd(found->second.watch);
  close(found->second.fd);
  clients_.erase(found);
}

}  // namespace lethe
