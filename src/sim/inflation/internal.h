// Shared pieces of the pod-level inflation protocol (not API).
#ifndef GPUPOOL_SRC_SIM_INFLATION_INTERNAL_H_
#define GPUPOOL_SRC_SIM_INFLATION_INTERNAL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpupool/resources.h"
#include "gpupool/scorers/fragmentation.h"
#include "gpupool/sim/workload.h"

namespace gpupool::sim::internal {

// A pod's request in the form the engine checks it.
struct PodShape {
  ResourceRequest request;
  int32_t count = 0;  // GPUs
  int64_t per = 0;    // milli per GPU
  // Bit i: the cluster's i-th model (ClusterModels) is accepted; all bits: any model. A pod
  // restricted to models can use only the first 64 models of a cluster.
  uint64_t model_mask = 0;
  // Pods with equal requests and models share this id (the memo key).
  int32_t shape_class = 0;
};

// The distinct GPU models of a cluster, sorted. At most 64 are told apart.
std::vector<std::string> ClusterModels(const Cluster& cluster);
uint64_t ModelBit(const std::vector<std::string>& models, std::string_view model);
std::vector<PodShape> PodShapes(const Cluster& cluster, const Workload& workload);

// The popularity table the fragmentation measure (docs/simulator.md) uses: every class of the
// workload's pods.
TaskClassTable MeasureTable(const Workload& workload);

// The basename of a path, for messages.
std::string BaseName(std::string_view path);

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_INFLATION_INTERNAL_H_
