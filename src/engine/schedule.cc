// Schedule(): one cycle, stage by stage (DESIGN.md "The engine: one cycle"). Schedule() below is
// the map; each stage lives in its own file (docs/engine.md has the same table):
//
//   stage                                       files
//   1  validate snapshot and policy; index      validate.cc, validate_jobs.cc, validate_policy.cc,
//                                               snapshot_index.cc
//   1b node operations: health, maintenance     node_operations.cc, maintenance.cc, lost_work.cc
//      (cordon, drain, uncordon; jobs stopped)
//   2  working state, running work in place;    working_state.cc; spot reclaims: spot.cc,
//      spot nodes being reclaimed give back     ReclaimSpotNodes() here
//      their jobs
//   3  fair share: each queue's entitlement     entitlements.cc, fair_share.cc
//   4  order pending jobs                       order.cc
//   5  place each gang, all or nothing          place.cc; identical failures: equivalence.cc
//   6  preempt or reclaim for a job that did    preempt.cc, victim_rules.cc, victim_search.cc;
//      not place; retry after preemption        RetryAfterPreemption() here
//   6c keep headroom for urgent work            headroom.cc; KeepHeadroom() here
//   7  hold capacity for a starving job, and    reserve.cc; backfill into held capacity:
//      with backfill on for the first blocked   backfill.cc
//      jobs; backfill into held capacity
//   7b diagnostics into idle time               node_operations.cc
//   8  consolidate: move running jobs out of    consolidate.cc; Consolidate() here
//      the way of a gang fragmentation blocks
//   9  pending reasons, counterfactuals;        diagnose.cc, counterfactual.cc;
//      decisions in canonical order             Finish() here; the fingerprint: fingerprint.cc
//  10  scale advice (only with policy.scale)    scale_advice.cc, on whole cycles (RunCycle())
//
// A pass that preempts, migrates or resizes is followed by more passes on the state its decisions
// leave, until one changes nothing (settle.cc, RunCycle()): the cycle is a fixed point.
//
// Every stage step that
// changes the working state commits its own transaction (working_state.h): Placer::Start(),
// Reserver::Reserve(), Reserver::Backfill(), and StartByPreemption() here for the planner, whose
// TryPreempt() leaves its plan open for callers that simulate.
#include "gpupool/schedule.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "consolidate.h"
#include "cycle.h"
#include "entitlements.h"
#include "equivalence.h"
#include "fingerprint.h"
#include "fmt/format.h"
#include "gpupool/apply.h"
#include "headroom.h"
#include "internal/check.h"
#include "maintenance.h"
#include "node_operations.h"
#include "order.h"
#include "place.h"
#include "preempt.h"
#include "reserve.h"
#include "scale_advice.h"
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
        const internal::Entitlements& entitlements, const internal::WindowGate& windows,
        Decisions& decisions)
      : index_(index),
        policy_(policy),
        state_(state),
        decisions_(decisions),
        counters_(decisions.counters),
        placer_(index, state, policy, counters_),
        planner_(index, state, placer_, entitlements, policy, counters_),
        reserver_(index, state, placer_, policy),
        windows_(windows),
        failed_shapes_(index, policy.preemption.enabled || !policy.headroom.empty(),
                       windows.active(), index.any_spot(),
                       policy.preemption.enabled && policy.preemption.victim_remaining_percent > 0),
        headroom_(index, state, policy) {
    if (windows.active()) placer_.set_window_gate(&windows);
    if (!headroom_.empty()) {
      placer_.SetHeadroom(&headroom_);
      headroom_.SetHeld(&reserver_.held_gpu_milli());
    }
    if (policy.consolidation.enabled) {
      consolidator_.emplace(index, state, placer_, entitlements, policy, counters_);
    }
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
      if (consolidator_) consolidator_->NoteTaken(j);
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

  // A job of the same shape as one that failed gets that job's pending decision. With backfill
  // on it may still start in held capacity (its estimate is its own). It may get a reservation
  // as any job left pending may (stage 7: when it starves, or is among the first blocked jobs).
  bool AnsweredByEquivalent(int32_t j) {
    const std::optional<size_t> same = failed_shapes_.FindFailure(j);
    if (!same) return false;
    ++counters_.equivalence_hits;
    if (StartByBackfill(j)) return true;
    PendingDecision pending = decisions_.pending[*same];
    pending.job = index_.job(j).job->id;
    // The failed job's reason, with this job's own backfill clause (its estimate is its own).
    if (const size_t at = backfill_note_at_[*same]; at != std::string::npos) {
      pending.detail.resize(at);
    }
    const size_t note_at =
        CapacityReason(pending.reason) ? NoteBackfillRefusal(j, pending) : std::string::npos;
    MaybeReserve(j, pending);
    AddPending(j, std::move(pending), note_at);
    return true;
  }

  // Stage 7, backfill: a job that did not place may start in capacity held for reservations it
  // is expected to end before (policy.backfill).
  bool StartByBackfill(int32_t j) {
    if (!policy_.backfill.enabled) return false;
    auto placements = reserver_.Backfill(j);
    if (!placements) return false;
    AddStart(j, std::move(*placements), /*backfilled=*/true);
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
    const internal::Placer::LimitsFound own_try = placer_.limits_found();
    auto plan = planner_.TryPreempt(j);
    state_.Commit();
    if (!plan) {
      // Its reason is that of its own try, not of a plan's simulation (which may have evicted
      // work of its queue, and so passed its limits, and failed on room).
      placer_.set_limits_found(own_try);
      return false;
    }
    for (PreemptDecision& p : plan->preemptions) {
      preempt_jobs_.push_back(index_.FindJob(p.job));
      if (consolidator_) consolidator_->NoteTaken(preempt_jobs_.back());
      decisions_.preemptions.push_back(std::move(p));
    }
    for (ResizeDecision& r : plan->resizes) {
      resize_jobs_.push_back(index_.FindJob(r.job));
      if (consolidator_) consolidator_->NoteTaken(resize_jobs_.back());
      decisions_.resizes.push_back(std::move(r));
    }
    AddStart(j, std::move(plan->placements));
    // Capacity grew where the victims were: earlier failures no longer prove anything.
    failed_shapes_.Clear();
    return true;
  }

  // Stage 8 (policy.consolidation), once stages 5 to 7 are done, so that it sees the capacity
  // the cycle leaves: in job order, each job still pending (not for the budget, not holding a
  // reservation) is tried again. It starts if it now fits; else, blocked by fragmentation or
  // topology, it starts if running jobs move out of its way (consolidate.h). A pass that starts
  // anything is followed by another, so that the cycle ends where the next one would find nothing
  // more to start or move. A job consolidation was tried for and that stays pending ends its
  // detail with why nothing moved for it, as of the last pass.
  void Consolidate() {
    if (!consolidator_) return;
    std::vector<uint8_t> reserved(index_.job_count(), 0);
    for (int32_t j : reserve_jobs_) reserved[j] = 1;
    std::vector<std::string> refusal(index_.job_count());
    for (bool changed = true; changed;) {
      changed = false;
      for (std::string& r : refusal) r.clear();
      std::vector<int32_t> retry;
      std::vector<size_t> pending_at(index_.job_count(), SIZE_MAX);
      for (size_t i = 0; i < pending_jobs_.size(); ++i) {
        const int32_t j = pending_jobs_[i];
        const bool budget = decisions_.pending[i].reason == PendingReason::kBudgetExhausted;
        if (budget || reserved[j]) continue;
        pending_at[j] = i;
        retry.push_back(j);
      }
      internal::SortInJobOrder(index_, policy_, retry);
      std::vector<uint8_t> started(decisions_.pending.size(), 0);
      for (int32_t j : retry) {
        if (OverBudget()) break;
        if (!Start(j) && !StartByConsolidation(j)) {
          refusal[j] = consolidation_refusal_;
          continue;
        }
        started[pending_at[j]] = 1;
        changed = true;
      }
      DropPending(started);
    }
    for (size_t i = 0; i < pending_jobs_.size(); ++i) {
      decisions_.pending[i].detail += refusal[pending_jobs_[i]];
    }
  }

  // Stage 8 for job j, which has just failed to start.
  // If it stays pending, consolidation_refusal_ says why nothing moved ("" if not tried).
  bool StartByConsolidation(int32_t j) {
    consolidation_refusal_.clear();
    const PendingDecision why = placer_.Diagnose(j);
    if (why.reason != PendingReason::kFragmentation && why.reason != PendingReason::kTopology) {
      return false;
    }
    auto plan = consolidator_->TryConsolidate(j);
    state_.Commit();
    if (!plan) {
      consolidation_refusal_ = consolidator_->refusal();
      return false;
    }
    for (MigrateDecision& m : plan->migrations) {
      migrate_jobs_.push_back(index_.FindJob(m.job));
      planner_.NoteMoved(migrate_jobs_.back());
      reserver_.NoteStart(migrate_jobs_.back(), m.to);
      decisions_.migrations.push_back(std::move(m));
    }
    AddStart(j, std::move(plan->placements));
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
    if (ExplainMaintenance(j, pending)) {
      AddPending(j, std::move(pending));
      return;
    }
    size_t note_at = std::string::npos;
    if (CapacityReason(pending.reason)) {
      planner_.ExplainCounterfactual(j, pending);
      note_at = NoteBackfillRefusal(j, pending);
      MaybeReserve(j, pending);
    }
    AddPending(j, std::move(pending), note_at);
  }

  // Stage 7 for job j, left pending with `pending` (its reason): a reservation if it starves,
  // with backfill on if it is one of the cycle's first backfill.reservations jobs left pending
  // for lack of room, and if it is one of the first preemption.drain_blocked_jobs of them. It
  // drains its nodes in the last case, and when it starves with preemption.starving_drain. With
  // backfill.overrun "preempt", the reservation may evict overrun backfilled jobs from its
  // nodes.
  void MaybeReserve(int32_t j, const PendingDecision& pending) {
    if (pending.reason != PendingReason::kInsufficientCapacity &&
        pending.reason != PendingReason::kFragmentation &&
        pending.reason != PendingReason::kTopology) {
      return;
    }
    const bool starving = internal::Starving(*index_.job(j).job, policy_, index_.snapshot().now);
    bool reserve = starving;
    bool drains = starving && policy_.preemption.starving_drain;
    if (policy_.backfill.enabled || policy_.preemption.drain_blocked_jobs > 0) {
      if (policy_.backfill.enabled && blocked_ < policy_.backfill.reservations) reserve = true;
      if (blocked_ < policy_.preemption.drain_blocked_jobs) reserve = drains = true;
      ++blocked_;
    }
    if (!reserve) return;
    // preemption.starving_drain, drain_blocked_jobs: the reservation evicts the jobs in its way
    // that may go for the job now.
    std::vector<int32_t> drained;
    auto from = [&](int32_t v) {
      return drains ? planner_.DrainableFrom(j, v) : std::numeric_limits<int64_t>::max();
    };
    auto take = [&](int32_t v) {
      if (!drains || !planner_.MayDrain(j, v, drained)) return false;
      drained.push_back(v);
      planner_.rules().NoteTaken(v);
      if (consolidator_) consolidator_->NoteTaken(v);
      return true;
    };
    auto may = [&](int32_t v, const std::vector<int32_t>& planned) {
      return drains && planner_.MayDrain(j, v, planned);
    };
    auto reservation = reserver_.Reserve(
        j, internal::Reserver::Drain{from, take, may, drains,
                                     starving && policy_.preemption.starving_drain});
    if (!reservation) return;
    decisions_.reservations.push_back(std::move(reservation->decision));
    reserve_jobs_.push_back(j);
    const Job& job = *index_.job(j).job;
    // One Preempt decision for running job v, evicted for j's reservation.
    auto evict_for_reservation = [&](int32_t v, std::string reason) {
      PreemptDecision preempt;
      preempt.job = index_.job(v).job->id;
      preempt.for_job = job.id;
      preempt.reason = std::move(reason);
      preempt.lost_milli_gpu_seconds = planner_.VictimCost(v);
      ++counters_.preemptions;
      preempt_jobs_.push_back(v);
      decisions_.preemptions.push_back(std::move(preempt));
    };
    for (int32_t v : reservation->evicted) {
      const Job& victim = *index_.job(v).job;
      evict_for_reservation(
          v, fmt::format("backfilled at {} with runtime_estimate_s {}, it ran past its estimate "
                         "plus margin_s {} (backfill.overrun: preempt); job {}'s reservation "
                         "needs its node",
                         victim.start_time.value_or(0), victim.runtime_estimate_s.value_or(0),
                         policy_.backfill.margin_s, job.id));
    }
    const std::string why =
        starving && policy_.preemption.starving_drain
            ? fmt::format(
                  "job {} has waited {} s, past starvation_bound_s {}, and its reservation "
                  "is to use this job's GPUs (preemption.starving_drain)",
                  job.id, index_.snapshot().now - job.pending_since.value_or(job.submit_time),
                  policy_.starvation_bound_s)
            : fmt::format(
                  "job {} is among the cycle's first {} jobs left pending for lack of room, "
                  "and its reservation is to use this job's GPUs "
                  "(preemption.drain_blocked_jobs)",
                  job.id, policy_.preemption.drain_blocked_jobs);
    for (int32_t v : reservation->drained) evict_for_reservation(v, why);
    // Capacity grew where the victims were: earlier failures no longer prove anything.
    if (!reservation->evicted.empty() || !reservation->drained.empty()) failed_shapes_.Clear();
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
          if (consolidator_) consolidator_->NoteTaken(v);
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
      internal::Headroom::Describe(rule, policy_.preemption.enabled, report);
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
      if (!Start(j) && !StartByBackfill(j)) {
        // Room freed, but a headroom rule keeps the job from it: that is its reason now.
        if (headroom_block_ && pending_at[j] != SIZE_MAX) {
          decisions_.pending[pending_at[j]] = headroom_.Pending(j, *headroom_block_);
          backfill_note_at_[pending_at[j]] = std::string::npos;
        }
        continue;
      }
      if (pending_at[j] != SIZE_MAX) started_late[pending_at[j]] = 1;
    }
    DropPending(started_late);
  }

 public:
  // Stage 1b's stops, as Preempt decisions of this cycle.
  void AddStops(std::vector<PreemptDecision> stops) {
    for (PreemptDecision& stop : stops) {
      ++counters_.preemptions;
      preempt_jobs_.push_back(index_.FindJob(stop.job));
      decisions_.preemptions.push_back(std::move(stop));
    }
  }

  // Stage 9, last step: every decision list in job-id order.
  void Finish() {
    SortByJob(decisions_.starts, start_jobs_);
    SortByJob(decisions_.pending, pending_jobs_);
    SortByJob(decisions_.preemptions, preempt_jobs_);
    SortByJob(decisions_.reservations, reserve_jobs_);
    SortByJob(decisions_.resizes, resize_jobs_);
    SortByJob(decisions_.migrations, migrate_jobs_);
  }

 private:
  // Is policy.budgets.max_candidates spent? (Then counters.budget_exhausted says so.)
  bool OverBudget() {
    const int64_t budget = policy_.budgets.max_candidates;
    if (budget == 0 || counters_.candidates_evaluated < budget) return false;
    counters_.budget_exhausted = true;
    return true;
  }

  // Drops the pending decisions i with started[i] set (their jobs started late in the cycle).
  void DropPending(const std::vector<uint8_t>& started) {
    std::vector<PendingDecision> still_pending;
    std::vector<int32_t> still_pending_jobs;
    std::vector<size_t> still_note_at;
    for (size_t i = 0; i < decisions_.pending.size(); ++i) {
      if (started[i]) continue;
      still_pending.push_back(std::move(decisions_.pending[i]));
      still_pending_jobs.push_back(pending_jobs_[i]);
      still_note_at.push_back(backfill_note_at_[i]);
    }
    decisions_.pending = std::move(still_pending);
    pending_jobs_ = std::move(still_pending_jobs);
    backfill_note_at_ = std::move(still_note_at);
  }

  void AddStart(int32_t j, std::vector<ReplicaPlacement> placements, bool backfilled = false) {
    ++counters_.jobs_started;
    reserver_.NoteStart(j, placements);
    if (consolidator_) consolidator_->NoteStart(j, placements);
    decisions_.starts.push_back(
        StartDecision{index_.job(j).job->id, std::move(placements), backfilled});
    start_jobs_.push_back(j);
  }

  // A job that windows keep off nodes where it would otherwise start now is pending for
  // maintenance: the placement is tried again with the windows ignored, then rolled back. The
  // detail names the window of the first node that placement used.
  bool ExplainMaintenance(int32_t j, PendingDecision& pending) {
    if (!windows_.active() || !windows_.BlocksAnywhere(j)) return false;
    const internal::WorkingState::Mark mark = state_.Checkpoint();
    const_cast<internal::WindowGate&>(windows_).set_ignoring(true);
    auto placements = placer_.TryStart(j);
    const_cast<internal::WindowGate&>(windows_).set_ignoring(false);
    state_.Rollback(mark);
    state_.Commit();
    if (!placements) return false;
    const Job& job = *index_.job(j).job;
    const int64_t now = index_.snapshot().now;
    for (const ReplicaPlacement& p : *placements) {
      const int32_t n = index_.FindNode(p.node);
      const MaintenanceWindow* window = windows_.Blocking(j, n);
      if (window == nullptr) continue;
      PendingDecision out;
      out.job = job.id;
      out.reason = PendingReason::kMaintenance;
      const std::optional<int64_t> remaining = internal::RemainingEstimate(job);
      out.detail = remaining
                       ? fmt::format(
                             "node {} could take the job now, but its maintenance window from {} "
                             "to {} starts before the job's runtime estimate of {} s would end "
                             "(at {}); no node without a window in the way can take it",
                             p.node, window->start, window->end, *remaining, now + *remaining)
                       : fmt::format(
                             "node {} could take the job now, but it has a maintenance window "
                             "from {} to {} and the job has no runtime estimate; no node without a "
                             "window in the way can take it",
                             p.node, window->start, window->end);
      pending = std::move(out);
      return true;
    }
    return false;
  }

  // `note_at`: where its detail's backfill clause begins (NoteBackfillRefusal()), or npos.
  void AddPending(int32_t j, PendingDecision&& pending, size_t note_at = std::string::npos) {
    decisions_.pending.push_back(std::move(pending));
    pending_jobs_.push_back(j);
    backfill_note_at_.push_back(note_at);
  }

  static bool CapacityReason(PendingReason reason) {
    return reason == PendingReason::kInsufficientCapacity ||
           reason == PendingReason::kFragmentation || reason == PendingReason::kTopology;
  }

  // With backfill on, a job left pending for lack of room while reservations hold capacity gets
  // a clause saying why it did not start there (Reserver::BackfillRefusal()). Returns where it
  // begins in the detail (npos: none), for AddPending() to record, so that an identical job's
  // copy can carry its own instead.
  size_t NoteBackfillRefusal(int32_t j, PendingDecision& pending) {
    const std::string clause = reserver_.BackfillRefusal(j);
    if (clause.empty()) return std::string::npos;
    const size_t at = pending.detail.size();
    pending.detail += clause;
    return at;
  }

  const internal::SnapshotIndex& index_;
  const Policy& policy_;
  internal::WorkingState& state_;
  Decisions& decisions_;
  Counters& counters_;
  internal::Placer placer_;
  internal::PreemptionPlanner planner_;
  internal::Reserver reserver_;
  // Per pending decision (as decisions_.pending), where its backfill clause begins in its
  // detail, or npos.
  std::vector<size_t> backfill_note_at_;
  const internal::WindowGate& windows_;
  internal::EquivalenceCache failed_shapes_;
  internal::Headroom headroom_;
  // The headroom rule that refused the job Start() last failed, if one did.
  std::optional<internal::HeadroomBlock> headroom_block_;
  // Only with policy.consolidation.enabled.
  std::optional<internal::Consolidator> consolidator_;
  std::string consolidation_refusal_;
  std::vector<int32_t> start_jobs_, pending_jobs_, preempt_jobs_, reserve_jobs_, resize_jobs_;
  // Jobs left pending for lack of room so far (counted with backfill on only).
  int64_t blocked_ = 0;
  std::vector<int32_t> migrate_jobs_;
};

}  // namespace

namespace internal {

Decisions RunCyclePass(const Snapshot& snapshot, const Policy& policy,
                       const std::vector<std::pair<std::string, int64_t>>& tentative,
                       bool fingerprint, const std::vector<std::string>& restored,
                       const std::vector<std::string>& pinned) {
  SnapshotIndex input_index(snapshot);
  input_index.MarkTentative(tentative);
  input_index.MarkRestored(restored, pinned);

  Decisions decisions;
  decisions.policy_name = policy.name;
  decisions.policy_version = policy.version;
  decisions.scorer = policy.scorer ? std::string(policy.scorer->Name())
                                   : std::string(PlacementStrategyName(policy.placement));
  if (fingerprint) decisions.input_fingerprint = internal::Fingerprint(input_index, policy);

  // Stage 1b: health and maintenance close nodes and stop jobs; the rest of the cycle schedules
  // the snapshot as it is once the host has done that (node_operations.h).
  internal::NodeOperations operations = internal::PlanNodeOperations(input_index, policy);
  std::optional<Snapshot> operated;
  std::optional<internal::SnapshotIndex> operated_index;
  if (!operations.empty()) {
    Decisions applied;
    applied.preemptions = operations.stops;
    applied.node_actions = operations.node_actions;
    operated = snapshot;
    GPUPOOL_CHECK(ApplyDecisions(applied, *operated).ok());
    operated_index.emplace(*operated);
    operated_index->MarkTentative(tentative);
    operated_index->MarkRestored(restored, pinned);
  }
  const internal::SnapshotIndex& index = operated_index ? *operated_index : input_index;
  const internal::WindowGate windows(index, policy);

  // Stage 2: working state, with running work in place.
  internal::WorkingState state(index, policy);
  for (int32_t j = 0; j < index.job_count(); ++j) {
    if (index.job(j).job->state == JobState::kRunning) state.AddRunningJob(j);
  }

  // Stage 3: fair share, from the state at the start of the cycle.
  const internal::Entitlements entitlements(index, state, policy);
  decisions.queue_shares = entitlements.Report();

  // Stage 4: pending jobs in order; stages 5, 7 (backfill), 6, 9 and 7 (reservation) for each.
  Cycle cycle(index, policy, state, entitlements, windows, decisions);
  // Stage 2, last step: spot nodes being reclaimed give their jobs back.
  cycle.ReclaimSpotNodes();
  internal::JobSequence sequence(index, policy, state, entitlements);
  for (int32_t j = sequence.Next(); j != internal::kNone; j = sequence.Next()) {
    ++decisions.counters.jobs_considered;
    if (cycle.BudgetSpent(j)) continue;
    if (cycle.AnsweredByEquivalent(j)) continue;
    if (cycle.Start(j)) continue;
    if (cycle.StartByBackfill(j)) continue;
    if (cycle.StartByPreemption(j)) continue;
    cycle.LeavePending(j);
  }
  // Stage 6b: what the evictions freed but their beneficiaries did not use.
  cycle.RetryAfterPreemption();
  // Stage 6c: headroom that urgent work took is restored, or reported short.
  cycle.KeepHeadroom();
  // Stage 8: moves for gangs that fragmentation blocks.
  cycle.Consolidate();
  cycle.AddStops(std::move(operations.stops));

  // Stage 7b: diagnostics into idle time. One action per node: a diagnostic replaces the
  // uncordon of a node that stage 1b opened and nothing started on.
  std::vector<NodeActionDecision> diagnostics =
      internal::PlanDiagnostics(index, state, policy, decisions.starts);
  std::vector<NodeActionDecision>& actions = operations.node_actions;
  for (NodeActionDecision& diagnose : diagnostics) {
    std::erase_if(actions, [&](const NodeActionDecision& a) { return a.node == diagnose.node; });
    actions.push_back(std::move(diagnose));
  }
  std::sort(
      actions.begin(), actions.end(),
      [](const NodeActionDecision& a, const NodeActionDecision& b) { return a.node < b.node; });
  decisions.node_actions = std::move(actions);

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
  GPUPOOL_RETURN_IF_ERROR(internal::Headroom::CheckModels(snapshot, policy));
  Decisions decisions = internal::RunCycle(snapshot, policy);
  // Stage 10: scale advice, from cycles simulated on copies of the snapshot.
  if (policy.scale) decisions.scale_advice = internal::AdviseScale(snapshot, policy, decisions);
  return decisions;
}

}  // namespace gpupool
