// Applying decisions to a snapshot, as a host would.
#ifndef GPUPOOL_APPLY_H_
#define GPUPOOL_APPLY_H_

#include "absl/status/status.h"
#include "gpupool/decisions.h"
#include "gpupool/snapshot.h"

namespace gpupool {

// Applies the Start decisions to `snapshot` in place: each started job becomes running, with
// its placements, start_time = snapshot.now, no pending_since, and `backfilled` as the decision
// says. Other decision kinds are
// left for the host. Returns FailedPrecondition (and changes nothing) when a decision names a job
// that is not pending in the snapshot.
absl::Status ApplyStarts(const Decisions& decisions, Snapshot& snapshot);

// Applies the node actions, then the Preempt decisions, then the Start decisions, to `snapshot`
// in place, as a host carries them out: each node action sets its node's state and state_cause
// (cordon: kCordoned for kHealth; drain: kDraining for kMaintenance; diagnose: kCordoned for
// kDiagnostic; uncordon: kReady for kHost); each victim becomes pending again (no placements, no
// start time, pending_since = snapshot.now, or its submit_time if that is later, not backfilled;
// its last checkpoint is kept), then each Resize (the group keeps its to_replicas replicas with the
// lowest indices), then each Migrate (the job runs at its `to` placements, restarted now:
// start_time = snapshot.now, its last checkpoint kept), then ApplyStarts(). A victim that the same
// decisions start again (it was re-placed elsewhere in the cycle) ends up running at its new place.
// Returns FailedPrecondition (and changes nothing) when a decision does not fit the snapshot: it
// names a job that is not in the state it requires, a node or a for_job that is not in the
// snapshot, or a group the job does not have; it stops a job another decision already stops; its
// lost_milli_gpu_seconds is negative; a Resize's from_replicas or a Migrate's from (when given) is
// not what the job runs (docs/decisions-format.md, "Applying the decisions", lists each message).
absl::Status ApplyDecisions(const Decisions& decisions, Snapshot& snapshot);

}  // namespace gpupool

#endif  // GPUPOOL_APPLY_H_
