// Stage 6, the victim search: among the running jobs the rules let go (victim_rules.h), the
// victim set that lets a pending job start and that the policy ranks best.
//
// The ranking. The policy's victim_order: kCheapestFirst (default) ranks sets by total price,
// then number of victims, then the priority of the highest-priority victim, then victims in id
// order; kLowestPriorityFirst puts the highest victim priority first (so that no evicted job
// outranks a job that then runs in its place, which the next cycle would undo), then price,
// then count, then ids. Before either, a set that takes only jobs of queues over their GPU-hour
// budget ranks before any set that touches a queue within budget (docs/budgets.md).
//
// Arithmetic first. Simulating a plan is a full TryStart() (the planner's Simulate(), handed in
// as TryVictims), so the search first works with arithmetic. Per node it estimates how many
// replicas of the job's largest group would fit once some candidates are gone (Fit: free
// milli-GPUs per GPU, whole GPUs, per island when the replica must stay in one, CPU and memory;
// optimistic: isolation and the other groups are left to the simulation). Per scope (each
// domain of the job's gang level holding candidates, and the whole pool unless the level is
// required), per accepted model, it checks whether the replicas could fit with every candidate
// of the scope evicted, and whether evicting candidates of the job's queue subtree could bring
// the gang within each queue limit it would exceed (a scope of "limits only" covers a job that
// has room but no quota). These are necessary conditions (MayFit): a scope that fails them
// cannot host the job under any plan, and is never simulated; a job that fails them everywhere
// is refused exactly.
//
// Then one of two searches:
//   - With up to kExactCandidates candidates every subset is considered, in the policy's order;
//     subsets the rules refuse or that fail the estimate are skipped, the others simulated until
//     one places, so the choice is the best feasible one (provided that evicting more never takes
//     room away).
//   - With more, candidates holding nothing on a usable node and counting against no exceeded
//     limit are dropped (when every group needs GPUs), and each scope gets one plan, built
//     greedily node by node: per node, the shortest run of its candidates, in the policy's
//     victim order, that makes room for one more replica (NodeStep); the next node is the one
//     whose run adds least to the plan (victims shared by several nodes count once), until the
//     scope has room for the gang; then the first candidates, in victim order, that bring it
//     within each limit. Scopes are planned in the order of a lower bound on their plan, and
//     abandoned once their partial plan is worse than the kPlansSimulated best complete ones,
//     which are therefore the best of all scope plans. Those are simulated in turn; if none
//     places, the best one is grown by one more replica and tried again (kGrowths times). The
//     first that places is then trimmed of victims that hold nothing on the nodes the job took
//     (one more simulation). If no plan was built or none placed, the last resort
//     (TrimmedFromAll): every candidate, the dropped ones too, simulated at once, then trimmed
//     while the job still places, and mended if the cross-queue rules refuse what is left. So a
//     refusal means that no scope could fit the job with all its candidates gone (exact), that
//     evicting them all does not place it (simulated), that the rules refused the trimmed set,
//     or that the budget ran out; and the plan taken is the best of those tried, not
//     necessarily the best overall.
// Each simulated plan counts against the policy's max_preemption_plans budget. Everything is
// ordered by integers and dense indices.
#ifndef GPUPOOL_VICTIM_SEARCH_H_
#define GPUPOOL_VICTIM_SEARCH_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "snapshot_index.h"
#include "victim_rules.h"
#include "working_state.h"

namespace gpupool::internal {

// Is there budget left for one more simulated plan (budgets.max_preemption_plans, 0: none)?
inline bool PlanBudgetLeft(const Policy& policy, const Counters& counters) {
  const int64_t budget = policy.budgets.max_preemption_plans;
  return budget <= 0 || counters.preemption_plans < budget;
}

class VictimSearch {
 public:
  // Candidate sets up to this size are searched exhaustively.
  static constexpr int kExactCandidates = 10;
  // Above that: plans simulated per job before growing, and how many times the best one grows.
  static constexpr int kPlansSimulated = 4;
  static constexpr int kGrowths = 2;
  // When none of those places the job: victims taken back, one simulation each, from the plan
  // of every candidate.
  static constexpr int kTrimSimulations = 16;

  // All references must outlive the search. Sets counters.budget_exhausted when the plan budget
  // stops it.
  VictimSearch(const SnapshotIndex& index, const WorkingState& state, const VictimRules& rules,
               const Policy& policy, Counters& counters);

  // The best victim set for pending job j among `candidates` (running jobs the rules let go, in
  // id order) that `simulate` confirms lets j start, in id order; empty if none was found.
  std::vector<int32_t> Find(int32_t j, std::vector<int32_t> candidates, TryVictims simulate);

 private:
  // What a running job holds on one node (from its placements).
  struct Holding {
    int32_t node;
    int64_t milli_per_gpu, cpu_milli, memory_mib;
    absl::Span<const int32_t> gpus;  // flat GPU ids, viewed in the SnapshotIndex
  };
  // The replica the search makes room for: one of the job's largest group.
  struct Need {
    int64_t milli_per_gpu = 0, gpu_count = 0, gpu_memory_mib = 0, cpu_milli = 0, memory_mib = 0;
    int64_t replicas = 0;
    // At most this many replicas on one node (topology.max_replicas_per_node).
    int64_t per_node = std::numeric_limits<int32_t>::max();
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
  // A victim set as the policy ranks it: sets that take only jobs of queues over their GPU-hour
  // budget first (touches_within_budget 0: over-budget queues are reclaimed first), then by the
  // policy's victim order. Without budgets every set has 1, so only the victim order counts.
  struct PlanKey {
    int32_t touches_within_budget = 0;
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
  // `candidates` without those that cannot help; `every_candidate` with them.
  std::vector<int32_t> HeuristicSearch(int32_t j, const std::vector<int32_t>& candidates,
                                       const std::vector<int32_t>& every_candidate,
                                       TryVictims simulate);
  // The greedy search's last resort: every candidate evicted; if that places job j, the victims
  // on the nodes it took, then fewer, the costliest taken back first while it still places (at
  // most kTrimSimulations tries); if the rules refuse that, one more candidate in victim order,
  // or else candidates of j's own queue, until they allow it. nullopt if evicting every
  // candidate does not place j, or the rules refuse every set tried.
  std::optional<std::vector<int32_t>> TrimmedFromAll(int32_t j,
                                                     const std::vector<int32_t>& candidates,
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
  bool BudgetLeft() const { return PlanBudgetLeft(policy_, counters_); }

  const SnapshotIndex& index_;
  const WorkingState& state_;
  const VictimRules& rules_;
  const Policy& policy_;
  Counters& counters_;

  // Built on first use, per running job: its holdings, the GPU model of all its nodes
  // (kMixedModels if they differ), and its rank in the policy's victim order (prices and
  // priorities do not change within a cycle); per node, the running jobs there in that order.
  static constexpr int32_t kMixedModels = -2;
  // What each running job holds: job v's replicas are holdings_[holding_begin_[v],
  // holding_begin_[v + 1]) (empty until the first Find() builds them).
  std::vector<Holding> holdings_;
  std::vector<int32_t> holding_begin_;
  absl::Span<const Holding> Holdings(int32_t v) const {
    return absl::MakeConstSpan(holdings_).subspan(holding_begin_[v],
                                                  holding_begin_[v + 1] - holding_begin_[v]);
  }
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
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_VICTIM_SEARCH_H_
