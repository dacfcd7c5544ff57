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
// Pruned cycles. Without preemption and queue turns, and under the per-cluster FIFO mode (all
// priorities 0), the engine sees running jobs only through the GPUs they hold, and considers
// pending jobs in FIFO order, where jobs of one size are identical to it. Then the snapshot holds
// one stand-in job per busy node ("~n003") instead of the running jobs, and of the pending jobs of
// g GPUs only the first free / g: the rest would fail anyway. The decisions are the same, at a
// fraction of the cost.
//
// Nodes. The snapshot shows the nodes in the pool (PoolLayout: the pool's own, then the added
// ones once they have joined), each as PoolHealth and the engine's node actions leave it: down
// when failed or taken by the spot provider, otherwise in the state the engine's last `drain`,
// `cordon` or `uncordon` put it (ApplyNodeAction); `spot`, `reclaiming` and `reclaim_deadline`
// for spot nodes; a failed GPU unhealthy; and the maintenance windows announced at the cycle
// (AnnouncedWindows). With maintenance, spot nodes or scaling on, cycles are never pruned (the
// engine must see the jobs it stops).
//
// Not API: one of the parts RunReplay() (replay.cc) is built from.
#ifndef GPUPOOL_SRC_SIM_REPLAY_CYCLE_SNAPSHOT_H_
#define GPUPOOL_SRC_SIM_REPLAY_CYCLE_SNAPSHOT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpupool/decisions.h"
#include "gpupool/job.h"
#include "gpupool/sim/replay.h"
#include "gpupool/snapshot.h"
#include "sim/replay/pool_events.h"
#include "sim/replay/run_state.h"
#include "sim/replay/share_history.h"
#include "sim/replay/tenants.h"

namespace gpupool::sim::internal {

// The index in `state` of a job the replay sent, from its id "j000042" (the templates' ids);
// Internal for any other id (a decision naming a job the replay did not send is a bug).
absl::StatusOr<int32_t> JobIndex(const std::string& id, const RunState& state);

class CycleSnapshot {
 public:
  // `options` and `history` must outlive this object; `start` is the first arrival (rolling
  // maintenance counts from it); `history` is where the boost finds each tenant's share over the
  // recent past (ReplayOptions::fair_share_history_hours; with no hours only the present counts).
  CycleSnapshot(const ReplayOptions& options, const std::vector<TraceJob>& jobs,
                const Tenants& tenants, const PoolLayout& layout, int64_t start,
                const ShareHistory& history);

  // Whether a cycle now could change anything: some job waits, and either GPUs are free or
  // preemption may make room (pruned: some waiting job fits in the free GPUs).
  bool WorthScheduling(const RunState& state) const;
  // What each tenant used of its budget this period (BudgetTracker::Used), for the queues of
  // the next snapshots; nothing under the single-queue mode, whose one queue is no tenant's.
  void SetBudgetUsed(const std::vector<int64_t>& used);
  // Node `node`'s state and GPUs' health from now on: down when it has failed, a GPU unhealthy
  // when it has (PoolHealth).
  void UpdateNode(int32_t node, const PoolHealth& health);
  // The host carries out a node action of the engine's: `drain` and `cordon` put the node in that
  // state with the action's cause, `uncordon` makes it ready; `diagnose` is not carried out (the
  // replay runs no diagnostics). Internal for a node the replay does not have.
  absl::Status ApplyNodeAction(const NodeActionDecision& action);
  // The template of the nodes the pool may add: a node of the pool in rack "rs", without an id.
  const Node& added_node_template() const { return added_template_; }
  // The snapshot at `now`. Valid until the next call.
  const Snapshot& Build(int64_t now, const RunState& state);

 private:
  // snapshot_.nodes from all_nodes_: those in the pool, with the windows announced at `now`.
  void BuildNodes(int64_t now);
  void AddStandIns(int64_t now, const RunState& state);
  // Every running and every pending job, merged in index order, which is job-id order (ids are
  // "j" and the index in six digits or more, all of one width below a million jobs): the engine
  // then finds the jobs already sorted and skips its own sort.
  void AddAllJobs(int64_t now, const RunState& state);
  void AddRunning(int64_t now, const RunState& state, int32_t i);
  void AddPending(const RunState& state, int32_t i);
  // The pruned cycle's waiting jobs (see above), in FIFO order.
  void AddPrunedPending(const RunState& state);
  // The next job of snapshot_.jobs, a copy of `from`. The jobs of the previous cycle are
  // assigned over, not destroyed and built again, so that their strings and vectors keep their
  // memory: most of the cycle's allocations otherwise.
  Job& NextJob(const Job& from);
  // -(2D-LAS level) under the LAS queue modes, plus the fair-share boost when the job's
  // tenant, holding `tenant_milli` with the job counted, stays within its entitlement and has
  // had no more than its share over the history (the constructor's `history`), or when the job is
  // `running` and holds at least ReplayOptions::boost_kept_from_gpus GPUs.
  int32_t Priority(const JobRun& job, int64_t service_s, int64_t tenant_milli, bool running) const;
  // The tenants' entitlements at this cycle (fair_share_boost_half_levels > 0 only).
  void UpdateEntitlements(const RunState& state);

  const ReplayOptions& options_;
  const CheckpointModel checkpoints_;
  // Pruned cycles (see above): no preemption, no queue turns, FIFO priorities.
  const bool prune_;
  // Under the LAS queue modes, priorities are -(2D-LAS level).
  const bool las_priority_;
  const Tenants& tenants_;
  const int64_t start_;
  const ShareHistory& history_;
  Snapshot snapshot_;
  // Every node the replay has (PoolLayout), as it would be in the pool, and whether it is.
  std::vector<Node> all_nodes_;
  std::vector<bool> in_pool_;
  Node added_template_;
  // The state the engine's node actions gave each node (ready by default), with its cause.
  std::vector<NodeState> host_state_;
  std::vector<NodeStateCause> host_cause_;
  // snapshot_.nodes must be built again: a node changed, or windows are announced over time.
  bool nodes_changed_ = true;
  std::vector<Job> templates_;
  // How many of snapshot_.jobs the cycle being built has filled (NextJob).
  size_t jobs_built_ = 0;
  // Per tenant, milli-GPUs entitled at the current cycle (empty without the boost).
  std::vector<int64_t> entitled_milli_;
};

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_REPLAY_CYCLE_SNAPSHOT_H_
