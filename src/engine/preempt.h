// Stage 6: preemption planning.
//
// For a pending job that did not place, the planner looks for running jobs to evict so that it
// can. Victims are whole gangs (every replica of a job goes), only preemptible jobs past their
// minimum runtime: jobs of the same queue with a lower priority, and jobs of other queues that
// hold more than their entitlement. Across queues, the two sides compared are the queues just
// below the lowest common ancestor of the two queues (siblings, so that a team reclaims from the
// other team, not from one of its projects), and a plan must keep three rules (PlanAllowed):
//   - the victim side holds more than its entitlement before the plan;
//   - guarantees: if the job's side would then be above its guarantee (borrowing), the victim
//     side must stay at or above its guarantee; if the job's side stays within its guarantee
//     (reclaiming), the victim side must be above its guarantee before the plan;
//   - no loops: after the plan, the job's side is not further above its entitlement than the
//     victim side is (usage - entitlement, in milli-GPUs, over all models), so the victims
//     could never evict the job back.
//
// The price of a victim is the work it loses: its milli-GPUs x (seconds since its last
// checkpoint, or since it started if later, or only its checkpoint cost when it can checkpoint
// within the policy's grace period) plus its milli-GPUs x its restore time. Among the victim
// sets that let the job start in the shape it needs, the planner takes the best in the policy's
// victim_order: kCheapestFirst (default) ranks by total price, then number of victims, then the
// priority of the highest-priority victim, then victims in id order; kLowestPriorityFirst puts
// the highest victim priority first (so that no evicted job outranks a job that then runs in its
// place, which the next cycle would undo), then price, then count, then ids. Every plan is
// simulated on a checkpoint of the working state: evict, try to place, roll back; a plan is
// committed only if the job then places, so nothing is evicted for nothing.
//
// Search. Simulating a plan is a full TryStart(), so the planner first works with arithmetic.
// Per node it estimates how many replicas of the job's largest group would fit once some
// candidates are gone (free milli-GPUs per GPU, whole GPUs, per island when the replica must
// stay in one, CPU and memory; optimistic: isolation and the other groups are left to the
// simulation). Per scope (each domain of the job's gang level holding candidates, and the whole
// pool unless the level is required), per accepted model, it checks whether the replicas could
// fit with every candidate of the scope evicted, and whether evicting candidates of the job's
// queue subtree could bring the gang within each queue limit it would exceed (a scope of "limits
// only" covers a job that has room but no quota). These are necessary conditions: a scope that
// fails them cannot host the job under any plan, and is never simulated; a job that fails them
// everywhere is refused exactly. With reclaim_across_queues, a victim of another queue that the
// rules would not let go even alone with every own-queue candidate is dropped (also exact).
//   - With up to kExactCandidates candidates every subset is considered, in the policy's order;
//     subsets that fail the estimate are skipped, the others simulated until one places, so the
//     choice is the best feasible one (provided that evicting more never takes room away).
//   - With more, candidates holding nothing on a usable node and counting against no exceeded
//     limit are dropped (when every group needs GPUs), and each scope gets one plan, built
//     greedily node by node: per node, the shortest run of its candidates, in the policy's
//     victim order, that makes room for one more replica; the next node is the one whose run adds
//     least to the plan (victims shared by several nodes count once), until the scope has room
//     for the gang; then the first candidates, in victim order, that bring it within each limit.
//     Scopes are planned in the order of a lower bound on their plan, and abandoned once their
//     partial plan is worse than the kPlansSimulated best complete ones, which are therefore the
//     best of all scope plans. Those are simulated in turn; if none places, the best one is grown
//     by one more node and tried again (kGrowths times). The first that places is then trimmed
//     of victims that hold nothing on the nodes the job took (one more simulation). So a refusal
//     means either that no scope could fit the job with all its candidates gone (exact), or that
//     the few plans tried did not place it; and the plan taken is the best of those tried, not
//     necessarily the best overall.
// Each simulated plan counts against the policy's max_preemption_plans budget.
#ifndef GPUPOOL_PREEMPT_H_
#define GPUPOOL_PREEMPT_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "entitlements.h"
#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "order.h"
#include "place.h"
#include "snapshot_index.h"
#include "working_state.h"

namespace gpupool::internal {

class PreemptionPlanner {
 public:
  // Candidate sets up to this size are searched exhaustively.
  static constexpr int kExactCandidates = 10;
  // Above that: plans simulated per job before growing, and how many times the best one grows.
  static constexpr int kPlansSimulated = 4;
  static constexpr int kGrowths = 2;

  PreemptionPlanner(const SnapshotIndex& index, WorkingState& state, Placer& placer,
                    const Entitlements& entitlements, const Policy& policy, Counters& counters);

  struct Plan {
    std::vector<PreemptDecision> preemptions;  // in victim id order
    std::vector<ResizeDecision> resizes;       // elastic groups shrunk, in job id order
    std::vector<ReplicaPlacement> placements;  // of the job that starts
  };
  // Tries to start pending job j by evicting running jobs. On success the victims are released
  // and the job placed in the working state (not committed: the caller commits).
  std::optional<Plan> TryPreempt(int32_t j);

  // Milli-GPU-seconds running job v would lose if evicted now.
  int64_t VictimCost(int32_t v) const;

  // For a job left pending for lack of room: if evicting running jobs (any queue or priority,
  // preemptible and past their minimum runtime) would let it start, names the cheapest prefix
  // of them, in price order, that does, and says which rule or setting keeps them running.
  // Bounded by budgets.max_counterfactual_plans over the cycle.
  void ExplainCounterfactual(int32_t j, PendingDecision& pending);

 private:
  // What a running job holds on one node (from its placements).
  struct Holding {
    int32_t node;
    int64_t milli_per_gpu, cpu_milli, memory_mib;
    std::vector<int32_t> gpus;  // flat GPU ids
  };
  // The replica the search makes room for: one of the job's largest group.
  struct Need {
    int64_t milli_per_gpu = 0, gpu_count = 0, gpu_memory_mib = 0, cpu_milli = 0, memory_mib = 0;
    int64_t replicas = 0;
    // Whole GPUs that must all come from one island of the node.
    bool one_island = false;
  };
  // Where a gang may go: one domain of its gang level, or the whole pool (level kNone), on one
  // GPU model (kNone: any node).
  struct Scope {
    int32_t model = kNone, level = kNone, domain = kNone;
    // Nodes of the scope that hold candidates, ascending.
    std::vector<int32_t> nodes;
    // Replicas that fit on the scope's other nodes: an upper bound (for the gate), and what a
    // bounded look at them found (for building plans).
    int64_t untouched = 0, untouched_known = 0;
    // The job may already have room on this model but a queue limit stops it: the scope asks
    // for no room, only for the limits to be met.
    bool quota_only = false;
    bool may_fit = false;
  };
  // A queue limit the gang would exceed on a model slot, and by how much; and per queue, 1 if
  // its jobs count against the limit (the limited queue's subtree).
  struct LimitNeed {
    int32_t model, queue, slot;
    int64_t shortfall;
    std::vector<uint8_t> counts;
    // The job's candidates that count against it, in victim order.
    std::vector<int32_t> relievers;
  };
  // A victim set as the policy ranks it.
  struct PlanKey {
    int64_t cost = 0;
    int32_t count = 0;
    int32_t top_priority = std::numeric_limits<int32_t>::min();
  };
  struct Candidate {
    PlanKey key;
    std::vector<int32_t> victims;  // ascending
    int32_t scope = kNone;
    int64_t target = 0;  // replicas the plan makes room for
  };
  // The cross-queue rules, tallied victim by victim (PlanAllowed() is built on it).
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

  std::vector<int32_t> Candidates(int32_t j) const;
  // The priority pending job j preempts with: its own, or above every job's when it has waited
  // past the policy's starvation bound.
  int64_t PreemptorPriority(int32_t j) const;
  // The time up to which running job v's work is safe: its last checkpoint, or its start if later.
  int64_t KeptUpTo(int32_t v) const;
  // Before whole jobs: shrinking elastic groups of the job's own queue (among `candidates`) to
  // their minimum, cheapest first, the fewest that let job j start. Jobs with more than one
  // elastic group above its minimum are left to the whole-job search.
  std::optional<Plan> TryShrink(int32_t j, const std::vector<int32_t>& candidates);
  // Seconds of work running job v loses if evicted now (before its restore time).
  int64_t LostSeconds(int32_t v) const;
  // May running job v be a victim at all: preemptible, past its min_runtime_s and the policy's
  // min_victim_run_s, losing at most max_victim_lost_s, not on a node held for a reservation?
  bool MayEvict(int32_t v) const;
  // The part of MayEvict() that cannot change within the cycle, and the same cached.
  bool MayEverEvict(int32_t v) const;
  bool Evictable(int32_t v) const;
  // Side(vq, jq) and Side(jq, vq), cached for the last jq.
  std::pair<int32_t, int32_t> Sides(int32_t vq, int32_t jq) const;
  // The queue that stands for q when it is compared with `other`: q's ancestor (or q) just
  // below their lowest common ancestor; kNone when one queue is an ancestor of the other.
  int32_t Side(int32_t q, int32_t other) const;
  // Do the cross-queue rules allow evicting `victims` for job j?
  bool PlanAllowed(int32_t j, const std::vector<int32_t>& victims) const;
  // Adds victim v to the tally for job j; false (tally unchanged) if no plan for j may hold v
  // together with the victims already tallied (its queue is not comparable with j's, or it is
  // compared through another side).
  bool TallyAdd(int32_t j, int32_t v, RuleTally& tally) const;
  void TallyRemove(int32_t j, int32_t v, RuleTally& tally) const;
  bool TallyAllows(int32_t j, const RuleTally& tally) const;
  int64_t GuaranteeTotal(int32_t q) const;
  // Evicts `victims`, tries to place j, and rolls back. Returns the placements if it fits.
  // Counts one plan in `plans`.
  std::optional<std::vector<ReplicaPlacement>> Simulate(int32_t j,
                                                        const std::vector<int32_t>& victims,
                                                        int64_t& plans);
  std::optional<std::vector<ReplicaPlacement>> Simulate(int32_t j,
                                                        const std::vector<int32_t>& victims) {
    return Simulate(j, victims, counters_.preemption_plans);
  }
  // Why the rules do not let `victim` go for job j (empty if they do).
  std::string WhyKept(int32_t j, int32_t victim) const;
  bool BudgetLeft() const;

  // --- The search (preempt.cc, "Search"). ---
  bool PriorityFirst() const {
    return policy_.preemption.victim_order == VictimOrder::kLowestPriorityFirst;
  }
  bool KeyLess(const PlanKey& a, const PlanKey& b) const;
  bool CandidateLess(const Candidate& a, const Candidate& b) const;
  // Orders victims the way the policy ranks single victims; ties by id.
  bool VictimBefore(int32_t a, int32_t b) const;
  void AddToKey(PlanKey& key, int32_t v) const;
  void BuildHoldings();
  // Sets need_, limits_ and scopes_ for job j and its candidates; node_victims_ lists, per node
  // of a scope, its candidates in victim order. Unless `exact`, drops candidates that cannot
  // help (see the .cc).
  void BuildScopes(int32_t j, std::vector<int32_t>& candidates, bool exact);
  bool Usable(int32_t j, int32_t n, int32_t model) const;
  // Replicas of need_ that fit on node n with the freed amounts added (an upper bound).
  int64_t Fit(int32_t n) const;
  // Adds (sign +1) or takes back (-1) what victim v holds to the freed amounts.
  void Free(int32_t v, int sign);
  void ClearFreed();
  // Could the job fit in some scope with `victims` evicted (necessary condition)? With
  // `mark_scopes`, notes the answer for each scope in Scope::may_fit.
  bool MayFit(const std::vector<int32_t>& victims, bool mark_scopes);
  // Is queue q `ancestor` or below it?
  bool InSubtree(int32_t q, int32_t ancestor) const;
  // Milli-GPUs running job v holds.
  int64_t Milli(int32_t v) const {
    return victim_milli_.empty() ? state_.running_milli(v) : victim_milli_[v];
  }
  // Milli-GPUs by which evicting v lowers the usage a limit counts.
  int64_t Relief(int32_t v, const LimitNeed& limit) const;
  // Would evicting `victims` bring the gang within every limit on `model`?
  bool QuotaMet(int32_t model, const std::vector<int32_t>& victims) const;
  std::vector<int32_t> ExactSearch(int32_t j, std::vector<int32_t> candidates);
  std::vector<int32_t> HeuristicSearch(int32_t j, const std::vector<int32_t>& candidates);
  // The greedy plan for scope s making room for `target` replicas, or nullopt if there is
  // none or it cannot beat `bound` (when given).
  std::optional<Candidate> PlanScope(int32_t j, int32_t s, int64_t target, const Candidate* bound);
  // The shortest run of node n's candidates, after those already chosen, that fits one more
  // replica there, appended to `step`; false if there is none.
  bool NodeStep(int32_t j, int32_t n, RuleTally& tally, std::vector<int32_t>& step);

  const SnapshotIndex& index_;
  WorkingState& state_;
  Placer& placer_;
  const Entitlements& entitlements_;
  const Policy& policy_;
  Counters& counters_;
  std::vector<uint8_t> evicted_;
  // VictimCost() per job, computed on first use (-1: not yet): a price does not change within a
  // cycle.
  mutable std::vector<int64_t> cost_cache_;
  // Every running job that could ever be a victim (preemptible, past its minimum runtime), by
  // price then id; built on the first counterfactual of the cycle. Evicted ones are skipped
  // where it is read.
  std::vector<int32_t> counterfactual_pool_;
  bool counterfactual_pool_built_ = false;
  // Running jobs of each queue, in id order; and those that are Evictable(), in id order, with
  // their queues (built on first use).
  std::vector<std::vector<int32_t>> running_by_queue_;
  mutable bool running_built_ = false;
  mutable std::vector<int32_t> running_, running_queue_;
  // MayEverEvict() per job, on first use (-1: not yet).
  mutable std::vector<int8_t> may_evict_;
  // GuaranteeTotal() per queue (-1: not yet); Sides() for queue sides_for_.
  mutable std::vector<int64_t> guarantee_total_;
  mutable int32_t sides_for_ = kNone;
  mutable std::vector<std::pair<int32_t, int32_t>> sides_;
  std::vector<int32_t> queue_depth_;

  // Search state, reused from job to job. Built on first use, per running job: its holdings,
  // its milli-GPUs, the GPU model of all its nodes (kMixedModels if they differ), and its rank
  // in the policy's victim order (prices and priorities do not change within a cycle); per
  // node, the running jobs there in that order.
  static constexpr int32_t kMixedModels = -2;
  std::vector<std::vector<Holding>> holdings_;
  std::vector<int64_t> victim_milli_;
  std::vector<int32_t> victim_model_, victim_rank_;
  std::vector<int32_t> node_jobs_begin_, node_jobs_;
  // Per job: 1 while it is a candidate of the job being planned.
  std::vector<uint8_t> is_candidate_;
  Need need_;
  std::vector<Scope> scopes_;
  std::vector<LimitNeed> limits_;
  // Per node: the slice of node_victims_ with its candidates (node_first_[n] < 0: none).
  std::vector<int32_t> node_first_, node_end_;
  std::vector<int32_t> node_victims_;
  std::vector<int32_t> touched_nodes_;
  // Freed amounts per GPU and node for the victims being tried, and what to clear.
  std::vector<int64_t> freed_gpu_, freed_cpu_, freed_memory_;
  std::vector<int32_t> freed_gpus_touched_, freed_nodes_touched_;
  // Per job: 1 while it is in the plan being built. Per node: its position in the scope being
  // planned (-1: not in it).
  std::vector<uint8_t> chosen_;
  std::vector<int32_t> scope_pos_;
  mutable std::vector<int64_t> island_free_;
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_PREEMPT_H_
