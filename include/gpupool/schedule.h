// The entry point: one scheduling cycle.
#ifndef GPUPOOL_SCHEDULE_H_
#define GPUPOOL_SCHEDULE_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "gpupool/snapshot.h"

namespace gpupool {

// Checks that a snapshot makes sense. Returns:
//   - InvalidArgument for malformed values: empty or duplicate ids, negative or too large
//     quantities, a gpu_milli above 1000 that is not whole GPUs, min_replicas above replicas,
//     unknown enum-like names;
//   - FailedPrecondition for inconsistencies between parts: unknown references (queue, node,
//     GPU model, topology level, group), cycles in the queue tree, a running allocation on a GPU
//     that does not exist or that is over-committed, a pending job with placements.
// The message names the field and the id ("jobs[j7].groups[main].replicas: ...").
absl::Status ValidateSnapshot(const Snapshot& snapshot);

// Runs one deterministic scheduling cycle: validates the snapshot, orders pending jobs and places
// each gang all-or-nothing, honouring GPU model, health, node state, owner restrictions,
// isolation, capacity (milli-GPUs per GPU, GPU memory, CPU, memory), topology constraints and
// queue limits. Every pending job that does not start gets a PendingDecision with a reason.
//
// Deterministic: the same snapshot and policy give the same decisions, byte for byte, whatever
// the order of the snapshot's lists. Pure: no clocks, I/O, threads or globals. Thread-safe for
// concurrent calls. Errors: those of ValidateSnapshot, and InvalidArgument for a bad policy.
// Cost: about linear in pending jobs; identical jobs that failed are answered in O(1).
absl::StatusOr<Decisions> Schedule(const Snapshot& snapshot, const Policy& policy);

}  // namespace gpupool

#endif  // GPUPOOL_SCHEDULE_H_
