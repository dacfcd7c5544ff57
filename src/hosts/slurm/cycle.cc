#include "hosts/slurm/cycle.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gpupool/schedule.h"
#include "gpupool/validate.h"
#include "hosts/slurm/slurm_state.h"

namespace gpupool::slurm {

absl::StatusOr<CycleResult> RunCycle(CommandRunner& runner, const AdapterOptions& options,
                                     const Policy& policy, int64_t now, bool dry_run) {
  if (absl::Status status = ValidatePolicy(policy); !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("policy: ", status.message()));
  }
  absl::StatusOr<SlurmState> state = ReadSlurmState(runner);
  if (!state.ok()) return state.status();
  absl::StatusOr<BuiltSnapshot> built = BuildSnapshot(*state, options, now);
  if (!built.ok()) return built.status();
  // A snapshot built from Slurm that gpupool refuses is the adapter's fault, not the user's.
  if (absl::Status status = ValidateSnapshot(built->snapshot); !status.ok()) {
    return absl::InternalError(
        absl::StrCat("the snapshot built from Slurm was refused: ", status.message()));
  }
  absl::StatusOr<Decisions> decisions = Schedule(built->snapshot, policy);
  if (!decisions.ok()) return decisions.status();
  CycleResult result{.built = *std::move(built), .decisions = *std::move(decisions)};
  result.report = ApplyDecisions(result.decisions, result.built, runner, dry_run);
  return result;
}

}  // namespace gpupool::slurm
