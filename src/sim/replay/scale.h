// Scaling the replay's pool from the engine's scale advice (ReplayOptions::scaling,
// docs/replay.md "Maintenance, spot reclaims and scaling"), as a host with an autoscaler would:
//
//   - at most every advice_every_s, a cycle asks for advice: its policy gets a `scale` object with
//     one template, "node" (a node like the pool's own, in rack "rs"), whose max_count is what
//     max_nodes leaves beside the added nodes in the pool;
//   - `add`: the advice counts the nodes the snapshot lacks, so the nodes already ordered are
//     taken from it, and the rest are ordered (the lowest free indices first) and join the pool
//     provision_s later (a kNodeProvisioned pool event);
//   - `release`: of the nodes named, those the replay added and that hold no job leave the pool
//     at once; the pool's own nodes are never released.
//
// Not API: one of the parts RunReplay() (replay.cc) is built from.
#ifndef GPUPOOL_SRC_SIM_REPLAY_SCALE_H_
#define GPUPOOL_SRC_SIM_REPLAY_SCALE_H_

#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "gpupool/decisions.h"
#include "gpupool/node.h"
#include "gpupool/policy.h"
#include "gpupool/sim/replay.h"
#include "sim/replay/apply_pool_event.h"
#include "sim/replay/pool_events.h"

namespace gpupool::sim::internal {

class Scaler {
 public:
  // `options` and `layout` must outlive the scaler; `added_node` is the template's node.
  Scaler(const ReplayOptions& options, const PoolLayout& layout, const Node& added_node);

  // Whether a cycle at `now` asks for advice (scaling on, advice_every_s since the last one).
  bool AdviceDue(int64_t now) const;
  // Whether a cycle should run at `now` for the advice alone: advice is due and added nodes are
  // in the pool (one may be released).
  bool WantsCycle(int64_t now, const PoolHealth& health) const;
  // The policy of a cycle at `now`: options.policy without counterfactual explanations
  // (budgets.max_counterfactual_plans 0: the replay reads none, and they cost about a quarter of
  // a cycle), with the `scale` object when advice is due.
  const Policy& PolicyAt(int64_t now, const PoolHealth& health);
  // Carries out the advice of a cycle that asked for it (nothing otherwise).
  absl::Status Apply(const Decisions& decisions, int64_t now, const ReplayTargets& targets);

 private:
  const ReplayOptions& options_;
  const PoolLayout& layout_;
  Policy policy_;
  Policy with_scale_;
  int64_t last_advice_ = std::numeric_limits<int64_t>::min();
  bool asked_ = false;
};

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_REPLAY_SCALE_H_
