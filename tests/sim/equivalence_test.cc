// The incremental engine places every pod exactly where gpupool::Schedule() does, called pod by
// pod on a full snapshot with the same scorer (ties broken by id in both).
#include <string>
#include <vector>

#include "gpupool/scorers/scorers.h"
#include "gpupool/sim/inflation.h"
#include "gpupool/sim/placer.h"
#include "gtest/gtest.h"

namespace gpupool::sim {
namespace {

// A small cluster of one GPU model in every shape of the built-in cluster (1, 2, 4 and 8 GPUs;
// CPU and memory from 8 to 128 cores). One model, because for a pod that accepts several,
// Schedule() commits to the first model (in preference order) where it fits, whereas the FGD
// protocol scores the nodes of every model together; the simulator does the latter.
Cluster SmallCluster() {
  const Cluster all = BuiltinCluster();
  Cluster c;
  std::string last;
  int taken = 0;
  for (const SimNode& n : all.nodes) {
    const std::string type =
        n.gpu_model + std::to_string(n.gpu_count) + "/" + std::to_string(n.cpu_milli);
    if (type != last) {
      last = type;
      taken = 0;
    }
    if (taken < 2) {
      SimNode copy = n;
      copy.gpu_model = "G2";
      c.nodes.push_back(copy);
      ++taken;
    }
  }
  return c;
}

class Equivalence : public ::testing::TestWithParam<std::string> {};

TEST_P(Equivalence, IncrementalMatchesSchedulePodByPod) {
  const Cluster cluster = SmallCluster();
  Workload w = SyntheticWorkload(200, 11);
  // Some pods name the model, as in the gpuspec lists.
  for (size_t i = 0; i < w.pods.size(); i += 7) w.pods[i].gpu_models = {"G2"};
  absl::StatusOr<SimPolicy> policy = MakeSimPolicy(GetParam(), w, 3);
  ASSERT_TRUE(policy.ok());
  policy->tie_break = TieBreak::kFirstNode;
  policy->scorer_selects_gpu = false;
  policy->uniform_random = false;  // random as its scorer: a seeded hash of the node's state
  const std::vector<int32_t> seq = InflateWorkload(w, cluster.TotalGpuMilli(), 1.3, 3);
  std::unique_ptr<PodPlacer> fast = MakeIncrementalPlacer(cluster, w, *policy, 3);
  std::unique_ptr<PodPlacer> slow = MakeSchedulePlacer(cluster, w, *policy);
  int placed = 0;
  for (size_t i = 0; i < seq.size(); ++i) {
    absl::StatusOr<PodPlacement> a = fast->Place(seq[i]);
    absl::StatusOr<PodPlacement> b = slow->Place(seq[i]);
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_EQ(a->node, b->node) << "arrival " << i << " (pod " << w.pods[seq[i]].id << ")";
    ASSERT_EQ(a->gpus, b->gpus) << "arrival " << i;
    placed += a->node >= 0;
  }
  EXPECT_EQ(fast->IdleGpuMilli(), slow->IdleGpuMilli());
  EXPECT_EQ(fast->WeightedFragmentation(), slow->WeightedFragmentation());
  EXPECT_GT(placed, 50);
}

// gpu-clustering needs the node history Schedule()'s NodeView does not carry yet; it is left out.
INSTANTIATE_TEST_SUITE_P(Scorers, Equivalence,
                         ::testing::Values("random", "dotprod", "gpu-packing", "best-fit", "fgd",
                                           "default"),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           for (char& ch : n) ch = ch == '-' ? '_' : ch;
                           return n;
                         });

}  // namespace
}  // namespace gpupool::sim
