// Schedule(): one cycle, stage by stage (DESIGN.md "The engine: one cycle"). Schedule() below is
// the map; each stage lives in its own file (docs/engine.md has the same table):
//
//   stage                                       files
//   1  validate snapshot and policy; index      validate.cc, validate_jobs.cc, validate_policy.cc,
//                                               snapshot_index.cc
//   2  working state, running work in place     working_state.cc
//   3  fair share: each queue's entitlement     entitlements.cc, fair_share.cc
//   4  order pending jobs                       order.cc
//   5  place each gang, all or nothing          place.cc; identical failures: equivalence.cc
//   6  preempt or reclaim for a job that did    preempt.cc, victim_rules.cc, victim_search.cc;
//      not place; retry after preemption        RetryAfterPreemption() here
//   7  hold capacity for a starving job         reserve.cc
//   8  consolidate                              (not yet)
//   9  pending reasons, counterfactuals;        diagnose.cc, counterfactual.cc;
//      decisions in canonical order             Finish() here; the fingerprint: fingerprint.cc
//  10  scale advice (only with policy.scale)    scale_advice.cc, on whole cycles (RunCycle())
//
// Backfill into held capacity and consolidation come with later issues. Every stage step that
// changes the working state commits its own transaction (working_state.h): Placer::Start(),
// Reserver::Reserve(), and StartByPreemption() here for the planner, whose TryPreempt() leaves
// its plan open for callers that simulate.
#include "gpupool/schedule.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cycle.h"
#include "entitlements.h"
#include "equivalence.h"
#include "fingerprint.h"
#include "internal/check.h"
#include "order.h"
#include "place.h"
#include "preempt.h"
#include "reserve.h"
#include "scale_advice.h"
#include "snapshot_index.h"
#include "working_state.h"

namespace gpupool {
namespace {

// Puts `items` in job-id order. `jobs[i]` is the dense index of items[i]'s job, and dense
// indices are in id order, so integers are compared instead of strings.
template <typename T>
void SortByJob(std::vector<T>& items, const std::vector<int32_t>& jobs) {
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&jobs](size_t a, size_t b) { return jobs[a] < jobs[b]; });
  std::vector<T> sorted;
  sorted.reserve(items.size());
  for (size_t i : order) sorted.push_back(std::move(items[i]));
  items = std::move(sorted);
}

// Stages 4 to 7 and 9 for the pending jobs of one cycle, and the decisions they make. Each
// decision list is kept beside the dense indices of its jobs, for Finish().
class Cycle {
 public:
  Cycle(const internal::SnapshotIndex& index, const Policy& policy, internal::WorkingState& state,
        const internal::Entitlements& entitlements, Decisions& decisions)
      : index_(index),
        policy_(policy),
        state_(state),
        decisions_(decisions),
        counters_(decisions.counters),
        placer_(index, state, policy, counters_),
        planner_(index, state, placer_, entitlements, policy, counters_),
        reserver_(index, state, placer_),
        failed_shapes_(index, policy.preemption.enabled) {}

  // Once the candidate budget is spent, job j stays pending (budget-exhausted).
  bool BudgetSpent(int32_t j) {
    if (!OverBudget()) return false;
    PendingDecision pending;
    pending.job = index_.job(j).job->id;
    pending.reason = PendingReason::kBudgetExhausted;
    pending.detail = "the cycle's candidate budget ran out before this job was tried";
    AddPending(j, std::move(pending));
    return true;
  }

  // A job of the same shape as one that failed gets that job's pending decision.
  bool AnsweredByEquivalent(int32_t j) {
    const std::optional<size_t> same = failed_shapes_.FindFailure(j);
    if (!same) return false;
    ++counters_.equivalence_hits;
    PendingDecision pending = decisions_.pending[*same];
    pending.job = index_.job(j).job->id;
    AddPending(j, std::move(pending));
    return true;
  }

  // Stage 5.
  bool Start(int32_t j) {
    auto placements = placer_.Start(j);
    if (!placements) return false;
    AddStart(j, std::move(*placements));
    return true;
  }

  // Stage 6: a job that does not place may evict lower-priority work (policy.preemption).
  bool StartByPreemption(int32_t j) {
    if (!policy_.preemption.enabled) return false;
    auto plan = planner_.TryPreempt(j);
    state_.Commit();
    if (!plan) return false;
    for (PreemptDecision& p : plan->preemptions) {
      preempt_jobs_.push_back(index_.FindJob(p.job));
      decisions_.preemptions.push_back(std::move(p));
    }
    for (ResizeDecision& r : plan->resizes) {
      resize_jobs_.push_back(index_.FindJob(r.job));
      decisions_.resizes.push_back(std::move(r));
    }
    AddStart(j, std::move(plan->placements));
    // Capacity grew where the victims were: earlier failures no longer prove anything.
    failed_shapes_.Clear();
    return true;
  }

  // Stage 9 for a job that did not start: its reason, computed once per shape, and for a lack of
  // room the evictions that would let it start; then stage 7, capacity held for it if it starves.
  void LeavePending(int32_t j) {
    failed_shapes_.RecordFailure(j, decisions_.pending.size());
    PendingDecision pending = placer_.Diagnose(j);
    if (pending.reason == PendingReason::kInsufficientCapacity ||
        pending.reason == PendingReason::kFragmentation ||
        pending.reason == PendingReason::kTopology) {
      planner_.ExplainCounterfactual(j, pending);
      if (internal::Starving(*index_.job(j).job, policy_, index_.snapshot().now)) {
        if (auto reserve = reserver_.Reserve(j)) {
          decisions_.reservations.push_back(std::move(*reserve));
          reserve_jobs_.push_back(j);
        }
      }
    }
    AddPending(j, std::move(pending));
  }

  // Stage 6b: after evictions, capacity the beneficiaries did not use may fit jobs that failed
  // before, and the victims themselves may fit elsewhere. One more pass, in job order and without
  // preemption, places what now fits, so that applying the decisions leaves nothing startable.
  // A victim placed here gets a Start too: the host evicts it, then restarts it there.
  void RetryAfterPreemption() {
    if (preempt_jobs_.empty()) return;
    std::vector<int32_t> retry = preempt_jobs_;
    std::vector<size_t> pending_at(index_.job_count(), SIZE_MAX);
    for (size_t i = 0; i < pending_jobs_.size(); ++i) {
      if (decisions_.pending[i].reason == PendingReason::kBudgetExhausted) continue;
      pending_at[pending_jobs_[i]] = i;
      retry.push_back(pending_jobs_[i]);
    }
    internal::SortInJobOrder(index_, policy_, retry);
    std::vector<uint8_t> started_late(decisions_.pending.size(), 0);
    for (int32_t j : retry) {
      if (OverBudget()) break;
      if (!Start(j)) continue;
      if (pending_at[j] != SIZE_MAX) started_late[pending_at[j]] = 1;
    }
    std::vector<PendingDecision> still_pending;
    std::vector<int32_t> still_pending_jobs;
    for (size_t i = 0; i < decisions_.pending.size(); ++i) {
      if (started_late[i]) continue;
      still_pending.push_back(std::move(decisions_.pending[i]));
      still_pending_jobs.push_back(pending_jobs_[i]);
    }
    decisions_.pending = std::move(still_pending);
    pending_jobs_ = std::move(still_pending_jobs);
  }

  // Stage 9, last step: every decision list in job-id order.
  void Finish() {
    SortByJob(decisions_.starts, start_jobs_);
    SortByJob(decisions_.pending, pending_jobs_);
    SortByJob(decisions_.preemptions, preempt_jobs_);
    SortByJob(decisions_.reservations, reserve_jobs_);
    SortByJob(decisions_.resizes, resize_jobs_);
  }

 private:
  // Is policy.budgets.max_candidates spent? (Then counters.budget_exhausted says so.)
  bool OverBudget() {
    const int64_t budget = policy_.budgets.max_candidates;
    if (budget == 0 || counters_.candidates_evaluated < budget) return false;
    counters_.budget_exhausted = true;
    return true;
  }

  void AddStart(int32_t j, std::vector<ReplicaPlacement> placements) {
    ++counters_.jobs_started;
    reserver_.NoteStart(j, placements);
    decisions_.starts.push_back(StartDecision{index_.job(j).job->id, std::move(placements)});
    start_jobs_.push_back(j);
  }

  void AddPending(int32_t j, PendingDecision&& pending) {
    decisions_.pending.push_back(std::move(pending));
    pending_jobs_.push_back(j);
  }

  const internal::SnapshotIndex& index_;
  const Policy& policy_;
  internal::WorkingState& state_;
  Decisions& decisions_;
  Counters& counters_;
  internal::Placer placer_;
  internal::PreemptionPlanner planner_;
  internal::Reserver reserver_;
  internal::EquivalenceCache failed_shapes_;
  std::vector<int32_t> start_jobs_, pending_jobs_, preempt_jobs_, reserve_jobs_, resize_jobs_;
};

}  // namespace

namespace internal {

Decisions RunCycle(const Snapshot& snapshot, const Policy& policy) {
  const SnapshotIndex index(snapshot);

  Decisions decisions;
  decisions.policy_name = policy.name;
  decisions.policy_version = policy.version;
  decisions.scorer = policy.scorer ? std::string(policy.scorer->Name())
                                   : std::string(PlacementStrategyName(policy.placement));
  decisions.input_fingerprint = internal::Fingerprint(index, policy);

  // Stage 2: working state, with running work in place.
  internal::WorkingState state(index, policy);
  for (int32_t j = 0; j < index.job_count(); ++j) {
    if (index.job(j).job->state == JobState::kRunning) state.AddRunningJob(j);
  }

  // Stage 3: fair share, from the state at the start of the cycle.
  const internal::Entitlements entitlements(index, state, policy);
  decisions.queue_shares = entitlements.Report();

  // Stage 4: pending jobs in order; stages 5, 6, 9 and 7 for each.
  Cycle cycle(index, policy, state, entitlements, decisions);
  internal::JobSequence sequence(index, policy, state, entitlements);
  for (int32_t j = sequence.Next(); j != internal::kNone; j = sequence.Next()) {
    ++decisions.counters.jobs_considered;
    if (cycle.BudgetSpent(j)) continue;
    if (cycle.AnsweredByEquivalent(j)) continue;
    if (cycle.Start(j)) continue;
    if (cycle.StartByPreemption(j)) continue;
    cycle.LeavePending(j);
  }
  // Stage 6b: what the evictions freed but their beneficiaries did not use.
  cycle.RetryAfterPreemption();

  // Stage 9: pending jobs of queues over their GPU-hour budget say so; decisions in canonical
  // order.
  entitlements.ExplainBudgets(decisions.pending);
  cycle.Finish();
  return decisions;
}

}  // namespace internal

absl::StatusOr<Decisions> Schedule(const Snapshot& snapshot, const Policy& policy) {
  // Stage 1: validate both inputs (the scale templates against the snapshot they would join).
  GPUPOOL_RETURN_IF_ERROR(ValidateSnapshot(snapshot));
  GPUPOOL_RETURN_IF_ERROR(ValidatePolicy(policy));
  GPUPOOL_RETURN_IF_ERROR(ValidateScaleTemplates(snapshot, policy));
  Decisions decisions = internal::RunCycle(snapshot, policy);
  // Stage 10: scale advice, from cycles simulated on copies of the snapshot.
  if (policy.scale) decisions.scale_advice = internal::AdviseScale(snapshot, policy, decisions);
  return decisions;
}

}  // namespace gpupool
