// Stage 7, reservations: what keeps a starving job from waiting forever.
//
// A job past the policy's starvation bound is considered before younger work (order.h), but that
// alone does not let a large gang start in a busy pool: every GPU that frees up is taken by
// smaller jobs behind it before enough free up together. So a starving job that still cannot
// start gets a reservation: the nodes where it can start soonest, whose free capacity (up to what
// the job needs on each) is then held for it for the rest of the cycle. Nothing else starts
// there, and no job running there is evicted for another job (WorkingState::MarkHeld), so those
// nodes drain as their running work ends.
//
// Where: nodes are ranked by when their running work is expected to end (each job's
// runtime_estimate_s minus its attained service, from now; a job without an estimate never ends
// for this purpose), then by how much of them is busy, then topology order. The reservation is
// the placement the job gets (by the placement policy) when the shortest prefix of that ranking
// is emptied, found by binary search over the prefix length. Ranking by expected end keeps the
// choice stable from cycle to cycle: held nodes take no new work, so they only get closer to
// empty, while other nodes may take new work.
//
// The Reserve decision names the nodes (in id order) and the expected start: the latest expected
// end of the work on them, or -1 when some of that work has no estimate.
#ifndef GPUPOOL_RESERVE_H_
#define GPUPOOL_RESERVE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "gpupool/decisions.h"
#include "place.h"
#include "snapshot_index.h"
#include "working_state.h"

namespace gpupool::internal {

class Reserver {
 public:
  Reserver(const SnapshotIndex& index, WorkingState& state, Placer& placer);

  // Records a job started in this cycle (its work ends `runtime_estimate_s` from now).
  void NoteStart(int32_t j, const std::vector<ReplicaPlacement>& placements);

  // For pending job j, which has just failed to start: holds capacity for it where it can start
  // soonest and returns the decision; nullopt when it could not start even on an empty pool.
  // A transaction of its own: what it holds is committed; with nothing held, the working state is
  // as it was.
  std::optional<ReserveDecision> Reserve(int32_t j);

  // Is node n held for a reservation made in this cycle?
  bool held(int32_t n) const { return held_[n] != 0; }

 private:
  static constexpr int64_t kNever = INT64_MAX;
  // When job j's work is expected to end, or kNever.
  int64_t ExpectedEnd(int32_t j) const;
  // Holds, for job j, up to what its placement `p` needs of node p.node's free capacity.
  void Hold(int32_t j, const ReplicaPlacement& p);

  const SnapshotIndex& index_;
  WorkingState& state_;
  Placer& placer_;
  // Jobs with work on each node: running ones from the snapshot and this cycle's starts.
  std::vector<std::vector<int32_t>> jobs_on_node_;
  std::vector<uint8_t> started_now_;
  std::vector<uint8_t> held_;
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_RESERVE_H_
