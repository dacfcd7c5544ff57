// Trace replay: the discrete-event core, the placement engines it drives, and the "inflation"
// protocol of EVALUATION.md E1 (the FGD paper's experiment on the Alibaba openb trace).
//
// Everything is deterministic: a seed fixes the arrival order and every random choice (in-tree
// generator, sim/rng.h); no clock, thread or global is read. Results carry no wall time.
#ifndef GPUPOOL_SIM_SIMULATOR_H_
#define GPUPOOL_SIM_SIMULATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
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
struct Placement {
  int32_t node = -1;
  std::vector<int32_t> gpus;
};

// Something that places pods one at a time and takes them back: the incremental engine below, or
// one that builds a Snapshot and calls gpupool::Schedule() for every pod.
class Placer {
 public:
  virtual ~Placer() = default;
  // Places pod `pod` of the workload now, or fails (node -1). Never errors on a pod that does not
  // fit; errors only when the engine itself fails.
  virtual absl::StatusOr<Placement> Place(int32_t pod) = 0;
  // Frees what a placed pod holds (its completion).
  virtual void Release(int32_t pod, const Placement& placement) = 0;
  // GPU milli idle in the cluster now, and its weighted fragmentation (sum over nodes and task
  // classes of count x fragmented milli, E1's measure; divide by the table's total count).
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
std::unique_ptr<Placer> MakeIncrementalPlacer(const Cluster& cluster, const Workload& workload,
                                              const SimPolicy& policy, uint64_t seed);

// The reference engine: for every pod, a Snapshot of the cluster with all placed pods running and
// the new pod pending, scheduled by gpupool::Schedule() with `policy.scorer`. Slow (linear in
// placed pods per call); for tests and small clusters. Ignores tie_break (Schedule() breaks ties
// by topology order, then id) and uniform_random.
std::unique_ptr<Placer> MakeSchedulePlacer(const Cluster& cluster, const Workload& workload,
                                           const SimPolicy& policy);

// ---- The discrete-event core --------------------------------------------------------------

// Kinds of event, in the order they are processed at equal times. Preemption, checkpoint,
// failure and repair events slot in here; each kind has its handler in the event loop.
enum class EventKind {
  kCompletion = 0,
  kArrival = 1,
};

struct Event {
  int64_t time = 0;
  EventKind kind = EventKind::kArrival;
  int32_t pod = 0;
  // Insertion order: the last tie breaker, so the order of events is total.
  int64_t sequence = 0;
};

// Observes the replay after every event.
struct ReplayObserver {
  // After a pod arrived and was placed (placement.node >= 0) or failed.
  std::function<void(const Event&, const Placement&)> on_arrival;
  std::function<void(const Event&)> on_completion;
};

// Replays arrivals (pod indices with times) through `placer`: each pod arrives at its time, is
// placed or fails (never retried), and if `workload.pods[pod].duration_s` is set, completes that
// long after it started. Returns the placements, in arrival order.
absl::StatusOr<std::vector<Placement>> Replay(const Workload& workload,
                                              const std::vector<int32_t>& arrivals,
                                              const std::vector<int64_t>& times, Placer& placer,
                                              const ReplayObserver& observer);

// ---- The inflation protocol (EVALUATION.md E1) ---------------------------------------------

// The arrival sequence: every pod of `workload` once; then, if their GPU request is below
// ratio x cluster_gpu_milli, copies of pods drawn uniformly with replacement until the next draw
// would take the total past it (that draw is not taken); if above, pods drawn uniformly at random
// are removed until it is not. Then the whole list is shuffled. One generator seeded with `seed`
// makes the draws, then the shuffle. Returns indices into workload.pods.
std::vector<int32_t> InflateWorkload(const Workload& workload, int64_t cluster_gpu_milli,
                                     double ratio, uint64_t seed);

// One point of a curve: the state after the last arrival that keeps the arrived GPU request at or
// below `arrived_percent` of the cluster's GPUs.
struct CurvePoint {
  int32_t arrived_percent = 0;
  int64_t arrived_gpu_milli = 0;
  int64_t used_gpu_milli = 0;
  double alloc_ratio = 0;  // used / total GPU milli
  double frag_ratio = 0;   // fragmented idle / idle GPU milli (E1)
};

struct SeedResult {
  uint64_t seed = 0;
  int64_t pods = 0;
  int64_t placed = 0;
  int64_t failed = 0;
  double alloc_ratio_at_100 = 0;
  double alloc_ratio_at_130 = 0;
  double unallocated_gpus_at_130 = 0;
  double frag_ratio_at_90 = 0;
  std::vector<CurvePoint> curve;
  // Node per arrival (-1: failed), when InflationOptions::keep_placements.
  std::vector<int32_t> placements;
};

// Mean and population standard deviation over seeds.
struct Stat {
  double mean = 0;
  double stddev = 0;
  double min = 0;
  double max = 0;
};

struct PolicyResult {
  std::string policy;
  std::vector<SeedResult> per_seed;
  Stat alloc_ratio_at_100;
  Stat alloc_ratio_at_130;
  Stat unallocated_gpus_at_130;
  Stat frag_ratio_at_90;
};

struct InflationOptions {
  double ratio = 1.3;
  std::vector<uint64_t> seeds = {42};
  // A fixed arrival sequence (indices into the workload) instead of InflateWorkload(): for
  // replaying the FGD fixture. The seed still drives random tie breaks.
  std::optional<std::vector<int32_t>> arrivals;
  bool keep_placements = false;
  // Use MakeSchedulePlacer() instead of the incremental engine (slow; for checks).
  bool use_schedule = false;
  // Called after each seed with (seeds done, seeds total).
  std::function<void(int, int)> progress;
};

// Runs the protocol for one policy over every seed. Errors: those of MakeSimPolicy, and
// InvalidArgument for a cluster without GPUs or a ratio outside (0, 100].
absl::StatusOr<PolicyResult> RunInflation(const Cluster& cluster, const Workload& workload,
                                          std::string_view policy, const InflationOptions& options);

}  // namespace gpupool::sim

#endif  // GPUPOOL_SIM_SIMULATOR_H_
