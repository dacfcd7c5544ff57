// Spot nodes (Node::spot; docs/operations.md, "Spot nodes").
//
// A spot node is cheap capacity the provider may take back at short notice, so it takes only
// work that can lose it: jobs that are spot_tolerant, or preemptible jobs that checkpoint at
// least every Policy::spot.max_checkpoint_interval_s (any interval when that is 0). The placer
// skips spot nodes for other jobs (Placer::FitsOnNode), and a job that only spot nodes could take
// is pending with reason kNodeRestrictions, its detail counting the spot nodes.
//
// When the snapshot marks a spot node `reclaiming`, it takes no new work (the working state
// closes it) and every running job with a replica on it is checkpointed and stopped at the start
// of the cycle: a Preempt decision without for_job, priced like any victim, whatever the job's
// preemptible flag or minimum runtime (the provider does not ask). The stopped jobs are then
// started elsewhere in the same cycle when they fit (the retry pass after preemption), else they
// are pending in the next snapshot.
#ifndef GPUPOOL_SPOT_H_
#define GPUPOOL_SPOT_H_

#include <cstdint>
#include <string>

#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "snapshot_index.h"

namespace gpupool::internal {

// May `job` be placed on a spot node under `policy`?
bool MayUseSpot(const Job& job, const Policy& policy);

// The Preempt decision for running job j, on the reclaimed spot node n, holding `milli`
// milli-GPUs. It loses its work since its last checkpoint (or start, if later) plus its restore
// time, in milli-GPU-seconds; only its checkpoint_cost_s instead of the work since its last
// checkpoint when it checkpoints at all and the node's reclaim_deadline leaves that much time
// (now + checkpoint_cost_s <= reclaim_deadline).
PreemptDecision SpotReclaim(const SnapshotIndex& index, int32_t j, int32_t n, int64_t milli);

}  // namespace gpupool::internal

#endif  // GPUPOOL_SPOT_H_
