// A running job's placements with every share of a GPU spelled out.
#ifndef GPUPOOL_INTERNAL_PLACEMENTS_H_
#define GPUPOOL_INTERNAL_PLACEMENTS_H_

#include <vector>

#include "gpupool/job.h"

namespace gpupool::internal {

// `job`'s running placements, each with GPUs given its milli-GPUs per GPU: a snapshot may leave
// gpu_milli at 0 for "the group's MilliPerGpu()" (job.h), which a Migrate's `from` and `explain`
// state.
inline std::vector<ReplicaPlacement> PlacementsWithShares(const Job& job) {
  std::vector<ReplicaPlacement> placements = job.placements;
  for (ReplicaPlacement& p : placements) {
    if (p.gpu_milli != 0 || p.gpus.empty()) continue;
    for (const TaskGroup& group : job.groups) {
      if (group.name == p.group) p.gpu_milli = group.request.MilliPerGpu();
    }
  }
  return placements;
}

}  // namespace gpupool::internal

#endif  // GPUPOOL_INTERNAL_PLACEMENTS_H_
