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
//     only the first pass changed anything: a drained job re-placed on its own GPUs);
//   - pending reasons and reservations are those of the settled pass (the state the host will be
//     in): pending reasons for the jobs that were pending in the snapshot, reservations also for
//     the jobs the cycle evicts; queue shares, node actions and the
//     fingerprint are the first pass's (the snapshot's); headroom reports say what the settled
//     pass finds free, and whom any pass evicted for the rule; counters add up the passes' work,
//     and count the decisions that remain.
// A job that a pass evicted and the same or a later pass put back where it ran stays there for
// the rest of the cycle (SnapshotIndex::restored): evicting it again would only go round in a
// loop; the next pass sees it running as the snapshot had it, not as a start of the cycle. Only a
// job of its queue that outranks it may still evict or drain it, once
// (VictimRules::MayEvictRestored).
// The passes share the policy's budgets (candidates, preemption plans, consolidation plans; each
// pass explains its pending jobs with the whole counterfactual budget). At most kMaxPasses passes
// run (a cycle cut there is not settled; the property tests find none).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
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
#include "gpupool/validate.h"
#include "headroom.h"
#include "internal/check.h"
#include "order.h"
#include "snapshot_index.h"

namespace gpupool::internal {
namespace {

constexpr int kMaxPasses = 8;

bool ChangesSomething(const Decisions& d) {
  return !d.starts.empty() || !d.preemptions.empty() || !d.migrations.empty() || !d.resizes.empty();
}

// Same replicas on the same GPUs (gpu_milli may be left 0 in a snapshot's placements).
bool SamePlace(const std::vector<ReplicaPlacement>& a, const std::vector<ReplicaPlacement>& b) {
  if (a.size() != b.size()) return false;
  // Listed alike (the usual case: a job no pass moved keeps its placements as they were).
  auto alike = [](const ReplicaPlacement& x, const ReplicaPlacement& y) {
    return x.group == y.group && x.replica == y.replica && x.node == y.node && x.gpus == y.gpus;
  };
  if (std::equal(a.begin(), a.end(), b.begin(), alike)) return true;
  auto key = [](const ReplicaPlacement& p) { return std::tie(p.group, p.replica); };
  auto by_replica = [&](const ReplicaPlacement& x, const ReplicaPlacement& y) {
    return key(x) < key(y);
  };
  std::vector<ReplicaPlacement> sa = a, sb = b;
  std::sort(sa.begin(), sa.end(), by_replica);
  std::sort(sb.begin(), sb.end(), by_replica);
  for (size_t i = 0; i < sa.size(); ++i) {
    std::vector<int32_t> ga = sa[i].gpus, gb = sb[i].gpus;
    std::sort(ga.begin(), ga.end());
    std::sort(gb.begin(), gb.end());
    if (key(sa[i]) != key(sb[i]) || sa[i].node != sb[i].node || ga != gb) return false;
  }
  return true;
}

// Some GPU of a node is in both.
bool SharesAGpu(const std::vector<ReplicaPlacement>& a, const std::vector<ReplicaPlacement>& b) {
  for (const ReplicaPlacement& x : a) {
    for (const ReplicaPlacement& y : b) {
      if (x.node != y.node) continue;
      for (int32_t gpu : x.gpus) {
        if (std::find(y.gpus.begin(), y.gpus.end(), gpu) != y.gpus.end()) return true;
      }
    }
  }
  return false;
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
  // For a job a pass started and a later pass evicted: the job the last such eviction was for
  // (the one that undid its start).
  std::map<std::string, std::string> undone_for;
  // Jobs whose first eviction was for a reservation (a drain, or an overrun backfilled job
  // evicted from a reservation's node): its job holds a reservation in that pass.
  std::set<std::string> evicted_for_reservation;

  // Restored jobs (SnapshotIndex::restored) that a job of their queue that outranks them
  // evicted after all (VictimRules::MayEvictRestored).
  std::set<std::string> yielded;

  // `restored`: the restored jobs of the pass. Their earlier eviction was void; one evicted
  // after all is reported with that eviction.
  void Record(const Decisions& d, const std::vector<std::string>& restored = {}) {
    std::set<std::string_view> reserved;
    for (const ReserveDecision& r : d.reservations) reserved.insert(r.job);
    for (const PreemptDecision& p : d.preemptions) {
      if (std::find(restored.begin(), restored.end(), p.job) != restored.end()) {
        first_preempt.erase(p.job);
        evicted_for_reservation.erase(p.job);
        yielded.insert(p.job);
      }
      if (first_preempt.emplace(p.job, p).second && reserved.count(p.for_job)) {
        evicted_for_reservation.insert(p.job);
      }
      if (last_start.count(p.job)) undone_for[p.job] = p.for_job;
    }
    for (const MigrateDecision& m : d.migrations) first_migrate.emplace(m.job, m);
    for (const ResizeDecision& r : d.resizes) last_resize[r.job] = r;
    for (const StartDecision& s : d.starts) last_start[s.job] = s;
  }
};

// The last pass's pending reasons (`pending`), for the jobs pending in `snapshot` that do not
// start (a job the cycle evicts gets its Preempt, not a pending reason), and its reservations
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
// it running and gave it no pending decision. Each such job (pending in the snapshot, neither
// started nor explained) gets one, budget-exhausted, naming the revocation (`revoked`: the last
// pass's preemptions).
void ExplainRevokedStarts(const Snapshot& snapshot, const std::vector<PreemptDecision>& revoked,
                          bool budget_spent, Decisions& out) {
  // Copies: out.pending grows below.
  std::set<std::string> decided;
  for (const StartDecision& s : out.starts) decided.insert(s.job);
  for (const PendingDecision& p : out.pending) decided.insert(p.job);
  const std::string cut = budget_spent
                              ? "a budget of the cycle ran out"
                              : fmt::format("the cycle reached its cap of {} passes", kMaxPasses);
  for (const Job& job : snapshot.jobs) {
    if (job.state != JobState::kPending || decided.contains(job.id)) continue;
    PendingDecision pending;
    pending.job = job.id;
    pending.reason = PendingReason::kBudgetExhausted;
    auto it = std::find_if(revoked.begin(), revoked.end(),
                           [&](const PreemptDecision& p) { return p.job == job.id; });
    const std::string why = it == revoked.end() ? std::string()
                            : it->for_job.empty()
                                ? fmt::format(" ({})", it->reason)
                                : fmt::format(" for {} ({})", it->for_job, it->reason);
    pending.detail = fmt::format(
        "a settling pass started this job and the next revoked the start{}; {} before a pass "
        "tried it again",
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

// The jobs' decisions of a cycle (the lists ApplyDecisions() acts on, node actions aside).
struct Moves {
  std::vector<StartDecision> starts;
  std::vector<PreemptDecision> preemptions;
  std::vector<MigrateDecision> migrations;
  std::vector<ResizeDecision> resizes;
};

// The settling passes' state: `snapshot` as the host leaves it once it carries out a cycle's
// decisions, kept in one copy from pass to pass. Reset() and Apply() do to it what a fresh copy
// of the snapshot and ApplyDecisions() would, step for step, but in place: only the jobs that
// differ from the snapshot's are copied back, and jobs are found by id without building a map.
class SettleState {
 public:
  // The snapshot's node actions are applied once: every pass's decisions carry the first pass's.
  SettleState(const Snapshot& snapshot, const std::vector<NodeActionDecision>& node_actions)
      : snapshot_(snapshot), state_(snapshot), changed_(snapshot.jobs.size(), 0) {
    for (size_t i = 0; i < snapshot.jobs.size(); ++i) at_.emplace(snapshot.jobs[i].id, i);
    if (node_actions.empty()) return;
    Decisions actions;
    actions.node_actions = node_actions;
    GPUPOOL_CHECK(ApplyDecisions(actions, state_).ok());
  }

  const Snapshot& get() const { return state_; }
  // The snapshot the cycle began with.
  const Snapshot& original() const { return snapshot_; }
  // Job `id` of the snapshot (ids are unique after validation), and as the state has it now.
  const Job& SnapshotJob(std::string_view id) const { return snapshot_.jobs[Find(id)]; }
  const Job& StateJob(std::string_view id) const { return state_.jobs[Find(id)]; }

  // Every job back as the snapshot has it.
  void Reset() {
    for (size_t i : dirty_) {
      state_.jobs[i] = snapshot_.jobs[i];
      changed_[i] = 0;
    }
    dirty_.clear();
  }

  // ApplyDecisions() of the jobs' decisions of `m` (Moves or Decisions), on the state as it is
  // (checked: the passes' decisions apply).
  template <typename JobDecisions>
  void Apply(const JobDecisions& m) {
    const int64_t now = state_.now;
    for (const PreemptDecision& preempt : m.preemptions) {
      Job& victim = Edit(preempt.job);
      GPUPOOL_CHECK(victim.state == JobState::kRunning);
      victim.state = JobState::kPending;
      victim.placements.clear();
      victim.start_time.reset();
      victim.backfilled = false;
      victim.pending_since = std::max(now, victim.submit_time);
    }
    for (const ResizeDecision& resize : m.resizes) {
      Job& job = Edit(resize.job);
      GPUPOOL_CHECK(job.state == JobState::kRunning);
      std::vector<ReplicaPlacement>& placements = job.placements;
      std::vector<int32_t> replicas;
      for (const ReplicaPlacement& p : placements) {
        if (p.group == resize.group) replicas.push_back(p.replica);
      }
      std::sort(replicas.begin(), replicas.end());
      GPUPOOL_CHECK(resize.to_replicas >= 0 &&
                    static_cast<size_t>(resize.to_replicas) <= replicas.size());
      const int32_t last_kept = resize.to_replicas == 0 ? -1 : replicas[resize.to_replicas - 1];
      std::erase_if(placements, [&](const ReplicaPlacement& p) {
        return p.group == resize.group && p.replica > last_kept;
      });
    }
    for (const MigrateDecision& migrate : m.migrations) {
      Job& job = Edit(migrate.job);
      GPUPOOL_CHECK(job.state == JobState::kRunning);
      job.placements = migrate.to;
      job.start_time = now;
    }
    // ApplyStarts(): every start checked before any is carried out.
    for (const StartDecision& start : m.starts) {
      GPUPOOL_CHECK(state_.jobs[Find(start.job)].state == JobState::kPending);
    }
    for (const StartDecision& start : m.starts) {
      Job& job = Edit(start.job);
      job.state = JobState::kRunning;
      job.start_time = now;
      job.placements = start.placements;
      job.pending_since.reset();
      job.backfilled = start.backfilled;
    }
  }

 private:
  size_t Find(std::string_view id) const {
    auto it = at_.find(id);
    GPUPOOL_CHECK(it != at_.end());
    return it->second;
  }
  Job& Edit(std::string_view id) {
    const size_t i = Find(id);
    if (!changed_[i]) {
      changed_[i] = 1;
      dirty_.push_back(i);
    }
    return state_.jobs[i];
  }

  const Snapshot& snapshot_;
  Snapshot state_;
  // Position of each job in `snapshot_.jobs` (lookups only: nothing iterates it).
  absl::flat_hash_map<std::string_view, size_t> at_;
  // Jobs of `state_` that may differ from the snapshot's.
  std::vector<uint8_t> changed_;
  std::vector<size_t> dirty_;
};

// The decisions that take `snapshot` to `settled`, built from what the passes decided
// (`history`); the other parts of the cycle's decisions are the first pass's and the settled
// pass's (see the top).
Moves Compose(const Snapshot& snapshot, const Snapshot& settled, const History& history) {
  Moves out;
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
  // Each list in job-id order, as Finish() leaves one pass's (ids are unique).
  auto by_job = [](const auto& a, const auto& b) { return a.job < b.job; };
  std::sort(out.starts.begin(), out.starts.end(), by_job);
  std::sort(out.preemptions.begin(), out.preemptions.end(), by_job);
  std::sort(out.migrations.begin(), out.migrations.end(), by_job);
  std::sort(out.resizes.begin(), out.resizes.end(), by_job);
  return out;
}

// The job that, in the end, got the room a victim was evicted for `for_job`'s start: that job
// if it starts (`starts`), else, when a later pass undid that start for another job, the one it
// was evicted for, and so on (as far as the chain goes: a job that is not among `starts` when
// the chain ends, or where a start was undone for no one).
std::string_view ChainEnd(const History& history, const std::set<std::string_view>& starts,
                          std::string_view for_job) {
  std::string_view beneficiary = for_job;
  for (int hops = 0; hops < kMaxPasses && !starts.count(beneficiary); ++hops) {
    const std::string id(beneficiary);
    if (!history.last_start.count(id)) break;
    // The eviction that undid its start; a job started again where it ran, with none, was
    // evicted only before (its first eviction).
    if (auto undone = history.undone_for.find(id); undone != history.undone_for.end()) {
      // Undone for no one (a headroom rule restored, an operations rule stopped it): the chain
      // ends at this start.
      if (undone->second.empty()) break;
      beneficiary = undone->second;
      continue;
    }
    auto next = history.first_preempt.find(id);
    if (next == history.first_preempt.end()) break;
    beneficiary = next->second.for_job;
  }
  return beneficiary;
}

// Names, for each Preempt of the cycle, the job the room went to (`out`: the composed decisions
// with the settled pass's reservations; `snapshot`: the cycle's input). A victim whose
// beneficiary a pass started and a later pass evicted again was, in the end, evicted for the job
// that took the beneficiary's room: follow the chain to a job that starts. If the chain ends at a
// start a later pass undid without evicting it for another (a restoring headroom rule took it
// back, or the victim, moved meanwhile, stays moved), the room went to whichever job starts on a
// GPU the victim held: the first such in id order. A job drained for a reservation keeps the
// eviction while it holds one (stage 7); a job evicted for another's start does not, when that job
// only reserves in the end. An elastic group shrunk for a job whose start a later pass undid was
// shrunk, in the end, for the job at the end of the same chain, when that one starts.
void NameBeneficiaries(const Snapshot& snapshot, const History& history, Decisions& out) {
  std::set<std::string_view> starts, reserved;
  for (const StartDecision& s : out.starts) starts.insert(s.job);
  for (const ReserveDecision& r : out.reservations) reserved.insert(r.job);
  std::map<std::string_view, const Job*> ran;
  for (const PreemptDecision& p : out.preemptions) ran.emplace(p.job, nullptr);
  for (const Job& job : snapshot.jobs) {
    if (auto it = ran.find(job.id); it != ran.end()) it->second = &job;
  }
  for (PreemptDecision& p : out.preemptions) {
    if (p.for_job.empty() || starts.count(p.for_job)) continue;
    if (reserved.count(p.for_job) && history.evicted_for_reservation.count(p.job)) continue;
    const std::string beneficiary(ChainEnd(history, starts, p.for_job));
    if (starts.count(beneficiary)) {
      p.for_job = beneficiary;
    } else if (history.last_start.count(beneficiary)) {
      for (const StartDecision& s : out.starts) {
        if (s.job != p.job && SharesAGpu(ran.at(p.job)->placements, s.placements)) {
          p.for_job = s.job;
          break;
        }
      }
    }
  }
  for (ResizeDecision& r : out.resizes) {
    if (r.for_job.empty() || starts.count(r.for_job)) continue;
    const std::string_view beneficiary = ChainEnd(history, starts, r.for_job);
    if (starts.count(beneficiary)) r.for_job = std::string(beneficiary);
  }
}

// Milli-GPUs that the running jobs of `s` hold, per queue (counted up its chain of parents) and
// GPU model (and kAnyGpuModel), for the queues of `queues` only.
std::map<std::pair<std::string, std::string>, int64_t> QuotaUsage(
    const Snapshot& s, const std::map<std::string, const Queue*>& queues,
    const std::set<std::string>& counted) {
  std::map<std::string, std::string_view> model_of;
  for (const Node& node : s.nodes) model_of.emplace(node.id, node.gpu_model);
  std::map<std::pair<std::string, std::string>, int64_t> usage;
  for (const Job& job : s.jobs) {
    if (job.state != JobState::kRunning) continue;
    for (const ReplicaPlacement& p : job.placements) {
      int64_t milli = 0;
      for (const TaskGroup& group : job.groups) {
        if (group.name == p.group) milli = group.request.gpu_milli;
      }
      auto model = model_of.find(p.node);
      if (milli == 0 || model == model_of.end()) continue;
      // Parents are validated to exist and to form no cycle.
      for (auto q = queues.find(job.queue); q != queues.end(); q = queues.find(q->second->parent)) {
        if (!counted.count(q->first)) continue;
        usage[{q->first, std::string(model->second)}] += milli;
        usage[{q->first, kAnyGpuModel}] += milli;
      }
    }
  }
  return usage;
}

// Does `trial` (the settled state with jobs `ids` put back) keep each queue of their chains
// within its quota limits, or, where it is past one, at or below what the snapshot uses?
bool KeepsQuotaLimits(const Snapshot& snapshot, const Snapshot& trial,
                      const std::vector<std::string>& ids) {
  std::map<std::string, const Queue*> queues;
  for (const Queue& q : snapshot.queues) queues.emplace(q.id, &q);
  std::set<std::string> counted;
  for (const Job& job : snapshot.jobs) {
    if (std::find(ids.begin(), ids.end(), job.id) == ids.end()) continue;
    for (auto q = queues.find(job.queue); q != queues.end(); q = queues.find(q->second->parent)) {
      counted.insert(q->first);
    }
  }
  const auto before = QuotaUsage(snapshot, queues, counted);
  const auto after = QuotaUsage(trial, queues, counted);
  for (const std::string& id : counted) {
    for (const Quota& quota : queues.at(id)->quotas) {
      if (!quota.limit_milli.has_value()) continue;
      const std::pair<std::string, std::string> key{id, quota.gpu_model};
      const int64_t was = before.count(key) ? before.at(key) : 0;
      const int64_t now = after.count(key) ? after.at(key) : 0;
      if (now > *quota.limit_milli && now > was) return false;
    }
  }
  return true;
}

// Does `trial` keep the jobs `ids` (put back) apart from other tenants' jobs as Queue::isolation
// asks, by the placer's rule (place.cc: tenants as SnapshotIndex finds them)? Validation does
// not check it (a host's snapshot may mix tenants), but a job put back must not join, or be
// joined by, another tenant's start.
bool KeepsIsolation(const Snapshot& trial, const std::vector<std::string>& ids) {
  if (std::none_of(trial.queues.begin(), trial.queues.end(),
                   [](const Queue& q) { return q.isolation != Isolation::kNone; })) {
    return true;
  }
  const SnapshotIndex index(trial);
  for (const std::string& id : ids) {
    const int32_t j = index.FindJob(id);
    if (j == kNone || index.job(j).job->state != JobState::kRunning) continue;
    const JobInfo& mine = index.job(j);
    for (int32_t o = 0; o < index.job_count(); ++o) {
      const JobInfo& other = index.job(o);
      if (o == j || other.job->state != JobState::kRunning || other.tenant == mine.tenant) {
        continue;
      }
      const bool whole_node = mine.isolation == Isolation::kExclusiveNode ||
                              other.isolation == Isolation::kExclusiveNode;
      for (const ReplicaPlacement& p : mine.job->placements) {
        for (const ReplicaPlacement& q : other.job->placements) {
          if (p.node != q.node) continue;
          const bool same_gpu = std::any_of(p.gpus.begin(), p.gpus.end(), [&](int32_t g) {
            return std::find(q.gpus.begin(), q.gpus.end(), g) != q.gpus.end();
          });
          if (same_gpu || whole_node) return false;
        }
      }
    }
  }
  return true;
}

// Puts back where they ran, if they fit there (nothing else the cycle starts or moves took their
// room, and isolation lets them), the jobs the cycle evicts or moves for nothing:
//   - for a reservation that the settled pass (`reservations`) no longer holds on any node the
//     job ran on (its job starts elsewhere, waits without one, or reserves other nodes);
//   - for a start that does not happen, the chain of undone starts followed (ChainEnd());
//   - running jobs moved only for each other's moves (two queues reclaiming from each other: A
//     evicted for B's re-placement, B's room taken by A's), all at once.
// Leaving them evicted would lose their work for no one. `composed` takes the settled state
// (`state`, left so) to the state with those jobs back (in job-id order); the ids are returned.
std::vector<std::string> KeepEvictedForNothing(const History& history,
                                               const std::vector<ReserveDecision>& reservations,
                                               Moves& composed, SettleState& state) {
  std::set<std::string_view> starts;
  for (const StartDecision& s : composed.starts) starts.insert(s.job);
  // Sets of jobs to put back together, in the order tried.
  std::vector<std::vector<std::string>> candidates;
  // Running jobs moved for another moved job's start (the chain followed).
  std::vector<std::string> swapped;
  for (const PreemptDecision& p : composed.preemptions) {
    const Job& now = state.StateJob(p.job);
    if (SamePlace(now.placements, state.SnapshotJob(p.job).placements)) continue;
    const std::string& for_job = history.first_preempt.at(p.job).for_job;
    if (for_job.empty()) continue;
    if (!history.evicted_for_reservation.count(p.job)) {
      const std::string_view end = ChainEnd(history, starts, for_job);
      if (!starts.count(end)) {
        candidates.push_back({p.job});
      } else if (now.state == JobState::kRunning &&
                 state.SnapshotJob(end).state == JobState::kRunning) {
        swapped.push_back(p.job);
      }
      continue;
    }
    bool needed = false;
    for (const ReserveDecision& r : reservations) {
      if (r.job != for_job) continue;
      for (const ReplicaPlacement& placement : state.SnapshotJob(p.job).placements) {
        needed =
            needed || std::find(r.nodes.begin(), r.nodes.end(), placement.node) != r.nodes.end();
      }
    }
    if (!needed) candidates.push_back({p.job});
  }
  // A move is for nothing only if every move it was for is too: the moved jobs whose chain
  // ends at a job outside the set leave it, until none does.
  for (bool shrunk = true; shrunk;) {
    shrunk = false;
    const std::set<std::string> in(swapped.begin(), swapped.end());
    std::erase_if(swapped, [&](const std::string& id) {
      const std::string_view end = ChainEnd(history, starts, history.first_preempt.at(id).for_job);
      const bool leaves = !in.count(std::string(end));
      shrunk = shrunk || leaves;
      return leaves;
    });
  }
  if (swapped.size() >= 2) candidates.push_back(swapped);
  std::vector<std::string> kept;
  if (candidates.empty()) return kept;
  // Puts `ids` back if the state allows it.
  auto put_back = [&](const std::vector<std::string>& ids) {
    Moves trial = composed;
    auto back = [&ids](const auto& d) {
      return std::find(ids.begin(), ids.end(), d.job) != ids.end();
    };
    std::erase_if(trial.preemptions, back);
    std::erase_if(trial.starts, back);
    state.Reset();
    state.Apply(trial);
    // Over-commitment is all that validation can find: every other part of the state is as
    // valid as the snapshot's. Quota limits and isolation it does not check (a snapshot may hold
    // a queue past its limit, or mix tenants): a start may have taken the quota a job put back
    // would use again, or a share of its GPU for another tenant.
    if (!ValidateSnapshot(state.get()).ok() ||
        !KeepsQuotaLimits(state.original(), state.get(), ids) ||
        !KeepsIsolation(state.get(), ids)) {
      return false;
    }
    composed = std::move(trial);
    kept.insert(kept.end(), ids.begin(), ids.end());
    return true;
  };
  // One put back may make room for another tried before it (its start of the cycle sat where
  // the other ran): sweep again, in order, while a sweep puts any back.
  for (size_t before = 0; before != candidates.size();) {
    before = candidates.size();
    std::erase_if(candidates, put_back);
  }
  std::sort(kept.begin(), kept.end());
  state.Reset();
  state.Apply(composed);
  return kept;
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
  // Jobs no later pass may evict but for a job of their queue that outranks them
  // (SnapshotIndex::restored): started again in place by the passes so far, or put back a second
  // time as evicted for nothing. Those that yielded to such a job and came back, or were put back
  // a second time, no job may evict (SnapshotIndex::pinned): each job yields at most once, so
  // the passes cannot go round.
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
  // that outranks it (SnapshotIndex::restored); back again after that, it is pinned. The next
  // pass sees it running since it started in the snapshot, as the next cycle will, not as a start
  // of this cycle (which no drain may take): the first pass's decisions are composed so too.
  auto compose_and_restore = [&] {
    composed = Compose(snapshot, state.get(), history);
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
