// One cycle of the Slurm adapter: read Slurm, build the snapshot, Schedule(), apply.
//
// The adapter is a host of gpupool like any other: it uses only the public API
// (include/gpupool) and gpupool::io. docs/slurm.md describes the setup (an opt-in partition
// whose jobs are submitted held), the mapping and its limits.
#ifndef GPUPOOL_SRC_HOSTS_SLURM_CYCLE_H_
#define GPUPOOL_SRC_HOSTS_SLURM_CYCLE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "hosts/slurm/apply_decisions.h"
#include "hosts/slurm/command_runner.h"
#include "hosts/slurm/snapshot_builder.h"

namespace gpupool::slurm {

struct CycleResult {
  BuiltSnapshot built;
  Decisions decisions;
  ApplyReport report;
};

// Runs one cycle at host time `now`. Errors: InvalidArgument for a bad policy ("policy: ..."),
// reading Slurm (the failing command's status), BuildSnapshot's errors, and Internal when
// ValidateSnapshot() refuses the snapshot built (a bug of the adapter, with gpupool's message).
// A decision that cannot be applied is not an error of the cycle: it is in the report.
absl::StatusOr<CycleResult> RunCycle(CommandRunner& runner, const AdapterOptions& options,
                                     const Policy& policy, int64_t now, bool dry_run);

}  // namespace gpupool::slurm

#endif  // GPUPOOL_SRC_HOSTS_SLURM_CYCLE_H_
