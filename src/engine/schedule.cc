// Schedule(): one cycle, stage by stage (DESIGN.md "The engine: one cycle"). Schedule() below is
// the map; each stage lives in its own file (docs/engine.md has the same table):
//
//   stage                                       files
//   1  validate snapshot and policy; index      validate.cc, validate_jobs.cc, validate_policy.cc,
//                                               snapshot_index.cc
//   2  working state, running work in place     working_state.cc; spot reclaims: spot.cc,
//                                               ReclaimSpotNodes() here
//   3  fair share: each queue's entitlement     entitlements.cc, fair_share.cc
//   4  order pending jobs                       order.cc
//   5  place each gang, all or nothing          place.cc; identical failures: equivalence.cc
//   6  preempt or reclaim for a job that did    preempt.cc, victim_rules.cc, victim_search.cc;
//      not place; retry after preemption        RetryAfterPreemption() here
//   6c keep headroom for urgent work            headroom.cc; KeepHeadroom() here
//   7  hold capacity for a starving job         reserve.cc
//   8  consolidate                              (not yet)
//   9  pending reasons, counterfactuals;        diagnose.cc, counterfactual.cc;
//      decisions in canonical order             Finish() here; the fingerprint: fingerprint.cc
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

#include "entitlements.h"
#include "equivalence.h"
#include "fingerprint.h"
#include "fmt/format.h"
#include "headroom.h"
#include "internal/check.h"
#include "order.h"
#include "place.h"
#include "preempt.h"
#include "reserve.h"
#include "snapshot_index.h"
#include "spot.h"
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
        failed_shapes_(index, policy.preemption.enabled || !policy.headroom.empty(),
                       index.any_spot()),
        headroom_(index, state, policy) {
    if (!headroom_.empty()) placer_.SetHeadroom(&headroom_);
  }

  // Stage 2, for spot nodes being reclaimed (spot.h): every running job with a replica on one is
  // stopped (a Preempt without for_job) and its capacity given back; the retry pass after
  // preemption starts it elsewhere if it fits.
  void ReclaimSpotNodes() {
    if (!index_.any_reclaiming()) return;
    for (int32_t j = 0; j < index_.job_count(); ++j) {
      int32_t node = internal::kNone;
      for (const internal::RunningPlacement& p : index_.job(j).placements) {
        if (index_.node(p.node).reclaiming && (node == internal::kNone || p.node < node)) {
          node = p.node;
        }
      }
      if (node == internal::kNone) continue;
      decisions_.preemptions.push_back(
          internal::SpotReclaim(index_, j, node, state_.running_milli(j)));
      preempt_jobs_.push_back(j);
      ++counters_.preemptions;
      state_.ReleaseRunningJob(j);
      planner_.rules().NoteTaken(j);
    }
    state_.Commit();
  }

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
    if (!placements) {
      headroom_block_ = placer_.last_headroom_block();
      return false;
    }
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
    if (headroom_block_) {
      // It would have started but for a headroom rule: that is its reason.
      AddPending(j, headroom_.Pending(j, *headroom_block_));
      return;
    }
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
  void RetryAfterPreemption() { Retry(preempt_jobs_); }

  // Stage 6c: headroom rules (headroom.h). A rule that urgent work left short is restored, when
  // it says `restore` and preemption is on, by evicting the cheapest allowed set of running jobs
  // below its priority; the victims and the pending jobs then get a retry pass, which may start
  // urgent work in the room again, so this repeats until a round evicts nothing (each round
  // takes jobs no earlier round took, so it ends). Every rule gets a HeadroomReport.
  void KeepHeadroom() {
    if (headroom_.empty()) return;
    const auto& rules = headroom_.rules();
    const int32_t count = static_cast<int32_t>(rules.size());
    std::vector<HeadroomReport> reports(count);
    std::vector<std::vector<int32_t>> preempted(count);
    for (int32_t r = 0; r < count; ++r) {
      const HeadroomRule& rule = *rules[r].rule;
      reports[r].gpu_model = rule.gpu_model;
      reports[r].shape = rule.shape;
      reports[r].min_priority = rule.min_priority;
      reports[r].required = rule.count;
      reports[r].free_before_restore = headroom_.Free(r);
    }
    internal::VictimRules& victim_rules = planner_.rules();
    while (policy_.preemption.enabled) {
      std::vector<int32_t> evicted;
      for (int32_t r = 0; r < count; ++r) {
        const HeadroomRule& rule = *rules[r].rule;
        const int64_t free = headroom_.Free(r);
        if (!rule.restore || free >= rule.count) continue;
        const std::vector<int32_t> victims = internal::FindRestoration(
            index_, state_, headroom_, r, victim_rules, policy_, counters_);
        for (int32_t v : victims) {
          const Job& victim = *index_.job(v).job;
          PreemptDecision preempt;
          preempt.job = victim.id;
          preempt.reason = fmt::format(
              "headroom: urgent work left {} free of the {} kept free for priority >= {}; "
              "evicting jobs below priority {} restores them",
              free, internal::Headroom::Units(rule.count, rule), rule.min_priority,
              rule.min_priority);
          preempt.lost_milli_gpu_seconds = victim_rules.VictimCost(v);
          decisions_.preemptions.push_back(std::move(preempt));
          preempt_jobs_.push_back(v);
          ++counters_.preemptions;
          state_.ReleaseRunningJob(v);
          victim_rules.NoteTaken(v);
          preempted[r].push_back(v);
          evicted.push_back(v);
        }
        state_.Commit();
      }
      if (evicted.empty()) break;
      Retry(std::move(evicted));
    }
    for (int32_t r = 0; r < count; ++r) {
      const HeadroomRule& rule = *rules[r].rule;
      HeadroomReport& report = reports[r];
      report.free = headroom_.Free(r);
      report.shortfall = std::max<int64_t>(0, rule.count - report.free);
      std::sort(preempted[r].begin(), preempted[r].end());
      for (int32_t v : preempted[r]) report.preempted.push_back(index_.job(v).job->id);
      const std::string kept =
          fmt::format("{} kept free for priority >= {}",
                      internal::Headroom::Units(rule.count, rule), rule.min_priority);
      if (!report.preempted.empty()) {
        report.detail = fmt::format(
            "urgent work left {} free of the {}; evicting {} job{} below priority {} made {} free",
            report.free_before_restore, kept, report.preempted.size(),
            report.preempted.size() == 1 ? "" : "s", rule.min_priority, report.free);
      } else {
        report.detail = fmt::format("{} free of the {}", report.free, kept);
      }
      if (report.shortfall > 0) {
        report.detail += fmt::format(
            "; {} short: {}", report.shortfall,
            !rule.restore ? std::string("restore is off for this rule")
            : !policy_.preemption.enabled
                ? std::string("preemption is off (preemption.enabled)")
                : fmt::format("no set of running jobs below priority {} that the preemption "
                              "rules let go frees that much",
                              rule.min_priority));
      }
    }
    decisions_.headroom = std::move(reports);
  }

 private:
  // One pass without preemption over `victims` and the pending jobs, in job order (see
  // RetryAfterPreemption()).
  void Retry(std::vector<int32_t> victims) {
    if (victims.empty()) return;
    std::vector<int32_t> retry = std::move(victims);
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
      if (!Start(j)) {
        // Room freed, but a headroom rule keeps the job from it: that is its reason now.
        if (headroom_block_ && pending_at[j] != SIZE_MAX) {
          decisions_.pending[pending_at[j]] = headroom_.Pending(j, *headroom_block_);
        }
        continue;
      }
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

 public:
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
  internal::Headroom headroom_;
  // The headroom rule that refused the job Start() last failed, if one did.
  std::optional<internal::HeadroomBlock> headroom_block_;
  std::vector<int32_t> start_jobs_, pending_jobs_, preempt_jobs_, reserve_jobs_, resize_jobs_;
};

}  // namespace

absl::StatusOr<Decisions> Schedule(const Snapshot& snapshot, const Policy& policy) {
  // Stage 1: validate both inputs, then index them.
  GPUPOOL_RETURN_IF_ERROR(ValidateSnapshot(snapshot));
  GPUPOOL_RETURN_IF_ERROR(ValidatePolicy(policy));
  const internal::SnapshotIndex index(snapshot);
  GPUPOOL_RETURN_IF_ERROR(internal::Headroom::CheckModels(index, policy));

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
  // Stage 2, last step: spot nodes being reclaimed give their jobs back.
  cycle.ReclaimSpotNodes();
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
  // Stage 6c: headroom that urgent work took is restored, or reported short.
  cycle.KeepHeadroom();

  // Stage 9: pending jobs of queues over their GPU-hour budget say so; decisions in canonical
  // order.
  entitlements.ExplainBudgets(decisions.pending);
  cycle.Finish();
  return decisions;
}

}  // namespace gpupool
