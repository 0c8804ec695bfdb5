#include "lethe/pressure_psi.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <charconv>

#include "lethe/check.h"
#include "posix_util.h"

namespace lethe {

namespace {

std::string_view NextField(std::string_view* text) {
  size_t start = text->find_first_not_of(" \t\n");
  if (start == std::string_view::npos) {
    *text = {};
    return {};
  }
  text->remove_prefix(start);
  size_t end = text->find_first_of(" \t\n");
  std::string_view field = text->substr(0, end);
  text->remove_prefix(end == std::string_view::npos ? text->size() : end);
  return field;
}

bool ParseMicroseconds(std::string_view field, uint64_t* out) {
  if (field.empty()) return false;
  auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), *out);
  return error == std::errc() && end == field.data() + field.size();
}

}  // namespace

// ---- triggers -------------------------------------------------------------------------------

std::string PsiTrigger::Text() const {
  return std::string(full ? "full " : "some ") + std::to_string(stall_us) + " " +
         std::to_string(window_us);
}

std::vector<PsiTrigger> DefaultPsiTriggers() {
  return {PsiTrigger{MemoryPressureLevel::kModerate, false, 140000, 2000000},
          PsiTrigger{MemoryPressureLevel::kCritical, true, 1400000, 2000000}};
}

std::optional<PsiTrigger> ParsePsiTrigger(std::string_view text, MemoryPressureLevel level,
                                          std::string* error) {
  const std::string quoted = "PSI trigger '" + std::string(text) + "': ";
  PsiTrigger trigger;
  trigger.level = level;
  std::string_view kind = NextField(&text);
  if (kind == "full") {
    trigger.full = true;
  } else if (kind != "some") {
    *error = quoted + "the first field must be 'some' or 'full'";
    return std::nullopt;
  }
  if (!ParseMicroseconds(NextField(&text), &trigger.stall_us)) {
    *error = quoted + "the stall (second field) must be a number of microseconds";
    return std::nullopt;
  }
  if (!ParseMicroseconds(NextField(&text), &trigger.window_us)) {
    *error = quoted + "the window (third field) must be a number of microseconds";
    return std::nullopt;
  }
  if (!NextField(&text).empty()) {
    *error = quoted + "unexpected text after the window";
    return std::nullopt;
  }
  std::string invalid = ValidatePsiTrigger(trigger);
  if (!invalid.empty()) {
    *error = quoted + invalid;
    return std::nullopt;
  }
  return trigger;
}

std::string ValidatePsiTrigger(const PsiTrigger& trigger) {
  if (trigger.window_us < kPsiMinWindowUs || trigger.window_us > kPsiMaxWindowUs) {
    return "the window must be between 500000 and 10000000 us";
  }
  if (trigger.stall_us == 0 || trigger.stall_us > trigger.window_us) {
    return "the stall must be more than 0 and at most the window";
  }
  if (trigger.level == MemoryPressureLevel::kNone) return "a trigger needs a level";
  return {};
}

PsiTrigger RoundPsiTriggerToUnprivilegedWindow(const PsiTrigger& trigger) {
  constexpr uint64_t kStep = kPsiUnprivilegedWindowUs;
  if (trigger.window_us % kStep == 0) return trigger;
  PsiTrigger rounded = trigger;
  rounded.window_us = (trigger.window_us / kStep + 1) * kStep;
  // Same share of the window: stall x new / old, rounded to nearest; windows <= 10 s keep this in
  // 64 bits (1e7 x 1e7).
  rounded.stall_us = (trigger.stall_us * rounded.window_us + trigger.window_us / 2) / trigger.window_us;
  if (rounded.stall_us == 0) rounded.stall_us = 1;
  if (rounded.stall_us > rounded.window_us) rounded.stall_us = rounded.window_us;
  return rounded;
}

// ---- the OS seam ----------------------------------------------------------------------------

int PsiFileOps::Open(const std::string& path) {
  int fd = open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
  return fd >= 0 ? fd : -errno;
}

int PsiFileOps::WriteTrigger(int fd, std::string_view text) {
  std::string with_nul(text);
  with_nul.push_back('\0');
  ssize_t written;
  do {
    written = write(fd, with_nul.data(), with_nul.size());
  } while (written < 0 && errno == EINTR);
  if (written < 0) return errno;
  return written == static_cast<ssize_t>(with_nul.size()) ? 0 : EIO;
}

void PsiFileOps::Acknowledge(int) {}

void PsiFileOps::Close(int fd) { close(fd); }

PsiFileOps& PsiFileOps::Real() {
  static PsiFileOps ops;
  return ops;
}

// ---- the source -----------------------------------------------------------------------------

PsiPressureSource::PsiPressureSource(PressureContext context, PsiOptions options)
    : PressureSource(std::move(context), "psi"),
      options_(std::move(options)),
      ops_(options_.ops != nullptr ? *options_.ops : PsiFileOps::Real()) {}

PsiPressureSource::~PsiPressureSource() {
  for (Armed& armed : armed_) Disarm(armed);
}

bool PsiPressureSource::Start() {
  LETHE_DCHECK(armed_.empty(), "Start() is called once");
  for (const PsiTrigger& configured : options_.triggers) {
    std::string invalid = ValidatePsiTrigger(configured);
    if (!invalid.empty()) {
      ReportOnce("invalid " + configured.Text(), "PSI trigger '" + configured.Text() + "' ignored: " + invalid);
      continue;
    }
    PsiTrigger trigger = configured;
    int fd = Arm(&trigger);
    if (fd < 0) continue;
    const size_t index = armed_.size();
    armed_.push_back(Armed{trigger, fd, 0});
    armed_.back().watch = loop().WatchFd(fd, POLLPRI, [this, index](short revents) {
      OnEvent(index, revents);
    });
  }
  set_active(!armed_.empty());
  return active();
}

int PsiPressureSource::Arm(PsiTrigger* trigger) {
  const std::string& path = options_.path;
  int fd = ops_.Open(path);
  if (fd < 0) {
    ReportOnce("open", "PSI unavailable: cannot open " + path + " (" + internal::ErrnoText(-fd) +
                           "); the PSI source is off");
    return -1;
  }
  int error = ops_.WriteTrigger(fd, trigger->Text());
  if (error == EINVAL && trigger->window_us % kPsiUnprivilegedWindowUs != 0) {
    PsiTrigger rounded = RoundPsiTriggerToUnprivilegedWindow(*trigger);
    error = ops_.WriteTrigger(fd, rounded.Text());
    if (error == 0) {
      ReportOnce("rounded " + trigger->Text(),
                 "PSI trigger '" + trigger->Text() + "' refused by " + path +
                     " (EINVAL: without CAP_SYS_RESOURCE the window must be a multiple of 2 s); "
                     "using '" + rounded.Text() + "'");
      *trigger = rounded;
    }
  }
  if (error != 0) {
    ReportOnce("write " + trigger->Text(), "PSI trigger '" + trigger->Text() + "' refused by " +
                                               path + " (" + internal::ErrnoText(error) +
                                               "); that trigger is off");
    ops_.Close(fd);
    return -1;
  }
  return fd;
}

void PsiPressureSource::OnEvent(size_t index, short revents) {
  Armed& armed = armed_[index];
  if ((revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) {
    ReportOnce("gone " + armed.trigger.Text(),
               "PSI trigger '" + armed.trigger.Text() + "' on " + options_.path +
                   ": the source is gone (POLLERR); that trigger is off");
    Disarm(armed);
    bool any_left = false;
    for (const Armed& other : armed_) any_left = any_left || other.fd >= 0;
    set_active(any_left);
    return;
  }
  if ((revents & POLLPRI) != 0) {
    ops_.Acknowledge(armed.fd);
    Dispatch(armed.trigger.level);
  }
}

void PsiPressureSource::Disarm(Armed& armed) {
  if (armed.fd < 0) return;
  loop().UnwatchFd(armed.watch);
  ops_.Close(armed.fd);
  armed.fd = -1;
  armed.watch = 0;
}

std::vector<PsiTrigger> PsiPressureSource::armed_triggers() const {
  std::vector<PsiTrigger> triggers;
  for (const Armed& armed : armed_) {
    if (armed.fd >= 0) triggers.push_back(armed.trigger);
  }
  return triggers;
}

}  // namespace lethe
