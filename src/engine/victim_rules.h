// Stage 6, the rules of preemption: which running jobs may be victims, what evicting one costs,
// and which victim sets the cross-queue rules allow. The victim search (victim_search.h) and the
// explanation of pending jobs (counterfactual.h) ask these questions; the planner (preempt.h)
// puts the answers together. Nothing here simulates a plan: every answer is arithmetic on the
// snapshot, the policy and the working state.
//
// Who may be a victim. A running job that is preemptible, has run past its own min_runtime_s and
// the policy's min_victim_run_s, is not redoing work it has already lost once (a job that
// resumed and has not checkpointed since: RedoingLostWork(), lost_work.h), would lose at most
// max_victim_lost_s of work (when that is set), and holds nothing on a node held for a starving
// job's reservation. A job evicted or shrunk once in a cycle is not taken again in that cycle.
// For a pending job of the same queue, only jobs of lower priority than the job's preemptor
// priority may go (a job past the starvation bound outranks every job of its queue). Across
// queues, with reclaim_across_queues, jobs of queues whose side holds more than its entitlement
// may go (with reclaim_lower_priority_only, only those of lower priority). Whatever allows it, a
// job below a restoring headroom rule's min_priority never takes a job at or above it off the
// rule's model (HeadroomKeeps()).
//
// Sides. Two queues are compared through their ancestors just below their lowest common
// ancestor (siblings, so that a team reclaims from the other team, not from one of its
// projects); queues of different trees are compared through their roots, and a queue is never
// compared with its own ancestor or descendant.
//
// The cross-queue rules. A plan with victims of other queues must keep three (PlanAllowed):
//   - the victim side holds more than its entitlement before the plan;
//   - guarantees: if the job's side would then be above its guarantee (borrowing), the victim
//     side must stay at or above its guarantee; if the job's side stays within its guarantee
//     (reclaiming), the victim side must be above its guarantee before the plan;
//   - no loops: after the plan, the job's side is not further above its entitlement than the
//     victim side is (usage - entitlement, in milli-GPUs, over all models), so the victims
//     could never evict the job back.
// Victims of other queues in one plan must all be compared through the same side of the job.
//
// The price of a victim is the work it loses: its milli-GPUs x (seconds since its last
// checkpoint, or since it started if later, or only its checkpoint cost when it can checkpoint
// within the policy's checkpoint_grace_s) plus its milli-GPUs x its restore time. Prices and
// priorities do not change within a cycle, so both are cached.
#ifndef GPUPOOL_VICTIM_RULES_H_
#define GPUPOOL_VICTIM_RULES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "entitlements.h"
#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "snapshot_index.h"
#include "working_state.h"

namespace gpupool::internal {

// How the search and the counterfactual test a victim set for the job they plan for: evict the
// victims on a checkpoint of the working state, try to start the job, roll back (the planner's
// Simulate()). Returns the job's placements if it starts; each call counts one plan.
using TryVictims = absl::FunctionRef<std::optional<std::vector<ReplicaPlacement>>(
    const std::vector<int32_t>& victims)>;

class VictimRules {
 public:
  // All references must outlive the rules. The working state is read as it is at each call:
  // queue usage changes as jobs start and victims go.
  VictimRules(const SnapshotIndex& index, const WorkingState& state,
              const Entitlements& entitlements, const Policy& policy);

  // --- Eligibility. ---

  // May running job v be a victim now: MayEverEvict(), and not on a node held for a starving
  // job's reservation (which can change within the cycle)?
  bool MayEvict(int32_t v) const { return MayEverEvict(v) && !state_.OnHeldNode(v); }
  // The part of MayEvict() that cannot change within the cycle: preemptible, past its
  // min_runtime_s and the policy's min_victim_run_s, not redoing lost work (it resumed and has
  // not checkpointed since), losing at most max_victim_lost_s. Cached.
  bool MayEverEvict(int32_t v) const;
  // MayEvict() for a starving job's drain with preemption.starving_drain_past_min_runtime: the
  // job's own min_runtime_s does not count; every other rule does.
  bool MayEvictPastMinRuntime(int32_t v) const {
    return !state_.OnHeldNode(v) && (MayEverEvict(v) || ComputeMayEverEvict(v, false));
  }
  // A restored job (SnapshotIndex::restored) is no victim of MayEvict(): taken for headroom, it
  // would only start again in place. Consolidation may move it (never in place) unless it is
  // pinned, as the next cycle would (Consolidator::Movable). A job of its own queue that outranks
  // it may still take its GPUs, or drain them for its reservation, and a job of another queue may
  // reclaim it by the cross-queue rules, as the next cycle would let them. May restored job v
  // yield so at all: not once it has yielded (SnapshotIndex::pinned: each job yields once at
  // most, so that two queues taking GPUs back from each other cannot make of it a loop)?
  bool RestoredMayYield(int32_t v) const { return index_.restored(v) && !index_.pinned(v); }
  // May restored job v yield now, by every other rule of MayEvict()?
  bool MayEvictRestored(int32_t v) const {
    return RestoredMayYield(v) && !state_.OnHeldNode(v) && ComputeMayEverEvict(v, true, false);
  }
  // A headroom rule that restores (HeadroomRule::restore) keeps running job v from job j when v
  // runs on a GPU of the rule's model, v's priority is at or above the rule's min_priority and
  // j's is below it: v is work the headroom is kept for, so once evicted it could start again on
  // the headroom, and the rule would then evict j to restore it (a loop, within a cycle's
  // settling passes and from cycle to cycle). The rule with the lowest min_priority that keeps
  // v, or nullptr. O(v's placements x rules).
  const HeadroomRule* HeadroomKeeps(int32_t j, int32_t v) const;
  // Has running job v been evicted or shrunk in this cycle (it is no victim again)?
  bool taken(int32_t v) const { return taken_[v] != 0; }
  void NoteTaken(int32_t v) { taken_[v] = 1; }
  // The cross-queue rules take a victim of the job's own queue off the job's side (it frees its
  // GPUs for good). One that would start again elsewhere at once, once the plan is carried out
  // (the second placement pass would restart it), does not: PreemptionPlanner marks such victims
  // for the job it plans for, and clears the marks when done.
  void NoteRestarts(int32_t v) {
    if (restarts_.empty()) restarts_.assign(taken_.size(), 0);
    restarts_[v] = 1;
  }
  void ClearRestarts() { restarts_.clear(); }
  bool restarts(int32_t v) const { return !restarts_.empty() && restarts_[v] != 0; }
  // The priority pending job j preempts with: its own, or above every job's when it has waited
  // past the policy's starvation bound (and starving_outrank is on).
  int64_t PreemptorPriority(int32_t j) const;
  // Whether pending job j outranks running job v of its own queue: v's priority
  // (VictimPriority()) is below j's (PreemptorPriority()), or equal and j takes back from v;
  // and v is not a shorter victim that stays (ShorterVictimStays()).
  bool Outranks(int32_t j, int32_t v) const;
  // Outranks() with v's own priority even when v is a tentative start: as the next cycle, where
  // v runs since now, compares them.
  bool OutranksOnceRunning(int32_t j, int32_t v) const;
  // preemption.take_back_from_gpus: j needs at least that many GPUs and has been pending
  // take_back_after_s, v holds fewer GPUs than j needs and was submitted after j (the priorities
  // are not compared here).
  bool TakesBack(int32_t j, int32_t v) const;
  // Seconds j must still be pending before it takes back from v (0: it does now); nullopt when
  // the rule never lets j take from v (off, j too small, v as large as j or submitted first).
  std::optional<int64_t> TakeBackWaitLeft(int32_t j, int32_t v) const;
  // In words, when j is only waiting out take_back_after_s to take back from v (same priority,
  // the other conditions met): who may take whom back, and in how many seconds; empty otherwise.
  std::string TakeBackLater(int32_t j, int32_t v) const;
  // preemption.victim_remaining_percent: j, of priority above v's (`victim`) by at most
  // victim_remaining_max_gap (or by any amount with 0), expects to need so much work that v,
  // expected to need no more than that percent of it, stays. Never when the rule is off, when
  // j starves, when either has no runtime estimate, or when v is a start of this cycle.
  bool ShorterVictimStays(int32_t j, int32_t v, int64_t victim) const;
  // In words, why ShorterVictimStays(j, v) keeps v; empty when it does not.
  std::string WhyShorterVictimStays(int32_t j, int32_t v) const;

  // --- Price. ---

  // The time up to which running job v's work is safe: its last checkpoint, or its start if
  // later.
  int64_t KeptUpTo(int32_t v) const;
  // Seconds of work running job v loses if evicted now (before its restore time).
  int64_t LostSeconds(int32_t v) const;
  // Milli-GPU-seconds running job v would lose if evicted now, restore time included.
  // The priority victim v is compared with: its own, or for a tentative start of the cycle being
  // settled the rank it started with (SnapshotIndex::tentative_rank()).
  int64_t VictimPriority(int32_t v) const {
    return index_.tentative(v) ? index_.tentative_rank(v) : index_.job(v).job->priority;
  }
  // The price of evicting running job v as the next cycle would see it, even when it is a
  // tentative start (for explanations: counterfactual.cc).
  int64_t RunningCost(int32_t v) const;
  int64_t VictimCost(int32_t v) const { return cost_[v] >= 0 ? cost_[v] : ComputeVictimCost(v); }
  // Whether running job v's queue is within its GPU-hour budget, or the policy only reports
  // budgets (Entitlements::budget_enforced): victims of queues over an enforced budget are taken
  // before any others (docs/budgets.md).
  bool WithinBudget(int32_t v) const;
  // Milli-GPUs running job v holds (0 for a job that does not run).
  int64_t Milli(int32_t v) const {
    if (milli_.empty()) ComputeMilli();
    return milli_[v];
  }

  // --- The queue tree. ---

  // The queue that stands for q when it is compared with `other`: q's ancestor (or q) just
  // below their lowest common ancestor; kNone when one queue is an ancestor of the other.
  int32_t Side(int32_t q, int32_t other) const;
  // Side(vq, jq) and Side(jq, vq), cached for the last jq asked about.
  std::pair<int32_t, int32_t> Sides(int32_t vq, int32_t jq) const {
    if (jq != sides_for_) ResetSides(jq);
    if (sides_[vq].first == kUnset) sides_[vq] = {Side(vq, jq), Side(jq, vq)};
    return sides_[vq];
  }
  // Is queue q `ancestor` or below it?
  bool InSubtree(int32_t q, int32_t ancestor) const;

  // --- The cross-queue rules. ---

  // Rule 1 alone: may jobs of queue q go for a job of queue jq, another queue? (The queues are
  // comparable and q's side holds more than its entitlement: only then can it give anything
  // back.)
  bool SideAboveEntitlement(int32_t q, int32_t jq) const;
  // Drops from `candidates` (for job j) every victim of another queue that no allowed plan can
  // hold: one the rules refuse even taken alone together with every candidate of j's own queue
  // (which only loosens them, as leaving out other victims of other queues does). Exact.
  void DropNeverAllowed(int32_t j, std::vector<int32_t>& candidates) const;
  // Do the cross-queue rules allow evicting `victims` for job j?
  bool PlanAllowed(int32_t j, const std::vector<int32_t>& victims) const;

  // The rules tallied victim by victim, for searches that grow and shrink a plan.
  struct RuleTally {
    int32_t job_side = kNone;
    int32_t cross = 0;  // victims of other queues
    int64_t own_freed = 0;
    struct Taken {
      int32_t side;
      int64_t milli;
      int32_t victims;
    };
    std::vector<Taken> taken;
  };
  // Adds victim v to the tally for job j; false (tally unchanged) if no plan for j may hold v
  // together with the victims already tallied (its queue is not comparable with j's, or it is
  // compared through another side).
  bool TallyAdd(int32_t j, int32_t v, RuleTally& tally) const;
  // Takes back a victim TallyAdd() accepted.
  void TallyRemove(int32_t j, int32_t v, RuleTally& tally) const;
  // Do the rules allow the tallied plan?
  bool TallyAllows(int32_t j, const RuleTally& tally) const;
  // Guarantee of queue q over all models: the sum of its per-model guarantees, or its any-model
  // guarantee if larger. Cached.
  int64_t GuaranteeTotal(int32_t q) const;

  // Why the rules (eligibility first, then the same-queue and cross-queue rules) do not let
  // `victim` go for job j, in words; empty if they do.
  std::string WhyKept(int32_t j, int32_t victim) const;

 private:
  static constexpr int32_t kUnset = kNone - 1;

  // Does j outrank a victim v of priority `victim` (its own, or the rank it started with)?
  bool OutranksAt(int32_t j, int32_t v, int64_t victim) const;

  // One cross-queue comparison: the job's side `mine` holding `mine_after` after the plan,
  // against victim side `side` as it is before the plan.
  struct Comparison {
    int32_t mine, side;
    int64_t mine_after;
    int64_t mine_over;                      // mine_after - mine's entitlement
    bool borrowing;                         // mine_after above mine's guarantee
    int64_t usage, entitlement, guarantee;  // of `side`
  };
  enum class Refusal { kAllowed, kNotAboveEntitlement, kGuarantee, kNoLoop };
  Comparison Compare(int32_t mine, int64_t mine_after, int32_t side) const;
  // The first rule that refuses taking `milli` milli-GPUs from c.side, in the order WhyKept()
  // names them.
  static Refusal Refuses(const Comparison& c, int64_t milli);
  // The most milli-GPUs a plan may take from c.side (negative: nothing).
  static int64_t MostTaken(const Comparison& c);

  // MayEverEvict(), uncached; `own_minimum`: whether the job's min_runtime_s counts;
  // `restored_stays`: whether a restored job is kept.
  bool ComputeMayEverEvict(int32_t v, bool own_minimum = true, bool restored_stays = true) const;
  int64_t ComputeVictimCost(int32_t v) const;
  void ComputeMilli() const;
  void ResetSides(int32_t jq) const;

  const SnapshotIndex& index_;
  const WorkingState& state_;
  const Entitlements& entitlements_;
  const Policy& policy_;
  std::vector<uint8_t> taken_;
  std::vector<uint8_t> restarts_;  // NoteRestarts(); empty: none
  // Caches, filled on first use (-1: not yet).
  mutable std::vector<int64_t> cost_;
  mutable std::vector<int64_t> milli_;
  mutable std::vector<int8_t> may_ever_evict_;
  mutable std::vector<int64_t> guarantee_total_;
  // The model index of each rule of policy_.headroom, in policy order (HeadroomKeeps()).
  std::vector<int32_t> headroom_model_;
  // Sides() for queue sides_for_.
  mutable int32_t sides_for_ = kUnset;
  mutable std::vector<std::pair<int32_t, int32_t>> sides_;
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_VICTIM_RULES_H_
