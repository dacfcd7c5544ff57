// Pod placers: what the pod-level inflation protocol (gpupool/sim/inflation.h) places pods
// with. A SimPolicy names a built-in scorer and how its ties are broken; a PodPlacer keeps a
// cluster's state and places pods one at a time, either incrementally (fast, memoised) or by
// calling gpupool::Schedule() for every pod (slow, the reference).
//
// Deterministic: a seed fixes every random choice (in-tree generator, gpupool/sim/rng.h); no
// clock, thread or global is read.
#ifndef GPUPOOL_SIM_PLACER_H_
#define GPUPOOL_SIM_PLACER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gpupool/placement_scorer.h"
#include "gpupool/sim/workload.h"

namespace gpupool::sim {

// How equal scores are broken.
enum class TieBreak {
  // The first node in topology order, then id: what gpupool::Schedule() does.
  kFirstNode,
  // The first node in an order shuffled once per run with the run's seed: what the FGD authors'
  // simulator does in effect (it renames every node with a random-permutation prefix and the
  // Kubernetes framework then meets the nodes in name order). Used for the six FGD baselines;
  // their published curves are reproduced with it (see docs/simulator.md).
  kShuffledNodeOrder,
  // A node drawn uniformly among the best, afresh for every pod.
  kUniformRandom,
};

// A placement policy as the simulator runs it.
struct SimPolicy {
  std::string name;
  std::shared_ptr<const PlacementScorer> scorer;
  TieBreak tie_break = TieBreak::kFirstNode;
  // Every feasible node equally likely, whatever the scorer says (the `random` baseline, which
  // needs node identity that a scorer does not see).
  bool uniform_random = false;
  // Let a GpuSelectingScorer pick the GPU of a sharing pod (FGD); otherwise the engine's rule:
  // the GPU with the least free milli that still fits, lowest index on ties.
  bool scorer_selects_gpu = false;
};

// The policy `name` (one of gpupool::BuiltinScorerNames()) for a workload and seed: fgd and
// default take their task-class popularity from `workload`. InvalidArgument for unknown names.
absl::StatusOr<SimPolicy> MakeSimPolicy(std::string_view name, const Workload& workload,
                                        uint64_t seed);

// Where one pod went: a node index into Cluster::nodes (-1: failed) and GPU indices.
struct PodPlacement {
  int32_t node = -1;
  std::vector<int32_t> gpus;
};

// Something that places pods one at a time and takes them back: the incremental engine below, or
// one that builds a Snapshot and calls gpupool::Schedule() for every pod. (Not the engine's own
// placement stage, which places the jobs of one Schedule() call.) One placer serves one run: it
// keeps the state of the cluster between calls, so it is not thread-safe.
class PodPlacer {
 public:
  virtual ~PodPlacer() = default;
  // Places pod `pod` of the workload now, or fails (node -1). Never errors on a pod that does not
  // fit; errors only when the engine itself fails.
  virtual absl::StatusOr<PodPlacement> Place(int32_t pod) = 0;
  // Frees what a placed pod holds (its completion).
  virtual void Release(int32_t pod, const PodPlacement& placement) = 0;
  // GPU milli idle in the cluster now, and its weighted fragmentation (sum over nodes and task
  // classes of count x fragmented milli, the FGD paper's measure in docs/simulator.md; divide by
  // the table's total count).
  virtual int64_t IdleGpuMilli() const = 0;
  virtual int64_t WeightedFragmentation() const = 0;
};

// The incremental engine: keeps its own node state, groups nodes in identical states into
// equivalence classes and scores each class once per pod shape (memoised), so a placement costs
// about the number of distinct node states. Gives exactly the placements of calling Schedule()
// pod by pod with the same scorer, TieBreak::kFirstNode and scorer_selects_gpu off
// (tests/sim/equivalence_test.cc), with
// one difference by design: a pod that accepts several GPU models is scored on the nodes of all
// of them together (the FGD protocol), where Schedule() commits to the first model in preference
// order that fits. `seed` drives the shuffled node order and random tie breaks.
// `cluster` and `workload` must outlive the placer.
std::unique_ptr<PodPlacer> MakeIncrementalPlacer(const Cluster& cluster, const Workload& workload,
                                                 const SimPolicy& policy, uint64_t seed);

// The reference engine: for every pod, a Snapshot of the cluster with all placed pods running and
// the new pod pending, scheduled by gpupool::Schedule() with `policy.scorer`. Slow (linear in
// placed pods per call); for tests and small clusters. Ignores tie_break (Schedule() breaks ties
// by topology order, then id) and uniform_random.
std::unique_ptr<PodPlacer> MakeSchedulePlacer(const Cluster& cluster, const Workload& workload,
                                              const SimPolicy& policy);

}  // namespace gpupool::sim

#endif  // GPUPOOL_SIM_PLACER_H_
