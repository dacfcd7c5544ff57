// Stage 6: preemption planning.
//
// For a pending job that did not place, the planner looks for running jobs to evict so that it
// can. Victims are whole gangs (every replica of a job goes), only preemptible jobs past their
// minimum runtime, and in this version only jobs of the same queue with a lower priority
// (reclaim across queues needs the fair-share entitlements of a later stage).
//
// The price of a victim is the work it loses: its milli-GPUs x (seconds since its last
// checkpoint, or since it started if later, or only its checkpoint cost when it can checkpoint
// within the policy's grace period) plus its milli-GPUs x its restore time. Among the victim
// sets that let the job start in the shape it needs, the planner takes the cheapest, then the
// one with the fewest victims, then the one whose victims come first in id order. Every plan is
// simulated on a checkpoint of the working state: evict, try to place, roll back; a plan is
// committed only if the job then places, so nothing is evicted for nothing.
//
// Search: with up to kExactCandidates candidate victims every subset is considered, in price
// order, so the choice is a cheapest feasible one; with more, victims are added cheapest first
// until the job fits, then any victim the job can do without is dropped, most expensive first.
// Each simulated plan counts against the policy's max_preemption_plans budget.
#ifndef GPUPOOL_PREEMPT_H_
#define GPUPOOL_PREEMPT_H_

#include <cstdint>
#include <optional>
#include <vector>

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
                    const Policy& policy, Counters& counters);

  struct Plan {
    std::vector<PreemptDecision> preemptions;  // in victim id order
    std::vector<ReplicaPlacement> placements;  // of the job that starts
  };
  // Tries to start pending job j by evicting running jobs. On success the victims are released
  // and the job placed in the working state (not committed: the caller commits).
  std::optional<Plan> TryPreempt(int32_t j);

  // Milli-GPU-seconds running job v would lose if evicted now.
  int64_t VictimCost(int32_t v) const;

 private:
  std::vector<int32_t> Candidates(int32_t j) const;
  // Evicts `victims`, tries to place j, and rolls back. Returns the placements if it fits.
  std::optional<std::vector<ReplicaPlacement>> Simulate(int32_t j,
                                                        const std::vector<int32_t>& victims);
  bool BudgetLeft() const;

  const SnapshotIndex& index_;
  WorkingState& state_;
  Placer& placer_;
  const Policy& policy_;
  Counters& counters_;
  std::vector<uint8_t> evicted_;
  // Running jobs of each queue, in id order.
  std::vector<std::vector<int32_t>> running_by_queue_;
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_PREEMPT_H_
