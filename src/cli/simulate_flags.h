// The flags of `gpupool simulate` (simulate_command.cc) and the parsing of those that are more
// than a number or a path: seeds and policies of the inflation protocol, and the replay's pool,
// failure and pool-operation flags (docs/cli.md). Usage errors name the option.
#ifndef GPUPOOL_SRC_CLI_SIMULATE_FLAGS_H_
#define GPUPOOL_SRC_CLI_SIMULATE_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpupool/sim/replay.h"

namespace gpupool::cli {

struct SimulateFlags {
  std::string protocol = "inflation";
  std::string nodes;
  std::string pods;
  std::string trace;
  std::string arrivals;
  double inflation = 1.3;
  std::string seeds = "42-51";
  std::string policy = "all";
  std::string json;
  std::string csv;
  std::string html;
  std::string engine = "incremental";
  int synthetic_pods = 8152;
  bool quiet = false;
  bool consolidation = false;
  // Replay: preemption.victim_remaining_percent and _max_gap for every policy (0: as it is).
  int64_t victim_remaining_percent = 0;
  int64_t victim_remaining_max_gap = 0;
  // --protocol replay
  std::string cluster;
  std::string window_start;
  int64_t window_days = 14;
  std::string prices;
  std::string chargeback;
  std::string budgets;
  // --protocol replay: failures and repairs (docs/replay.md, "Failures and repairs").
  std::string failures = "0";
  std::string node_failures;
  std::string repair_hours;
  uint64_t failure_seed = 1;
  // --protocol replay: maintenance, spot nodes, scaling (docs/replay.md, "Maintenance, spot
  // reclaims and scaling").
  std::string maintenance;
  std::string maintenance_notice_hours;
  int64_t spot_nodes = 0;
  std::string spot_reclaims;
  std::string spot_away_hours;
  uint64_t spot_seed = 1;
  int64_t scale_nodes = 0;
  std::string scale_cost_per_hour;
  std::string provision_minutes;
};

// "42-51", "42,43,50" or "7".
absl::StatusOr<std::vector<uint64_t>> ParseSeeds(const std::string& text);

// "all" or a comma list of built-in policy names (BuiltinScorerNames()).
absl::StatusOr<std::vector<std::string>> ParsePolicies(const std::string& text);

// The failure model of --failures, --node-failures, --repair-hours and --failure-seed into
// `failures` (docs/cli.md). Usage errors name the option.
absl::Status ParseFailureFlags(const SimulateFlags& f, sim::ReplayFailures& failures);

// Maintenance, spot nodes and scaling (--maintenance ... --provision-minutes) into `options`
// (docs/cli.md). Usage errors name the option; the ranges the replay checks itself
// (RunReplay) are reported from there.
absl::Status ParsePoolOperationFlags(const SimulateFlags& f, sim::ReplayOptions& options);

// "64x8" (nodes x GPUs per node) or "64x8/16" (and nodes per rack) into `pool`.
bool ParseClusterSpec(const std::string& spec, sim::ReplayPool& pool);

}  // namespace gpupool::cli

#endif  // GPUPOOL_SRC_CLI_SIMULATE_FLAGS_H_
