// Stage 1b and stage 7b: operations on nodes (docs/operations.md).
//
// Before anything is placed (stage 1b), the health rules and the maintenance windows say which
// nodes change state and which running jobs must stop:
//   - a node the engine may manage (ready, or put in its state by the engine: state_cause) gets
//     at most one action: cordon when a health rule fails it (a GPU at an error threshold, a
//     failed last diagnostic); else drain when a maintenance window is in progress or starts
//     within policy.maintenance.drain_notice_s; else it stays cordoned while its requested
//     diagnostic has not reported; else it is ready (uncordon, if it was not). An action is only
//     given when the node's state changes; nodes the host or an operator put in a state, and
//     down nodes, get none.
//   - a running job with a replica on a failed GPU (health rules on) or on a node in a
//     maintenance window is checkpointed and stopped: a Preempt with an empty for_job, priced
//     as every Preempt is (lost_work.h), whatever its preemptible flag or minimum runtime.
// The cycle then schedules the snapshot as the host will see it once it has applied these
// (ApplyDecisions): the stopped jobs are pending, and may start again elsewhere in this cycle;
// the nodes closed here take no new work.
//
// After placement and reservations (stage 7b), diagnostics go into idle time: a ready node with
// GPUs whose last diagnostic is policy.health.diagnostic_interval_s old or older (or that has
// none), that got no start and holds no reservation in this cycle, and that is empty or whose
// running jobs all end within diagnostic_idle_window_s by their estimates, gets kDiagnose. No
// work is evicted for it. Oldest diagnostic first (never run first), then topology order, while
// fewer than max_diagnosing_nodes nodes wait for or run one.
#ifndef GPUPOOL_NODE_OPERATIONS_H_
#define GPUPOOL_NODE_OPERATIONS_H_

#include <cstdint>
#include <vector>

#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "snapshot_index.h"
#include "working_state.h"

namespace gpupool::internal {

struct NodeOperations {
  // Cordon, uncordon and drain, in node topology order.
  std::vector<NodeActionDecision> node_actions;
  // Jobs stopped, in job-id order.
  std::vector<PreemptDecision> stops;
  bool empty() const { return node_actions.empty() && stops.empty(); }
};

// Stage 1b on the input snapshot. O(nodes + placements) when the health rules are on or a node
// has windows or an engine-set state; O(nodes) otherwise, and then empty.
NodeOperations PlanNodeOperations(const SnapshotIndex& index, const Policy& policy);

// Stage 7b on the snapshot the cycle scheduled (stage 1b applied) and its final working state.
// `starts` are the cycle's Start decisions. Returns kDiagnose actions in topology order.
std::vector<NodeActionDecision> PlanDiagnostics(const SnapshotIndex& index,
                                                const WorkingState& state, const Policy& policy,
                                                const std::vector<StartDecision>& starts);

}  // namespace gpupool::internal

#endif  // GPUPOOL_NODE_OPERATIONS_H_
