// Wake-ups at victims' checkpoints (ReplayOptions::wake_up_at_checkpoints_s).
//
// A policy that evicts only victims losing little work (PreemptionOptions::max_victim_lost_s)
// finds a running job at its cheapest the moment it checkpoints: it then loses no work, only its
// restore. A checkpoint is not an event of the replay, so without a cycle at that moment a
// waiting job either evicts later, at a price, or waits for a cycle that comes by chance. After
// each cycle the driver asks for the next moment worth a cycle of its own: the next checkpoint
// of a running job that some job the cycle left pending may evict there. That is a job of a
// lower priority in the cycle's snapshot than one left pending (the only jobs such a job may
// evict in its own queue), and, with the policy's preemption.starving_drain, any job on the
// nodes of a reservation the cycle made for a job past the starvation bound (which outranks
// every running job and drains those nodes as each job on them becomes a cheap victim). The job
// must by then have run the policy's min_victim_run_s (or its own min_runtime_s, if longer, except
// on a starving job's nodes with preemption.starving_drain_past_min_runtime) since it last
// started. Not sooner than `gap_s` after the cycle, though: one such cycle then
// takes the checkpoints of every job that checkpointed in between, and each of those has lost at
// most `gap_s` of work by then.
//
// Not API: one of the parts RunReplay() (replay.cc) is built from.
#ifndef GPUPOOL_SRC_SIM_REPLAY_CHECKPOINT_WAKE_UPS_H_
#define GPUPOOL_SRC_SIM_REPLAY_CHECKPOINT_WAKE_UPS_H_

#include <cstdint>
#include <optional>

#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "gpupool/snapshot.h"
#include "sim/replay/run_state.h"

namespace gpupool::sim::internal {

// The next checkpoint wake-up after the cycle of `snapshot` (at snapshot.now), whose `decisions`
// (made under `policy`) have been carried out on `state`: the earliest next checkpoint
// (CheckpointModel::NextCheckpointTime) of a job running in `state`, before its completion,
// that either has a priority in `snapshot` below that of a job pending in `snapshot` that
// `decisions` do not start, or runs on a node of a reservation in `decisions` for a job
// waiting past policy.starvation_bound_s (with preemption.starving_drain and
// starving_outrank), and that has run policy.preemption.min_victim_run_s, and its
// Job::min_runtime_s in `snapshot` (not on such a reservation's nodes with
// preemption.starving_drain_past_min_runtime), since its start by then; but at least
// snapshot.now + gap_s.
// None when no job waits or no running job qualifies.
std::optional<int64_t> NextCheckpointWakeUp(const Snapshot& snapshot, const Decisions& decisions,
                                            const RunState& state,
                                            const CheckpointModel& checkpoints,
                                            const Policy& policy, int64_t gap_s);

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_REPLAY_CHECKPOINT_WAKE_UPS_H_
