// Schedule(): one cycle, stage by stage (DESIGN.md "The engine: one cycle").
//
// This version runs stages 1 to 7 and 9: validate and index, build the working state from
// running jobs, compute fair share (reported per queue; it also bounds reclaim), order pending
// jobs, place gangs, optionally evict work for a job that does not place (policy.preemption:
// lower priority in its queue, or other queues above their entitlement), hold capacity for jobs
// past the starvation bound that still cannot start (reserve.h), and give every job left pending
// its reason. Backfill into held capacity and consolidation come with later issues.
//
// Jobs identical to one that already failed are answered from an EquivalenceCache in O(1)
// (equivalence.h).
#include "gpupool/schedule.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "entitlements.h"
#include "equivalence.h"
#include "fingerprint.h"
#include "internal/check.h"
#include "order.h"
#include "place.h"
#include "preempt.h"
#include "reserve.h"
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

}  // namespace

absl::StatusOr<Decisions> Schedule(const Snapshot& snapshot, const Policy& policy) {
  GPUPOOL_RETURN_IF_ERROR(ValidateSnapshot(snapshot));
  GPUPOOL_RETURN_IF_ERROR(ValidatePolicy(policy));

  // Stage 1: index.
  const internal::SnapshotIndex index(snapshot);

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

  // Stage 4: order. Stage 5: place.
  Counters& counters = decisions.counters;
  internal::Placer placer(index, state, policy, counters);
  // Stage 6 runs inside the loop: a job that does not place may evict lower-priority work.
  const bool preemption = policy.preemption.enabled;
  internal::PreemptionPlanner planner(index, state, placer, entitlements, policy, counters);
  internal::EquivalenceCache failed_shapes(index, preemption);
  internal::Reserver reserver(index, state, placer);
  std::vector<int32_t> start_jobs, pending_jobs, preempt_jobs, reserve_jobs, resize_jobs;
  const int64_t now = snapshot.now;
  const int64_t budget = policy.budgets.max_candidates;
  internal::JobSequence sequence(index, policy, state, entitlements);
  for (int32_t j = sequence.Next(); j != internal::kNone; j = sequence.Next()) {
    const internal::JobInfo& info = index.job(j);
    ++counters.jobs_considered;
    if (budget > 0 && counters.candidates_evaluated >= budget) {
      counters.budget_exhausted = true;
      PendingDecision pending;
      pending.job = info.job->id;
      pending.reason = PendingReason::kBudgetExhausted;
      pending.detail = "the cycle's candidate budget ran out before this job was tried";
      decisions.pending.push_back(std::move(pending));
      pending_jobs.push_back(j);
      continue;
    }
    if (std::optional<size_t> same = failed_shapes.FindFailure(j)) {
      ++counters.equivalence_hits;
      PendingDecision pending = decisions.pending[*same];
      pending.job = info.job->id;
      decisions.pending.push_back(std::move(pending));
      pending_jobs.push_back(j);
      continue;
    }
    auto placements = placer.TryStart(j);
    state.Commit();
    if (placements) {
      ++counters.jobs_started;
      reserver.NoteStart(j, *placements);
      decisions.starts.push_back(StartDecision{info.job->id, std::move(*placements)});
      start_jobs.push_back(j);
      continue;
    }
    if (preemption) {
      auto plan = planner.TryPreempt(j);
      state.Commit();
      if (plan) {
        ++counters.jobs_started;
        for (PreemptDecision& p : plan->preemptions) {
          preempt_jobs.push_back(index.FindJob(p.job));
          decisions.preemptions.push_back(std::move(p));
        }
        for (ResizeDecision& r : plan->resizes) {
          resize_jobs.push_back(index.FindJob(r.job));
          decisions.resizes.push_back(std::move(r));
        }
        reserver.NoteStart(j, plan->placements);
        decisions.starts.push_back(StartDecision{info.job->id, std::move(plan->placements)});
        start_jobs.push_back(j);
        // Capacity grew where the victims were: earlier failures no longer prove anything.
        failed_shapes.Clear();
        continue;
      }
    }
    // Stage 9: the reason, computed once per shape.
    failed_shapes.RecordFailure(j, decisions.pending.size());
    PendingDecision pending = placer.Diagnose(j);
    if (pending.reason == PendingReason::kInsufficientCapacity ||
        pending.reason == PendingReason::kFragmentation ||
        pending.reason == PendingReason::kTopology) {
      planner.ExplainCounterfactual(j, pending);
      state.Commit();
      // Stage 7: a job past the starvation bound gets capacity held where it can start soonest.
      if (internal::Starving(*info.job, policy, now)) {
        if (auto reserve = reserver.Reserve(j)) {
          decisions.reservations.push_back(std::move(*reserve));
          reserve_jobs.push_back(j);
        }
        state.Commit();
      }
    }
    decisions.pending.push_back(std::move(pending));
    pending_jobs.push_back(j);
  }

  // Stage 6b: after evictions, capacity the beneficiaries did not use may fit jobs that failed
  // before, and the victims themselves may fit elsewhere. One more pass, in job order and without
  // preemption, places what now fits, so that applying the decisions leaves nothing startable.
  // A victim placed here gets a Start too: the host evicts it, then restarts it there.
  if (!preempt_jobs.empty()) {
    std::vector<int32_t> retry = preempt_jobs;
    std::vector<size_t> pending_at(index.job_count(), SIZE_MAX);
    for (size_t i = 0; i < pending_jobs.size(); ++i) {
      if (decisions.pending[i].reason == PendingReason::kBudgetExhausted) continue;
      pending_at[pending_jobs[i]] = i;
      retry.push_back(pending_jobs[i]);
    }
    internal::SortInJobOrder(index, policy, retry);
    std::vector<uint8_t> started_late(decisions.pending.size(), 0);
    for (int32_t j : retry) {
      if (budget > 0 && counters.candidates_evaluated >= budget) {
        counters.budget_exhausted = true;
        break;
      }
      auto placements = placer.TryStart(j);
      state.Commit();
      if (!placements) continue;
      ++counters.jobs_started;
      reserver.NoteStart(j, *placements);
      decisions.starts.push_back(StartDecision{index.job(j).job->id, std::move(*placements)});
      start_jobs.push_back(j);
      if (pending_at[j] != SIZE_MAX) started_late[pending_at[j]] = 1;
    }
    std::vector<PendingDecision> still_pending;
    std::vector<int32_t> still_pending_jobs;
    for (size_t i = 0; i < decisions.pending.size(); ++i) {
      if (started_late[i]) continue;
      still_pending.push_back(std::move(decisions.pending[i]));
      still_pending_jobs.push_back(pending_jobs[i]);
    }
    decisions.pending = std::move(still_pending);
    pending_jobs = std::move(still_pending_jobs);
  }

  SortByJob(decisions.starts, start_jobs);
  SortByJob(decisions.pending, pending_jobs);
  SortByJob(decisions.preemptions, preempt_jobs);
  SortByJob(decisions.reservations, reserve_jobs);
  SortByJob(decisions.resizes, resize_jobs);
  return decisions;
}

}  // namespace gpupool
