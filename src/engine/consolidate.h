// Stage 8, consolidation: moving running jobs out of the way of a gang that fragmentation blocks.
// The cycle (schedule.cc, Consolidate()) asks for it after stages 5 to 7, for each job still
// pending in job order, repeating the pass while anything starts.
//
// A pending gang whose pending reason is fragmentation or topology has enough free GPUs of its
// model in total, but not in the shape it needs: not on one node, in one island, in one rack or
// NVLink domain. Waiting for running work to end would free that shape; moving some running jobs
// elsewhere frees it now, at the price of the work the moved jobs lose. The consolidator weighs
// the two and moves only when the gain is worth it (policy.consolidation, off by default).
//
// Who may move (movable). A running job that preemption could evict (VictimRules::MayEvict:
// preemptible, past its min_runtime_s and the policy's min_victim_run_s and max_victim_lost_s,
// nothing on a node held for a reservation), that checkpoints (checkpointing.interval_s > 0),
// whose groups are not elastic (min_replicas = replicas), that holds GPUs of a model the gang
// accepts, that has run at least one second since it (last) started, and that this cycle has
// neither evicted nor moved already. A job moves whole: every replica of it gets a new
// placement, found by the placer under the job's own constraints (model, island, gang topology,
// isolation), and at least one replica lands somewhere else than it was.
//
// The price of a move is the price of evicting the job (victim_rules.h): its milli-GPUs x (the
// seconds since its last checkpoint or start, or its checkpoint cost within checkpoint_grace_s,
// plus its restore time).
//
// The gain. The gang's expected wait W is the time until it could start if nothing moved: nodes
// (open, not held for a reservation) are ranked by when their work is expected to end (each job's
// runtime_estimate_s minus its attained service, from now; jobs placed in this cycle count too),
// then by busy milli-GPUs, then topology order; W is the latest expected end among the nodes of
// the placement the gang gets when the shortest prefix of that ranking is emptied (every job there
// removed whole, whether the snapshot runs it or this cycle placed it, so that the next cycle,
// where all of them run, finds the same W), minus now: the reservation rule of stage 7. W is
// unknown, and nothing moves, when a job on those nodes has no runtime estimate or when the gang
// would not start even then. The gain is the gang's milli-GPUs (at its minimum size) x W, and a
// move set is taken only if gain > gain_factor x its price.
//
// The search. Candidates are the movable jobs in (price, id) order. Move sets of 1, then 2, ...
// up to max_moves candidates are tried in lexicographic order of that list, each only if its
// price is below the best found so far and gain_factor x its price is below the gain. Trying a set
// (one plan, counted in counters.consolidation_plans) is a transaction on the working state: the
// movers are released, the gang is placed, then each mover in id order is placed again; the set
// works if all of them place and every mover lands elsewhere; then it rolls back. The set taken is
// the cheapest that works, then the smallest, then the first in that order: without a budget cut,
// the cheapest of all sets of at most max_moves movable jobs that work. The taken set is applied
// as one transaction (the caller commits), with the gang's Start and one Migrate per mover.
// Plans (and the probes of W, one plan each) count against policy.consolidation.max_plans.
#ifndef GPUPOOL_CONSOLIDATE_H_
#define GPUPOOL_CONSOLIDATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "entitlements.h"
#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "place.h"
#include "snapshot_index.h"
#include "victim_rules.h"
#include "working_state.h"

namespace gpupool::internal {

class Consolidator {
 public:
  // All references must outlive the consolidator; `counters` receives the plans simulated, the
  // migrations, and budget_exhausted when max_plans runs out.
  Consolidator(const SnapshotIndex& index, WorkingState& state, Placer& placer,
               const Entitlements& entitlements, const Policy& policy, Counters& counters);

  // Records a job started in this cycle (or moved: `placements` are its new ones), for the
  // expected ends of the nodes it is on.
  void NoteStart(int32_t j, const std::vector<ReplicaPlacement>& placements);
  // Records a job evicted or shrunk in this cycle: it never moves.
  void NoteTaken(int32_t j) { taken_[j] = 1; }

  struct Plan {
    std::vector<MigrateDecision> migrations;   // in mover id order
    std::vector<ReplicaPlacement> placements;  // of the gang that starts
  };
  // Tries to start pending job j, which has just failed to place with pending reason
  // fragmentation or topology, by moving running jobs. On success the moves and the gang's
  // placement are applied to the working state (not committed: the caller commits) and the
  // movers never move again in this cycle; otherwise the state is unchanged.
  std::optional<Plan> TryConsolidate(int32_t j);
  // Why the last TryConsolidate() started nothing: a clause ("; ...") for the job's pending
  // detail, or "" when it started the job or did not apply (a job that needs no GPU).
  const std::string& refusal() const { return refusal_; }

  // The gang's expected wait in seconds (see above), or nullopt when unknown. Probes the
  // working state and rolls back.
  std::optional<int64_t> ExpectedWait(int32_t j);

 private:
  static constexpr int64_t kNever = INT64_MAX;
  int64_t ExpectedEnd(int32_t j) const;
  bool Movable(int32_t v, const std::vector<uint8_t>& model_ok) const;
  bool BudgetLeft();
  // Releases `movers`, places j, then each mover; on success returns j's placements and the
  // movers' new ones (aligned with `movers`), applied to the state; on failure the state is
  // rolled back. Counts one plan.
  struct Outcome {
    std::vector<ReplicaPlacement> gang;
    std::vector<std::vector<ReplicaPlacement>> moved;
  };
  std::optional<Outcome> Apply(int32_t j, const std::vector<int32_t>& movers);
  // Did running job v's new placements leave it exactly where it was?
  bool SamePlace(int32_t v, const std::vector<ReplicaPlacement>& placements) const;

  const SnapshotIndex& index_;
  WorkingState& state_;
  Placer& placer_;
  const Policy& policy_;
  Counters& counters_;
  VictimRules rules_;
  // Jobs with work on each node: running ones from the snapshot and this cycle's starts and
  // moves; and per job whether it started or moved in this cycle, or was taken.
  std::vector<std::vector<int32_t>> jobs_on_node_;
  std::vector<uint8_t> placed_now_;
  // Placements of the jobs placed in this cycle (started or moved), by job.
  std::vector<std::vector<ReplicaPlacement>> placed_;
  std::vector<uint8_t> taken_;
  std::string refusal_;
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_CONSOLIDATE_H_
