// The policy: every knob of a scheduling cycle, as a value.
#ifndef GPUPOOL_POLICY_H_
#define GPUPOOL_POLICY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpupool/node.h"
#include "gpupool/placement_scorer.h"

namespace gpupool {

// Built-in placement strategies.
enum class PlacementStrategy {
  // Default ("best-fit": best fit on GPUs, in the bin-packing sense). The node left with the
  // fewest free milli-GPUs after the replica (then the least free CPU): packs work tightly and
  // keeps empty nodes and whole islands for large jobs. Not the FGD paper's "Best-fit" baseline,
  // a weighted CPU-plus-GPU leftover, which is the scorer MakeLeastLeftoverScorer().
  kBestFit,
  // The first node in topology order where the replica fits.
  kFirstFit,
  // The node with the most free milli-GPUs (then the most free CPU): spreads load.
  kSpread,
  // "expected-waste": the expected-waste scorer (MakeExpectedWasteScorer() in
  // gpupool/scorers/scorers.h, the placement that beats FGD in docs/simulator.md) fed with the
  // snapshot's own workload mix: one task class per distinct per-replica request and GPU-model
  // list of the snapshot's jobs, pending and running, each counted once per replica. Among the
  // first 32 nodes where the replica fits, in best-fit order, the one whose expected final
  // waste grows least; ties go to the first (best-fit's choice). Deterministic: the mix is
  // derived inside the cycle from the snapshot.
  // Packs better than best-fit (docs/policy-format.md measures it) but costs about 2.5x its
  // time per cycle, which is why it is not the default.
  kExpectedWaste,
};

// Order in which pending jobs are considered (within a queue when queues are ordered by fair
// share). Every order ends on the job id: a strict total order.
enum class JobOrder {
  // Higher priority first, then earlier submit time, then job id.
  kPriorityFifo,
  // 2D-LAS (Tiresias): discrete levels by attained service in GPU-seconds (GPUs of the gang at
  // its minimum size x attained_service_s), lowest level first, split at
  // Policy::las_thresholds_gpu_seconds; FIFO (submit time, then id) inside a level.
  kLeastAttainedService,
  // Shortest estimated remaining time first: runtime_estimate_s - attained_service_s (jobs
  // without an estimate last), then submit time, then id.
  kShortestRemaining,
};

// Order in which queues take turns.
enum class QueueOrder {
  // No turns: all pending jobs in one job order.
  kNone,
  // The queue furthest below its fair-share entitlement (lowest usage / entitlement over all
  // models, then higher queue priority, then queue id) places its next job; its usage then
  // counts what it started.
  kFairShare,
};

// Deterministic bounds on the work of one cycle, in work units (never wall-clock time), so that
// a cut is reproducible. 0 means unbounded.
struct Budgets {
  // Candidate nodes evaluated over the whole cycle; once spent, the remaining jobs stay pending
  // with reason kBudgetExhausted.
  int64_t max_candidates = 0;
  // Victim sets simulated by preemption planning over the whole cycle; once spent, no further
  // preemption is planned (counters.budget_exhausted reports it).
  int64_t max_preemption_plans = 0;
  // Plans simulated to tell pending jobs which evictions would let them start
  // (PendingDecision::would_preempt), over the whole cycle. 0: no counterfactuals.
  int64_t max_counterfactual_plans = 2000;
};

// How the preemption planner ranks the victim sets that would let a pending job start.
enum class VictimOrder {
  // Default. The lowest total price (milli-GPU-seconds of lost work), then the fewest victims,
  // then the lowest priority of the highest-priority victim, then the victims in job-id order.
  kCheapestFirst,
  // The lowest priority of the highest-priority victim first (so that no evicted job outranks a
  // job that then runs in its place, which the next cycle could undo), then the lowest total
  // price, then the fewest victims, then the victims in job-id order.
  kLowestPriorityFirst,
};

// Preemption (docs/engine.md, stage 6). A pending job may evict running jobs of its own queue with
// a lower priority and, with reclaim_across_queues, running jobs of other queues that hold more
// than their entitlement, under the guarantee and no-loop rules of docs/engine.md. Victims are
// whole gangs, or an elastic job's replicas above its minimum (a Resize), only preemptible jobs
// past their minimum runtime. Among the victim sets that let the job start, the planner takes the
// best in `victim_order`, and evicts nothing unless the job then starts.
struct PreemptionOptions {
  // Off by default: Schedule() emits no Preempt decision.
  bool enabled = false;
  // A victim whose checkpoint_cost_s is at most this many seconds is taken to checkpoint on
  // demand before it goes: it loses only its checkpoint cost (plus its restore time) instead of
  // all the work since its last checkpoint.
  int64_t checkpoint_grace_s = 0;
  // Also evict jobs of other queues that hold more than their fair-share entitlement
  // (experimental in this version: victims from other queues are not re-placed in the same
  // cycle, so one more cycle may start them elsewhere).
  bool reclaim_across_queues = false;
  // With reclaim_across_queues: a job of another queue is a victim only if its priority is below
  // the job's (on top of the reclaim rules). Priority preemption (2D-LAS, say) across teams,
  // only where the fair-share rules allow it.
  bool reclaim_lower_priority_only = false;
  // How victim sets are ranked (see VictimOrder).
  VictimOrder victim_order = VictimOrder::kCheapestFirst;
  // A running job is a victim only if evicting it now loses at most this many seconds of work
  // (since its last checkpoint or its start, whichever is later; only its checkpoint cost when
  // checkpoint_grace_s applies). Pending jobs then wait for victims that have just
  // checkpointed instead of throwing work away. 0: no limit.
  int64_t max_victim_lost_s = 0;
  // A running job is a victim only once it has run at least this many seconds since it last
  // started (on top of its own min_runtime_s), so that a job just resumed is not evicted again
  // before it gets anywhere. 0: no minimum.
  int64_t min_victim_run_s = 0;
  // A job past starvation_bound_s outranks every running job of its queue (for the priority
  // rules only; the cross-queue rules still hold), so it need not wait for its reservation to
  // drain. Shorter waits, more evictions.
  bool starving_outrank = true;
  // A starving job's reservation (stage 7) also drains its nodes: of the running jobs on the
  // GPUs its placement is to use, those that may be victims for the starving job now (by the
  // rules above: eligibility, its priority with starving_outrank, the cross-queue rules) are
  // evicted, and what they free is held for it. The others stay and are taken in a later cycle
  // once they may go (after their next checkpoint, once they have run min_victim_run_s). So a
  // gang too large to find cheap victims all at one moment (a whole rack) starts within about
  // a checkpoint interval and min_victim_run_s of starving, not when the longest job on its
  // nodes ends; the price is GPUs idle while they drain. Off: a reservation only waits for the
  // work on its nodes to end. Nothing happens without `enabled` and starvation_bound_s.
  bool starving_drain = false;
  // With starving_drain: a starving job's reservation may also drain a job still inside its
  // own min_runtime_s (every other rule above still holds). Such a job's node keeps ranking as
  // freeing only when that minimum ends, or its work if sooner (stage 7 ranks nodes by when
  // their work may go), so the reservation uses it only when nodes that free sooner give the
  // starving job no placement. min_runtime_s then keeps a job from
  // every eviction but a starving job's with no earlier way in, and the starvation bound stays
  // a promise. Off: min_runtime_s holds against the drain too.
  bool starving_drain_past_min_runtime = false;
  // The first this many jobs of the cycle left pending for lack of room (in the order the cycle
  // considers them; a starving job counts among them) get a reservation that drains its nodes
  // as starving_drain does, whether they starve or not: the job at the head of the queue takes
  // the jobs in its way one by one, as each becomes a victim it may evict, instead of waiting
  // for all of them to be victims at one moment. What lets a large gang of a high priority
  // start in a busy pool. A cycle that starts jobs settles (another pass, docs/engine.md: its
  // starts may change which jobs are blocked first), which costs time where most cycles do.
  // 0: none. Nothing happens without `enabled`.
  int64_t drain_blocked_jobs = 0;
  // Within a queue, a pending job of at least this many GPUs (its gang at its minimum size) also
  // outranks the running jobs of its own priority that were submitted after it and hold fewer
  // GPUs than it needs: it may take back the holes that such smaller, later jobs filled while it
  // waited for room of its shape. Every other rule (eligibility, cheap victims, the budgets)
  // still holds, and the order is strict, so no two jobs can take GPUs back from each other. A
  // whole-node job otherwise waits, behind jobs that came after it, for a node to empty by
  // itself, which in a pool of many one-GPU jobs rarely happens. 0: off (equal priorities never
  // evict each other).
  int64_t take_back_from_gpus = 0;
  // With take_back_from_gpus: only a job pending for at least this many seconds (since
  // pending_since, or submit_time) takes back. Room often frees by itself within minutes; each
  // eviction costs the victim its restore. 0: at once.
  int64_t take_back_after_s = 0;
  // Shorter victims stay: within its queue, a job that is not starving evicts a running job
  // only if that job is expected to need more than this percent of the work the evicting job
  // is expected to need (each: runtime_estimate_s - attained_service_s, at least 0). Evicting a
  // job that would end first delays it by about the evicting job's whole run and pays its
  // restore, to start the other job by about the victim's short remainder: mean completion time
  // and lost work both lose. Applies only where both jobs have a runtime_estimate_s, and not to
  // a start made earlier in the same cycle. 100: the victim must be expected to outlast the
  // evicting job. 0: off.
  int64_t victim_remaining_percent = 0;
  // With victim_remaining_percent: the rule applies only where the evicting job's priority is
  // above the victim's by at most this much; a larger gap (a more urgent job, or one a fairness
  // boost lifts over the victim) evicts by priority alone. 0: whatever the gap.
  int64_t victim_remaining_max_gap = 0;
};

// What a spent GPU-hour budget (Queue::budget_milli_gpu_seconds, docs/budgets.md) does.
enum class BudgetEnforcement {
  // Default. A queue over its budget, or below one that is, loses its guarantees for the cycle
  // (fair share and the preemption rules), may still borrow idle GPUs, is reclaimed first, and
  // its pending jobs say so.
  kEnforce,
  // Showback: the queue is reported over budget (queue_shares, metrics, pending details) but
  // keeps its guarantees and is reclaimed like any other queue.
  kReportOnly,
};

// Fair share (docs/engine.md, stage 3): each queue's entitlement per GPU model, from guarantees,
// limits, over-quota weights and demand (docs/fair-share.md states the rules).
struct FairShareOptions {
  // When positive, a queue's over-quota weight is divided by 1 + decayed_usage / (pool capacity
  // x half-life): heavy past users get a smaller share of the surplus. 0: no decay.
  int64_t usage_half_life_s = 0;
  // What a spent GPU-hour budget does (see BudgetEnforcement).
  BudgetEnforcement gpu_hour_budgets = BudgetEnforcement::kEnforce;
};

// What the cycle does with a backfilled job that runs past its estimate (BackfillOptions).
enum class OverrunAction {
  // Default. The reservation waits: the job runs on, and the reservation's expected start no
  // longer counts on it ending (its end is unknown).
  kWait,
  // A preemptible backfilled job past runtime_estimate_s + margin_s since its start_time is
  // evicted (a Preempt decision) when a reservation of the cycle is made on its node.
  kPreempt,
};

// Backfill (docs/engine.md, stage 7). With it on, the first `reservations` jobs of a cycle left
// pending for lack of room (and, as without it, every starving job) get a reservation: capacity
// held where they are expected to start soonest, computed from the running jobs'
// runtime_estimate_s. A later job may start in that held capacity only if it has a
// runtime_estimate_s and now + runtime_estimate_s + margin_s is at most the reservation's
// expected start (its Start decision says `backfilled`); it may always start beside it, in
// capacity no reservation holds. Off by default: nothing changes.
struct BackfillOptions {
  bool enabled = false;
  // Jobs left pending for lack of room that get a reservation, first ones in the cycle's order
  // (starving jobs always get one). 0: only starving jobs.
  int64_t reservations = 1;
  // Seconds added to a job's estimate before it may backfill, and before it counts as overrun.
  int64_t margin_s = 0;
  OverrunAction overrun = OverrunAction::kWait;
};

// Consolidation (docs/engine.md, stage 8). A pending gang blocked by fragmentation or topology
// (enough free GPUs of its model in total, not in the shape it needs) may start now if running
// jobs move out of its way: whole jobs, each re-placed by the placer under its own constraints,
// only preemptible, checkpointable (checkpointing.interval_s > 0), non-elastic jobs past their
// minimum runtime. The cheapest such move set (lost work plus restore time, priced like a
// preemption victim) is taken only if the gang's gain (its milli-GPUs x its expected wait without
// the moves) is more than gain_factor times that cost. Off by default.
struct ConsolidationOptions {
  // Off by default: Schedule() emits no Migrate decision.
  bool enabled = false;
  // The gain must exceed this multiple of the moves' cost. At least 1.
  int64_t gain_factor = 2;
  // Most jobs moved for one gang. At least 1.
  int64_t max_moves = 2;
  // Move sets simulated over the whole cycle (work units); once spent, no further consolidation
  // is planned (counters.budget_exhausted reports it). 0: unbounded.
  int64_t max_plans = 256;
};

// Health rules (docs/operations.md, "Health and diagnostics"). Off by default: the snapshot's
// error counts and diagnostics are then ignored, and unhealthy GPUs are only left unused.
struct HealthOptions {
  // With the rules on: a node with a GPU at an error threshold or whose last diagnostic failed is
  // cordoned (node action kCordon), one cordoned for health that passes again is uncordoned, and
  // the jobs running on a failed GPU (healthy: false) are checkpointed and stopped (a Preempt).
  bool enabled = false;
  // A node is cordoned when one of its GPUs has at least this many XID errors, or this many
  // uncorrectable ECC errors. 0: no such rule.
  int64_t xid_errors_to_cordon = 0;
  int64_t ecc_errors_to_cordon = 0;
  // A node with GPUs whose last diagnostic is this many seconds old or older (or that has none)
  // is given a diagnostic (node action kDiagnose) when it is idle, or will be within
  // diagnostic_idle_window_s by its running jobs' runtime estimates. 0: no diagnostics planned.
  int64_t diagnostic_interval_s = 0;
  int64_t diagnostic_idle_window_s = 0;
  // At most this many nodes wait for or run a diagnostic at once. 0: no limit.
  int64_t max_diagnosing_nodes = 0;
};

// Maintenance windows (docs/operations.md, "Maintenance windows and drains"). A node's windows
// always apply; these knobs only say how.
struct MaintenanceOptions {
  // A ready node whose next window starts within this many seconds drains: it takes no new work
  // (node action kDrain, with the time it is expected to be empty). 0: only once the window has
  // started.
  int64_t drain_notice_s = 0;
  // A job without a runtime estimate may start on a node with a window ahead (it is then stopped
  // at the window's start). Off by default: such a job could run forever, so it avoids those
  // nodes.
  bool start_without_estimate = false;
};

// One kind of node the host could add to the pool (scale advice, docs/operations.md).
struct NodeTemplate {
  // Unique among the templates, non-empty; the advice names the template by it.
  std::string name;
  // The node as the host would add it, as in the snapshot, but without an id (`node.id` must be
  // empty: the host names the nodes it adds). Checked against the snapshot like a snapshot's node
  // (known GPU model and topology levels, ...) and must be ready.
  Node node;
  // At most this many nodes of the template may be advised (>= 0; 0: never advised).
  int32_t max_count = 0;
  // Price of one node for one hour, in micro-units of the host's currency (1,000,000 = one unit;
  // JSON "cost_per_hour": 2.5 is 2,500,000). >= 0. The advice prefers the cheapest mix.
  int64_t cost_per_hour_micro = 0;
};

// Scale advice (docs/operations.md, "Scale advice"): which template nodes to add so that the
// pending jobs the advice covers start, and which idle nodes to release without delaying any
// job. Computed by simulating whole cycles on copies of the snapshot, after the cycle itself.
struct ScaleOptions {
  std::vector<NodeTemplate> templates;
  // Simulated cycles the advice may spend (work units, never wall time; >= 0, 0: unbounded).
  // Once spent, the advice found so far is reported with ScaleAdvice::budget_exhausted set.
  int64_t max_simulations = 200;
};

// The unit a headroom rule counts in (docs/operations.md, "Headroom for urgent work").
enum class HeadroomShape {
  // Whole free GPUs: healthy GPUs with nothing allocated on them.
  kGpus,
  // Whole free nodes: nodes of the model with at least one GPU, every GPU healthy and free.
  kNodes,
  // Whole free NVLink islands: islands whose every GPU is healthy and free.
  kIslands,
};

// Capacity of one GPU model kept free for urgent work. A job whose priority is below
// `min_priority` starts on that model only if, after its start, at least `count` units stay free
// on the model's ready, non-spot, non-reclaiming nodes; otherwise it is pending with reason
// kHeadroom. Jobs at or above min_priority use the headroom like any free capacity, at once.
struct HeadroomRule {
  // A GPU model of the snapshot (Schedule() refuses an unknown one with FailedPrecondition).
  std::string gpu_model;
  // Units kept free, at least 1.
  int64_t count = 0;
  HeadroomShape shape = HeadroomShape::kGpus;
  int32_t min_priority = 0;
  // When urgent work has taken the headroom (fewer than `count` units free after the cycle's
  // starts), and preemption.enabled: evict running jobs below min_priority, the cheapest set the
  // preemption rules allow, until `count` units are free again (docs/operations.md). Off: the
  // cycle only reports the shortfall.
  bool restore = false;
};

// Spot nodes (Node::spot).
struct SpotOptions {
  // A job that is not spot_tolerant goes on a spot node only if it is preemptible and checkpoints
  // (checkpointing.interval_s > 0) at least this often: interval_s <= this. 0: any interval.
  int64_t max_checkpoint_interval_s = 0;
};

// Every knob of one Schedule() call. A value: copy it, compare it, keep one per experiment; the
// defaults below are the default policy. Schedule() checks it with ValidatePolicy()
// (validate.h), which names each rule; docs/policy-format.md is the same list for JSON.
struct Policy {
  // Reported in the decisions, with the version.
  std::string name = "default";
  int32_t version = 1;
  PlacementStrategy placement = PlacementStrategy::kBestFit;
  // A host-supplied scorer; when set it replaces `placement`. Shared and const: one scorer may
  // serve many concurrent Schedule() calls.
  std::shared_ptr<const PlacementScorer> scorer;
  JobOrder job_order = JobOrder::kPriorityFifo;
  // Level boundaries of kLeastAttainedService, each >= 0 and strictly ascending (Tiresias: 3,250
  // and 7,200); empty: one level.
  std::vector<int64_t> las_thresholds_gpu_seconds = {3250, 7200};
  // Starvation guard: a job that has waited longer than this (now - pending_since, which
  // defaults to submit_time) is served before every job that has not, longest-waiting first,
  // whatever its queue; if it still cannot start,
  // capacity is held for it where it can start soonest (a Reserve decision, docs/engine.md
  // stage 7). 0: off.
  int64_t starvation_bound_s = 0;
  QueueOrder queue_order = QueueOrder::kNone;
  FairShareOptions fair_share;
  PreemptionOptions preemption;
  Budgets budgets;
  BackfillOptions backfill;
  ConsolidationOptions consolidation;
  HealthOptions health;
  MaintenanceOptions maintenance;
  // Unset (the default): no scale advice, and Decisions::scale_advice stays unset.
  std::optional<ScaleOptions> scale;
  // Capacity kept free for urgent work, at most one rule per (gpu_model, shape). Empty: none.
  std::vector<HeadroomRule> headroom;
  SpotOptions spot;
};

// Stable names of the built-in strategies ("best-fit", "first-fit", "spread",
// "expected-waste").
const char* PlacementStrategyName(PlacementStrategy strategy);
// Stable names of the job orders ("priority-fifo", "las", "shortest-remaining") and queue orders
// ("none", "fair-share").
const char* JobOrderName(JobOrder order);
const char* QueueOrderName(QueueOrder order);
// Stable names of the victim orders ("cheapest-first", "lowest-priority-first").
const char* VictimOrderName(VictimOrder order);
// Stable names of the overrun actions ("wait", "preempt").
const char* OverrunActionName(OverrunAction action);
// Stable names of the budget enforcements ("enforce", "report-only").
const char* BudgetEnforcementName(BudgetEnforcement enforcement);
// Stable names of the headroom shapes ("gpus", "nodes", "islands").
const char* HeadroomShapeName(HeadroomShape shape);

}  // namespace gpupool

#endif  // GPUPOOL_POLICY_H_
