// Stage 5: place gangs, all or nothing.
//
// For each job, in the order stage 4 gives, the placer tries the job's accepted GPU models in
// preference order. On one model it places the gang as a transaction on the working state:
// groups largest-replica first, each replica on the node the placement strategy prefers among
// the nodes where it fits. With a gang topology constraint it tries whole domains of that level
// one by one, most-filled first for best-fit (keeping emptier domains whole for larger gangs),
// pruned by each domain's free-capacity aggregate. When a replica does not fit after others were
// placed, a bounded search over the gang's placements in the scope follows (gang_search.cc);
// if that fails too, the whole gang rolls back. Elastic groups then grow replica by replica
// while they fit.
//
// Candidate search: best-fit and spread walk the ordered per-model node index from the first
// node with enough free milli-GPUs, so a search costs O(log nodes) plus the nodes that are skipped
// for another reason (CPU, fragmentation); expected-waste walks the same index as best-fit but
// scores every node with enough free milli-GPUs (memoised per distinct node state and request,
// workload_mix.h), ties to the first, best-fit's choice; first-fit and host scorers scan nodes
// in topology order. Every node tried counts one work unit against the policy's budget.
#ifndef GPUPOOL_PLACE_H_
#define GPUPOOL_PLACE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "headroom.h"
#include "lending.h"
#include "maintenance.h"
#include "snapshot_index.h"
#include "working_state.h"

namespace gpupool::internal {

// Why a job's queue (or an ancestor) blocks it.
struct LimitBlock {
  int32_t queue = kNone;
  int32_t model_slot = kNone;  // a model index, or any_model_slot() for "*"
  int64_t shortfall_milli = 0;
};

class Placer {
 public:
  Placer(const SnapshotIndex& index, WorkingState& state, const Policy& policy, Counters& counters);

  // Tries to start job j. On success returns its placements, applied to the working state (the
  // caller commits, or rolls back to a mark taken before). On failure the state is unchanged and
  // `Diagnose()` explains why.
  std::optional<std::vector<ReplicaPlacement>> TryStart(int32_t j);
  // Stage 5 as a transaction of its own: TryStart(), then the working state committed. For the
  // cycle's conductor; callers that simulate (preemption, reservations) use TryStart().
  std::optional<std::vector<ReplicaPlacement>> Start(int32_t j);

  // The pending decision for job j, which TryStart() has just failed to place.
  PendingDecision Diagnose(int32_t j);
  // What the last TryStart() found about queue limits, for Diagnose(). A caller that tries the
  // job again in a changed state (a preemption plan's simulation) puts back what the job's own
  // try found, so that its reason is the one the next cycle gives.
  struct LimitsFound {
    std::optional<LimitBlock> block;
    // A model refused because the start would use capacity held for queues that do not lend.
    std::optional<LendingBlock> lending;
    bool all_limited = false;
  };
  LimitsFound limits_found() const {
    return {last_limit_block_, last_lending_block_, last_all_limited_};
  }
  void set_limits_found(const LimitsFound& found) {
    last_limit_block_ = found.block;
    last_lending_block_ = found.lending;
    last_all_limited_ = found.all_limited;
  }

  // From now on a node fits a job only if `gate` lets the job start there (maintenance
  // windows). `gate` must outlive the placer; nullptr: no windows.
  void set_window_gate(const WindowGate* gate) { windows_ = gate; }
  // Headroom rules to keep (headroom.h); null: none. Must outlive the placer.
  void SetHeadroom(const Headroom* headroom) { headroom_ = headroom; }
  // The first headroom rule that refused a placement of the job in the last TryStart(), if any
  // did (the job would have started on that model without the rule).
  const std::optional<HeadroomBlock>& last_headroom_block() const { return last_headroom_block_; }

 private:
  // A domain to confine a gang to: level and domain index, or none.
  struct Scope {
    int32_t level = kNone;
    int32_t domain = kNone;
  };

  // PlaceGang() under the holds of queues that do not lend, when they are checked by node
  // (lending.h): a placement that uses held capacity is undone and tried once more away from
  // the nodes of every line the gang could lower.
  // kHeld: refused by a hold (last_lending_block_ says which). The state is unchanged unless
  // kPlaced.
  enum class GangPlaced { kPlaced, kHeld, kNoRoom };
  GangPlaced PlaceGangLent(int32_t j, int32_t model);
  bool PlaceGang(int32_t j, int32_t model);
  bool PlaceInScope(int32_t j, int32_t model, Scope scope);
  void GrowElastic(int32_t j, int32_t model, Scope scope);
  bool PlaceReplica(int32_t j, int32_t group, int32_t replica, int32_t model, Scope scope);
  // Applies a replica's placement on node n, GPUs `gpus`, to the state and to building_.
  void Occupy(int32_t j, int32_t group, int32_t replica, int32_t node,
              const std::vector<int32_t>& gpus);

  // The fallback when the greedy pass fails a gang of two or more replicas in a scope: a
  // depth-first search over the replicas' nodes, most constrained replica first, bounded by
  // kGangSearchStepsPerReplica nodes tried per replica (gang_search.cc). On success the gang's
  // required replicas are placed; on failure the state is unchanged.
  bool SearchGang(int32_t j, int32_t model, Scope scope);
  struct SearchSlot {
    int32_t group;
    int32_t replica;
  };
  bool SearchFrom(int32_t j, const std::vector<SearchSlot>& slots, size_t i,
                  const std::vector<std::vector<int32_t>>& candidates, std::vector<int32_t>& chosen,
                  int64_t& steps_left);
  // Nodes a replica of group g may use in the scope, in topology order (PlaceReplica's set).
  std::vector<int32_t> ScopeNodes(int32_t j, int32_t g, int32_t model, Scope scope) const;

  // Finds the GPUs a replica of `request` would take on node n, into `gpus`; false if it does
  // not fit there now.
  bool FitsOnNode(int32_t j, const TaskGroup& group, int32_t n, std::vector<int32_t>& gpus);
  // Replicas of `group` the gang being built has on node n (topology.max_replicas_per_node).
  int32_t ReplicasOn(const TaskGroup& group, int32_t n) const;
  bool ChooseWholeGpus(int32_t n, int64_t count, bool allow_span, std::vector<int32_t>& gpus);

  // Best node for the replica among `candidates` (scan), or kNone.
  int32_t ScanForNode(int32_t j, const TaskGroup& group, const std::vector<int32_t>& candidates,
                      std::vector<int32_t>& gpus);
  // Best node from the ordered index of model slot m (best-fit, spread, expected-waste), or
  // kNone; `found_score` is its expected-waste score (0 for the others).
  int32_t SearchOrdered(int32_t j, const TaskGroup& group, int32_t slot, std::vector<int32_t>& gpus,
                        NodeKey& found_key, int64_t& found_score);

  std::optional<LimitBlock> CheckLimits(int32_t j, int32_t model, int64_t milli) const;
  std::vector<int32_t> GroupOrder(int32_t j) const;
  std::vector<int32_t> DomainsInOrder(int32_t level, int32_t model, int64_t need) const;
  int64_t HostScore(int32_t n, const ResourceRequest& request);

  // Static facts Diagnose() needs about the nodes a queue may use on one model; computed once
  // per (queue, model) and cycle, since they do not change while the cycle runs.
  struct Eligibility {
    std::vector<int32_t> nodes;  // open, permitted, with a healthy GPU (for GPU work)
    int64_t not_ready = 0, reserved = 0, no_healthy = 0, spot = 0;
    // Some open node of the model is closed to this queue: free sums need a scan.
    bool restricted = false;
    // One eligible node per distinct static shape (capacity, GPUs per island).
    std::vector<int32_t> representatives;
    int64_t capacity_milli = 0;
    // Largest healthy GPU capacity of one domain, per level (-1: not computed yet).
    std::vector<int64_t> max_domain_capacity;
  };
  const Eligibility& EligibilityFor(int32_t queue, int32_t model, bool needs_gpu, bool spot_ok);
  // May job j use spot nodes (spot.h)?
  bool SpotOk(int32_t j) const { return spot_ok_.empty() || spot_ok_[j] != 0; }
  bool FitsOnEmptyNode(const TaskGroup& group, int32_t n) const;
  // Why no placement on the nodes of `e` could ever spread a group of job j as its
  // topology.max_replicas_per_node asks (too few nodes that can hold a replica, in the pool or
  // in any one domain of a required gang level), or "" if that is not what stops it.
  std::string SpreadNeverFits(int32_t j, const Eligibility& e) const;

  const SnapshotIndex& index_;
  WorkingState& state_;
  const Policy& policy_;
  Counters& counters_;
  // kExpectedWaste without a host scorer: the scorer of the snapshot's mix, and its memo (node
  // model, free CPU, free memory, sorted free milli of the healthy GPUs, then the request's CPU,
  // memory and GPU milli -> score; the scorer is a pure function of these). Lookups only: never
  // iterated.
  std::shared_ptr<const PlacementScorer> mix_scorer_;
  absl::flat_hash_map<std::vector<int64_t>, int64_t> mix_memo_;
  std::vector<int64_t> memo_key_;
  // The scorer in use: the host's (policy.scorer), the mix scorer, or null.
  const PlacementScorer* scorer_ = nullptr;
  const WindowGate* windows_ = nullptr;
  // Placements of the gang being built; truncated with the state on rollback.
  std::vector<ReplicaPlacement> building_;
  // While set (by Diagnose()), topology.max_replicas_per_node is not applied.
  bool ignore_replica_spread_ = false;
  // Limit blocks met by the last TryStart(), per model tried.
  std::optional<LimitBlock> last_limit_block_;
  std::optional<LendingBlock> last_lending_block_;
  bool last_all_limited_ = false;
  // Capacity held for queues that do not lend (lending.h).
  Lending lending_;
  const Headroom* headroom_ = nullptr;
  std::optional<HeadroomBlock> last_headroom_block_;
  // While set (a model), nodes of that model that count towards headroom are not tried.
  int32_t avoid_counted_model_ = kNone;
  // Per job, 1 if it may use spot nodes; empty when the pool has none.
  std::vector<uint8_t> spot_ok_;
  // Node-based: Diagnose() holds pointers to entries while it adds others.
  absl::node_hash_map<int64_t, Eligibility> eligibility_;
  // Scratch buffers.
  std::vector<int64_t> free_scratch_;
  std::vector<int32_t> island_free_, island_order_;
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_PLACE_H_
