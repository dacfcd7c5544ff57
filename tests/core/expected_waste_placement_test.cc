// PlacementStrategy::kExpectedWaste: the expected-waste scorer fed with the snapshot's own
// workload mix (docs/policy-format.md#placement). Exact outcomes on small
// pools; the comment above each case works out the scores.
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gpupool/schedule.h"
#include "gpupool/scorers/scorers.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace gpupool {
namespace {

using ::gpupool::testing::DecisionsToText;
using ::gpupool::testing::FindStart;
using ::gpupool::testing::GpuRequest;
using ::gpupool::testing::MakeNode;
using ::gpupool::testing::MakePendingJob;
using ::gpupool::testing::MakeRunningJob;
using ::gpupool::testing::Placement;
using ::gpupool::testing::ShuffleSnapshot;
using ::gpupool::testing::SnapshotBuilder;

Decisions ScheduleOk(const Snapshot& snapshot, const Policy& policy) {
  absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy);
  EXPECT_TRUE(decisions.ok()) << decisions.status();
  return decisions.ok() ? *std::move(decisions) : Decisions{};
}

Policy WithPlacement(PlacementStrategy strategy) {
  Policy policy;
  policy.placement = strategy;
  policy.queue_order = QueueOrder::kNone;
  return policy;
}

// The node job `job` starts on (its first replica), or "" if it does not start.
std::string NodeOf(const Decisions& decisions, const std::string& job) {
  const StartDecision* start = FindStart(decisions, job);
  if (start == nullptr || start->placements.empty()) return "";
  return start->placements[0].node;
}

// Node "a": 4 GPUs, 32 cores, two running (1 GPU, 8 cores) jobs: 2 GPUs and 16 cores free.
// Node "b": 4 GPUs, 108 cores, one such job: 3 GPUs and 100 cores free.
// Pending "p": 1 GPU with 12 cores. The snapshot's mix: 3 x (1 GPU, 8 cores), 1 x (1 GPU,
// 12 cores).
//   best-fit: "a" (2 free GPUs < 3). It leaves "a" 1 GPU and 4 cores, which no job of the mix can
//   use: 1,000 milli wasted in every sample.
//   expected-waste: on "b" the waste stays 0 (2 GPUs and 88 cores still take two jobs of the
//   mix); on "a" it grows from at most 1,000 (only a sample whose first job is a 12-core one
//   wastes a GPU there now) to 1,000 in each of the 8 samples. "b" scores 0, "a" below 0: "b".
Snapshot CpuStrandingPool() {
  return SnapshotBuilder()
      .Model("A100")
      .Node(MakeNode("a", "A100", 4, {}, 32000))
      .Node(MakeNode("b", "A100", 4, {}, 108000))
      .Queue("q")
      .Job(MakeRunningJob("r1", "q", GpuRequest(1000, 8000), {Placement("a", {0})}))
      .Job(MakeRunningJob("r2", "q", GpuRequest(1000, 8000), {Placement("a", {1})}))
      .Job(MakeRunningJob("r3", "q", GpuRequest(1000, 8000), {Placement("b", {0})}))
      .Job(MakePendingJob("p", "q", GpuRequest(1000, 12000)))
      .Build();
}

TEST(ExpectedWastePlacementTest, AvoidsStrandingGpusWithoutCpuWhereBestFitDoesNot) {
  const Snapshot snapshot = CpuStrandingPool();
  const Decisions best_fit = ScheduleOk(snapshot, WithPlacement(PlacementStrategy::kBestFit));
  EXPECT_EQ(NodeOf(best_fit, "p"), "a") << DecisionsToText(best_fit);
  const Decisions waste = ScheduleOk(snapshot, WithPlacement(PlacementStrategy::kExpectedWaste));
  EXPECT_EQ(NodeOf(waste, "p"), "b") << DecisionsToText(waste);
  // GPU 1 of "b": the lowest-index free GPU.
  const StartDecision* start = FindStart(waste, "p");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->placements[0].gpus, std::vector<int32_t>({1}));
  EXPECT_EQ(waste.scorer, "expected-waste");
}

// Not the default (docs/policy-format.md, "Why these defaults": it costs 2.6x best-fit's time):
// Policy{} is best-fit without queue turns and places "p" on "a".
TEST(ExpectedWastePlacementTest, IsNotTheDefault) {
  const Policy policy;
  EXPECT_EQ(policy.placement, PlacementStrategy::kBestFit);
  EXPECT_EQ(policy.queue_order, QueueOrder::kNone);
  const Decisions decisions = ScheduleOk(CpuStrandingPool(), policy);
  EXPECT_EQ(NodeOf(decisions, "p"), "a") << DecisionsToText(decisions);
  EXPECT_EQ(decisions.scorer, "best-fit");
}

// The host scorer MakeExpectedWasteScorer() given the same mix (one pod per replica of every
// job, with memory) makes the same choice: the strategy is that scorer, fed from the snapshot.
TEST(ExpectedWastePlacementTest, AgreesWithTheHostScorerGivenTheSameMix) {
  const Snapshot snapshot = CpuStrandingPool();
  std::vector<ResourceRequest> requests;
  std::vector<std::vector<std::string>> models;
  for (const Job& job : snapshot.jobs) {
    requests.push_back(job.groups[0].request);
    models.push_back(job.groups[0].gpu_models);
  }
  Policy policy = WithPlacement(PlacementStrategy::kBestFit);
  policy.scorer = MakeExpectedWasteScorer(TaskClassTable::FromPods(requests, models, 100, true));
  EXPECT_EQ(NodeOf(ScheduleOk(snapshot, policy), "p"), "b");
}

// Ties go to best-fit's choice.
TEST(ExpectedWastePlacementTest, TiesGoToBestFitsChoice) {
  // Empty nodes: "a" 8 GPUs, "b" 4 GPUs, default CPU. Pending "p": 1 GPU, no CPU. The mix is "p"
  // alone; both nodes are filled completely by it before and after: every score is 0. Best-fit
  // takes the node with the fewest free GPUs, "b"; so does expected-waste. First-fit takes "a".
  const Snapshot snapshot = SnapshotBuilder()
                                .Model("A100")
                                .Node(MakeNode("a", "A100", 8))
                                .Node(MakeNode("b", "A100", 4))
                                .Queue("q")
                                .Job(MakePendingJob("p", "q", GpuRequest(1000)))
                                .Build();
  EXPECT_EQ(NodeOf(ScheduleOk(snapshot, WithPlacement(PlacementStrategy::kFirstFit)), "p"), "a");
  EXPECT_EQ(NodeOf(ScheduleOk(snapshot, WithPlacement(PlacementStrategy::kBestFit)), "p"), "b");
  EXPECT_EQ(NodeOf(ScheduleOk(snapshot, WithPlacement(PlacementStrategy::kExpectedWaste)), "p"),
            "b");
}

// The mix does not depend on the order of the snapshot's lists: shuffled snapshots give the same
// decisions, byte for byte (DecisionsToText).
TEST(ExpectedWastePlacementTest, SameDecisionsWhateverTheOrderOfTheSnapshot) {
  SnapshotBuilder builder;
  builder.Model("A100").Model("H100").Queue("q");
  for (int n = 0; n < 6; ++n) {
    builder.Node(
        MakeNode("n" + std::to_string(n), n % 2 == 0 ? "A100" : "H100", 8, {}, 16000 + 8000 * n));
  }
  for (int j = 0; j < 24; ++j) {
    const int64_t milli = j % 3 == 0 ? 250 : (j % 3 == 1 ? 1000 : 2000);
    builder.Job(MakePendingJob("j" + std::to_string(100 + j), "q",
                               GpuRequest(milli, 2000 + 1000 * (j % 5)), 1 + j % 2));
  }
  const Snapshot snapshot = builder.Build();
  const Policy policy = WithPlacement(PlacementStrategy::kExpectedWaste);
  const std::string want = DecisionsToText(ScheduleOk(snapshot, policy));
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    Snapshot shuffled = snapshot;
    ShuffleSnapshot(shuffled, seed);
    EXPECT_EQ(DecisionsToText(ScheduleOk(shuffled, policy)), want) << "seed " << seed;
  }
}

}  // namespace
}  // namespace gpupool
