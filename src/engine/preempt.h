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
//
// Who may be a victim, what it costs and the cross-queue rules are VictimRules (victim_rules.h).
#ifndef GPUPOOL_PREEMPT_H_
#define GPUPOOL_PREEMPT_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "entitlements.h"
#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "place.h"
#include "snapshot_index.h"
#include "victim_rules.h"
#include "working_state.h"

namespace gpupool::internal {

class PreemptionPlanner {
 public:
  // Candidate sets up to this size are searched exhaustively.
  static constexpr int kExactCandidates = 10;
  // Above that: plans simulated per job before growing, and how many times the best one grows.
  static constexpr int kPlansSimulated = 4;
  static constexpr int kGrowths = 2;

  // All references must outlive the planner; `counters` receives the plans simulated, the jobs
  // evicted and the groups shrunk.
  PreemptionPlanner(const SnapshotIndex& index, WorkingState& state, Placer& placer,
                    const Entitlements& entitlements, const Policy& policy, Counters& counters);

  struct Plan {
    std::vector<PreemptDecision> preemptions;  // in victim id order
    std::vector<ResizeDecision> resizes;       // elastic groups shrunk, in job id order
    std::vector<ReplicaPlacement> placements;  // of the job that starts
  };
  // Tries to start pending job j by shrinking or evicting running jobs. On success the victims
  // are released (or shrunk) and the job placed in the working state (not committed: the caller
  // commits).
  std::optional<Plan> TryPreempt(int32_t j);

  // For a job left pending for lack of room: see ExplainWith(). Simulates on the
  // working state and rolls back (the caller commits nothing new).
  void ExplainCounterfactual(int32_t j, PendingDecision& pending);

 private:
  // The search (the "Search" part of the .cc): the best victim set among `candidates` that
  // `simulate` confirms, in id order; empty if none was found.
  std::vector<int32_t> FindVictims(int32_t j, std::vector<int32_t> candidates, TryVictims simulate);
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

  // --- Ranking. ---
  bool PriorityFirst() const {
    return policy_.preemption.victim_order == VictimOrder::kLowestPriorityFirst;
  }
  bool KeyLess(const PlanKey& a, const PlanKey& b) const;
  bool CandidateLess(const Candidate& a, const Candidate& b) const;
  // Orders victims the way the policy ranks single victims; ties by id.
  bool VictimBefore(int32_t a, int32_t b) const;
  void AddToKey(PlanKey& key, int32_t v) const;

  // --- What the job needs and where it may go (once per cycle, then per job). ---
  // Per running job: its holdings, the GPU model of all its nodes, its rank in victim order;
  // per node: its running jobs in that order.
  void BuildHoldings();
  // Sets need_, limits_ and scopes_ for job j and its candidates; node_victims_ lists, per node
  // of a scope, its candidates in victim order. Unless `exact`, drops candidates that cannot
  // help.
  void BuildScopes(int32_t j, std::vector<int32_t>& candidates, bool exact);
  void SetNeed(const JobInfo& info);
  void FindLimits(const JobInfo& info, const std::vector<int32_t>& models);
  void DropUnhelpful(int32_t j, std::vector<int32_t>& candidates);
  void ListNodeVictims(int32_t j, const std::vector<int32_t>& candidates);
  void AddDomainScopes(int32_t j, int32_t model, int32_t level,
                       const std::vector<int32_t>& of_model);
  void AddPoolScope(int32_t j, int32_t model, std::vector<int32_t> of_model);
  // May job j use node n (on `model`, kNone: any model the job accepts)?
  bool Usable(int32_t j, int32_t n, int32_t model) const;

  // --- The estimate. ---
  // Replicas of need_ that fit on node n with the freed amounts added (an upper bound).
  int64_t Fit(int32_t n) const;
  // Adds (sign +1) or takes back (-1) what victim v holds to the freed amounts.
  void Free(int32_t v, int sign);
  void ClearFreed();
  // Could the job fit in some scope with `victims` evicted (necessary condition)? With
  // `mark_scopes`, notes the answer for each scope in Scope::may_fit.
  bool MayFit(const std::vector<int32_t>& victims, bool mark_scopes);
  // Milli-GPUs by which evicting v lowers the usage a limit counts.
  int64_t Relief(int32_t v, const LimitNeed& limit) const;
  // Would evicting `victims` bring the gang within every limit on `model`?
  bool QuotaMet(int32_t model, const std::vector<int32_t>& victims) const;

  // --- The two searches. ---
  std::vector<int32_t> ExactSearch(int32_t j, std::vector<int32_t> candidates, TryVictims simulate);
  std::vector<int32_t> HeuristicSearch(int32_t j, const std::vector<int32_t>& candidates,
                                       TryVictims simulate);
  // Scopes that may fit, by a lower bound on their plan's key.
  std::vector<std::pair<PlanKey, int32_t>> ScopesByLowerBound(
      const std::vector<int32_t>& candidates) const;
  // The best kPlansSimulated scope plans, best first, without duplicates.
  std::vector<Candidate> BestScopePlans(int32_t j,
                                        const std::vector<std::pair<PlanKey, int32_t>>& order);
  // The greedy plan for scope s making room for `target` replicas, or nullopt if there is
  // none or it cannot beat `bound` (when given).
  std::optional<Candidate> PlanScope(int32_t j, int32_t s, int64_t target, const Candidate* bound);
  // PlanScope(), room: adds node-local steps, the one that adds least first, until the scope
  // has room for `target` replicas; false if it cannot (or cannot beat `bound`).
  bool PlanRoom(int32_t j, const Scope& scope, int64_t target, const Candidate* bound,
                Candidate& plan, VictimRules::RuleTally& tally);
  // PlanScope(), limits: adds the first candidates, in victim order, that bring the gang within
  // each limit the scope's model would exceed; false if they cannot.
  bool PlanLimits(int32_t j, const Scope& scope, const Candidate* bound, Candidate& plan,
                  VictimRules::RuleTally& tally);
  // Adds victim v (which the rules allow) to `plan`.
  void Take(int32_t j, int32_t v, Candidate& plan, VictimRules::RuleTally& tally);
  // The shortest run of node n's candidates, after those already chosen, that fits one more
  // replica there, appended to `step`; false if there is none.
  bool NodeStep(int32_t j, int32_t n, VictimRules::RuleTally& tally, std::vector<int32_t>& step);
  // The victims of `chosen` that hold something on a node of `placed`.
  std::vector<int32_t> HoldersOn(const std::vector<int32_t>& chosen,
                                 const std::vector<ReplicaPlacement>& placed) const;

  // The running jobs that may go for pending job j by eligibility, priority and rule 1 of the
  // cross-queue rules, in id order (the other rules are left to DropNeverAllowed and the search).
  std::vector<int32_t> Candidates(int32_t j) const;
  // Before whole jobs: shrinking elastic groups of the job's own queue (among `candidates`) to
  // their minimum, cheapest first, the fewest that let job j start. Jobs with more than one
  // elastic group above its minimum are left to the whole-job search.
  std::optional<Plan> TryShrink(int32_t j, const std::vector<int32_t>& candidates);
  // The Preempt decisions for evicting `victims` for job j, worded with the state before the
  // plan.
  std::vector<PreemptDecision> PreemptDecisions(int32_t j,
                                                const std::vector<int32_t>& victims) const;
  // Evicts `victims` and places j for real (the steps a simulation took, so it places); rolls
  // back and returns nullopt if j does not place.
  std::optional<std::vector<ReplicaPlacement>> Evict(int32_t j,
                                                     const std::vector<int32_t>& victims);
  // Evicts `victims`, tries to place j, and rolls back. Returns the placements if it fits.
  // Counts one plan in `plans`.
  std::optional<std::vector<ReplicaPlacement>> Simulate(int32_t j,
                                                        const std::vector<int32_t>& victims,
                                                        int64_t& plans);
  // Stage 9 (see ExplainCounterfactual()): every running job that could ever be a victim, by
  // price then id (built on first use); and the explanation, with `simulate` counting
  // counterfactual plans.
  static constexpr size_t kMostVictims = 64;
  const std::vector<int32_t>& CounterfactualPool();
  void ExplainWith(int32_t j, PendingDecision& pending, TryVictims simulate);
  std::vector<int32_t> pool_;
  bool pool_built_ = false;
  bool BudgetLeft() const {
    const int64_t budget = policy_.budgets.max_preemption_plans;
    return budget <= 0 || counters_.preemption_plans < budget;
  }

  const SnapshotIndex& index_;
  WorkingState& state_;
  Placer& placer_;
  const Entitlements& entitlements_;
  const Policy& policy_;
  Counters& counters_;
  VictimRules rules_;
  // Built on first use, per running job: its holdings, the GPU model of all its nodes
  // (kMixedModels if they differ), and its rank in the policy's victim order (prices and
  // priorities do not change within a cycle); per node, the running jobs there in that order.
  static constexpr int32_t kMixedModels = -2;
  std::vector<std::vector<Holding>> holdings_;
  std::vector<int32_t> victim_model_, victim_rank_;
  std::vector<int32_t> node_jobs_begin_, node_jobs_;
  // Per job: 1 while it is a candidate of the job being planned.
  std::vector<uint8_t> is_candidate_;
  // Per job planned, reused from job to job.
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
  // Running jobs of each queue, in id order; and those that MayEverEvict(), in id order, with
  // their queues (built on first use).
  std::vector<std::vector<int32_t>> running_by_queue_;
  mutable bool running_built_ = false;
  mutable std::vector<int32_t> running_, running_queue_;
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_PREEMPT_H_
