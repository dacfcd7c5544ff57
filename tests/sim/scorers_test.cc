// The built-in scorers on hand-computed nodes: the integer scores of the FGD simulator's plugins.
#include "gpupool/scorers/scorers.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace gpupool {
namespace {

struct Node {
  std::string model = "G2";
  int64_t cpu_capacity = 96000;
  int64_t memory_capacity = 393216;
  int64_t cpu_free = 96000;
  int64_t memory_free = 393216;
  std::vector<int64_t> gpus = std::vector<int64_t>(8, 1000);

  NodeView View() const {
    NodeView v;
    v.gpu_model = model;
    v.gpu_count = static_cast<int64_t>(gpus.size());
    v.cpu_milli_capacity = cpu_capacity;
    v.memory_mib_capacity = memory_capacity;
    v.free_cpu_milli = cpu_free;
    v.free_memory_mib = memory_free;
    v.free_gpu_milli = gpus;
    for (int64_t g : gpus) v.free_gpu_milli_total += g;
    return v;
  }
};

ResourceRequest Req(int64_t gpu_milli, int64_t cpu_milli, int64_t memory_mib = 1024) {
  ResourceRequest r;
  r.gpu_milli = gpu_milli;
  r.cpu_milli = cpu_milli;
  r.memory_mib = memory_mib;
  return r;
}

TEST(BestFit, WeightedLeftoverOverLargestSpec) {
  // Left after a 1-GPU, 16-core pod: 80 cores and 7 GPUs.
  // 100 x (1 - 0.5 x 80000/128000 - 0.5 x 7000/8000) = 100 x (1 - 0.3125 - 0.4375) = 25.
  EXPECT_EQ(MakeLeastLeftoverScorer()->Score(Node{}.View(), Req(1000, 16000)), 25);
  Node full;
  full.cpu_free = 16000;
  full.gpus = {1000, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(MakeLeastLeftoverScorer()->Score(full.View(), Req(1000, 16000)), 100);
}

TEST(DotProduct, SmallestAlignmentWins) {
  // dot = (96000 x 16000) / 128000^2 + (8000 x 1000) / 8000^2 = 0.09375 + 0.125 = 0.21875;
  // 100 x (1 - 0.21875 / 2) = 89.06 -> 89.
  EXPECT_EQ(MakeDotProductScorer()->Score(Node{}.View(), Req(1000, 16000)), 89);
}

TEST(GpuPacking, Tiers) {
  auto packing = MakeGpuPackingScorer();
  // Idle 8-GPU node: max(33 - 8, 8) = 25.
  EXPECT_EQ(packing->Score(Node{}.View(), Req(1000, 1000)), 25);
  // Used node, a share fits on a used GPU with 400 free: 100 - 40 / 10 = 96.
  Node shared;
  shared.gpus = {400, 1000, 1000, 1000, 1000, 1000, 1000, 1000};
  EXPECT_EQ(packing->Score(shared.View(), Req(300, 1000)), 96);
  // Used node, a whole GPU needs 1 fully free GPU: 50 - 1 = 49.
  EXPECT_EQ(packing->Score(shared.View(), Req(1000, 1000)), 49);
  // CPU-only pods: all nodes equal.
  EXPECT_EQ(packing->Score(shared.View(), Req(0, 1000)), 0);
}

TEST(GpuClustering, LikeWithLike) {
  auto clustering = MakeGpuClusteringScorer();
  Node n;
  n.gpus = {0, 1000, 1000, 1000, 1000, 1000, 1000, 1000};  // 7000 free: fill 25 x 1000/8000 = 3
  const NodeView v = n.View();
  const ResourceRequest one = Req(1000, 1000);
  EXPECT_EQ(clustering->ScoreWithHistory(v, NodeHistory{GpuRequestKindBit(one)}, one), 78);
  EXPECT_EQ(clustering->ScoreWithHistory(v, NodeHistory{GpuRequestKindBit(one) | 1u}, one), 53);
  EXPECT_EQ(clustering->ScoreWithHistory(v, NodeHistory{1u}, one), 3);
  EXPECT_EQ(clustering->ScoreWithHistory(Node{}.View(), NodeHistory{}, one), 25);
}

TEST(Fgd, PrefersThePlacementThatFragmentsLeast) {
  // Workload: shares of 500 and whole GPUs. A share on the GPU that already holds one (500 free)
  // completes it; on a fresh GPU it leaves 500 that whole-GPU pods cannot use.
  std::vector<ResourceRequest> reqs = {Req(500, 1000), Req(1000, 1000)};
  std::vector<std::vector<std::string>> models(2);
  auto fgd = MakeFgdScorer(TaskClassTable::FromPods(reqs, models));
  Node half;
  half.gpus = {1000, 500};
  Node fresh;
  fresh.gpus = {1000, 1000};
  EXPECT_GT(fgd->Score(half.View(), Req(500, 1000)), fgd->Score(fresh.View(), Req(500, 1000)));
  // It also picks that GPU inside the node.
  const auto* selector = dynamic_cast<const GpuSelectingScorer*>(fgd.get());
  ASSERT_NE(selector, nullptr);
  EXPECT_EQ(selector->SelectSharedGpu(half.View(), Req(500, 1000)), 1);
}

TEST(Default, AvoidsStrandingGpusBehindMemory) {
  // Workload: 1-GPU pods with 48 GiB each and CPU-only pods with 56 GiB. A CPU-only pod on the
  // node whose GPUs are all busy strands nothing; on the idle node it strands a GPU's memory.
  std::vector<ResourceRequest> reqs;
  for (int i = 0; i < 8; ++i) reqs.push_back(Req(1000, 11000, 49152));
  reqs.push_back(Req(0, 12000, 57344));
  std::vector<std::vector<std::string>> models(reqs.size());
  auto scorer = MakeExpectedWasteScorer(TaskClassTable::FromPods(reqs, models, 100, true));
  Node busy;
  busy.gpus = std::vector<int64_t>(8, 0);
  busy.cpu_free = 30000;
  busy.memory_free = 120000;
  const ResourceRequest cpu_pod = Req(0, 12000, 57344);
  EXPECT_GT(scorer->Score(busy.View(), cpu_pod), scorer->Score(Node{}.View(), cpu_pod));
  EXPECT_EQ(scorer->Score(busy.View(), cpu_pod), 0);
}

TEST(Registry, NamesAndErrors) {
  ScorerContext context;
  for (std::string_view name : BuiltinScorerNames()) {
    auto s = MakeScorerByName(name, context);
    ASSERT_TRUE(s.ok()) << name;
    // Two simulator policy names differ from their scorer's name (scorers.h).
    const std::string_view scorer = name == "best-fit"  ? "least-leftover"
                                    : name == "default" ? "expected-waste"
                                                        : name;
    EXPECT_EQ((*s)->Name(), scorer);
    auto by_scorer_name = MakeScorerByName(scorer, context);
    ASSERT_TRUE(by_scorer_name.ok()) << scorer;
    EXPECT_EQ((*by_scorer_name)->Name(), scorer);
  }
  auto bad = MakeScorerByName("tetris", context);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpupool
