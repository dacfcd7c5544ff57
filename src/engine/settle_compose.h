// Settling's bookkeeping (docs/engine.md, "Settling: the cycle is a fixed point"; the rules are
// listed at the top of settle.cc): what the passes decided for each job (History), the state
// they act on (SettleState), and the cycle's decisions composed from both: the difference
// between the snapshot and the settled state (Compose()), the job each eviction was for in the
// end (NameBeneficiaries()), and the jobs evicted for nothing, put back where they ran
// (KeepEvictedForNothing()).
#ifndef GPUPOOL_SETTLE_COMPOSE_H_
#define GPUPOOL_SETTLE_COMPOSE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gpupool/apply.h"
#include "gpupool/decisions.h"
#include "gpupool/snapshot.h"
#include "internal/check.h"

namespace gpupool::internal {

// At most this many passes run in a cycle (a cycle cut there is not settled).
inline constexpr int kMaxPasses = static_cast<int>(kMaxSettlingPasses);

// Same replicas on the same GPUs (gpu_milli may be left 0 in a snapshot's placements).
bool SamePlace(const std::vector<ReplicaPlacement>& a, const std::vector<ReplicaPlacement>& b);

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
Moves Compose(const Snapshot& snapshot, const Snapshot& settled, const History& history);

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
void NameBeneficiaries(const Snapshot& snapshot, const History& history, Decisions& out);

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
                                               Moves& composed, SettleState& state);

// A job a pass evicted and a later pass (or stage 6b) started again on exactly the GPUs it ran
// on, each GPU with the same share of it, but with its replicas permuted among them (groups of
// equal GPU request placed the other way round; as many replicas on each node as before): the
// host would restart it only to swap its replicas. Each such job of `composed` (in job-id order;
// evicted for another job, not stopped by a rule) is left as it ran instead, when the
// nodes' CPU and memory allow its old arrangement; it then counts as put back in place (settle.cc,
// `restored`). `composed` and `state` (left applied) change accordingly; the ids are returned.
std::vector<std::string> KeepPermutedInPlace(Moves& composed, SettleState& state);

}  // namespace gpupool::internal

#endif  // GPUPOOL_SETTLE_COMPOSE_H_
