// tools/pressure/pressure_trials.h — what lethe-pressure measures in one trial and how trials are
// summarised (medians), apart from the socket so that tests can feed it replies.
//
// One trial: `stats` (the caches' unlocked bytes before), the engine's RSS from /proc/PID/statm,
// `pressure LEVEL` (the engine's freed_bytes and elapsed_us, and the round trip measured here), the
// RSS again. "Returned" is the RSS drop; its share of the unlocked bytes is the figure the issue's
// target is about (a critical event returns >= 95% of the unlocked cache bytes to the OS, median
// round trip < 100 ms).
// Plain data and pure functions; any thread.
#ifndef LETHE_TOOLS_PRESSURE_PRESSURE_TRIALS_H_
#define LETHE_TOOLS_PRESSURE_PRESSURE_TRIALS_H_

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace lethe::pressure {

inline constexpr double kTargetReturnedShare = 0.95;
inline constexpr double kTargetRoundTripMs = 100;
// Below this, a trial had nothing worth freeing and is left out of the returned-share median.
inline constexpr uint64_t kMinUnlockedBytes = 1 << 20;

struct TrialResult {
  std::optional<uint64_t> unlocked_bytes_before;  // absent when the engine's stats lack it
  uint64_t rss_before_bytes = 0;
  uint64_t rss_after_bytes = 0;
  uint64_t freed_bytes = 0;   // as the engine reported it
  int64_t elapsed_us = 0;     // the engine's own timing of its handler
  double round_trip_ms = 0;   // send to reply, measured by lethe-pressure
  int64_t ReturnedBytes() const {
    return static_cast<int64_t>(rss_before_bytes) - static_cast<int64_t>(rss_after_bytes);
  }
  // RSS returned / unlocked before; absent when unlocked is unknown or under kMinUnlockedBytes.
  std::optional<double> ReturnedShare() const;
};

// True when the engine freed clearly more than it had unlocked just before (more than 110% plus
// 1 MiB): it did other work (loaded pages) between the stats and the event.
bool Disturbed(const TrialResult& trial);

// The caches' unlocked bytes in a `stats` reply: the Engine's "discardable_bytes" (exactly what a
// critical event frees from its caches) or "unlocked_bytes" when present; else the sum of the
// fields ending in "_unlocked_bytes"; else, for an engine that reports neither, the surfaces that
// are not locked plus the bfcache ("surfaces_bytes" - "locked_surfaces_bytes" + "bfcache_bytes").
// Absent when the reply has none of these (or is not JSON).
std::optional<uint64_t> UnlockedBytesFromStats(const std::string& reply);
// A numeric field of a reply line (absent when missing or the line is not a JSON object).
std::optional<int64_t> NumberField(const std::string& reply, const std::string& key);
std::optional<std::string> StringField(const std::string& reply, const std::string& key);
// "" when the reply says ok, else its error text (or why the line is not a reply).
std::string ReplyError(const std::string& reply);

double Median(std::vector<double> values);  // 0 for none

// Prints one line per trial and the medians, with the targets when `critical`.
void PrintTrials(std::ostream& out, const std::vector<TrialResult>& trials, bool critical);

std::string MiB(int64_t bytes);

}  // namespace lethe::pressure

#endif  // LETHE_TOOLS_PRESSURE_PRESSURE_TRIALS_H_
