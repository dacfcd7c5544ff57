// Carrying out one pool event in the replay (pool_events.h), as a host would see it happen:
//   - a GPU or node fails: the jobs running on it stop at once (each keeps the work of its last
//     real checkpoint, CheckpointModel::FailureKeptWork, and pays the restore when it starts
//     again); it is out of service in the snapshots until its repair, `repair_s` later;
//   - a maintenance window starts: the node is in maintenance until the window's end (scheduled
//     here); the engine, which sees the window, stops the jobs still there in a cycle run at
//     once;
//   - a spot reclaim is announced: the node is `reclaiming` until the deadline (scheduled here);
//     the engine stops and moves its jobs in a cycle run at once; at the deadline the provider
//     takes the node (a job still on it stops as on a failed node) and gives it back `away_s`
//     later;
//   - an added node joins the pool (its order came from the scale advice, scale.h).
// The run state, the event queue, the snapshot's nodes, the metrics and the ledger move together.
//
// A new kind of pool event is a new case here.
//
// Not API: one of the parts RunReplay() (replay.cc) is built from.
#ifndef GPUPOOL_SRC_SIM_REPLAY_APPLY_POOL_EVENT_H_
#define GPUPOOL_SRC_SIM_REPLAY_APPLY_POOL_EVENT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "gpupool/sim/replay.h"
#include "sim/replay/cycle_snapshot.h"
#include "sim/replay/events.h"
#include "sim/replay/ledger_recorder.h"
#include "sim/replay/metrics.h"
#include "sim/replay/pool_events.h"
#include "sim/replay/run_state.h"

namespace gpupool::sim::internal {

// Everything a pool event, or a cycle's decisions (carry_out.h), change.
struct ReplayTargets {
  const ReplayOptions& options;
  const CheckpointModel& checkpoints;
  PoolHealth& health;
  PoolEvents& pool_events;
  RunState& state;
  ReplayEvents& events;
  CycleSnapshot& cycle;
  MetricsRecorder& metrics;
  LedgerRecorder& ledger;
};

// Carries out `event` at its time. True when a cycle must run at once (a window started or a
// reclaim was announced on a node with jobs on it), whether or not jobs wait. Internal if the
// ledger refuses a stop (a bug).
absl::StatusOr<bool> ApplyPoolEvent(const PoolEvent& event, const ReplayTargets& targets);

// Whether a job runs on node `node` (index; "n003" is 3).
bool JobsOn(int32_t node, const RunState& state);

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_REPLAY_APPLY_POOL_EVENT_H_
