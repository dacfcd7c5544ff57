// PlanDrain (drain_plan.h): per node, when it empties and what the deadline stops.
#include "gpupool/drain_plan.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace gpupool {
namespace {

using ::gpupool::testing::GpuRequest;
using ::gpupool::testing::MakeNode;
using ::gpupool::testing::MakeRunningJob;
using ::gpupool::testing::Placement;
using ::gpupool::testing::SnapshotBuilder;

// now 1,000, deadline 5,000.
//   n1: "ends" (1 GPU) ends at 3,000 by its estimate.
//   n2: "late" (1 GPU) would end at 9,000: stopped at 5,000. It checkpoints every 1,000 s from
//       its last checkpoint at 800, so by 5,000 its last one is at 4,800: it loses
//       1,000 x (200 + 50 restore).
//   "gang" (2 replicas, one on n2, one on n3 which is not drained) has no estimate: stopped, and
//       counted once; no checkpoints: it loses 2,000 x (5,000 - 0 start).
//   n4 is empty.
Snapshot Pool() {
  Job ends = MakeRunningJob("ends", "q", GpuRequest(1000), {Placement("n1", {0})}, 0);
  ends.runtime_estimate_s = 3'000;
  ends.attained_service_s = 1'000;
  Job late = MakeRunningJob("late", "q", GpuRequest(1000), {Placement("n2", {0})}, 0);
  late.runtime_estimate_s = 9'000;
  late.attained_service_s = 1'000;
  late.checkpointing.interval_s = 1'000;
  late.checkpointing.last_checkpoint_time = 800;
  late.checkpointing.restore_time_s = 50;
  Job gang = MakeRunningJob("gang", "q", GpuRequest(1000),
                            {Placement("n2", {1}, 0), Placement("n3", {0}, 1)}, 0);
  gang.groups[0].replicas = 2;
  return SnapshotBuilder()
      .Now(1'000)
      .Model("A100")
      .Node(MakeNode("n1", "A100", 2))
      .Node(MakeNode("n2", "A100", 2))
      .Node(MakeNode("n3", "A100", 2))
      .Node(MakeNode("n4", "A100", 2))
      .Queue("q")
      .Job(ends)
      .Job(late)
      .Job(gang)
      .Build();
}

TEST(DrainPlanTest, SaysWhenEachNodeEmptiesAndWhatTheDeadlineStops) {
  const std::vector<std::string> nodes = {"n4", "n2", "n1", "n2"};
  absl::StatusOr<DrainPlan> plan = PlanDrain(Pool(), nodes, 5'000, Policy());
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->nodes.size(), 3u);
  EXPECT_EQ(plan->nodes[0].node, "n1");
  EXPECT_EQ(plan->nodes[0].expected_empty_time, 3'000);
  ASSERT_EQ(plan->nodes[0].jobs.size(), 1u);
  EXPECT_EQ(plan->nodes[0].jobs[0].expected_end, 3'000);
  EXPECT_FALSE(plan->nodes[0].jobs[0].stopped);
  EXPECT_EQ(plan->nodes[0].jobs[0].lost_milli_gpu_seconds, 0);

  EXPECT_EQ(plan->nodes[1].node, "n2");
  EXPECT_EQ(plan->nodes[1].expected_empty_time, 5'000);
  ASSERT_EQ(plan->nodes[1].jobs.size(), 2u);
  EXPECT_EQ(plan->nodes[1].jobs[0].job, "gang");
  EXPECT_EQ(plan->nodes[1].jobs[0].expected_end, std::nullopt);
  EXPECT_TRUE(plan->nodes[1].jobs[0].stopped);
  EXPECT_EQ(plan->nodes[1].jobs[0].lost_milli_gpu_seconds, 2000 * 5'000);
  EXPECT_EQ(plan->nodes[1].jobs[1].job, "late");
  EXPECT_EQ(plan->nodes[1].jobs[1].expected_end, 9'000);
  EXPECT_TRUE(plan->nodes[1].jobs[1].stopped);
  EXPECT_EQ(plan->nodes[1].jobs[1].lost_milli_gpu_seconds, 1000 * (200 + 50));

  EXPECT_EQ(plan->nodes[2].node, "n4");
  EXPECT_EQ(plan->nodes[2].expected_empty_time, 1'000);
  EXPECT_TRUE(plan->nodes[2].jobs.empty());

  EXPECT_THAT(plan->stopped_jobs, ::testing::ElementsAre("gang", "late"));
  EXPECT_EQ(plan->lost_milli_gpu_seconds, 2000 * 5'000 + 1000 * 250);
}

TEST(DrainPlanTest, CheckpointGraceLimitsTheLoss) {
  Snapshot snapshot = Pool();
  for (Job& job : snapshot.jobs) job.checkpointing.checkpoint_cost_s = 30;
  Policy policy;
  policy.preemption.checkpoint_grace_s = 60;
  const std::vector<std::string> nodes = {"n2"};
  absl::StatusOr<DrainPlan> plan = PlanDrain(snapshot, nodes, 5'000, policy);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // "late" checkpoints (interval > 0) within the grace: it loses 30 s, plus its restore.
  EXPECT_EQ(plan->nodes[0].jobs[1].lost_milli_gpu_seconds, 1000 * (30 + 50));
  // "gang" does not checkpoint at all: the grace does not apply.
  EXPECT_EQ(plan->nodes[0].jobs[0].lost_milli_gpu_seconds, 2000 * 5'000);
}

TEST(DrainPlanTest, RefusesBadRequests) {
  const std::vector<std::string> unknown = {"n1", "n9"};
  absl::StatusOr<DrainPlan> plan = PlanDrain(Pool(), unknown, 5'000, Policy());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(plan.status().message(), "nodes[n9]: no such node in the snapshot");

  const std::vector<std::string> nodes = {"n1"};
  plan = PlanDrain(Pool(), nodes, 999, Policy());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(plan.status().message(), "deadline: 999 is before the snapshot's now (1000)");

  plan = PlanDrain(Pool(), std::vector<std::string>{}, 5'000, Policy());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);

  Policy bad;
  bad.preemption.checkpoint_grace_s = -1;
  plan = PlanDrain(Pool(), nodes, 5'000, bad);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpupool
