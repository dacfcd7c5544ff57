// The inflation protocol (EVALUATION.md E1) on tiny hand-checked inputs.
#include <algorithm>
#include <map>
#include <vector>

#include "gpupool/sim/inflation.h"
#include "gpupool/sim/placer.h"
#include "gpupool/sim/pod_events.h"
#include "gtest/gtest.h"

namespace gpupool::sim {
namespace {

SimPod Pod(const char* id, int64_t gpu_milli, int64_t cpu_milli) {
  SimPod p;
  p.id = id;
  p.request.gpu_milli = gpu_milli;
  p.request.cpu_milli = cpu_milli;
  p.request.memory_mib = 100;
  return p;
}

TEST(InflateWorkload, AppendsCopiesUpToTheTargetKeepingEveryOriginal) {
  Workload w;
  w.pods = {Pod("a", 1000, 1), Pod("b", 500, 1), Pod("c", 0, 1)};
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const std::vector<int32_t> seq = InflateWorkload(w, 2000, 1.3, seed);
    std::map<int32_t, int> seen;
    int64_t total = 0;
    for (int32_t i : seq) {
      ++seen[i];
      total += w.pods[i].request.gpu_milli;
    }
    // Every pod at least once; the total never passes 1.3 x 2000, and stops only when the next
    // draw would (so within the largest request of it).
    EXPECT_EQ(seen.size(), 3u);
    EXPECT_LE(total, 2600);
    EXPECT_GT(total, 2600 - 1000);
    EXPECT_EQ(seq, InflateWorkload(w, 2000, 1.3, seed));
  }
  EXPECT_NE(InflateWorkload(w, 2000, 1.3, 1), InflateWorkload(w, 2000, 1.3, 2));
}

TEST(InflateWorkload, RemovesPodsWhenAboveTheTarget) {
  Workload w;
  w.pods = {Pod("a", 1000, 1), Pod("b", 1000, 1), Pod("c", 1000, 1)};
  // Target 1.3 x 1000 = 1300: two of the three pods must go.
  const std::vector<int32_t> seq = InflateWorkload(w, 1000, 1.3, 42);
  EXPECT_EQ(seq.size(), 1u);
}

TEST(InflateWorkload, ShufflesTheWholeList) {
  Workload w;
  for (int i = 0; i < 50; ++i) w.pods.push_back(Pod("p", 100, 1));
  const std::vector<int32_t> seq = InflateWorkload(w, 5000, 1.0, 3);
  ASSERT_EQ(seq.size(), 50u);
  std::vector<int32_t> sorted = seq;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 50; ++i) EXPECT_EQ(sorted[i], i);
  EXPECT_NE(seq, sorted);
}

// Two nodes: n0 with 2 GPUs, n1 with 1 GPU (3000 milli). Arrivals: c (2 GPUs), a (1 GPU),
// b (half a GPU), b again = 4000 milli = 133%.
//   c: only n0 has 2 GPUs                 -> n0, GPUs 0 and 1
//   a: n0 has none left                   -> n1, GPU 0
//   b, b: no GPU has room                 -> failed, dropped, never retried
TEST(RunInflation, TinyClusterHandChecked) {
  Cluster cluster;
  cluster.nodes.push_back(SimNode{"n0", "G2", 2, 8000, 1000});
  cluster.nodes.push_back(SimNode{"n1", "G2", 1, 4000, 1000});
  Workload w;
  w.pods = {Pod("a", 1000, 1000), Pod("b", 500, 1000), Pod("c", 2000, 1000)};
  InflationOptions options;
  options.arrivals = std::vector<int32_t>{2, 0, 1, 1};
  options.keep_placements = true;
  absl::StatusOr<PolicyResult> r = RunInflation(cluster, w, "best-fit", options);
  ASSERT_TRUE(r.ok()) << r.status();
  const SeedResult& s = r->per_seed[0];
  EXPECT_EQ(s.placements, (std::vector<int32_t>{0, 1, -1, -1}));
  EXPECT_EQ(s.placed, 2);
  EXPECT_EQ(s.failed, 2);
  ASSERT_EQ(s.curve.size(), 131u);
  // 66%: before c arrives (c alone is 66.7%). 67%: after c. 100%: after a.
  EXPECT_EQ(s.curve[66].used_gpu_milli, 0);
  EXPECT_EQ(s.curve[67].used_gpu_milli, 2000);
  EXPECT_EQ(s.curve[100].used_gpu_milli, 3000);
  EXPECT_DOUBLE_EQ(s.alloc_ratio_at_100, 1.0);
  EXPECT_DOUBLE_EQ(s.alloc_ratio_at_130, 1.0);
  EXPECT_DOUBLE_EQ(s.unallocated_gpus_at_130, 0.0);
  // At 67% only n1 is idle (1000 milli, 4000 CPU): a and b fit it (nothing fragmented), c
  // needs 2 GPUs (all 1000 fragmented). Classes a, b, c count 1 each: 1000 / (3 x 1000).
  EXPECT_DOUBLE_EQ(s.curve[67].frag_ratio, 1.0 / 3.0);
}

TEST(RunInflation, RejectsBadInput) {
  Workload w;
  w.pods = {Pod("a", 1000, 1)};
  EXPECT_FALSE(RunInflation(Cluster{}, w, "fgd", {}).ok());
  Cluster c;
  c.nodes.push_back(SimNode{"n0", "G2", 1, 1000, 1000});
  EXPECT_EQ(RunInflation(c, w, "nope", {}).status().code(), absl::StatusCode::kInvalidArgument);
}

// The pod event loop: a pod that completes frees its room for later arrivals.
TEST(PodEvents, CompletionsFreeResources) {
  Cluster cluster;
  cluster.nodes.push_back(SimNode{"n0", "G2", 1, 8000, 1000});
  Workload w;
  w.pods = {Pod("a", 1000, 1), Pod("b", 1000, 1)};
  w.pods[0].duration_s = 10;
  absl::StatusOr<SimPolicy> policy = MakeSimPolicy("best-fit", w, 1);
  ASSERT_TRUE(policy.ok());
  std::unique_ptr<PodPlacer> placer = MakeIncrementalPlacer(cluster, w, *policy, 1);
  int completions = 0;
  PodEventObserver observer;
  observer.on_completion = [&](const PodEvent&) { ++completions; };
  // b arrives at 5 (a still runs: fails) and b again at 10 (a just finished: placed).
  absl::StatusOr<std::vector<PodPlacement>> p =
      RunPodEvents(w, {0, 1, 1}, {0, 5, 10}, *placer, observer);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ((*p)[0].node, 0);
  EXPECT_EQ((*p)[1].node, -1);
  EXPECT_EQ((*p)[2].node, 0);
  EXPECT_EQ(completions, 1);
}

}  // namespace
}  // namespace gpupool::sim
