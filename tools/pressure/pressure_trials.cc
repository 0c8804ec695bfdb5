// lethe-pressure's trial figures (see pressure_trials.h).
#include "pressure_trials.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

namespace lethe::pressure {

namespace {

std::optional<nlohmann::json> ParseObject(const std::string& reply) {
  nlohmann::json parsed = nlohmann::json::parse(reply, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
  return parsed;
}

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string MiB(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

std::optional<double> TrialResult::ReturnedShare() const {
  if (!unlocked_bytes_before || *unlocked_bytes_before < kMinUnlockedBytes) return std::nullopt;
  return static_cast<double>(ReturnedBytes()) / static_cast<double>(*unlocked_bytes_before);
}

bool Disturbed(const TrialResult& trial) {
  if (!trial.unlocked_bytes_before) return false;
  const double unlocked = static_cast<double>(*trial.unlocked_bytes_before);
  return static_cast<double>(trial.freed_bytes) > unlocked * 1.1 + static_cast<double>(kMinUnlockedBytes);
}

std::optional<uint64_t> UnlockedBytesFromStats(const std::string& reply) {
  auto parsed = ParseObject(reply);
  if (!parsed) return std::nullopt;
  for (const char* key : {"discardable_bytes", "unlocked_bytes"}) {
    if (auto found = parsed->find(key); found != parsed->end() && found->is_number_unsigned()) {
      return found->get<uint64_t>();
    }
  }
  std::optional<uint64_t> sum;
  for (auto it = parsed->begin(); it != parsed->end(); ++it) {
    if (EndsWith(it.key(), "_unlocked_bytes") && it.value().is_number_unsigned()) {
      sum = sum.value_or(0) + it.value().get<uint64_t>();
    }
  }
  if (sum) return sum;
  auto surfaces = parsed->find("surfaces_bytes");
  auto locked = parsed->find("locked_surfaces_bytes");
  if (surfaces == parsed->end() || locked == parsed->end() || !surfaces->is_number_unsigned() ||
      !locked->is_number_unsigned()) {
    return std::nullopt;
  }
  uint64_t unlocked = surfaces->get<uint64_t>() - std::min(surfaces->get<uint64_t>(), locked->get<uint64_t>());
  if (auto bfcache = parsed->find("bfcache_bytes");
      bfcache != parsed->end() && bfcache->is_number_unsigned()) {
    unlocked += bfcache->get<uint64_t>();
  }
  return unlocked;
}

std::optional<int64_t> NumberField(const std::string& reply, const std::string& key) {
  auto parsed = ParseObject(reply);
  if (!parsed) return std::nullopt;
  auto found = parsed->find(key);
  if (found == parsed->end() || !found->is_number_integer()) return std::nullopt;
  return found->get<int64_t>();
}

std::optional<std::string> StringField(const std::string& reply, const std::string& key) {
  auto parsed = ParseObject(reply);
  if (!parsed) return std::nullopt;
  auto found = parsed->find(key);
  if (found == parsed->end() || !found->is_string()) return std::nullopt;
  return found->get<std::string>();
}

std::string ReplyError(const std::string& reply) {
  auto parsed = ParseObject(reply);
  if (!parsed) return "the engine's reply is not a JSON object: " + reply.substr(0, 200);
  auto ok = parsed->find("ok");
  if (ok == parsed->end() || !ok->is_boolean()) return "the engine's reply lacks \"ok\": " + reply.substr(0, 200);
  if (ok->get<bool>()) return "";
  auto error = parsed->find("error");
  return error != parsed->end() && error->is_string() ? error->get<std::string>() : "failed";
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

void PrintTrials(std::ostream& out, const std::vector<TrialResult>& trials, bool critical) {
  std::vector<double> shares, round_trips, elapsed, freed, returned;
  std::vector<double> freeing_round_trips;  // of the trials that had something to free
  char line[320];
  for (size_t i = 0; i < trials.size(); ++i) {
    const TrialResult& trial = trials[i];
    const auto share = trial.ReturnedShare();
    std::string unlocked = trial.unlocked_bytes_before
                               ? MiB(static_cast<int64_t>(*trial.unlocked_bytes_before))
                               : std::string("unknown");
    char share_text[64] = "";
    if (share) std::snprintf(share_text, sizeof(share_text), ", %.0f%% of unlocked", 100 * *share);
    else if (trial.unlocked_bytes_before) std::snprintf(share_text, sizeof(share_text), ", nothing unlocked to free");
    std::snprintf(line, sizeof(line),
                  "trial %zu: unlocked %s before; engine freed %s in %.2f ms (round trip %.2f ms); "
                  "RSS %s -> %s (returned %s%s)\n",
                  i + 1, unlocked.c_str(), MiB(static_cast<int64_t>(trial.freed_bytes)).c_str(),
                  static_cast<double>(trial.elapsed_us) / 1000.0, trial.round_trip_ms,
                  MiB(static_cast<int64_t>(trial.rss_before_bytes)).c_str(),
                  MiB(static_cast<int64_t>(trial.rss_after_bytes)).c_str(),
                  MiB(trial.ReturnedBytes()).c_str(), share_text);
    out << line;
    if (share) {
      shares.push_back(*share);
      freeing_round_trips.push_back(trial.round_trip_ms);
    }
    round_trips.push_back(trial.round_trip_ms);
    elapsed.push_back(static_cast<double>(trial.elapsed_us) / 1000.0);
    freed.push_back(static_cast<double>(trial.freed_bytes));
    returned.push_back(static_cast<double>(trial.ReturnedBytes()));
  }
  std::snprintf(line, sizeof(line),
                "median of %zu: engine freed %s, RSS returned %s, handler %.2f ms, round trip %.2f ms\n",
                trials.size(), MiB(static_cast<int64_t>(Median(freed))).c_str(),
                MiB(static_cast<int64_t>(Median(returned))).c_str(), Median(elapsed),
                Median(round_trips));
  out << line;
  if (!critical) return;
  if (shares.empty()) {
    out << "returned share of unlocked bytes: n/a (no trial found " << MiB(kMinUnlockedBytes)
        << " or more unlocked)   (target >= 95%: NOT MEASURED)\n";
  } else {
    const double share = Median(shares);
    std::snprintf(line, sizeof(line),
                  "returned share of unlocked bytes: %.0f%% (median of %zu trials with something "
                  "to free)   (target >= %.0f%%: %s)\n",
                  100 * share, shares.size(), 100 * kTargetReturnedShare,
                  share >= kTargetReturnedShare ? "met" : "NOT MET");
    out << line;
  }
  // The time target is about events that free something: an empty cache answers in microseconds.
  const bool freeing = !freeing_round_trips.empty();
  const double round_trip = Median(freeing ? freeing_round_trips : round_trips);
  std::snprintf(line, sizeof(line), "median round trip%s: %.2f ms   (target < %.0f ms: %s)\n",
                freeing ? " of those trials" : "", round_trip, kTargetRoundTripMs,
                round_trip < kTargetRoundTripMs ? "met" : "NOT MET");
  out << line;
}

}  // namespace lethe::pressure
