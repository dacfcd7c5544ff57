// Stage 6: preemption planning, and the counterfactual of stage 9.
//
// For a pending job that did not place, the planner looks for running work to take back so that
// it can start. It coordinates three parts, each in its own file, from the bottom up:
//   - victim_rules.h: who may be a victim (preemptible, past its minimum runtime, within the
//     policy's min_victim_run_s and max_victim_lost_s, not on a node held for a reservation; of
//     the job's queue with a lower priority, or of another queue whose side holds more than its
//     entitlement), what evicting it costs (the work it loses), and the three cross-queue rules
//     (entitlement, guarantees, no loops) a plan must keep;
//   - victim_search.h: among those, the victim set the policy's victim_order ranks best that
//     lets the job start (exact up to VictimSearch::kExactCandidates candidates, a bounded greedy
//     search above);
//   - counterfactual.h: for a job left pending for lack of room, which running jobs would have
//     to go and what keeps them running (stage 9).
//
// What the planner itself does (TryPreempt): it lists the candidates (Candidates), drops those
// no allowed plan can hold and those on nodes held for a starving job's reservation, then takes
// room in two steps. First elastic groups: the same-queue candidates' elastic groups running
// above their minimum are shrunk to it (Resize decisions), cheapest first, the fewest that let
// the job start (TryShrink); across queues the rules are stated for whole jobs, so only whole
// jobs go there. Only if shrinking cannot make room are whole jobs evicted (every replica of a
// victim goes; Preempt decisions), as the search chooses. Every plan is simulated on a checkpoint
// of the working state (Simulate: evict, try to place, roll back) and committed only if the job
// then places, so nothing is taken for nothing. A job evicted or shrunk is not taken again in
// the cycle. Each simulated plan counts against the policy's max_preemption_plans budget.
#ifndef GPUPOOL_PREEMPT_H_
#define GPUPOOL_PREEMPT_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "counterfactual.h"
#include "entitlements.h"
#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "place.h"
#include "snapshot_index.h"
#include "victim_rules.h"
#include "victim_search.h"
#include "working_state.h"

namespace gpupool::internal {

class PreemptionPlanner {
 public:
  // All references must outlive the planner; `counters` receives the plans simulated, the jobs
  // evicted and the groups shrunk.
  PreemptionPlanner(const SnapshotIndex& index, WorkingState& state, Placer& placer,
                    const Entitlements& entitlements, const Policy& policy, Counters& counters);

  struct Plan {
    std::vector<PreemptDecision> preemptions;  // in victim id order
    std::vector<ResizeDecision> resizes;       // elastic groups shrunk, in job id order
    std::vector<ReplicaPlacement> placements;  // of the job that starts
  };
  // Tries to start pending job j by shrinking or evicting running jobs. On success the victims
  // are released (or shrunk) and the job placed in the working state (not committed: the caller
  // commits).
  std::optional<Plan> TryPreempt(int32_t j);

  // For a job left pending for lack of room: see Counterfactual::Explain(). Simulates on the
  // working state and rolls back (the caller commits nothing new).
  void ExplainCounterfactual(int32_t j, PendingDecision& pending);

  // Milli-GPU-seconds running job v loses if evicted now (VictimRules::VictimCost), for evictions
  // other stages decide (an overrun backfilled job, reserve.h).
  int64_t VictimCost(int32_t v) const { return rules_.VictimCost(v); }
  // May running job v be drained now for job j's reservation (preemption.starving_drain or
  // drain_blocked_jobs, reserve.h), together with the jobs already `drained` for it: it
  // may be a victim (VictimRules::MayEvict, not yet taken; MayEvictPastMinRuntime when j starves
  // and preemption.starving_drain_past_min_runtime is on), it is of j's queue with a lower
  // priority than j preempts with, or of another queue that the cross-queue rules let go with
  // them; a restored job once at most (VictimRules::MayEvictRestored). The caller marks it
  // taken.
  bool MayDrain(int32_t j, int32_t v, const std::vector<int32_t>& drained) const;
  // When running job v may next be drained for job j, for ranking nodes: a job of j's queue
  // that j outranks, at EligibleVictimFrom() (lost_work.h); INT64_MAX for any other (not before
  // its work ends), or with preemption off.
  int64_t DrainableFrom(int32_t j, int32_t v) const;
  // Running job v was moved by consolidation in this cycle: it is no victim again.
  void NoteMoved(int32_t v) { rules_.NoteTaken(v); }
  // The rules the planner decides with; the conductor marks jobs it stops itself (spot
  // reclaims, headroom restoration) as taken, and restoration asks who may go and at what price.
  VictimRules& rules() { return rules_; }

 private:
  // The running jobs that may go for pending job j by eligibility, priority and rule 1 of the
  // cross-queue rules, in id order (the other rules are left to DropNeverAllowed and the search).
  std::vector<int32_t> Candidates(int32_t j) const;
  // Before whole jobs: shrinking elastic groups of the job's own queue (among `candidates`) to
  // their minimum, cheapest first, the fewest that let job j start. Jobs with more than one
  // elastic group above its minimum are left to the whole-job search.
  std::optional<Plan> TryShrink(int32_t j, const std::vector<int32_t>& candidates);
  // The Preempt decisions for evicting `victims` for job j, worded with the state before the
  // plan.
  std::vector<PreemptDecision> PreemptDecisions(int32_t j,
                                                const std::vector<int32_t>& victims) const;
  // Evicts `victims` and places j for real (the steps a simulation took, so it places); rolls
  // back and returns nullopt if j does not place.
  std::optional<std::vector<ReplicaPlacement>> Evict(int32_t j,
                                                     const std::vector<int32_t>& victims);
  // Evicts `victims`, tries to place j, and rolls back. Returns the placements if it fits.
  // Counts one plan in `plans`.
  std::optional<std::vector<ReplicaPlacement>> Simulate(int32_t j,
                                                        const std::vector<int32_t>& victims,
                                                        int64_t& plans);
  // Of `victims`, a plan for job j with victims of j's queue and of other queues (empty for any
  // other plan, or without reclaim_across_queues): those of j's queue, not yet marked
  // (VictimRules::NoteRestarts), that would place again with all the victims gone and j placed.
  // The working state and the placer are left as they were.
  std::vector<int32_t> OwnVictimsThatRestart(int32_t j, const std::vector<int32_t>& victims);
  bool BudgetLeft() const { return PlanBudgetLeft(policy_, counters_); }

  const SnapshotIndex& index_;
  WorkingState& state_;
  Placer& placer_;
  const Entitlements& entitlements_;
  const Policy& policy_;
  Counters& counters_;
  VictimRules rules_;
  VictimSearch search_;
  Counterfactual counterfactual_;
  // Running jobs of each queue, in id order; and those that MayEverEvict(), in id order, with
  // their queues (built on first use).
  std::vector<std::vector<int32_t>> running_by_queue_;
  mutable bool running_built_ = false;
  mutable std::vector<int32_t> running_, running_queue_;
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_PREEMPT_H_
