// Built-in placement scorers: the baselines of the FGD paper and gpupool's own expected-waste
// scorer (the simulator's default policy).
//
// Each is a gpupool::PlacementScorer (see placement_scorer.h): a pure function of the node view
// and the request, with a stable Name(). Set one as Policy::scorer to use it in Schedule(), or
// hand it to the simulator (gpupool/sim/placer.h). Scores are integers; the highest wins and
// the engine breaks ties by topology order, then node id.
//
// The definitions follow the FGD protocol of docs/simulator.md and the FGD authors' simulator
// (hkust-adsl/kubernetes-scheduler-simulator), including its integer quantisation of scores, so
// that our runs sit beside the published ones. docs/simulator.md describes each one.
#ifndef GPUPOOL_SCORERS_SCORERS_H_
#define GPUPOOL_SCORERS_SCORERS_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gpupool/placement_scorer.h"
#include "gpupool/resources.h"
#include "gpupool/scorers/fragmentation.h"

namespace gpupool {

// What ran on a node before, for scorers that cluster like with like. Bit 0: a GPU-sharing
// replica (below one GPU); bit k (1..30): a replica of k whole GPUs.
struct NodeHistory {
  uint32_t gpu_request_kinds = 0;
};

// The history bit of a request (0 for a CPU-only request).
uint32_t GpuRequestKindBit(const ResourceRequest& request);

// A scorer that can use the node's history. Schedule()'s NodeView does not carry it yet, so
// Score() falls back to what the free GPU vector reveals (a partly used GPU means a sharing
// replica ran there); the simulator tracks the exact history and calls ScoreWithHistory().
class HistoryAwareScorer : public PlacementScorer {
 public:
  virtual int64_t ScoreWithHistory(const NodeView& node, const NodeHistory& history,
                                   const ResourceRequest& request) const = 0;
  int64_t Score(const NodeView& node, const ResourceRequest& request) const override;
};

// A scorer that also picks the GPU of a sharing replica inside the chosen node (FGD does).
// Returns the index into node.free_gpu_milli. The engine's own rule (the GPU with the least
// free milli that still fits, lowest index on ties) applies when a scorer is not one of these.
class GpuSelectingScorer {
 public:
  virtual ~GpuSelectingScorer() = default;
  virtual int32_t SelectSharedGpu(const NodeView& node, const ResourceRequest& request) const = 0;
};

// The simulator's placement policies, one per built-in scorer, in the order reports list them:
// random, dotprod, gpu-packing, gpu-clustering, best-fit, fgd, default. Each is also the
// scorer's Name() except two, kept for the FGD paper's labels and the simulator's CLI:
// "best-fit" is the least-leftover scorer and "default" the expected-waste scorer. (Neither is
// the engine's PlacementStrategy::kBestFit, which a Policy without a scorer uses.)
std::span<const std::string_view> BuiltinScorerNames();

// random: a seeded hash of the request and the node's state, so every node is equally likely to
// win (nodes in identical states tie and go to the first one, which changes nothing).
std::shared_ptr<const PlacementScorer> MakeRandomScorer(uint64_t seed);

// dotprod: Tetris-style alignment as the FGD simulator scores it: free (CPU, GPU) and request
// (CPU, GPU), each divided by the largest node spec (128 cores, 8 GPUs); score
// floor(100 x (1 - dot / 2)), so the node whose free vector aligns least with the request (the
// fullest fit) wins.
std::shared_ptr<const PlacementScorer> MakeDotProductScorer();

// gpu-packing: sharing pods on already shared GPUs first (the fuller the better), then nodes that
// need the fewest fully free GPUs, idle nodes last (FGD simulator's integer score).
std::shared_ptr<const PlacementScorer> MakeGpuPackingScorer();

// gpu-clustering: nodes already running pods of the same GPU request kind first (only that kind,
// then mixed), then idle nodes, then nodes of other kinds; within a tier the fuller node.
std::shared_ptr<const HistoryAwareScorer> MakeGpuClusteringScorer();

// least-leftover (the FGD paper's "Best-fit" baseline; simulator policy "best-fit"): the
// smallest weighted leftover 0.5 x CPU left + 0.5 x GPU left, each divided by the largest node
// spec (128 cores, 8 GPUs) as the FGD simulator does; score floor(100 x (1 - left)). Unlike the
// engine's PlacementStrategy::kBestFit (fewest free milli-GPUs left), it weighs CPU as much as
// GPUs and scores the node total, not the GPUs.
std::shared_ptr<const PlacementScorer> MakeLeastLeftoverScorer();

// fgd: Fragmentation Gradient Descent. The node (and for a sharing pod, the GPU) whose placement
// increases the node's expected fragmentation least, against `popularity` (FGD uses the
// workload's classes covering 95% of its pods). Score floor(100 x sigmoid(decrease / 1000)) as
// in the paper's code. Also a GpuSelectingScorer.
std::shared_ptr<const PlacementScorer> MakeFgdScorer(TaskClassTable popularity);

// expected-waste (simulator policy "default"): gpupool's own fragmentation-aware scorer. Where FGD
// minimises the fragmentation a placement causes now, this minimises the growth of the node's
// expected *final* waste: the GPU milli still idle after fixed samples of the workload's mix (CPU
// and memory included) are packed onto the node largest first. Ties go to the first node, which
// packs. Needs the workload's popularity table with memory (TaskClassTable::FromPods(..., 100,
// true)); MakeScorerByName() builds it. See docs/simulator.md for the measurements. Cost per call:
// O(8 x 64 x GPUs).
std::shared_ptr<const PlacementScorer> MakeExpectedWasteScorer(TaskClassTable popularity);

// What the by-name factory needs: a seed (random) and the workload's requests (fgd,
// expected-waste).
struct ScorerContext {
  uint64_t seed = 0;
  std::span<const ResourceRequest> requests;
  std::span<const std::vector<std::string>> models;
};

// One of BuiltinScorerNames() by name, or a scorer by its Name() ("least-leftover",
// "expected-waste"). InvalidArgument for an unknown name (the message lists the known ones).
absl::StatusOr<std::shared_ptr<const PlacementScorer>> MakeScorerByName(
    std::string_view name, const ScorerContext& context);

}  // namespace gpupool

#endif  // GPUPOOL_SCORERS_SCORERS_H_
