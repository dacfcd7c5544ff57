// gpupool explain FILE JOB_ID [--policy FILE]: where a job runs or starts, or why it waits.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "gpupool/explain.h"
#include "gpupool/schedule.h"

namespace gpupool::cli {
namespace {

struct ExplainArgs {
  std::string snapshot_path;
  std::string job_id;
  std::string policy_path;
};

int RunExplain(const ExplainArgs& args) {
  absl::StatusOr<ScheduledSnapshot> scheduled =
      LoadAndSchedule(args.snapshot_path, args.policy_path);
  if (!scheduled.ok()) {
    PrintError(scheduled.status());
    return kExitInvalidInput;
  }
  absl::StatusOr<std::string> text =
      ExplainJob(scheduled->snapshot, scheduled->decisions, args.job_id);
  if (!text.ok()) {
    PrintError(args.snapshot_path + ": " + std::string(text.status().message()));
    return kExitInvalidInput;
  }
  std::fwrite(text->data(), 1, text->size(), stdout);
  return kExitOk;
}

}  // namespace

void RegisterExplainCommand(CLI::App& app, int* exit_code) {
  CLI::App* command = app.add_subcommand(
      "explain",
      "Run one scheduling cycle and explain one job: where it runs, where it starts,\n"
      "or why it stays pending.");
  auto args = std::make_shared<ExplainArgs>();
  command->add_option("FILE", args->snapshot_path, "Snapshot JSON file")->required();
  command->add_option("JOB_ID", args->job_id, "Id of the job to explain")->required();
  command->add_option("--policy", args->policy_path,
                      "Policy JSON file (default: the built-in default policy)");
  command->callback([args, exit_code] { *exit_code = RunExplain(*args); });
}

}  // namespace gpupool::cli
