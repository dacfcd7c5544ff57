// Stage 9, the counterfactual: for a job left pending for lack of room (insufficient-capacity,
// fragmentation or topology), which running jobs would have to go for it to start now, what
// that would cost, and which rule or setting keeps them running. It fills
// PendingDecision::would_preempt and ::counterfactual, so that an operator can tell "the pool is
// full of work that must not be touched" from "the policy is too strict" (docs/engine.md).
//
// Why a separate question from the victim search. The search (victim_search.h) looks only at
// the victims the rules let go and wants the best plan; here every running job that could ever
// be a victim (preemptible, past its own min_runtime_s; any queue, any priority; the policy's
// min_victim_run_s and max_victim_lost_s ignored, since they only delay a reclaim) is
// considered, and the answer is the shortest prefix of the cheapest of them, in price order
// (then id), that lets the job start, found by binary search over simulated plans (evicting
// more never takes room away in practice). At most kMostVictims of them are looked at, so that
// one explanation stays small. The reason named is the first victim's, in id order, that the
// rules keep (VictimRules::WhyKept()); failing that, preemption being off, the preemption budget
// having run out, or no allowed plan having been found. Every simulation counts against
// budgets.max_counterfactual_plans over the cycle (0: no counterfactuals), never against the
// preemption budget; nothing is evicted.
#ifndef GPUPOOL_COUNTERFACTUAL_H_
#define GPUPOOL_COUNTERFACTUAL_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "snapshot_index.h"
#include "victim_rules.h"
#include "working_state.h"

namespace gpupool::internal {

class Counterfactual {
 public:
  // Running jobs looked at per explanation, the cheapest first.
  static constexpr size_t kMostVictims = 64;

  // All references must outlive the object.
  Counterfactual(const SnapshotIndex& index, const WorkingState& state, const VictimRules& rules,
                 const Policy& policy, const Counters& counters);

  // For pending job j (left pending for lack of room): if evicting running jobs would let it
  // start, names them in pending.would_preempt (in id order) and says in pending.counterfactual
  // what they would lose and what keeps them running. `simulate` tests a victim set for j and
  // counts it in counters.counterfactual_plans. Leaves `pending` as it is when the budget is
  // spent or no set of the cheapest kMostVictims lets j start.
  void Explain(int32_t j, PendingDecision& pending, TryVictims simulate);

 private:
  // Every running job that could ever be a victim, by price then id (built on first use; jobs
  // taken later in the cycle are skipped where it is read).
  const std::vector<int32_t>& Pool();

  const SnapshotIndex& index_;
  const WorkingState& state_;
  const VictimRules& rules_;
  const Policy& policy_;
  const Counters& counters_;
  std::vector<int32_t> pool_;
  bool pool_built_ = false;
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_COUNTERFACTUAL_H_
