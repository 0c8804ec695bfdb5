#include "lethe/pressure_cgroup.h"

#include <errno.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <charconv>

#include "posix_util.h"

namespace lethe {

std::optional<std::map<std::string, uint64_t, std::less<>>> ParseMemoryEvents(std::string_view text) {
  std::map<std::string, uint64_t, std::less<>> counters;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    size_t space = line.find(' ');
    if (space == std::string_view::npos) continue;
    std::string_view value = line.substr(space + 1);
    uint64_t number = 0;
    auto [parsed_end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (error != std::errc() || parsed_end != value.data() + value.size()) continue;
    counters.emplace(std::string(line.substr(0, space)), number);
  }
  if (counters.count("high") == 0 && counters.count("max") == 0) return std::nullopt;
  return counters;
}

MemoryEventsPressureSource::MemoryEventsPressureSource(PressureContext context,
                                                       MemoryEventsOptions options)
    : PressureSource(std::move(context), "cgroup"), options_(std::move(options)) {}

MemoryEventsPressureSource::~MemoryEventsPressureSource() {
  if (watch_ != 0) loop().UnwatchFd(watch_);
  if (inotify_fd_ >= 0) close(inotify_fd_);
}

uint64_t MemoryEventsPressureSource::counter(std::string_view name) const {
  auto found = counters_.find(name);
  return found == counters_.end() ? 0 : found->second;
}

bool MemoryEventsPressureSource::Start() {
  path_ = options_.path;
  if (path_.empty()) {
    std::string error;
    CgroupInfo info = DetectCgroupFromFiles(options_.cgroup_paths, &error);
    if (!error.empty()) {
      ReportOnce("detect", "cgroup memory.events unavailable: " + error + "; that source is off");
      return false;
    }
    if (info.memory != CgroupMemoryHierarchy::kV2) {
      ReportOnce("hierarchy", info.Describe() + "; the cgroup memory.events source is off");
      return false;
    }
    path_ = info.V2File("memory.events");
    ReportOnce("using", info.Describe() + "; watching " + path_);
  }

  std::string text;
  if (int error = internal::ReadSmallFile(path_, &text); error != 0) {
    ReportOnce("open", "cgroup memory.events unavailable: cannot read " + path_ + " (" +
                           internal::ErrnoText(error) + "); that source is off");
    return false;
  }
  auto counters = ParseMemoryEvents(text);
  if (!counters) {
    ReportOnce("parse", "cgroup memory.events unavailable: " + path_ +
                            " has no 'high' or 'max' counter; that source is off");
    return false;
  }
  counters_ = std::move(*counters);

  inotify_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd_ < 0 ||
      inotify_add_watch(inotify_fd_, path_.c_str(),
                        IN_MODIFY | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF) < 0) {
    ReportOnce("inotify", "cgroup memory.events unavailable: cannot watch " + path_ + " (" +
                              internal::ErrnoText(errno) + "); that source is off");
    if (inotify_fd_ >= 0) close(inotify_fd_);
    inotify_fd_ = -1;
    return false;
  }
  watch_ = loop().WatchFd(inotify_fd_, POLLIN, [this](short revents) {
    if ((revents & (POLLERR | POLLNVAL)) != 0) return Stop("no longer watchable");
    OnInotify();
  });
  set_active(true);
  return true;
}

void MemoryEventsPressureSource::OnInotify() {
  // Drain every queued event; only "the file is gone" changes what happens next.
  alignas(inotify_event) char buffer[4096];
  bool gone = false;
  while (true) {
    ssize_t got = read(inotify_fd_, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    for (ssize_t at = 0; at < got;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      if ((event->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT)) != 0) {
        gone = true;
      }
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }
  if (gone) {
    Stop("deleted or moved");
    return;
  }
  if (!Reread()) Stop("unreadable");
}

bool MemoryEventsPressureSource::Reread() {
  std::string text;
  if (internal::ReadSmallFile(path_, &text) != 0) return false;
  auto counters = ParseMemoryEvents(text);
  // A reader can meet a half-rewritten plain file (tests rewrite theirs); the kernel's file is
  // always whole. Wait for the next modification instead of calling the source gone.
  if (!counters) return true;
  auto rose = [&](std::string_view name) {
    auto found = counters->find(name);
    return found != counters->end() && found->second > counter(name);
  };
  MemoryPressureLevel level = MemoryPressureLevel::kNone;
  if (rose("high")) level = MemoryPressureLevel::kModerate;
  if (rose("max") || rose("oom") || rose("oom_kill")) level = MemoryPressureLevel::kCritical;
  counters_ = std::move(*counters);
  if (level != MemoryPressureLevel::kNone) Dispatch(level);
  return true;
}

void MemoryEventsPressureSource::Stop(std::string_view why) {
  ReportOnce("gone", "cgroup " + path_ + " is " + std::string(why) +
                         ": the source is gone; the cgroup memory.events source is off");
  loop().UnwatchFd(watch_);
  watch_ = 0;
  close(inotify_fd_);
  inotify_fd_ = -1;
  set_active(false);
}

}  // namespace lethe
