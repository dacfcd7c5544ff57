// gpupool schedule FILE [--policy FILE] [--out FILE]: one scheduling cycle, decisions as JSON.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "gpupool/io/json.h"
#include "gpupool/schedule.h"

namespace gpupool::cli {
namespace {

struct ScheduleArgs {
  std::string snapshot_path;
  std::string policy_path;
  std::string out_path;
};

int RunSchedule(const ScheduleArgs& args) {
  absl::StatusOr<ScheduledSnapshot> scheduled =
      LoadAndSchedule(args.snapshot_path, args.policy_path);
  if (!scheduled.ok()) {
    PrintError(scheduled.status());
    return kExitInvalidInput;
  }
  if (!WriteOutput(args.out_path, io::DecisionsToJson(scheduled->decisions))) {
    PrintError(args.out_path + ": cannot write file");
    return kExitInvalidInput;
  }
  return kExitOk;
}

}  // namespace

void RegisterScheduleCommand(CLI::App& app, int* exit_code) {
  CLI::App* command =
      app.add_subcommand("schedule",
                         "Run one scheduling cycle on a snapshot and print the decisions as JSON\n"
                         "(see docs/decisions-format.md).");
  auto args = std::make_shared<ScheduleArgs>();
  command->add_option("FILE", args->snapshot_path, "Snapshot JSON file")->required();
  command->add_option("--policy", args->policy_path,
                      "Policy JSON file (default: the built-in default policy)");
  command->add_option("--out", args->out_path,
                      "Write the decisions to this file instead of stdout");
  command->callback([args, exit_code] { *exit_code = RunSchedule(*args); });
}

}  // namespace gpupool::cli
