// Stage 3 in the cycle: fair share computed from the snapshot.
//
// Fills the pure fair-share stage (fair_share.h) from the indexed snapshot and the working state
// at the start of the cycle, and keeps what later stages need per queue and model slot
// (slot model_count() is "*", all models together): entitlement, usage and demand, each with
// descendants, and the configured guarantee.
//
// Demand of a queue's own jobs: what its running jobs hold on each model, plus, for each pending
// job, its whole request (every group at its full replica count) on the first model it accepts
// that the pool has. A job that accepts several models thus asks for its first choice, which is
// where the placement stage tries it first.
//
// GPU-hour budgets: a queue over its budget, or below a queue over its budget
// (Queue::OverOwnBudget), has its guarantees taken as 0 for the cycle, in fair share and in the
// preemption rules alike: it keeps only what the surplus gives it (idle GPUs, if it may
// borrow), and nothing protects its running work from reclaim. guaranteed() is that effective
// guarantee; Report() says so through QueueShare::over_budget. With the policy's
// fair_share.gpu_hour_budgets at report-only, a queue over budget is only reported: its
// guarantees stand and it is reclaimed like any other.
#ifndef GPUPOOL_ENTITLEMENTS_H_
#define GPUPOOL_ENTITLEMENTS_H_

#include <cstdint>
#include <vector>

#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "snapshot_index.h"
#include "working_state.h"

namespace gpupool::internal {

class Entitlements {
 public:
  Entitlements(const SnapshotIndex& index, const WorkingState& state, const Policy& policy);

  int64_t entitlement(int32_t q, int32_t slot) const { return entitlement_[At(q, slot)]; }
  int64_t usage(int32_t q, int32_t slot) const { return usage_[At(q, slot)]; }
  int64_t demand(int32_t q, int32_t slot) const { return demand_[At(q, slot)]; }
  int64_t guaranteed(int32_t q, int32_t slot) const { return guaranteed_[At(q, slot)]; }
  // Whether queue q, or a queue above it, is over its GPU-hour budget; and which one (the
  // nearest, q itself first), kNone when neither.
  bool over_budget(int32_t q) const { return budget_queue_[q] != kNone; }
  int32_t budget_queue(int32_t q) const { return budget_queue_[q]; }
  // Whether the budget has consequences for queue q this cycle: it is over budget and the
  // policy enforces budgets (fair_share.gpu_hour_budgets). Only then is its guarantee 0 and are
  // its jobs reclaimed first; under report-only, over_budget() is reported and nothing else.
  bool budget_enforced(int32_t q) const { return enforce_budgets_ && over_budget(q); }

  // The rows for Decisions::queue_shares.
  std::vector<QueueShare> Report() const;

  // Appends to the detail of each pending job whose queue is over budget (over_budget()) one
  // sentence saying so, with the budget's queue and figures in GPU-hours. Every pending job
  // must be a job of the index.
  void ExplainBudgets(std::vector<PendingDecision>& pending) const;

 private:
  size_t At(int32_t q, int32_t slot) const {
    return static_cast<size_t>(q) * slots_ + static_cast<size_t>(slot);
  }

  const SnapshotIndex& index_;
  size_t slots_;
  std::vector<int64_t> entitlement_, usage_, demand_, guaranteed_;
  std::vector<int32_t> budget_queue_;
  bool enforce_budgets_;
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_ENTITLEMENTS_H_
