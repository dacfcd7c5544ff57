// The placement policies of the inflation protocol (gpupool/sim/placer.h).
#include "gpupool/sim/placer.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpupool/scorers/scorers.h"

namespace gpupool::sim {

absl::StatusOr<SimPolicy> MakeSimPolicy(std::string_view name, const Workload& workload,
                                        uint64_t seed) {
  std::vector<ResourceRequest> requests;
  std::vector<std::vector<std::string>> models;
  requests.reserve(workload.pods.size());
  for (const SimPod& p : workload.pods) {
    requests.push_back(p.request);
    models.push_back(p.gpu_models);
  }
  ScorerContext context;
  context.seed = seed;
  context.requests = requests;
  context.models = models;
  absl::StatusOr<std::shared_ptr<const PlacementScorer>> scorer = MakeScorerByName(name, context);
  if (!scorer.ok()) return scorer.status();
  SimPolicy policy;
  policy.name = std::string(name);
  policy.scorer = *std::move(scorer);
  // The six baselines run as the FGD simulator runs them: equal scores go to the first node of a
  // node order shuffled once per run. gpupool's default breaks ties like Schedule() does.
  policy.tie_break = name == "default" ? TieBreak::kFirstNode : TieBreak::kShuffledNodeOrder;
  policy.uniform_random = name == "random";
  policy.scorer_selects_gpu = name == "fgd";
  return policy;
}

}  // namespace gpupool::sim
