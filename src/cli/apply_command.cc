// gpupool apply SNAPSHOT DECISIONS [--out FILE]: carries a cycle's decisions out on a snapshot, as
// ApplyDecisions() does, and prints the snapshot the host would send next.
#include <memory>
#include <string>

#include "cli/commands.h"
#include "gpupool/apply.h"
#include "gpupool/io/json.h"
#include "gpupool/validate.h"

namespace gpupool::cli {
namespace {

struct ApplyArgs {
  std::string snapshot_path;
  std::string decisions_path;
  std::string out_path;
};

int RunApply(const ApplyArgs& args) {
  absl::StatusOr<Snapshot> snapshot = LoadValidSnapshot(args.snapshot_path);
  if (!snapshot.ok()) {
    PrintError(snapshot.status());
    return kExitInvalidInput;
  }
  absl::StatusOr<Decisions> decisions = io::ReadDecisionsFile(args.decisions_path);
  if (!decisions.ok()) {
    PrintError(decisions.status());  // Already names the file.
    return kExitInvalidInput;
  }
  // A decision that does not fit the snapshot (a job not in the state it requires, an unknown
  // node) changes nothing and is named.
  if (absl::Status applied = ApplyDecisions(*decisions, *snapshot); !applied.ok()) {
    PrintError(args.decisions_path + ": " + std::string(applied.message()));
    return kExitInvalidInput;
  }
  // Decisions of another snapshot can apply and still leave an inconsistent one (a start on
  // GPUs that are busy here): checked like any input.
  if (absl::Status valid = ValidateSnapshot(*snapshot); !valid.ok()) {
    PrintError(args.decisions_path +
               ": the applied snapshot is not valid: " + std::string(valid.message()));
    return kExitInvalidInput;
  }
  if (!WriteOutput(args.out_path, io::SnapshotToJson(*snapshot))) {
    PrintError(args.out_path + ": cannot write file");
    return kExitInvalidInput;
  }
  return kExitOk;
}

}  // namespace

void RegisterApplyCommand(CLI::App& app, int* exit_code) {
  CLI::App* command = app.add_subcommand(
      "apply",
      "Carry out a cycle's decisions on a snapshot, as a host would (ApplyDecisions), and print\n"
      "the resulting snapshot as JSON (see docs/decisions-format.md, \"Applying the decisions\").");
  auto args = std::make_shared<ApplyArgs>();
  command->add_option("SNAPSHOT", args->snapshot_path, "Snapshot JSON file")->required();
  command
      ->add_option("DECISIONS", args->decisions_path,
                   "Decisions JSON file, as `gpupool schedule` prints for that snapshot")
      ->required();
  command->add_option("--out", args->out_path, "Write the snapshot to this file instead of stdout");
  command->callback([args, exit_code] { *exit_code = RunApply(*args); });
}

}  // namespace gpupool::cli
