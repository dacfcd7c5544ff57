// The placement scorer: the extension point that decides which node a replica goes to.
#ifndef GPUPOOL_PLACEMENT_SCORER_H_
#define GPUPOOL_PLACEMENT_SCORER_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "gpupool/resources.h"

namespace gpupool {

// What a scorer sees of a candidate node: capacity and what is still free at this point of the
// cycle (after the replicas already placed by it). Views are valid only during the call.
struct NodeView {
  std::string_view gpu_model;
  // Healthy GPUs only.
  int64_t gpu_count = 0;
  int64_t cpu_milli_capacity = 0;
  int64_t memory_mib_capacity = 0;
  int64_t free_cpu_milli = 0;
  int64_t free_memory_mib = 0;
  // Free milli-GPUs of each healthy GPU, in GPU index order.
  std::span<const int64_t> free_gpu_milli;
  int64_t free_gpu_milli_total = 0;
};

// Scores the placement of one replica on a node. Implementations must be pure functions of
// their arguments (no clocks, globals or mutable state) so that Schedule() stays deterministic.
//
// The engine calls Score() only for nodes where the replica fits. The highest score wins; equal
// scores go to the node first in topology order (its path, level by level), then by node id.
class PlacementScorer {
 public:
  virtual ~PlacementScorer() = default;
  // A stable name, reported in the decisions.
  virtual std::string_view Name() const = 0;
  virtual int64_t Score(const NodeView& node, const ResourceRequest& request) const = 0;
};

}  // namespace gpupool

#endif  // GPUPOOL_PLACEMENT_SCORER_H_
