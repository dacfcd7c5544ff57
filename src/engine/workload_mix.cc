#include "workload_mix.h"

#include <string>
#include <vector>

#include "gpupool/scorers/scorers.h"

namespace gpupool::internal {

std::shared_ptr<const PlacementScorer> MakeSnapshotMixScorer(const Snapshot& snapshot) {
  std::vector<ResourceRequest> requests;
  std::vector<std::vector<std::string>> models;
  std::vector<int64_t> replicas;
  for (const Job& job : snapshot.jobs) {
    for (const TaskGroup& group : job.groups) {
      requests.push_back(group.request);
      models.push_back(group.gpu_models);
      replicas.push_back(group.replicas);
    }
  }
  return MakeExpectedWasteScorer(TaskClassTable::FromPods(requests, models, 100, true, replicas));
}

}  // namespace gpupool::internal
