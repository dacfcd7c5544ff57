// Carrying out one pool event in the replay (pool_events.h), as a host would see it happen: a
// GPU or node fails, the jobs running on it stop at once (each keeps the work of its last real
// checkpoint, CheckpointModel::FailureKeptWork, and pays the restore when it starts again), it
// is out of service in the snapshots until its repair, which is scheduled `repair_s` later; a
// repair puts it back. The run state, the event queue, the snapshot's nodes, the metrics and
// the ledger move together.
//
// A new kind of pool event (maintenance, a node added or removed) is a new case here.
//
// Not API: one of the parts RunReplay() (replay.cc) is built from.
#ifndef GPUPOOL_SRC_SIM_REPLAY_FAILURES_H_
#define GPUPOOL_SRC_SIM_REPLAY_FAILURES_H_

#include <cstdint>

#include "absl/status/status.h"
#include "sim/replay/cycle_snapshot.h"
#include "sim/replay/events.h"
#include "sim/replay/ledger_recorder.h"
#include "sim/replay/metrics.h"
#include "sim/replay/pool_events.h"
#include "sim/replay/run_state.h"

namespace gpupool::sim::internal {

// Everything a pool event changes.
struct PoolEventTargets {
  const CheckpointModel& checkpoints;
  int64_t repair_s;
  PoolHealth& health;
  PoolEvents& pool_events;
  RunState& state;
  ReplayEvents& events;
  CycleSnapshot& cycle;
  MetricsRecorder& metrics;
  LedgerRecorder& ledger;
};

// Carries out `event` at its time. Internal if the ledger refuses a stop (a bug).
absl::Status HandlePoolEvent(const PoolEvent& event, const PoolEventTargets& targets);

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_REPLAY_FAILURES_H_
