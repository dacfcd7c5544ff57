// The entry point: one scheduling cycle.
#ifndef GPUPOOL_SCHEDULE_H_
#define GPUPOOL_SCHEDULE_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "gpupool/snapshot.h"
#include "gpupool/validate.h"  // ValidateSnapshot, ValidatePolicy (stage 1)

namespace gpupool {

// Runs one deterministic scheduling cycle: validates the snapshot and the policy, orders pending
// jobs and places each gang all-or-nothing, honouring GPU model, health, node state, owner
// restrictions, isolation, capacity (milli-GPUs per GPU, GPU memory, CPU, memory), topology
// constraints and queue limits. Every pending job that does not start gets a PendingDecision with a
// reason.
//
// Deterministic: the same snapshot and policy give the same decisions, byte for byte, whatever
// the order of the snapshot's lists. Pure: no clocks, I/O, threads or globals. Thread-safe for
// concurrent calls. Errors: those of ValidateSnapshot, then those of ValidatePolicy
// (InvalidArgument for a bad policy), both in validate.h.
// With policy.scale set, the decisions also carry scale advice (Decisions::scale_advice,
// docs/operations.md), computed after the cycle by simulating whole cycles on copies of the
// snapshot; the scale templates are checked first (ValidateScaleTemplates, validate.h).
// Cost: about linear in pending jobs; identical jobs that failed are answered in O(1). Scale
// advice adds up to policy.scale->max_simulations such cycles; without it, nothing.
absl::StatusOr<Decisions> Schedule(const Snapshot& snapshot, const Policy& policy);

}  // namespace gpupool

#endif  // GPUPOOL_SCHEDULE_H_
