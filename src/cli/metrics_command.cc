// gpupool metrics FILE [--policy FILE] [--out FILE]: one scheduling cycle, rendered as
// Prometheus text exposition (version 0.0.4; see docs/metrics.md for every metric).
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "gpupool/metrics.h"

namespace gpupool::cli {
namespace {

struct MetricsArgs {
  std::string snapshot_path;
  std::string policy_path;
  std::string out_path;
};

int RunMetrics(const MetricsArgs& args) {
  absl::StatusOr<ScheduledSnapshot> scheduled =
      LoadAndSchedule(args.snapshot_path, args.policy_path);
  if (!scheduled.ok()) {
    PrintError(scheduled.status());
    return kExitInvalidInput;
  }
  MetricsTotals totals;
  AddCycle(scheduled->decisions, totals);
  absl::StatusOr<std::string> text =
      RenderMetrics(scheduled->snapshot, scheduled->decisions, totals);
  if (!text.ok()) {
    PrintError(text.status());
    return kExitInvalidInput;
  }
  if (!WriteOutput(args.out_path, *text)) {
    PrintError(args.out_path + ": cannot write file");
    return kExitInvalidInput;
  }
  return kExitOk;
}

}  // namespace

void RegisterMetricsCommand(CLI::App& app, int* exit_code) {
  CLI::App* command = app.add_subcommand(
      "metrics",
      "Run one scheduling cycle on a snapshot and print the pool and the cycle as Prometheus\n"
      "text exposition, version 0.0.4 (see docs/metrics.md).");
  auto args = std::make_shared<MetricsArgs>();
  command->add_option("FILE", args->snapshot_path, "Snapshot JSON file")->required();
  command->add_option("--policy", args->policy_path,
                      "Policy JSON file (default: the built-in default policy)");
  command->add_option("--out", args->out_path, "Write the metrics to this file instead of stdout");
  command->callback([args, exit_code] { *exit_code = RunMetrics(*args); });
}

}  // namespace gpupool::cli
