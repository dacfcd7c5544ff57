// Parsing the flags of `gpupool simulate` (simulate_flags.h).
#include "cli/simulate_flags.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "fmt/format.h"
#include "gpupool/scorers/scorers.h"

namespace gpupool::cli {
namespace {

// A non-negative decimal with at most `decimals` digits after the point ("0.303", "12"), as an
// integer count of 10^-decimals units; no floating point. None when malformed or above `max`.
std::optional<int64_t> ParseDecimal(std::string_view text, int decimals, int64_t max) {
  int64_t units = 0;
  int seen_decimals = -1;
  bool digits = false;
  for (char c : text) {
    if (c == '.') {
      if (seen_decimals >= 0) return std::nullopt;
      seen_decimals = 0;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    if (seen_decimals >= 0 && ++seen_decimals > decimals) return std::nullopt;
    digits = true;
    units = units * 10 + (c - '0');
    if (units > max * 1'000'000'000LL) return std::nullopt;  // long before any overflow
  }
  if (!digits) return std::nullopt;
  for (int d = std::max(seen_decimals, 0); d < decimals; ++d) units *= 10;
  int64_t scale = 1;
  for (int d = 0; d < decimals; ++d) scale *= 10;
  if (units > max * scale) return std::nullopt;
  return units;
}

// Hours with up to 6 decimals, in (0, max_hours] (or [0, ...] when zero_ok), to whole seconds
// rounded half up; none when malformed or out of range.
std::optional<int64_t> HoursToSeconds(const std::string& text, int64_t max_hours, bool zero_ok) {
  const std::optional<int64_t> micro = ParseDecimal(text, 6, max_hours);
  if (!micro) return std::nullopt;
  const int64_t seconds = (*micro * 36 + 5000) / 10000;
  if (seconds < (zero_ok ? 0 : 1)) return std::nullopt;
  return seconds;
}

}  // namespace

// "42-51", "42,43,50" or "7".
absl::StatusOr<std::vector<uint64_t>> ParseSeeds(const std::string& text) {
  std::vector<uint64_t> seeds;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const size_t dash = part.find('-');
    try {
      if (dash == std::string::npos) {
        seeds.push_back(std::stoull(part));
      } else {
        const uint64_t a = std::stoull(part.substr(0, dash));
        const uint64_t b = std::stoull(part.substr(dash + 1));
        if (b < a || b - a > 100000) {
          return absl::InvalidArgumentError(fmt::format("--seeds: bad range \"{}\"", part));
        }
        for (uint64_t s = a; s <= b; ++s) seeds.push_back(s);
      }
    } catch (const std::exception&) {
      return absl::InvalidArgumentError(
          fmt::format("--seeds: expected N, N-M or a comma list, got \"{}\"", text));
    }
  }
  if (seeds.empty()) return absl::InvalidArgumentError("--seeds: no seed given");
  return seeds;
}

absl::StatusOr<std::vector<std::string>> ParsePolicies(const std::string& text) {
  std::vector<std::string> names;
  if (text == "all") {
    for (std::string_view n : BuiltinScorerNames()) names.emplace_back(n);
    return names;
  }
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    bool known = false;
    for (std::string_view n : BuiltinScorerNames()) known |= (n == part);
    if (!known) {
      std::string list;
      for (std::string_view n : BuiltinScorerNames()) list += fmt::format(" {}", n);
      return absl::InvalidArgumentError(
          fmt::format("--policy: unknown policy \"{}\" (known:{}, all)", part, list));
    }
    names.push_back(part);
  }
  if (names.empty()) return absl::InvalidArgumentError("--policy: no policy given");
  return names;
}

// The failure model of --failures, --node-failures, --repair-hours and --failure-seed into
// `failures` (docs/cli.md). Usage errors name the option.
absl::Status ParseFailureFlags(const SimulateFlags& f, sim::ReplayFailures& failures) {
  const bool published = f.failures == "published";
  if (published) {
    failures.gpu_per_million_gpu_days = sim::kPublishedGpuFailuresPerMillionGpuDays;
    failures.node_per_million_node_days = sim::kPublishedNodeFailuresPerMillionNodeDays;
  } else {
    const std::optional<int64_t> rate = ParseDecimal(f.failures, 3, 100);
    if (!rate) {
      return absl::InvalidArgumentError(fmt::format(
          "--failures: expected GPU failures per 1,000 GPU-days (a number in [0, 100], at most "
          "3 decimals) or \"published\", got \"{}\"",
          f.failures));
    }
    failures.gpu_per_million_gpu_days = *rate;
  }
  if (!f.node_failures.empty()) {
    const std::optional<int64_t> rate = ParseDecimal(f.node_failures, 3, 100);
    if (!rate) {
      return absl::InvalidArgumentError(fmt::format(
          "--node-failures: expected node failures per 1,000 node-days (a number in [0, 100], "
          "at most 3 decimals), got \"{}\"",
          f.node_failures));
    }
    failures.node_per_million_node_days = *rate;
  }
  failures.repair_s = sim::kPublishedRepairS;
  if (!f.repair_hours.empty()) {
    // Micro-hours, to whole seconds rounded half up (3,600 s per hour: 36 / 10,000 per unit).
    const std::optional<int64_t> micro = ParseDecimal(f.repair_hours, 6, 8760);
    const int64_t seconds = micro ? (*micro * 36 + 5000) / 10000 : 0;
    if (seconds < 1) {
      return absl::InvalidArgumentError(fmt::format(
          "--repair-hours: expected hours in (0, 8760] (at least one second), got \"{}\"",
          f.repair_hours));
    }
    failures.repair_s = seconds;
  }
  failures.seed = f.failure_seed;
  return absl::OkStatus();
}

// Maintenance, spot nodes and scaling (--maintenance ... --provision-minutes) into `options`
// (docs/cli.md). Usage errors name the option; the ranges the replay checks itself
// (RunReplay) are reported from there.
absl::Status ParsePoolOperationFlags(const SimulateFlags& f, sim::ReplayOptions& options) {
  if (!f.maintenance.empty()) {
    const size_t colon = f.maintenance.find(':');
    const std::optional<int64_t> days = colon == std::string::npos
                                            ? std::nullopt
                                            : ParseDecimal(f.maintenance.substr(0, colon), 3, 3650);
    const std::optional<int64_t> hours =
        colon == std::string::npos ? std::nullopt
                                   : HoursToSeconds(f.maintenance.substr(colon + 1), 87600, false);
    if (!days || *days == 0 || !hours) {
      return absl::InvalidArgumentError(fmt::format(
          "--maintenance: expected DAYS:HOURS (each node's window every DAYS days, HOURS long; "
          "e.g. 30:8), got \"{}\"",
          f.maintenance));
    }
    options.maintenance.every_s = *days * 86400 / 1000;
    options.maintenance.duration_s = *hours;
  }
  if (!f.maintenance_notice_hours.empty()) {
    const std::optional<int64_t> s = HoursToSeconds(f.maintenance_notice_hours, 8784, true);
    if (!s) {
      return absl::InvalidArgumentError(
          fmt::format("--maintenance-notice-hours: expected hours in [0, 8784], got \"{}\"",
                      f.maintenance_notice_hours));
    }
    options.maintenance.notice_s = *s;
  }
  if (f.spot_nodes < 0 || f.spot_nodes > options.pool.nodes) {
    return absl::InvalidArgumentError(
        fmt::format("--spot-nodes: expected a count in [0, {}] (the pool's nodes), got {}",
                    options.pool.nodes, f.spot_nodes));
  }
  options.spot.nodes = static_cast<int32_t>(f.spot_nodes);
  if (!f.spot_reclaims.empty()) {
    const std::optional<int64_t> rate = ParseDecimal(f.spot_reclaims, 3, 1000);
    if (!rate) {
      return absl::InvalidArgumentError(fmt::format(
          "--spot-reclaims: expected reclaims per 1,000 spot node-days (a number in [0, 1000], at "
          "most 3 decimals), got \"{}\"",
          f.spot_reclaims));
    }
    options.spot.reclaims_per_million_node_days = *rate;
  }
  if (!f.spot_away_hours.empty()) {
    const std::optional<int64_t> s = HoursToSeconds(f.spot_away_hours, 8760, false);
    if (!s) {
      return absl::InvalidArgumentError(fmt::format(
          "--spot-away-hours: expected hours in (0, 8760], got \"{}\"", f.spot_away_hours));
    }
    options.spot.away_s = *s;
  }
  options.spot.seed = f.spot_seed;
  if (f.scale_nodes < 0 || f.scale_nodes > 1000) {
    return absl::InvalidArgumentError(
        fmt::format("--scale-nodes: expected a count in [0, 1000], got {}", f.scale_nodes));
  }
  options.scaling.max_nodes = static_cast<int32_t>(f.scale_nodes);
  if (!f.scale_cost_per_hour.empty()) {
    const std::optional<int64_t> micro = ParseDecimal(f.scale_cost_per_hour, 6, 1'000'000);
    if (!micro) {
      return absl::InvalidArgumentError(fmt::format(
          "--scale-cost-per-hour: expected a price per node-hour (at most 6 decimals, at most "
          "1,000,000), got \"{}\"",
          f.scale_cost_per_hour));
    }
    options.scaling.cost_per_hour_micro = *micro;
  }
  if (!f.provision_minutes.empty()) {
    const std::optional<int64_t> units = ParseDecimal(f.provision_minutes, 3, 1440);
    if (!units) {
      return absl::InvalidArgumentError(fmt::format(
          "--provision-minutes: expected minutes in [0, 1440], got \"{}\"", f.provision_minutes));
    }
    options.scaling.provision_s = (*units * 60 + 500) / 1000;
  }
  return absl::OkStatus();
}

// "64x8" (nodes x GPUs per node) or "64x8/16" (and nodes per rack) into `pool`.
bool ParseClusterSpec(const std::string& spec, sim::ReplayPool& pool) {
  int nodes = 0, gpus = 0, per_rack = pool.nodes_per_rack;
  char x = 0, slash = 0;
  std::istringstream in(spec);
  in >> nodes >> x >> gpus;
  if (!in || x != 'x' || nodes <= 0 || gpus <= 0 || nodes > 100000 || gpus > 1024) return false;
  if (in >> slash) {
    if (slash != '/' || !(in >> per_rack) || per_rack <= 0) return false;
  }
  char extra = 0;
  if (in >> extra) return false;
  pool.nodes = nodes;
  pool.gpus_per_node = gpus;
  pool.nodes_per_rack = per_rack;
  return true;
}

}  // namespace gpupool::cli
