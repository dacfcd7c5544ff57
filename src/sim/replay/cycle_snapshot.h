// What the engine sees at a scheduling cycle of the replay: a Snapshot of the pool built from
// the run state, as a host would hand it to gpupool::Schedule().
//
// The pool part (nodes, queues) and each job's template (id "j000042", queue, submit time,
// shape) are built once; at every cycle the dynamic fields are filled in: running jobs with
// their placements, attained service and last checkpoint, pending jobs with the time they began
// waiting, and under the LAS queue modes each job's priority, -(its 2D-LAS level), plus
// ReplayOptions::fair_share_boost_half_levels when its tenant is below its fair-share entitlement.
//
// Queues carry the tenants' labels and budgets (ReplayOptions::queues), and before each cycle
// the driver sets what each has used of its budget this period (SetBudgetUsed).
//
// Pruned cycles. Without preemption and queue turns the engine sees running jobs only through
// the GPUs they hold, and considers pending jobs in FIFO order, where jobs of one size are
// identical to it. Then the snapshot holds one stand-in job per busy node ("~n003") instead of
// the running jobs, and of the pending jobs of g GPUs only the first free / g: the rest would
// fail anyway. The decisions are the same, at a fraction of the cost.
//
// Not API: one of the parts RunReplay() (replay.cc) is built from.
#ifndef GPUPOOL_SRC_SIM_REPLAY_CYCLE_SNAPSHOT_H_
#define GPUPOOL_SRC_SIM_REPLAY_CYCLE_SNAPSHOT_H_

#include <cstdint>
#include <vector>

#include "gpupool/job.h"
#include "gpupool/sim/replay.h"
#include "gpupool/snapshot.h"
#include "sim/replay/pool_events.h"
#include "sim/replay/run_state.h"
#include "sim/replay/tenants.h"

namespace gpupool::sim::internal {

class CycleSnapshot {
 public:
  // `options` must outlive this object.
  CycleSnapshot(const ReplayOptions& options, const std::vector<TraceJob>& jobs,
                const Tenants& tenants);

  // Whether a cycle now could change anything: some job waits, and either GPUs are free or
  // preemption may make room (pruned: some waiting job fits in the free GPUs).
  bool WorthScheduling(const RunState& state) const;
  // What each tenant used of its budget this period (BudgetTracker::Used), for the queues of
  // the next snapshots; nothing under the single-queue mode, whose one queue is no tenant's.
  void SetBudgetUsed(const std::vector<int64_t>& used);
  // Node `node`'s state and GPUs' health from now on: down when it has failed, a GPU unhealthy
  // when it has (PoolHealth).
  void UpdateNode(int32_t node, const PoolHealth& health);
  // The snapshot at `now`. Valid until the next call.
  const Snapshot& Build(int64_t now, const RunState& state);

 private:
  void AddStandIns(int64_t now, const RunState& state);
  void AddRunning(int64_t now, const RunState& state);
  void AddPending(const RunState& state);
  // -(2D-LAS level) under the LAS queue modes, plus the fair-share boost when the job's
  // tenant, holding `tenant_milli` with the job counted, stays within its entitlement.
  int32_t Priority(const JobRun& job, int64_t service_s, int64_t tenant_milli) const;
  // The tenants' entitlements at this cycle (fair_share_boost_half_levels > 0 only).
  void UpdateEntitlements(const RunState& state);

  const ReplayOptions& options_;
  const CheckpointModel checkpoints_;
  // Pruned cycles (see above): no preemption and no queue turns.
  const bool prune_;
  // Under the LAS queue modes, priorities are -(2D-LAS level).
  const bool las_priority_;
  const Tenants& tenants_;
  Snapshot snapshot_;
  std::vector<Job> templates_;
  // Per tenant, milli-GPUs entitled at the current cycle (empty without the boost).
  std::vector<int64_t> entitled_milli_;
};

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_REPLAY_CYCLE_SNAPSHOT_H_
