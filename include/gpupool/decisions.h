// Decisions: what Schedule() tells the host to do.
//
// A host applies them (see ApplyDecisions in apply.h); the next snapshot reflects what it did.
// Scheduling that next snapshot again yields no further Start.
#ifndef GPUPOOL_DECISIONS_H_
#define GPUPOOL_DECISIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpupool/job.h"
#include "gpupool/policy.h"

namespace gpupool {

// Start a pending job: every replica that starts, with its node and GPUs. `placements` is in
// group order, then replica order.
struct StartDecision {
  std::string job;
  std::vector<ReplicaPlacement> placements;
  // The job starts in capacity held for a reservation (policy.backfill): it is expected to end,
  // by its runtime_estimate_s plus the policy's margin_s, before every reservation whose held
  // capacity it takes is expected to start. ApplyDecisions() copies it to Job::backfilled.
  bool backfilled = false;
};

// Evict a running job (whole gang) so that `for_job` can run. The victim goes back to its
// queue as pending; it resumes from its last checkpoint. `for_job` is empty when no job asked
// for the room: an operations rule (a failed GPU, a maintenance window: docs/operations.md), a
// spot node being reclaimed, or headroom restored (`reason` says which).
struct PreemptDecision {
  std::string job;
  std::string for_job;
  std::string reason;
  // Milli-GPU-seconds of work lost since the victim's last checkpoint, plus its restore time.
  int64_t lost_milli_gpu_seconds = 0;
};

// Move a running job, all its replicas at once (consolidation, docs/engine.md stage 8): the host
// stops it at `from` and restarts it at `to` from its last checkpoint, so that `for_job`, a gang
// blocked by fragmentation, starts in the capacity it leaves (a Start decision of the same cycle).
// `from` is where it runs in the snapshot, `to` its new placements, both in group then replica
// order.
struct MigrateDecision {
  std::string job;
  std::vector<ReplicaPlacement> from;
  std::vector<ReplicaPlacement> to;
  std::string for_job;
  // Milli-GPU-seconds of work lost since the job's last checkpoint, plus its restore time (priced
  // as a preemption victim is).
  int64_t lost_milli_gpu_seconds = 0;
};

// Change the replica count of a running elastic group.
struct ResizeDecision {
  std::string job;
  std::string group;
  int32_t from_replicas = 0;
  int32_t to_replicas = 0;
  // When the shrink makes room for a pending job (preemption of an elastic group's replicas
  // above its minimum): that job, and the milli-GPU-seconds of work the removed replicas lose.
  std::string for_job;
  int64_t lost_milli_gpu_seconds = 0;
};

// A job that cannot start now is expected to start at `expected_start` on `nodes` (backfill).
struct ReserveDecision {
  std::string job;
  std::vector<std::string> nodes;
  int64_t expected_start = 0;
};

// Why a job stays pending. The codes are stable; their names (PendingReasonName) appear in JSON.
enum class PendingReason {
  // No node in the pool has a GPU of any model the job accepts.
  kNoAllowedGpuModel,
  // Nodes of an accepted model exist, but none may take the job: not ready, unhealthy GPUs,
  // reserved for other queues, or isolation.
  kNodeRestrictions,
  // The job's request is larger than any eligible node could hold even if it were empty.
  kNeverFits,
  // Eligible nodes have fewer free resources in total than the job needs.
  kInsufficientCapacity,
  // Enough is free in total, but not in the shape the job needs (per node, per GPU, per island).
  kFragmentation,
  // The job would fit ignoring its required gang topology constraint, but not within one domain.
  kTopology,
  // Starting the job would take its queue (or an ancestor) past a limit.
  kQueueLimit,
  // The cycle's work budget ran out before the job was tried.
  kBudgetExhausted,
  // Nodes could take the job now, but it would still run at the start of their maintenance
  // window (by its runtime estimate, or having none), and no other node can take it.
  kMaintenance,
  // The job could start, but only by taking capacity a headroom rule keeps free for jobs of a
  // higher priority (Policy::headroom); `gpu_model` names the rule's model.
  kHeadroom,
};

const char* PendingReasonName(PendingReason reason);

struct PendingDecision {
  std::string job;
  PendingReason reason = PendingReason::kInsufficientCapacity;
  // One human-readable sentence with the numbers behind the reason.
  std::string detail;
  // For kQueueLimit: the queue whose limit blocks, the GPU model of that limit ("*" for all
  // models), and by how many milli-GPUs the job would exceed it. For capacity reasons:
  // the milli-GPUs missing (0 when not a matter of quantity).
  std::string queue;
  std::string gpu_model;
  int64_t shortfall_milli = 0;
  // For capacity reasons (insufficient-capacity, fragmentation, topology): running jobs whose
  // eviction would let this job start now (in id order; empty when none would, or when the
  // counterfactual budget was spent), and one sentence saying so and which rule or setting
  // keeps them running.
  std::vector<std::string> would_preempt;
  std::string counterfactual;
};

// What the host should do with a node (docs/operations.md). The names (NodeActionName) appear
// in JSON.
enum class NodeAction {
  // Take no new work; running work stays (a health rule). The host sets the node kCordoned.
  kCordon,
  // Take no new work; the jobs still there at the maintenance window's start are stopped. The
  // host sets the node kDraining.
  kDrain,
  // Take work again (the cause the engine cordoned or drained it for is gone). kReady.
  kUncordon,
  // Run the node's diagnostic once it is empty; take no new work until the result is in.
  // kCordoned.
  kDiagnose,
};

const char* NodeActionName(NodeAction action);

struct NodeActionDecision {
  std::string node;
  NodeAction action = NodeAction::kCordon;
  // One sentence: the rule and the numbers behind it.
  std::string reason;
  // kDrain and kDiagnose: host clock time the node is expected to hold no work, from its running
  // jobs' runtime estimates (for kDrain at the latest the window's start, when they are stopped).
  // 0 for the other actions.
  int64_t expected_empty_time = 0;
};

// One queue's fair share of one GPU model ("*": all models together) at the start of the cycle,
// its own jobs and all its descendants' together, in milli-GPUs.
struct QueueShare {
  std::string queue;
  std::string gpu_model;
  // What the queue should hold now (stage 3, docs/fair-share.md).
  int64_t entitlement_milli = 0;
  // What its running jobs hold, and what its running and pending jobs want.
  int64_t usage_milli = 0;
  int64_t demand_milli = 0;
  // Its guarantee for this model: as configured, or 0 while the queue is over budget.
  int64_t guaranteed_milli = 0;
  // The queue, or a queue above it, has spent its GPU-hour budget (Queue::OverOwnBudget): its
  // guarantees count as 0 this cycle.
  bool over_budget = false;
};

// The state of one headroom rule (Policy::headroom) at the end of the cycle, one per rule, in
// (gpu_model, shape) order. Units are the rule's shape: GPUs, nodes or islands.
struct HeadroomReport {
  std::string gpu_model;
  HeadroomShape shape = HeadroomShape::kGpus;
  int32_t min_priority = 0;
  // Units the rule keeps free.
  int64_t required = 0;
  // Units free after the cycle's starts, before any restoration; and at the end of the cycle.
  int64_t free_before_restore = 0;
  int64_t free = 0;
  // Running jobs evicted to restore the headroom (each also has a Preempt decision with an
  // empty for_job), in id order.
  std::vector<std::string> preempted;
  // required - free when positive: units the cycle could not restore.
  int64_t shortfall = 0;
  // One sentence with the numbers, and when short, why restoration did not close the gap.
  std::string detail;
};

// The most passes a cycle runs (Counters::passes). A cycle that reaches this many was cut
// there before it settled: its decisions are valid, but the next cycle may act further.
inline constexpr int64_t kMaxSettlingPasses = 16;

// Work done by the cycle, in deterministic units (no wall time).
struct Counters {
  int64_t jobs_considered = 0;
  int64_t jobs_started = 0;
  int64_t candidates_evaluated = 0;
  int64_t transactions_rolled_back = 0;
  // Jobs answered from an identical job that already failed in this cycle.
  int64_t equivalence_hits = 0;
  // Victim sets simulated by preemption planning (elastic shrinks and evictions).
  int64_t preemption_plans = 0;
  // Jobs evicted: one per PreemptDecision.
  int64_t preemptions = 0;
  // Elastic groups shrunk to make room: one per ResizeDecision (not counted in preemptions).
  int64_t resizes = 0;
  // Plans simulated only to explain pending jobs (PendingDecision::would_preempt).
  int64_t counterfactual_plans = 0;
  // Jobs moved by consolidation: one per MigrateDecision; and the move sets it simulated.
  int64_t migrations = 0;
  int64_t consolidation_plans = 0;
  // Passes of the stages the cycle ran: 1, or more when the first pass evicted, moved or resized
  // jobs (or started any with backfill on) and the cycle settled (docs/engine.md, "Settling").
  // At most kMaxSettlingPasses; a cycle that reaches it was cut there, not settled.
  int64_t passes = 1;
  bool budget_exhausted = false;
};

// Add `count` nodes of the policy's template `template_name` (count >= 1).
struct ScaleAdd {
  std::string template_name;
  int32_t count = 0;
};

// Scale advice (Policy::scale; docs/operations.md, "Scale advice" states the guarantees).
struct ScaleAdvice {
  // Nodes to add, by template, sorted by template name; only templates with a count.
  // Sufficient: adding them and scheduling again starts every job of `covers`. Minimal per
  // template: one node fewer of any template leaves a job of `covers` pending. The cheapest
  // such mix when `cheapest` is true.
  std::vector<ScaleAdd> add;
  // Ready nodes without running work that could be removed while the cycle still starts,
  // preempts and reserves for the same jobs, sorted by id.
  std::vector<std::string> release;
  // The pending jobs the advice covers, sorted by id.
  std::vector<std::string> covers;
  // Total price per hour of `add`, in micro-units.
  int64_t cost_per_hour_micro = 0;
  // Every cheaper mix was simulated and found insufficient.
  bool cheapest = false;
  // Cycles simulated; and whether ScaleOptions::max_simulations stopped the search (then `add`
  // is still sufficient but may not be minimal, and `release` may be shorter than it could be).
  int64_t simulations = 0;
  bool budget_exhausted = false;
};

struct Decisions {
  std::string policy_name;
  int32_t policy_version = 0;
  // Name of the placement scorer used.
  std::string scorer;
  // 64-bit fingerprint of the canonical input (snapshot and policy), as 16 hex digits.
  std::string input_fingerprint;
  // Each list is sorted by job id.
  std::vector<StartDecision> starts;
  std::vector<PreemptDecision> preemptions;
  std::vector<MigrateDecision> migrations;
  std::vector<ResizeDecision> resizes;
  std::vector<ReserveDecision> reservations;
  std::vector<PendingDecision> pending;
  // Fair share per queue and GPU model, sorted by queue id then model name ("*" first); only
  // rows where the queue has a guarantee, usage or demand.
  std::vector<QueueShare> queue_shares;
  Counters counters;
  // Node actions (health, diagnostics, maintenance), sorted by node id; at most one per node.
  std::vector<NodeActionDecision> node_actions;
  // Set exactly when the policy has a `scale` object.
  std::optional<ScaleAdvice> scale_advice;
  // One row per headroom rule of the policy (empty without rules).
  std::vector<HeadroomReport> headroom;
};

}  // namespace gpupool

#endif  // GPUPOOL_DECISIONS_H_
