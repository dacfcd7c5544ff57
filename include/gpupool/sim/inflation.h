// The pod-level inflation protocol (docs/simulator.md): the FGD paper's experiment on the
// Alibaba openb trace. Every pod of a workload arrives once, in a seeded random order, inflated
// with copies until the GPU request reaches a ratio of the cluster's GPUs; pods are placed one at
// a time by a PodPlacer (gpupool/sim/placer.h) on the pod event loop (gpupool/sim/pod_events.h)
// and never leave. The curves of allocation and fragmentation against arrived load compare the
// placement policies. Outputs: gpupool/sim/inflation_report.h.
//
// Everything is deterministic: a seed fixes the arrival order and every random choice (in-tree
// generator, gpupool/sim/rng.h); no clock, thread or global is read. Results carry no wall time.
#ifndef GPUPOOL_SIM_INFLATION_H_
#define GPUPOOL_SIM_INFLATION_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gpupool/ledger.h"
#include "gpupool/sim/workload.h"

namespace gpupool::sim {

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
  double frag_ratio = 0;   // fragmented idle / idle GPU milli (docs/simulator.md)
};

// The GPU-time ledger of a run (docs/simulator.md, "The ledger"), kept by gpupool's ledger
// (gpupool/ledger.h). The protocol's clock: the pod event loop runs arrival k (0-based) at
// second k, and nothing departs, so one ledger second is one arrival, and a pod placed at
// arrival k holds its GPUs from k to the end, n = the number of arrivals. Hence, in
// milli-GPU-seconds of that clock:
//   capacity = the cluster's GPUs x 1000 x n;
//   busy     = sum over placed pods of gpu_milli x (n - k): busy / capacity is the mean, over
//              the arrivals, of the allocation ratio after each arrival;
//   idle     = capacity - busy (unallocated GPU time, the fragmented part included).
// Pods are never preempted, never fail once placed and never restore: productive = busy, and
// lost and restore are 0. There are no quotas and nothing can be reclaimed, so all busy time is
// within guarantee (borrowed = 0). The queues are the pods' GPU request classes: "sharing" (a
// share of one GPU), "one-gpu" and "multi-gpu" (CPU-only pods hold no GPU time).
struct InflationLedger {
  // Arrivals counted (the ledger's seconds); summed over seeds in PolicyResult::ledger.
  int64_t arrivals = 0;
  CapacityTime pool;
  // Per GPU model of the cluster, by name.
  std::vector<ModelLedger> models;
  // Per request class, in the order sharing, one-gpu, multi-gpu (own == subtree: no tree).
  std::vector<QueueLedger> queues;
};

// The request class of a pod for the ledger: "sharing", "one-gpu", "multi-gpu", or "" for a
// pod without GPUs.
std::string InflationPodClass(const SimPod& pod);

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
  InflationLedger ledger;
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
  // The seeds' ledgers added up, figure by figure (so every identity of one holds for the sum).
  InflationLedger ledger;
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

#endif  // GPUPOOL_SIM_INFLATION_H_
