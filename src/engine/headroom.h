// Headroom for urgent work (Policy::headroom; docs/operations.md, "Headroom for urgent work").
//
// A rule keeps `count` units (whole free GPUs, whole free nodes or whole free NVLink islands) of
// one GPU model free for jobs of priority >= min_priority. Units are counted on the model's
// ready nodes that are neither spot (capacity that may vanish is no headroom) nor being
// reclaimed: a GPU is free when it is healthy and nothing is allocated on it, a node or an island
// when every GPU of it is.
//
// Two places read the rules. The placer (place.cc) checks each gang it has placed: a job below a
// rule's min_priority whose placement leaves fewer than `count` units free is rolled back on that
// model, and if no model takes it the job is pending with reason kHeadroom. And at the end of
// the cycle the conductor (schedule.cc) asks RestoreHeadroom() to give back, by evicting running
// jobs below min_priority (the cheapest set the preemption rules allow), the units urgent work
// took; every rule gets a HeadroomReport.
//
// Rationale. Holding particular GPUs back (as a reservation does) would make the placement of
// low-priority work depend on which GPUs were picked; counting instead lets the placement
// strategy work as usual and only refuses the placements that would eat into the headroom. The
// check costs one pass over the model's GPUs per placed gang of a low-priority job, and nothing
// at all without rules.
#ifndef GPUPOOL_HEADROOM_H_
#define GPUPOOL_HEADROOM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "snapshot_index.h"
#include "victim_rules.h"
#include "working_state.h"

namespace gpupool::internal {

// A placement refused by a rule: the rule (index in Headroom::rules()), and the units free
// before the placement and after it.
struct HeadroomBlock {
  int32_t rule = kNone;
  int64_t free_now = 0;
  int64_t free_after = 0;
};

class Headroom {
 public:
  struct Rule {
    const HeadroomRule* rule;
    int32_t model;
  };

  // FailedPrecondition when a rule names a GPU model the snapshot does not declare. Needs no
  // index: Schedule() calls it before the cycle builds one.
  static absl::Status CheckModels(const Snapshot& snapshot, const Policy& policy);

  // The rules of `policy` in (gpu_model, shape) order. All references must outlive this.
  Headroom(const SnapshotIndex& index, const WorkingState& state, const Policy& policy);

  bool empty() const { return rules_.empty(); }
  const std::vector<Rule>& rules() const { return rules_; }
  // Does node n count towards headroom (ready, not reclaiming, not spot)?
  bool Counts(int32_t n) const { return state_.node_open(n) && !index_.node_spot(n); }
  // Does model m have open nodes that do not count (spot nodes), where a job a rule refused on
  // the model may still go?
  bool HasUncountedNodes(int32_t m) const;
  // Units of rule r free in the working state now. O(GPUs of the rule's model). A GPU whose only
  // occupant is capacity held for a reservation (SetHeld) counts as free: it is idle, and the
  // hold lasts only for this cycle.
  int64_t Free(int32_t r) const;
  // Milli-GPUs held for reservations, per flat GPU id (Reserver::held_gpu_milli()); must outlive
  // this. Without it, held capacity counts as taken.
  void SetHeld(const std::vector<int64_t>* held_gpu_milli) { held_gpu_milli_ = held_gpu_milli; }
  // After job j's gang was placed on `model` (in the working state): the first rule of that
  // model, in rule order, that j is below and that now has fewer than `count` units free.
  std::optional<HeadroomBlock> Violated(int32_t j, int32_t model) const;

  // The pending decision of job j refused by `block`.
  PendingDecision Pending(int32_t j, const HeadroomBlock& block) const;
  // "8 H100 GPUs", "2 whole H100 nodes", "1 whole H100 NVLink island".
  static std::string Units(int64_t count, const HeadroomRule& rule);
  // report.detail, from the report's numbers and jobs: what was free, whom restoration evicted,
  // and when short, why (restore off, preemption off, or no victims).
  static void Describe(const HeadroomRule& rule, bool preemption_enabled, HeadroomReport& report);

 private:
  const SnapshotIndex& index_;
  const WorkingState& state_;
  const std::vector<int64_t>* held_gpu_milli_ = nullptr;
  std::vector<Rule> rules_;
  // Per model: its rules (indices into rules_), in rule order.
  std::vector<std::vector<int32_t>> rules_of_model_;
};

// Restoration of one rule: the running jobs whose eviction brings rule r back to `count` free
// units, the cheapest set found (by VictimRules::VictimCost, then fewest victims, then ids), in
// id order; empty when none is found. Victims are running jobs below the rule's min_priority
// that VictimRules::MayEvict() lets go and that were not taken in this cycle, holding something
// on a counted node of the model; a set must leave each victim's queue, and each of its
// ancestors, at or above its guarantee (over all models). Exact over every subset up to
// VictimSearch::kExactCandidates candidates; above, a greedy choice (the candidate with the
// lowest price per unit it frees, else the cheapest) and a trim. Each set tried counts one plan
// in counters.preemption_plans, bounded by the policy's max_preemption_plans. The state is left
// as it was.
std::vector<int32_t> FindRestoration(const SnapshotIndex& index, WorkingState& state,
                                     const Headroom& headroom, int32_t r, const VictimRules& rules,
                                     const Policy& policy, Counters& counters);

}  // namespace gpupool::internal

#endif  // GPUPOOL_HEADROOM_H_
