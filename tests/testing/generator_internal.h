// Pieces shared by the generator's source files (generator_*.cc), not part of generator.h: a
// weighted pick from a table, rounding down to a unit, and the first-fit placement that puts the
// running jobs of GenerateRandomSnapshot and GenerateMultiQueueScenario in place.
#ifndef GPUPOOL_TESTING_GENERATOR_INTERNAL_H_
#define GPUPOOL_TESTING_GENERATOR_INTERNAL_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpupool/snapshot.h"
#include "testing/generator.h"

namespace gpupool::testing::generator_internal {

// Picks a value from a table of (value, weight) pairs.
template <typename T>
T PickFrom(Rng& rng, std::span<const std::pair<T, int64_t>> table) {
  std::vector<int64_t> weights;
  weights.reserve(table.size());
  for (const auto& [value, weight] : table) weights.push_back(weight);
  return table[rng.PickWeighted(weights)].first;
}

inline int64_t RoundDown(int64_t value, int64_t unit) { return value / unit * unit; }

// First-fit placement of running jobs into a small snapshot, keeping track of what is used so
// that nothing is over-committed: milli-GPUs and GPU memory per GPU, CPU and memory per node,
// and who shares a GPU or a node (isolation). Defined in generator_first_fit.cc.
class FirstFit {
 public:
  explicit FirstFit(const Snapshot& snapshot);

  // Places replica counts[g] of each group g of `job`, all on nodes of one GPU model, or returns
  // nullopt and changes nothing.
  std::optional<std::vector<ReplicaPlacement>> Place(const Job& job,
                                                     const std::vector<int32_t>& counts);

 private:
  struct GpuUse {
    int64_t milli = 0;
    int64_t memory = 0;
    std::vector<int> tenants;
  };
  struct NodeUse {
    int64_t free_cpu = 0;
    int64_t free_memory = 0;
    int64_t model_memory = 0;
    std::vector<int> tenants;
    std::vector<GpuUse> gpus;
  };

  int QueueIndex(const std::string& id) const;
  int TenantOf(int queue) const;
  Isolation ModeOf(int tenant) const;
  // May a job of `queue` use a node reserved to `owners`?
  bool OwnerAllows(const std::vector<std::string>& owners, int queue) const;
  bool NodeSharable(const NodeUse& use, int tenant) const;
  static bool GpuSharable(const GpuUse& use, int tenant);
  static void AddTenant(std::vector<int>& tenants, int tenant);

  std::optional<ReplicaPlacement> PlaceReplica(const TaskGroup& group, const std::string& model,
                                               int queue, int tenant);

  // Positions of the GPUs the replica takes on `node`, or none if it does not fit. Honours
  // island scope whether required or preferred, so running jobs always look well placed.
  std::vector<int> ChooseGpus(const Node& node, const NodeUse& use, const TaskGroup& group,
                              int tenant) const;

  const Snapshot& snapshot_;
  std::vector<NodeUse> nodes_;
  std::vector<int> parent_;  // queue index -> parent index, -1 for roots
};

}  // namespace gpupool::testing::generator_internal

#endif  // GPUPOOL_TESTING_GENERATOR_INTERNAL_H_
