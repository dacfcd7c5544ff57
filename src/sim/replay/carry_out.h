// Carrying out one cycle's decisions in the replay, as a host would with ApplyDecisions():
// preemptions first (each victim keeps the work of its last checkpoint, pays a restore on its
// next start and waits again), then migrations (a stop priced as a preemption, then a start at
// the new place at once), then starts (each job runs on the placements the engine chose
// until it completes or is preempted), then the node actions (drain, cordon, uncordon: the
// node's state in the next snapshots). The run state, the event queue and the metrics move
// together.
//
// A preemption with an empty for_job is a stop of the pool's own: of a job on a node whose spot
// reclaim was announced, it checkpoints on demand (the replay's jobs checkpoint at no cost, and
// the deadline is known), so it keeps all its work and pays only the restore; of a job on a node
// in a maintenance window, it is priced like any preemption. Each is counted as what it is
// (MetricsRecorder::SpotStopped, MaintenanceStopped), not as a preemption.
//
// Not API: one of the parts RunReplay() (replay.cc) is built from.
#ifndef GPUPOOL_SRC_SIM_REPLAY_CARRY_OUT_H_
#define GPUPOOL_SRC_SIM_REPLAY_CARRY_OUT_H_

#include <cstdint>

#include "absl/status/status.h"
#include "gpupool/decisions.h"
#include "sim/replay/apply_pool_event.h"

namespace gpupool::sim::internal {

// Carries out `decisions`, made at `now` on the snapshot of `state`. Internal (a bug in the
// engine or the replay) when a decision names a job the replay did not send, preempts a job
// that is not running, starts one that is not pending, or over-commits the GPUs.
absl::Status CarryOutDecisions(const Decisions& decisions, int64_t now,
                               const ReplayTargets& targets);

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_REPLAY_CARRY_OUT_H_
