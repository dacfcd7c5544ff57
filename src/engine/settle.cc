// Settling a cycle (docs/engine.md, "Fixed point"): one pass of the stages can leave work for the
// next cycle when it evicts jobs. A victim is not re-queued ahead of a lower-priority job that
// starts later in the same pass, and a job tried before an eviction is not tried again with the
// room the eviction freed. The next cycle would then start or preempt more. So when a pass
// preempts, migrates or resizes, its decisions are applied to a copy of the snapshot and the
// stages run again on the result, until a pass changes nothing (the same with backfill on, where
// a reservation made mid-pass can move once the pass's starts run); the cycle's decisions are then
// the difference between the snapshot and that settled state:
//   - a job pending in the snapshot and running in the settled state starts where it runs there;
//     a job that an earlier pass started and a later one evicted again never started (its start
//     is revoked, and nothing is preempted for it);
//   - a job running in the snapshot and pending in the settled state is preempted, with the
//     reason and lost work of the pass that first evicted it; if the job it was evicted for was
//     started by a pass and undone by a later one, for_job names the job that finally took the
//     room (NameBeneficiaries(); the same for an elastic group shrunk for such a job);
//   - a job evicted for nothing (for a reservation that the settled pass no longer holds on any
//     node it ran on, or for a start that neither happens nor, down the chain of undone starts,
//     went to a job that starts) is put back where it ran if it fits there, and the passes go
//     on (KeepEvictedForNothing()); a later pass may evict it again for a job that needs it, but
//     once put back twice it stays;
//   - a job running in both at different places is preempted and started again (Preempt then
//     Start, as stage 6b does for a victim it re-places), or migrated, or resized; running in
//     both at the same place, it is left alone, whatever the passes did in between (also when
//     only the first pass changed anything: a drained job re-placed on its own GPUs; and when a
//     pass re-placed it on its own GPUs with its replicas swapped, if its nodes allow its old
//     arrangement: KeepPermutedInPlace());
//   - pending reasons and reservations are those of the settled pass (the state the host will be
//     in): pending reasons for the jobs that were pending in the snapshot and for the jobs a
//     rule stops (a Preempt without for_job), reservations also for the jobs the cycle evicts;
//     queue shares, node actions and the
//     fingerprint are the first pass's (the snapshot's); headroom reports say what the settled
//     pass finds free, and whom any pass evicted for the rule; counters add up the passes' work,
//     and count the decisions that remain.
// A job that a pass evicted and the same or a later pass put back where it ran stays there for
// the rest of the cycle (SnapshotIndex::restored): evicting it again would only go round in a
// loop; the next pass sees it running as the snapshot had it, not as a start of the cycle. Only a
// job of its queue that outranks it, or one of another queue that reclaims it, may still evict or
// drain it, once (VictimRules::MayEvictRestored).
// The passes share the policy's budgets (candidates, preemption plans, consolidation plans; each
// pass explains its pending jobs with the whole counterfactual budget). At most kMaxPasses passes
// run (a cycle cut there is not settled; the property tests find none).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "cycle.h"
#include "fmt/format.h"
#include "gpupool/apply.h"
#include "headroom.h"
#include "internal/check.h"
#include "order.h"
#include "settle_compose.h"
#include "snapshot_index.h"

namespace gpupool::internal {
namespace {

bool ChangesSomething(const Decisions& d) {
  return !d.starts.empty() || !d.preemptions.empty() || !d.migrations.empty() || !d.resizes.empty();
}

void AddWork(Counters& total, const Counters& pass) {
  total.jobs_considered += pass.jobs_considered;
  total.candidates_evaluated += pass.candidates_evaluated;
  total.transactions_rolled_back += pass.transactions_rolled_back;
  total.equivalence_hits += pass.equivalence_hits;
  total.preemption_plans += pass.preemption_plans;
  total.counterfactual_plans += pass.counterfactual_plans;
  total.consolidation_plans += pass.consolidation_plans;
  total.budget_exhausted = total.budget_exhausted || pass.budget_exhausted;
}

// The last pass's pending reasons (`pending`), for the jobs pending in `snapshot` that do not
// start and the jobs a rule stops (a job the cycle evicts for another gets its Preempt, not a
// pending reason), and its reservations
// (`reservations`), for every job that waits once the cycle is carried out: those, and the jobs
// the cycle evicts and does not start again.
void TakeWaitingFrom(std::vector<PendingDecision> pending,
                     std::vector<ReserveDecision> reservations, const Snapshot& snapshot,
                     Decisions& out) {
  // Membership only: nothing iterates the set.
  absl::flat_hash_set<std::string_view> waiting;
  for (const Job& job : snapshot.jobs) {
    if (job.state == JobState::kPending) waiting.insert(job.id);
  }
  // A job a rule stops (a Preempt without for_job: health, maintenance, a spot reclaim, headroom)
  // is pending again within the cycle, and is explained as any pending job is.
  for (const PreemptDecision& p : out.preemptions) {
    if (p.for_job.empty()) waiting.insert(p.job);
  }
  for (const StartDecision& s : out.starts) waiting.erase(s.job);
  out.pending.clear();
  for (PendingDecision& p : pending) {
    if (waiting.contains(p.job)) out.pending.push_back(std::move(p));
  }
  // A job the cycle evicts and does not start again waits too, and may hold a reservation (one
  // a later pass drains for).
  for (const PreemptDecision& p : out.preemptions) waiting.insert(p.job);
  for (const StartDecision& s : out.starts) waiting.erase(s.job);
  out.reservations.clear();
  for (ReserveDecision& r : reservations) {
    if (waiting.contains(r.job)) out.reservations.push_back(std::move(r));
  }
}

// A cycle cut short (a spent budget, the cap of passes) may end on a pass that revoked a start
// an earlier pass made: that job is pending in the state the host will be in, but the pass saw
// it running and gave it no pending decision. Each such job (pending in the snapshot, or stopped
// by a rule, and neither started nor explained) gets one, budget-exhausted, naming the
// revocation (`revoked`: the last pass's preemptions).
void ExplainRevokedStarts(const Snapshot& snapshot, const std::vector<PreemptDecision>& revoked,
                          bool budget_spent, Decisions& out) {
  // Copies: out.pending grows below.
  std::set<std::string> decided;
  for (const StartDecision& s : out.starts) decided.insert(s.job);
  for (const PendingDecision& p : out.pending) decided.insert(p.job);
  const std::string cut = budget_spent
                              ? "a budget of the cycle ran out"
                              : fmt::format("the cycle reached its cap of {} passes", kMaxPasses);
  // A job a rule stops is pending again, as a job pending in the snapshot is.
  std::set<std::string> stopped;
  for (const PreemptDecision& p : out.preemptions) {
    if (p.for_job.empty()) stopped.insert(p.job);
  }
  for (const Job& job : snapshot.jobs) {
    const bool waits = job.state == JobState::kPending || stopped.contains(job.id);
    if (!waits || decided.contains(job.id)) continue;
    PendingDecision pending;
    pending.job = job.id;
    pending.reason = PendingReason::kBudgetExhausted;
    auto it = std::find_if(revoked.begin(), revoked.end(),
                           [&](const PreemptDecision& p) { return p.job == job.id; });
    const std::string why = it == revoked.end() ? std::string()
                            : it->for_job.empty()
                                ? fmt::format(" ({})", it->reason)
                                : fmt::format(" for {} ({})", it->for_job, it->reason);
    // A job running in the snapshot that a rule stopped: the last pass stopped it (or a start
    // an earlier pass gave it again).
    pending.detail =
        job.state == JobState::kRunning
            ? fmt::format(
                  "a settling pass stopped this job{}; {} before a pass tried to start it "
                  "again",
                  why, cut)
            : fmt::format(
                  "a settling pass started this job and the next revoked the start{}; {} "
                  "before a pass tried it again",
                  why, cut);
    out.pending.push_back(std::move(pending));
  }
  // Sorted by job id, as every pass's list is.
  std::sort(out.pending.begin(), out.pending.end(),
            [](const PendingDecision& a, const PendingDecision& b) { return a.job < b.job; });
}

// Each headroom rule's report as the settled pass measures it (`last`: free, shortfall), with
// what was free before the first pass restored anything and every job a pass evicted for it that
// the cycle still evicts (`passes`: each pass's reports, in order; every pass reports the rules
// in the same order).
void MergeHeadroom(const std::vector<std::vector<HeadroomReport>>& passes,
                   const std::vector<HeadroomReport>& last, const Policy& policy, Decisions& out) {
  if (last.empty()) return;
  std::map<std::string, bool> evicted;
  for (const PreemptDecision& p : out.preemptions) evicted[p.job] = true;
  std::vector<HeadroomReport> reports = last;
  for (size_t r = 0; r < reports.size(); ++r) {
    HeadroomReport& report = reports[r];
    report.free_before_restore = passes.front()[r].free_before_restore;
    std::vector<std::string> preempted;
    for (const std::vector<HeadroomReport>& pass : passes) {
      for (const std::string& job : pass[r].preempted) {
        if (evicted.count(job)) preempted.push_back(job);
      }
    }
    std::sort(preempted.begin(), preempted.end());
    preempted.erase(std::unique(preempted.begin(), preempted.end()), preempted.end());
    report.preempted = std::move(preempted);
    for (const HeadroomRule& rule : policy.headroom) {
      if (rule.gpu_model == report.gpu_model && rule.shape == report.shape) {
        Headroom::Describe(rule, policy.preemption.enabled, report);
      }
    }
  }
  out.headroom = std::move(reports);
}

Moves MovesOf(const Decisions& d) {
  return Moves{d.starts, d.preemptions, d.migrations, d.resizes};
}

}  // namespace

Decisions RunCycle(const Snapshot& snapshot, const Policy& policy) {
  return RunCycle(snapshot, policy, nullptr);
}

Decisions RunCycle(const Snapshot& snapshot, const Policy& policy, const PassObserver& observe) {
  Decisions first = RunCyclePass(snapshot, policy);
  if (observe) observe(snapshot, first);
  // Without evictions, moves or backfill, a pass already leaves nothing for the next one (the
  // property tests check it); with backfill, a reservation made mid-pass may move once the
  // pass's starts run, and so may any other reservation (a starving job's): the pass placed
  // those starts after the reservation's job was tried, and a reservation that drains does not
  // empty a node of them, while the next cycle, where they run, does. For the same reason a
  // starving job the pass left pending without a reservation may get one in the next cycle. With
  // drain_blocked_jobs, the first blocked jobs, in an order the pass's starts change (fair-share
  // turns), may then be others, whose drains free room, even when none of the first pass's could
  // have a reservation.
  const bool blocked_change = policy.preemption.enabled && policy.preemption.drain_blocked_jobs > 0;
  auto starving_left = [&] {
    if (policy.starvation_bound_s <= 0) return false;
    std::set<std::string_view> pending;
    for (const PendingDecision& p : first.pending) pending.insert(p.job);
    return std::any_of(snapshot.jobs.begin(), snapshot.jobs.end(), [&](const Job& job) {
      return pending.count(job.id) && Starving(job, policy, snapshot.now);
    });
  };
  // With reclaim across queues, the pass's starts may take their queue above its entitlement,
  // so that a job of another queue the pass left pending (tried before them) may reclaim.
  auto reclaim_left = [&] {
    if (!policy.preemption.enabled || !policy.preemption.reclaim_across_queues) return false;
    std::map<std::string_view, std::string_view> queue_of;
    for (const Job& job : snapshot.jobs) queue_of[job.id] = job.queue;
    std::set<std::string_view> started;
    for (const StartDecision& start : first.starts) started.insert(queue_of[start.job]);
    // A pending job of another queue than some start's (starts is not empty).
    return std::any_of(first.pending.begin(), first.pending.end(), [&](const PendingDecision& p) {
      return started.size() > 1 || !started.contains(queue_of[p.job]);
    });
  };
  const bool starts_may_move_reservations =
      !first.starts.empty() && (policy.backfill.enabled || blocked_change ||
                                !first.reservations.empty() || starving_left() || reclaim_left());
  if (first.preemptions.empty() && first.migrations.empty() && first.resizes.empty() &&
      !starts_may_move_reservations) {
    return first;
  }
  History history;
  history.Record(first);
  Counters work;
  AddWork(work, first.counters);
  // The jobs' decisions so far: those that take the snapshot to the state the passes reached.
  Moves composed = MovesOf(first);
  // The headroom reports of every pass that changed something, in order.
  std::vector<std::vector<HeadroomReport>> headroom;
  headroom.push_back(first.headroom);
  // Passes run so far.
  int64_t passes = 1;
  // The last pass run (the first until another runs).
  Decisions later;
  Decisions* last = &first;
  Policy pass_policy = policy;
  SettleState state(snapshot, first.node_actions);
  // Jobs no later pass may evict but for a job of their queue that outranks them or a reclaim
  // across queues (SnapshotIndex::restored): started again in place by the passes so far, or put
  // back a second time as evicted for nothing. Those that yielded so and came back, or were put
  // back a second time, no job may evict (SnapshotIndex::pinned): each job yields at most once, so
  // the passes cannot go round. One that yielded and a later pass started anywhere is pinned too.
  std::vector<std::string> restored;
  std::vector<std::string> pinned;
  auto listed = [](const std::vector<std::string>& ids, const std::string& id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  // Jobs evicted for nothing (a reservation or a start the passes then gave up), put back.
  std::set<std::string> put_back;
  // Composes the decisions so far from the state they reached (state.Apply() of them done): a
  // victim re-placed exactly where it ran gets no decision. Such a job is where the cycle began:
  // evicted again (by a drain, a reclaim across the line of an entitlement, as an overrun
  // backfilled job that comes before the reserving job in job order), it would start again, and
  // the passes would go round until the cap. No later pass evicts it but for a job of its queue
  // that outranks it or a reclaim across queues (SnapshotIndex::restored); back again after
  // that, it is pinned. The next
  // pass sees it running since it started in the snapshot, as the next cycle will, not as a start
  // of this cycle (which no drain may take): the first pass's decisions are composed so too.
  auto compose_and_restore = [&] {
    composed = Compose(snapshot, state.get(), history);
    KeepPermutedInPlace(composed, state);
    for (const auto& [id, preempt] : history.first_preempt) {
      const Job& before = state.SnapshotJob(id);
      const Job& now = state.StateJob(id);
      if (before.state != JobState::kRunning || now.state != JobState::kRunning ||
          !SamePlace(before.placements, now.placements)) {
        continue;
      }
      if (!listed(restored, id)) {
        restored.push_back(id);
      } else if (history.yielded.count(id) && !listed(pinned, id)) {
        pinned.push_back(id);
      }
    }
    // A restored job that yielded and runs again, wherever a pass started it, has yielded its
    // once: it stays for the rest of the cycle.
    for (const std::string& id : history.yielded) {
      if (state.StateJob(id).state == JobState::kRunning && !listed(pinned, id)) {
        pinned.push_back(id);
      }
    }
  };
  state.Apply(composed);
  compose_and_restore();
  for (int pass = 1; pass < kMaxPasses; ++pass) {
    // What the budgets (0: unbounded) leave for this pass; a spent one ends the settling.
    bool spent = false;
    auto share = [&spent](int64_t budget, int64_t used, int64_t& left) {
      if (budget <= 0) return;
      if (used >= budget) spent = true;
      left = budget - used;
    };
    share(policy.budgets.max_candidates, work.candidates_evaluated,
          pass_policy.budgets.max_candidates);
    share(policy.budgets.max_preemption_plans, work.preemption_plans,
          pass_policy.budgets.max_preemption_plans);
    share(policy.consolidation.max_plans, work.consolidation_plans,
          pass_policy.consolidation.max_plans);
    if (spent) {
      // The cycle is cut before it settled: say so, as a pass that ran out does.
      work.budget_exhausted = true;
      break;
    }
    // The state the host will be in once it carries out the decisions so far.
    state.Reset();
    state.Apply(composed);
    // Starts made so far are tentative: a later pass may revoke them at no cost, for a job that
    // outranks the rank they started with.
    std::vector<std::pair<std::string, int64_t>> tentative;
    for (const StartDecision& s : composed.starts) {
      const Job& job = state.SnapshotJob(s.job);
      const bool starving = job.state == JobState::kPending && policy.preemption.starving_outrank &&
                            Starving(job, policy, snapshot.now);
      tentative.emplace_back(
          s.job, starving ? std::numeric_limits<int64_t>::max() : int64_t{job.priority});
    }
    // The cycle reports the first pass's fingerprint: a later pass computes none.
    later =
        RunCyclePass(state.get(), pass_policy, tentative, /*fingerprint=*/false, restored, pinned);
    if (observe) observe(state.get(), later);
    ++passes;
    AddWork(work, later.counters);
    last = &later;
    if (!ChangesSomething(later)) {
      // Settled, unless the passes evicted jobs for nothing (for reservations or starts they
      // then gave up): those go back where they ran, and another pass runs on that state.
      const std::vector<std::string> kept =
          KeepEvictedForNothing(history, later.reservations, composed, state);
      if (kept.empty()) break;
      for (const std::string& id : kept) {
        // Its eviction is void; a later pass may evict it again, for a reservation that
        // needs its GPUs after all, but only once: put back a second time, it stays.
        history.first_preempt.erase(id);
        history.undone_for.erase(id);
        history.evicted_for_reservation.erase(id);
        if (!put_back.insert(id).second) {
          if (!listed(restored, id)) restored.push_back(id);
          if (!listed(pinned, id)) pinned.push_back(id);
        }
      }
      composed = Compose(snapshot, state.get(), history);
      continue;
    }
    history.Record(later, restored);
    headroom.push_back(later.headroom);
    // Only the jobs' decisions of a later pass carry over; its node actions describe a state
    // the first pass's actions already made.
    state.Apply(later);
    compose_and_restore();
  }
  // The settled pass's pending reasons, reservations and headroom (`last` may be `first`, whose
  // other parts the cycle keeps).
  std::vector<PendingDecision> pending = std::move(last->pending);
  std::vector<ReserveDecision> reservations = std::move(last->reservations);
  const std::vector<PreemptDecision> last_preemptions = last->preemptions;
  const std::vector<HeadroomReport> last_headroom = last->headroom;
  Decisions out = std::move(first);
  out.starts = std::move(composed.starts);
  out.preemptions = std::move(composed.preemptions);
  out.migrations = std::move(composed.migrations);
  out.resizes = std::move(composed.resizes);
  out.counters = work;
  out.counters.passes = passes;
  out.counters.jobs_started = static_cast<int64_t>(out.starts.size());
  out.counters.preemptions = static_cast<int64_t>(out.preemptions.size());
  out.counters.migrations = static_cast<int64_t>(out.migrations.size());
  out.counters.resizes = static_cast<int64_t>(out.resizes.size());
  TakeWaitingFrom(std::move(pending), std::move(reservations), snapshot, out);
  ExplainRevokedStarts(snapshot, last_preemptions, work.budget_exhausted, out);
  NameBeneficiaries(snapshot, history, out);
  headroom.push_back(last_headroom);
  MergeHeadroom(headroom, last_headroom, policy, out);
  return out;
}

}  // namespace gpupool::internal
