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
//     itself evicted by a later pass, for_job names the job that finally took the room;
//   - a job running in both at different places is preempted and started again (Preempt then
//     Start, as stage 6b does for a victim it re-places), or migrated, or resized; running in
//     both at the same place, it is left alone, whatever the passes did in between;
//   - pending reasons and reservations are those of the settled pass (the state the host will be
//     in), for the jobs that were pending in the snapshot; queue shares, node actions and the
//     fingerprint are the first pass's (the snapshot's); headroom reports say what the settled
//     pass finds free, and whom any pass evicted for the rule; counters add up the passes' work,
//     and count the decisions that remain.
// The passes share the policy's budgets (candidates, preemption plans, consolidation plans; each
// pass explains its pending jobs with the whole counterfactual budget). At most kMaxPasses passes
// run (a cycle cut there is not settled; the property tests find none).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cycle.h"
#include "gpupool/apply.h"
#include "headroom.h"
#include "internal/check.h"
#include "order.h"

namespace gpupool::internal {
namespace {

constexpr int kMaxPasses = 8;

bool ChangesSomething(const Decisions& d) {
  return !d.starts.empty() || !d.preemptions.empty() || !d.migrations.empty() || !d.resizes.empty();
}

// Same replicas on the same GPUs (gpu_milli may be left 0 in a snapshot's placements).
bool SamePlace(std::vector<ReplicaPlacement> a, std::vector<ReplicaPlacement> b) {
  if (a.size() != b.size()) return false;
  auto key = [](const ReplicaPlacement& p) { return std::tie(p.group, p.replica); };
  auto by_replica = [&](const ReplicaPlacement& x, const ReplicaPlacement& y) {
    return key(x) < key(y);
  };
  std::sort(a.begin(), a.end(), by_replica);
  std::sort(b.begin(), b.end(), by_replica);
  for (size_t i = 0; i < a.size(); ++i) {
    std::vector<int32_t> ga = a[i].gpus, gb = b[i].gpus;
    std::sort(ga.begin(), ga.end());
    std::sort(gb.begin(), gb.end());
    if (key(a[i]) != key(b[i]) || a[i].node != b[i].node || ga != gb) return false;
  }
  return true;
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

// What the passes decided for each job, in the order they decided it.
struct History {
  std::map<std::string, PreemptDecision> first_preempt;
  std::map<std::string, MigrateDecision> first_migrate;
  std::map<std::string, ResizeDecision> last_resize;
  std::map<std::string, StartDecision> last_start;

  void Record(const Decisions& d) {
    for (const PreemptDecision& p : d.preemptions) first_preempt.emplace(p.job, p);
    for (const MigrateDecision& m : d.migrations) first_migrate.emplace(m.job, m);
    for (const ResizeDecision& r : d.resizes) last_resize[r.job] = r;
    for (const StartDecision& s : d.starts) last_start[s.job] = s;
  }
};

// The last pass's pending reasons and reservations, for the jobs pending in `snapshot` that do
// not start (a job the cycle evicts gets its Preempt, not a pending reason).
void TakeWaitingFrom(const Decisions& last, const Snapshot& snapshot, Decisions& out) {
  std::map<std::string, bool> waiting;
  for (const Job& job : snapshot.jobs) {
    if (job.state == JobState::kPending) waiting[job.id] = true;
  }
  for (const StartDecision& s : out.starts) waiting.erase(s.job);
  out.pending.clear();
  for (const PendingDecision& p : last.pending) {
    if (waiting.count(p.job)) out.pending.push_back(p);
  }
  out.reservations.clear();
  for (const ReserveDecision& r : last.reservations) {
    if (waiting.count(r.job)) out.reservations.push_back(r);
  }
}

// Each headroom rule's report as the settled pass measures it (free, shortfall), with what was
// free before the first pass restored anything and every job a pass evicted for it that the
// cycle still evicts (`passes` in order; every pass reports the rules in the same order).
void MergeHeadroom(const std::vector<const Decisions*>& passes, const Decisions& last,
                   const Policy& policy, Decisions& out) {
  if (last.headroom.empty()) return;
  std::map<std::string, bool> evicted;
  for (const PreemptDecision& p : out.preemptions) evicted[p.job] = true;
  std::vector<HeadroomReport> reports = last.headroom;
  for (size_t r = 0; r < reports.size(); ++r) {
    HeadroomReport& report = reports[r];
    report.free_before_restore = passes.front()->headroom[r].free_before_restore;
    std::vector<std::string> preempted;
    for (const Decisions* pass : passes) {
      for (const std::string& job : pass->headroom[r].preempted) {
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

// The decisions that take `snapshot` to `settled`, built from what the passes decided
// (`history`), with the first pass's and the settled pass's other parts (see the top).
Decisions Compose(const Snapshot& snapshot, const Snapshot& settled, const History& history,
                  const Decisions& first) {
  Decisions out = first;
  out.starts.clear();
  out.preemptions.clear();
  out.migrations.clear();
  out.resizes.clear();
  // ApplyDecisions() keeps the jobs in place: job i of `settled` is job i of `snapshot`.
  for (size_t i = 0; i < snapshot.jobs.size(); ++i) {
    const Job& before = snapshot.jobs[i];
    const Job& after = settled.jobs[i];
    const bool ran = before.state == JobState::kRunning;
    const bool runs = after.state == JobState::kRunning;
    // A start's placements are where the job runs in the settled state (a later pass may have
    // moved it).
    auto start = [&] {
      StartDecision s = history.last_start.at(before.id);
      s.placements = after.placements;
      return s;
    };
    if (!ran && runs) {
      out.starts.push_back(start());
    } else if (ran && !runs) {
      out.preemptions.push_back(history.first_preempt.at(before.id));
    } else if (ran && runs && !SamePlace(before.placements, after.placements)) {
      if (auto p = history.first_preempt.find(before.id); p != history.first_preempt.end()) {
        out.preemptions.push_back(p->second);
        out.starts.push_back(start());
        continue;
      }
      if (auto r = history.last_resize.find(before.id); r != history.last_resize.end()) {
        ResizeDecision resize = r->second;
        resize.to_replicas = 0;
        for (const ReplicaPlacement& p : after.placements) {
          if (p.group == resize.group) ++resize.to_replicas;
        }
        resize.from_replicas = 0;
        for (const ReplicaPlacement& p : before.placements) {
          if (p.group == resize.group) ++resize.from_replicas;
        }
        if (resize.to_replicas != resize.from_replicas) out.resizes.push_back(resize);
      }
      if (auto m = history.first_migrate.find(before.id); m != history.first_migrate.end()) {
        MigrateDecision migrate = m->second;
        migrate.to = after.placements;
        out.migrations.push_back(std::move(migrate));
      }
    }
  }
  // A victim whose beneficiary was evicted again by a later pass was, in the end, evicted for
  // the job that took the beneficiary's room: follow the chain to a job that starts.
  std::map<std::string, bool> starts;
  for (const StartDecision& s : out.starts) starts[s.job] = true;
  for (PreemptDecision& p : out.preemptions) {
    std::string beneficiary = p.for_job;
    for (int hops = 0; hops < kMaxPasses && !beneficiary.empty() && !starts.count(beneficiary);
         ++hops) {
      auto next = history.first_preempt.find(beneficiary);
      if (next == history.first_preempt.end()) break;
      beneficiary = next->second.for_job;
    }
    if (!beneficiary.empty() && starts.count(beneficiary)) p.for_job = beneficiary;
  }
  // Each list in job-id order, as Finish() leaves one pass's (ids are unique).
  auto by_job = [](const auto& a, const auto& b) { return a.job < b.job; };
  std::sort(out.starts.begin(), out.starts.end(), by_job);
  std::sort(out.preemptions.begin(), out.preemptions.end(), by_job);
  std::sort(out.migrations.begin(), out.migrations.end(), by_job);
  std::sort(out.resizes.begin(), out.resizes.end(), by_job);
  return out;
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
  // pass's starts run.
  const bool backfill = policy.backfill.enabled && !first.starts.empty();
  if (first.preemptions.empty() && first.migrations.empty() && first.resizes.empty() && !backfill) {
    return first;
  }
  History history;
  history.Record(first);
  Counters work;
  AddWork(work, first.counters);
  Decisions composed = first;
  // Every pass that changed something, in order (for the headroom reports).
  std::vector<Decisions> changed;
  changed.push_back(first);
  Decisions last = first;
  Policy pass_policy = policy;
  std::map<std::string, const Job*> jobs;
  for (const Job& job : snapshot.jobs) jobs[job.id] = &job;
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
    if (spent) break;
    // The state the host will be in once it carries out the decisions so far.
    Snapshot state = snapshot;
    GPUPOOL_CHECK(ApplyDecisions(composed, state).ok());
    // Starts made so far are tentative: a later pass may revoke them at no cost, for a job that
    // outranks the rank they started with.
    std::vector<std::pair<std::string, int64_t>> tentative;
    for (const StartDecision& s : composed.starts) {
      const Job& job = *jobs.at(s.job);
      const bool starving = job.state == JobState::kPending && policy.preemption.starving_outrank &&
                            Starving(job, policy, snapshot.now);
      tentative.emplace_back(
          s.job, starving ? std::numeric_limits<int64_t>::max() : int64_t{job.priority});
    }
    Decisions next = RunCyclePass(state, pass_policy, tentative);
    if (observe) observe(state, next);
    AddWork(work, next.counters);
    last = std::move(next);
    if (!ChangesSomething(last)) break;
    history.Record(last);
    changed.push_back(last);
    // Only the jobs' decisions of a later pass carry over; its node actions describe a state
    // the first pass's actions already made.
    Decisions moves;
    moves.preemptions = last.preemptions;
    moves.resizes = last.resizes;
    moves.migrations = last.migrations;
    moves.starts = last.starts;
    GPUPOOL_CHECK(ApplyDecisions(moves, state).ok());
    composed = Compose(snapshot, state, history, first);
  }
  composed.counters = work;
  composed.counters.passes =
      static_cast<int64_t>(changed.size()) + (ChangesSomething(last) ? 0 : 1);
  composed.counters.jobs_started = static_cast<int64_t>(composed.starts.size());
  composed.counters.preemptions = static_cast<int64_t>(composed.preemptions.size());
  composed.counters.migrations = static_cast<int64_t>(composed.migrations.size());
  composed.counters.resizes = static_cast<int64_t>(composed.resizes.size());
  TakeWaitingFrom(last, snapshot, composed);
  std::vector<const Decisions*> passes;
  for (const Decisions& pass : changed) passes.push_back(&pass);
  passes.push_back(&last);
  MergeHeadroom(passes, last, policy, composed);
  return composed;
}

}  // namespace gpupool::internal
