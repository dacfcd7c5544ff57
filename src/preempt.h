// Stage 6: preemption planning.
//
// For a pending job that did not place, the planner looks for running jobs to evict so that it
// can. Victims are whole gangs (every replica of a job goes), only preemptible jobs past their
// minimum runtime: jobs of the same queue with a lower priority, and jobs of other queues that
// hold more than their entitlement. Across queues, the two sides compared are the queues just
// below the lowest common ancestor of the two queues (siblings, so that a team reclaims from the
// other team, not from one of its projects), and a plan must keep three rules (PlanAllowed):
//   - the victim side holds more than its entitlement before the plan;
//   - guarantees: if the job's side would then be above its guarantee (borrowing), the victim
//     side must stay at or above its guarantee; if the job's side stays within its guarantee
//     (reclaiming), the victim side must be above its guarantee before the plan;
//   - no loops: after the plan, the job's side is not further above its entitlement than the
//     victim side is (usage - entitlement, in milli-GPUs, over all models), so the victims
//     could never evict the job back.
//
// The price of a victim is the work it loses: its milli-GPUs x (seconds since its last
// checkpoint, or since it started if later, or only its checkpoint cost when it can checkpoint
// within the policy's grace period) plus its milli-GPUs x its restore time. Among the victim
// sets that let the job start in the shape it needs, the planner takes the best in the policy's
// victim_order: kCheapestFirst (default) ranks by total price, then number of victims, then the
// priority of the highest-priority victim, then victims in id order; kLowestPriorityFirst puts
// the highest victim priority first (so that no evicted job outranks a job that then runs in its
// place, which the next cycle would undo), then price, then count, then ids. Every plan is
// simulated on a checkpoint of the working state: evict, try to place, roll back; a plan is
// committed only if the job then places, so nothing is evicted for nothing.
//
// Search: with up to kExactCandidates candidate victims every subset is considered, in price
// order, so the choice is the best feasible one; with more, victims are added lowest priority
// and cheapest first until the job fits, then any victim the job can do without is dropped.
// Each simulated plan counts against the policy's max_preemption_plans budget.
#ifndef GPUPOOL_PREEMPT_H_
#define GPUPOOL_PREEMPT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "entitlements.h"
#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "place.h"
#include "snapshot_index.h"
#include "working_state.h"

namespace gpupool::internal {

class PreemptionPlanner {
 public:
  // Candidate sets up to this size are searched exhaustively.
  static constexpr int kExactCandidates = 10;

  PreemptionPlanner(const SnapshotIndex& index, WorkingState& state, Placer& placer,
                    const Entitlements& entitlements, const Policy& policy, Counters& counters);

  struct Plan {
    std::vector<PreemptDecision> preemptions;  // in victim id order
    std::vector<ReplicaPlacement> placements;  // of the job that starts
  };
  // Tries to start pending job j by evicting running jobs. On success the victims are released
  // and the job placed in the working state (not committed: the caller commits).
  std::optional<Plan> TryPreempt(int32_t j);

  // Milli-GPU-seconds running job v would lose if evicted now.
  int64_t VictimCost(int32_t v) const;

  // For a job left pending for lack of room: if evicting running jobs (any queue or priority,
  // preemptible and past their minimum runtime) would let it start, names the cheapest prefix
  // of them, in price order, that does, and says which rule or setting keeps them running.
  // Bounded by budgets.max_counterfactual_plans over the cycle.
  void ExplainCounterfactual(int32_t j, PendingDecision& pending);

 private:
  std::vector<int32_t> Candidates(int32_t j) const;
  // The queue that stands for q when it is compared with `other`: q's ancestor (or q) just
  // below their lowest common ancestor; kNone when one queue is an ancestor of the other.
  int32_t Side(int32_t q, int32_t other) const;
  // Do the cross-queue rules allow evicting `victims` for job j?
  bool PlanAllowed(int32_t j, const std::vector<int32_t>& victims) const;
  int64_t GuaranteeTotal(int32_t q) const;
  // Evicts `victims`, tries to place j, and rolls back. Returns the placements if it fits.
  // Counts one plan in `plans`.
  std::optional<std::vector<ReplicaPlacement>> Simulate(int32_t j,
                                                        const std::vector<int32_t>& victims,
                                                        int64_t& plans);
  std::optional<std::vector<ReplicaPlacement>> Simulate(int32_t j,
                                                        const std::vector<int32_t>& victims) {
    return Simulate(j, victims, counters_.preemption_plans);
  }
  // Why the rules do not let `victim` go for job j (empty if they do).
  std::string WhyKept(int32_t j, int32_t victim) const;
  bool BudgetLeft() const;

  const SnapshotIndex& index_;
  WorkingState& state_;
  Placer& placer_;
  const Entitlements& entitlements_;
  const Policy& policy_;
  Counters& counters_;
  std::vector<uint8_t> evicted_;
  // VictimCost() per job, computed on first use (-1: not yet): a price does not change within a
  // cycle.
  mutable std::vector<int64_t> cost_cache_;
  // Every running job that could ever be a victim (preemptible, past its minimum runtime), by
  // price then id; built on the first counterfactual of the cycle. Evicted ones are skipped
  // where it is read.
  std::vector<int32_t> counterfactual_pool_;
  bool counterfactual_pool_built_ = false;
  // Running jobs of each queue, in id order.
  std::vector<std::vector<int32_t>> running_by_queue_;
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_PREEMPT_H_
