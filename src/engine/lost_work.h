// The price of stopping a running job: the work it loses. One rule for every kind of stop (a
// Preempt for another job, a failed GPU, a maintenance window, a drain plan's deadline), so that
// their prices compare (docs/engine.md, stage 6).
//
// A job stopped at time `at` keeps its work up to its last checkpoint, or its start if later;
// with the policy's checkpoint_grace_s, a job that checkpoints (interval_s > 0) at a cost of at
// most the grace is checkpointed on demand and loses only that cost. Its price is the
// milli-GPUs it holds x (the seconds lost + its restore time), saturating.
#ifndef GPUPOOL_LOST_WORK_H_
#define GPUPOOL_LOST_WORK_H_

#include <cstdint>

#include "gpupool/job.h"
#include "gpupool/policy.h"

namespace gpupool::internal {

// Seconds of work running `job` loses if stopped at `at`, before its restore time. `now` is the
// snapshot's clock: for `at` after now, the job is taken to checkpoint every interval_s after its
// last checkpoint (checkpoints after now only; at `at` == now this is the Preempt rule exactly).
int64_t LostWorkSeconds(const Job& job, int64_t at, int64_t now, const Policy& policy);

// Milli-GPUs a running job holds: per placement, its GPUs x its group's MilliPerGpu().
int64_t RunningMilli(const Job& job);

// Milli-GPU-seconds the job loses if stopped at `at`, restore time included.
int64_t LostWorkPrice(const Job& job, int64_t at, int64_t now, const Policy& policy);

// Is running `job` redoing work it has already lost once? It resumed (it ran before its current
// start: its last checkpoint is older than start_time, or its attained_service_s is more than
// now - start_time) and has not checkpointed since it started (last_checkpoint_time after
// start_time). Stopping it now would make it lose the same work a second time: it would resume
// from the same checkpoint (or from the beginning) again. Preemption does not take such a job
// (docs/engine.md, stage 6, "Who may be evicted").
bool RedoingLostWork(const Job& job, int64_t now);

// The first moment `at` >= now at which running `job` passes the victim rules that depend on
// time: it has run its min_runtime_s and the policy's min_victim_run_s since start_time, it is not
// redoing lost work (a checkpoint is due since it started), and it would lose at most the policy's
// max_victim_lost_s (LostWorkSeconds at `at`, on the job's checkpoint cadence). Tried at the
// earliest moment the run times allow and at the first checkpoint due after it. INT64_MAX when
// neither passes (the job is not preemptible, or does not checkpoint and has run too long).
// Stage 7 ranks nodes with it for a starving job's drain (reserve.h).
int64_t EligibleVictimFrom(const Job& job, int64_t now, const Policy& policy);

}  // namespace gpupool::internal

#endif  // GPUPOOL_LOST_WORK_H_
