// lethe-pressure: sends memory-pressure events to a running engine over its control socket and
// reports what they freed; with --squeeze, creates real memory pressure and reports when and how
// the engine answered it.
//
//   lethe-pressure --socket PATH [--level moderate|critical] [--trials N] [--interval-ms N]
//                  [--pid PID] [--timeout-ms N] [--settle-ms N]
// Before each trial the tool waits until the engine is quiet (its unlocked bytes and RSS steady
// over --settle-ms), so that a trial measures the pressure event and not a page load beside it.
//   lethe-pressure --socket PATH --squeeze [--squeeze-mb N] [--squeeze-seconds S]
// Exit 0 on success, 1 when the engine answered with an error or went away, 2 on bad usage or no
// engine on the socket.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>
#include <vector>

#include "control_client.h"
#include "pressure_trials.h"
#include "process_memory.h"
#include "squeeze.h"

namespace {

using namespace lethe::pressure;
using Milliseconds = std::chrono::milliseconds;

struct Options {
  std::string socket_path;
  std::string level = "critical";
  int trials = 5;
  // Beyond the engine's default ongoing window (10 s): a repeat within it is "ongoing" and only
  // flushes, without purging the allocator, so it would not measure a full critical event.
  int interval_ms = 11000;
  pid_t pid = 0;
  int timeout_ms = 5000;
  int settle_ms = 100;
  bool squeeze = false;
  int squeeze_mb = 512;
  double squeeze_seconds = 10;
};

// Without a problem (--help) the usage goes to stdout.
int Usage(const std::string& problem) {
  if (!problem.empty()) std::cerr << "lethe-pressure: " << problem << "\n";
  std::ostream& out = problem.empty() ? std::cout : std::cerr;
  out
      << "usage: lethe-pressure --socket PATH [--level moderate|critical] [--trials N]\n"
         "                      [--interval-ms N] [--pid PID] [--timeout-ms N] [--settle-ms N]\n"
         "       lethe-pressure --socket PATH --squeeze [--squeeze-mb N] [--squeeze-seconds S]\n"
         "Sends pressure events to the engine listening on PATH (lethe-stress --serve, lethe-browse\n"
         "--control-socket, an embedder's engine) and prints, per trial and as medians, what it\n"
         "freed: its caches' unlocked bytes before, the RSS it returned (/proc), the time taken.\n"
         "Trials are --interval-ms apart (default 11000: beyond the engine's 10 s ongoing-pressure\n"
         "window, within which a repeat only flushes, without purging the allocator).\n"
         "--squeeze runs a process that allocates and touches N MiB (default 512; in a cgroup v2\n"
         "with a memory limit when possible; never in CI) and reports when the engine saw it.\n";
  return 2;
}

bool ParseInt(const std::string& text, long min, long max, long* out) {
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || errno != 0 || *end != '\0' || value < min || value > max) return false;
  *out = value;
  return true;
}

// "" or the message for Usage().
std::string Parse(const std::vector<std::string>& args, Options* options, bool* help) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "-h" || flag == "--help") {
      *help = true;
      continue;
    }
    if (flag == "--squeeze") {
      options->squeeze = true;
      continue;
    }
    if (i + 1 >= args.size()) {
      return flag.rfind("--", 0) == 0 ? flag + " needs a value (or is unknown)"
                                      : "unexpected argument '" + flag + "'";
    }
    const std::string value = args[++i];
    long number = 0;
    auto need = [&](long min, long max, auto* field) -> std::string {
      if (!ParseInt(value, min, max, &number)) {
        return flag + " needs a whole number in " + std::to_string(min) + ".." +
               std::to_string(max) + ", not '" + value + "'";
      }
      *field = static_cast<std::remove_pointer_t<decltype(field)>>(number);
      return "";
    };
    std::string error;
    if (flag == "--socket") options->socket_path = value;
    else if (flag == "--level") {
      if (value != "moderate" && value != "critical") {
        error = "--level needs 'moderate' or 'critical', not '" + value + "'";
      }
      options->level = value;
    } else if (flag == "--trials") error = need(1, 1000, &options->trials);
    else if (flag == "--interval-ms") error = need(0, 3600000, &options->interval_ms);
    else if (flag == "--pid") error = need(1, 1L << 30, &options->pid);
    else if (flag == "--timeout-ms") error = need(1, 3600000, &options->timeout_ms);
    else if (flag == "--settle-ms") error = need(1, 60000, &options->settle_ms);
    else if (flag == "--squeeze-mb") error = need(16, 1 << 20, &options->squeeze_mb);
    else if (flag == "--squeeze-seconds") {
      long seconds = 0;
      if (!ParseInt(value, 1, 3600, &seconds)) error = "--squeeze-seconds needs 1..3600, not '" + value + "'";
      options->squeeze_seconds = static_cast<double>(seconds);
    } else {
      error = "unknown flag '" + flag + "'";
    }
    if (!error.empty()) return error;
  }
  if (!*help && options->socket_path.empty()) return "--socket PATH is required";
  return "";
}

uint64_t Rss(pid_t pid, bool* ok) {
  lethe::stress::ProcessMemory memory;
  std::string error;
  *ok = lethe::stress::ReadProcessMemory(pid, &memory, &error);
  if (!*ok) std::cerr << "lethe-pressure: " << error << "\n";
  return memory.rss_bytes;
}

// One request; prints why and returns false when it failed.
bool Ask(ControlClient& client, const std::string& line, int timeout_ms, std::string* reply) {
  std::string error;
  if (!client.Request(line, Milliseconds(timeout_ms), reply, &error)) {
    std::cerr << "lethe-pressure: " << error << "\n";
    return false;
  }
  if (std::string failure = ReplyError(*reply); !failure.empty()) {
    std::cerr << "lethe-pressure: the engine answered '" << line << "' with an error: " << failure << "\n";
    return false;
  }
  return true;
}

// Waits until the engine is quiet: two looks `settle_ms` apart with the same unlocked bytes and
// RSS within 256 KiB. Gives up after 50 looks (the trial then runs anyway, and says so).
bool Settle(ControlClient& client, const Options& options, pid_t pid, bool* failed) {
  std::optional<uint64_t> last_unlocked;
  uint64_t last_rss = 0;
  for (int look = 0; look < 50; ++look) {
    std::string reply;
    if (!Ask(client, "stats", options.timeout_ms, &reply)) return !(*failed = true);
    bool ok = true;
    const uint64_t rss = Rss(pid, &ok);
    if (!ok) return !(*failed = true);
    const auto unlocked = UnlockedBytesFromStats(reply);
    if (look > 0 && unlocked == last_unlocked &&
        (rss > last_rss ? rss - last_rss : last_rss - rss) <= (256u << 10)) {
      return true;
    }
    last_unlocked = unlocked;
    last_rss = rss;
    std::this_thread::sleep_for(Milliseconds(options.settle_ms));
  }
  return false;
}

// One trial; false when a request failed (already reported).
bool RunTrial(ControlClient& client, const Options& options, pid_t pid, TrialResult* trial) {
  std::string reply;
  if (!Ask(client, "stats", options.timeout_ms, &reply)) return false;
  trial->unlocked_bytes_before = UnlockedBytesFromStats(reply);
  bool ok = true;
  trial->rss_before_bytes = Rss(pid, &ok);
  if (!ok) return false;
  const auto sent = std::chrono::steady_clock::now();
  if (!Ask(client, "pressure " + options.level, options.timeout_ms, &reply)) return false;
  trial->round_trip_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sent).count();
  trial->rss_after_bytes = Rss(pid, &ok);
  if (!ok) return false;
  trial->freed_bytes = static_cast<uint64_t>(NumberField(reply, "freed_bytes").value_or(0));
  trial->elapsed_us = NumberField(reply, "elapsed_us").value_or(0);
  return true;
}

int RunTrials(ControlClient& client, const Options& options, pid_t pid) {
  std::vector<TrialResult> trials;
  int unsettled_count = 0;
  int disturbed_count = 0;
  for (int i = 0; i < options.trials; ++i) {
    if (i > 0) std::this_thread::sleep_for(Milliseconds(options.interval_ms));
    TrialResult trial;
    // A trial is redone (at most 3 times) when the engine loaded pages between the stats and the
    // pressure event (it then frees more than was unlocked): the figures would mix the two.
    for (int attempt = 0; attempt < 4; ++attempt) {
      bool failed = false;
      if (!Settle(client, options, pid, &failed)) {
        if (failed) return 1;
        ++unsettled_count;
      }
      if (!RunTrial(client, options, pid, &trial)) return 1;
      if (!Disturbed(trial)) break;
      if (attempt == 3) ++disturbed_count;
    }
    trials.push_back(trial);
  }
  PrintTrials(std::cout, trials, options.level == "critical");
  if (unsettled_count > 0) {
    std::cout << "note: " << unsettled_count << " time(s) the engine was still busy (its memory "
              << "kept changing) when a trial had to start\n";
  }
  if (disturbed_count > 0) {
    std::cout << "note: " << disturbed_count << " trial(s) freed more than was unlocked after 4 "
              << "attempts: the engine kept loading between the stats and the event\n";
  }
  return 0;
}

// How the squeeze sees the engine answer: its count of pressure events when its stats have one
// ("pressure_event_count"), else its unlocked cache bytes falling by half (at least 1 MiB).
struct EngineView {
  std::optional<int64_t> pressure_count;
  std::optional<uint64_t> unlocked_bytes;
  std::string reply;
};

std::optional<EngineView> Look(ControlClient& client, int timeout_ms) {
  EngineView view;
  if (!Ask(client, "stats", timeout_ms, &view.reply)) return std::nullopt;
  view.pressure_count = NumberField(view.reply, "pressure_event_count");
  view.unlocked_bytes = UnlockedBytesFromStats(view.reply);
  return view;
}

bool Answered(const EngineView& before, const EngineView& now) {
  if (before.pressure_count && now.pressure_count) return *now.pressure_count > *before.pressure_count;
  if (!before.unlocked_bytes || !now.unlocked_bytes) return false;
  return *before.unlocked_bytes >= kMinUnlockedBytes && *now.unlocked_bytes <= *before.unlocked_bytes / 2;
}

std::string Bytes(const std::optional<uint64_t>& bytes) {
  return bytes ? MiB(static_cast<int64_t>(*bytes)) : std::string("unknown");
}

int RunSqueeze(ControlClient& client, const Options& options, pid_t pid) {
  if (std::string refusal = CiRefusal(std::getenv("CI")); !refusal.empty()) {
    std::cerr << "lethe-pressure: " << refusal << "\n";
    return 2;
  }
  const auto before = Look(client, options.timeout_ms);
  if (!before) return 1;
  if (!before->pressure_count && !before->unlocked_bytes) {
    std::cerr << "lethe-pressure: the engine's stats have neither a pressure count nor cache "
                 "sizes; cannot tell when it answers\n";
    return 1;
  }
  bool ok = true;
  const uint64_t rss_before = Rss(pid, &ok);
  if (!ok) return 1;
  Squeeze squeeze;
  std::string error;
  const auto started = std::chrono::steady_clock::now();
  if (!squeeze.Start(static_cast<uint64_t>(options.squeeze_mb) << 20, &error)) {
    std::cerr << "lethe-pressure: " << error << "\n";
    return 1;
  }
  std::cout << "squeeze: " << squeeze.description() << "\n"
            << "watching the engine's " << (before->pressure_count ? "pressure event count" : "unlocked cache bytes")
            << " (unlocked before: " << Bytes(before->unlocked_bytes) << ")\n";
  const auto deadline = started + std::chrono::duration<double>(options.squeeze_seconds);
  EngineView now = *before;
  bool answered = false;
  while (!answered && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(Milliseconds(20));
    auto looked = Look(client, options.timeout_ms);
    if (!looked) return 1;
    now = *looked;
    answered = Answered(*before, now);
  }
  const double seen_after_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const uint64_t rss_after = Rss(pid, &ok);
  squeeze.Stop();
  char when[160];
  if (answered) {
    std::snprintf(when, sizeof(when), "the engine answered after %.2f s", seen_after_s);
  } else {
    std::snprintf(when, sizeof(when),
                  "the engine did not answer within %.0f s (its pressure sources may be unavailable "
                  "here: see its log)",
                  options.squeeze_seconds);
  }
  std::cout << when;
  if (answered && now.pressure_count) {
    std::cout << ": " << (*now.pressure_count - *before->pressure_count) << " event(s), last "
              << StringField(now.reply, "last_pressure_level").value_or("?") << " from "
              << StringField(now.reply, "last_pressure_source").value_or("?");
  }
  std::cout << "; unlocked cache bytes " << Bytes(before->unlocked_bytes) << " -> "
            << Bytes(now.unlocked_bytes) << "; engine RSS " << MiB(static_cast<int64_t>(rss_before))
            << " -> " << MiB(static_cast<int64_t>(rss_after)) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  bool help = false;
  if (std::string error = Parse(std::vector<std::string>(argv + 1, argv + argc), &options, &help);
      !error.empty()) {
    return Usage(error);
  }
  if (help) {
    Usage("");
    return 0;
  }
  std::string error;
  std::unique_ptr<ControlClient> client = ControlClient::Connect(options.socket_path, &error);
  if (client == nullptr) {
    std::cerr << "lethe-pressure: " << error << "\n";
    return 2;
  }
  const pid_t pid = options.pid != 0 ? options.pid : client->peer_pid();
  if (pid <= 0) {
    std::cerr << "lethe-pressure: cannot tell the engine's pid from the socket; pass --pid\n";
    return 2;
  }
  std::cout << "lethe-pressure: engine pid " << pid << " on " << options.socket_path << ", ";
  if (options.squeeze) {
    std::cout << "squeeze of " << options.squeeze_mb << " MiB for at most " << options.squeeze_seconds
              << " s\n";
    return RunSqueeze(*client, options, pid);
  }
  std::cout << options.trials << " " << options.level << " trial(s), " << options.interval_ms
            << " ms apart\n";
  return RunTrials(*client, options, pid);
}
