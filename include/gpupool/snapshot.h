// The snapshot: everything Schedule() knows about the pool at one instant.
#ifndef GPUPOOL_SNAPSHOT_H_
#define GPUPOOL_SNAPSHOT_H_

#include <cstdint>
#include <vector>

#include "gpupool/gpu_model.h"
#include "gpupool/job.h"
#include "gpupool/node.h"
#include "gpupool/queue.h"
#include "gpupool/topology.h"

namespace gpupool {

// A value type owned by the host. Lists may come in any order: Schedule() sorts what it needs by
// id, so the order of every list has no effect on the decisions.
struct Snapshot {
  // Host clock, in seconds.
  int64_t now = 0;
  Topology topology;
  std::vector<GpuModel> gpu_models;
  std::vector<Node> nodes;
  std::vector<Queue> queues;
  std::vector<Job> jobs;
};

}  // namespace gpupool

#endif  // GPUPOOL_SNAPSHOT_H_
