// Maintenance windows and drains (docs/operations.md, "Maintenance windows and drains"): exact
// outcomes on small pools, one rule per test.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gpupool/apply.h"
#include "gpupool/schedule.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace gpupool {
namespace {

using ::gpupool::testing::FindPending;
using ::gpupool::testing::FindStart;
using ::gpupool::testing::GpuRequest;
using ::gpupool::testing::MakeNode;
using ::gpupool::testing::MakePendingJob;
using ::gpupool::testing::MakeRunningJob;
using ::gpupool::testing::Placement;
using ::gpupool::testing::SnapshotBuilder;

Policy FirstFit() {
  Policy policy;
  policy.placement = PlacementStrategy::kFirstFit;
  policy.job_order = JobOrder::kPriorityFifo;
  policy.queue_order = QueueOrder::kNone;
  return policy;
}

Decisions ScheduleOk(const Snapshot& snapshot, const Policy& policy) {
  absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy);
  EXPECT_TRUE(decisions.ok()) << decisions.status();
  return decisions.ok() ? *decisions : Decisions();
}

void ExpectFixedPoint(const Snapshot& snapshot, const Policy& policy, const Decisions& first) {
  Snapshot next = snapshot;
  ASSERT_TRUE(ApplyDecisions(first, next).ok());
  ASSERT_TRUE(ValidateSnapshot(next).ok()) << ValidateSnapshot(next);
  const Decisions second = ScheduleOk(next, policy);
  EXPECT_TRUE(second.starts.empty());
  EXPECT_TRUE(second.preemptions.empty());
  EXPECT_TRUE(second.node_actions.empty());
}

Node WithWindow(Node node, int64_t start, int64_t end) {
  node.maintenance.push_back(MaintenanceWindow{start, end});
  return node;
}

Job Pending(const std::string& id, std::optional<int64_t> estimate) {
  Job job = MakePendingJob(id, "q", GpuRequest(1000));
  job.runtime_estimate_s = estimate;
  return job;
}

// now 1,000; n1 has a window from 5,000 to 9,000. "short" ends at 4,600: it fits before the
// window. "long" would end at 6,000 and "unknown" has no estimate: both go to n2 (first fit
// would have taken n1).
TEST(MaintenanceTest, AJobThatWouldRunIntoAWindowStartsElsewhere) {
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(1'000)
                                .Model("A100")
                                .Node(WithWindow(MakeNode("n1", "A100", 1), 5'000, 9'000))
                                .Node(MakeNode("n2", "A100", 2))
                                .Queue("q")
                                .Job(Pending("a-long", 5'000))
                                .Job(Pending("b-unknown", std::nullopt))
                                .Job(Pending("c-short", 3'600))
                                .Build();
  const Decisions d = ScheduleOk(snapshot, FirstFit());
  ASSERT_EQ(d.starts.size(), 3u);
  EXPECT_EQ(FindStart(d, "a-long")->placements[0].node, "n2");
  EXPECT_EQ(FindStart(d, "b-unknown")->placements[0].node, "n2");
  EXPECT_EQ(FindStart(d, "c-short")->placements[0].node, "n1");
  EXPECT_TRUE(d.node_actions.empty());  // drain notice 0: nothing to do before the window
  ExpectFixedPoint(snapshot, FirstFit(), d);
}

TEST(MaintenanceTest, PendingForMaintenanceWhenNoOtherNodeCanTakeIt) {
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(1'000)
                                .Model("A100")
                                .Node(WithWindow(MakeNode("n1", "A100", 1), 5'000, 9'000))
                                .Queue("q")
                                .Job(Pending("long", 5'000))
                                .Job(Pending("unknown", std::nullopt))
                                .Build();
  const Decisions d = ScheduleOk(snapshot, FirstFit());
  ASSERT_NE(FindPending(d, "long"), nullptr);
  EXPECT_EQ(FindPending(d, "long")->reason, PendingReason::kMaintenance);
  EXPECT_EQ(FindPending(d, "long")->detail,
            "node n1 could take the job now, but its maintenance window from 5000 to 9000 "
            "starts before the job's runtime estimate of 5000 s would end (at 6000); no node "
            "without a window in the way can take it");
  ASSERT_NE(FindPending(d, "unknown"), nullptr);
  EXPECT_EQ(FindPending(d, "unknown")->reason, PendingReason::kMaintenance);
  EXPECT_EQ(FindPending(d, "unknown")->detail,
            "node n1 could take the job now, but it has a maintenance window from 5000 to 9000 "
            "and the job has no runtime estimate; no node without a window in the way can take it");

  // With start_without_estimate the job without an estimate may start (and is stopped at 5000).
  Policy allow = FirstFit();
  allow.maintenance.start_without_estimate = true;
  const Decisions allowed = ScheduleOk(snapshot, allow);
  EXPECT_NE(FindStart(allowed, "unknown"), nullptr);
  EXPECT_EQ(FindPending(allowed, "long")->reason, PendingReason::kMaintenance);
}

TEST(MaintenanceTest, NotPendingForMaintenanceWhenCapacityIsTheReason) {
  // n1 is full with work that does not end before the window: the job lacks capacity first.
  const Snapshot snapshot =
      SnapshotBuilder()
          .Now(1'000)
          .Model("A100")
          .Node(WithWindow(MakeNode("n1", "A100", 1), 5'000, 9'000))
          .Queue("q")
          .Job(MakeRunningJob("busy", "q", GpuRequest(1000), {Placement("n1", {0})}, 0))
          .Job(Pending("long", 5'000))
          .Build();
  const Decisions d = ScheduleOk(snapshot, FirstFit());
  ASSERT_NE(FindPending(d, "long"), nullptr);
  EXPECT_EQ(FindPending(d, "long")->reason, PendingReason::kInsufficientCapacity);
}

// now 6,000, inside n1's window [5,000, 9,000). "victim" (2 GPUs, started at 2,000, checkpoint
// at 5,500, restore 100 s) is stopped: it loses 2,000 x (500 + 100). It restarts on n2. n1 drains,
// empty now.
TEST(MaintenanceTest, AtTheWindowsStartJobsAreStoppedAndTheNodeDrains) {
  Job victim = MakeRunningJob("victim", "q", GpuRequest(2000), {Placement("n1", {0, 1})}, 2'000);
  victim.checkpointing.interval_s = 500;
  victim.checkpointing.last_checkpoint_time = 5'500;
  victim.checkpointing.restore_time_s = 100;
  victim.runtime_estimate_s = 10'000;
  victim.attained_service_s = 4'000;
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(6'000)
                                .Model("A100")
                                .Node(WithWindow(MakeNode("n1", "A100", 2), 5'000, 9'000))
                                .Node(MakeNode("n2", "A100", 2))
                                .Queue("q")
                                .Job(victim)
                                .Build();
  const Decisions d = ScheduleOk(snapshot, FirstFit());
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].for_job, "");
  EXPECT_EQ(d.preemptions[0].reason,
            "node n1 is in its maintenance window from 5000 to 9000: the job is checkpointed and "
            "stopped, and goes back to its queue");
  EXPECT_EQ(d.preemptions[0].lost_milli_gpu_seconds, 2000 * (500 + 100));
  ASSERT_NE(FindStart(d, "victim"), nullptr);
  EXPECT_EQ(FindStart(d, "victim")->placements[0].node, "n2");
  ASSERT_EQ(d.node_actions.size(), 1u);
  EXPECT_EQ(d.node_actions[0].action, NodeAction::kDrain);
  EXPECT_EQ(d.node_actions[0].expected_empty_time, 6'000);
  EXPECT_EQ(d.node_actions[0].reason,
            "maintenance window from 5000 to 9000 is in progress: the node takes no work until "
            "9000, and the jobs still on it are stopped");
  ExpectFixedPoint(snapshot, FirstFit(), d);

  // After the window the engine reopens the node it drained.
  Snapshot after = snapshot;
  ASSERT_TRUE(ApplyDecisions(d, after).ok());
  after.now = 9'000;
  const Decisions reopened = ScheduleOk(after, FirstFit());
  ASSERT_EQ(reopened.node_actions.size(), 1u);
  EXPECT_EQ(reopened.node_actions[0].action, NodeAction::kUncordon);
  EXPECT_EQ(reopened.node_actions[0].reason,
            "no maintenance window in progress at 9000 or within the drain notice of 0 s");
}

// now 1,000, window at 4,000, drain notice 3,600: n1 drains now. "ends" ends at 2,500 by its
// estimate; "forever" has none and is stopped at 4,000: n1 is expected empty at 4,000.
TEST(MaintenanceTest, DrainNoticeClosesTheNodeAndReportsWhenItEmpties) {
  Job ends = MakeRunningJob("ends", "q", GpuRequest(1000), {Placement("n1", {0})}, 0);
  ends.runtime_estimate_s = 2'000;
  ends.attained_service_s = 500;
  Job forever = MakeRunningJob("forever", "q", GpuRequest(1000), {Placement("n1", {1})}, 0);
  Policy policy = FirstFit();
  policy.maintenance.drain_notice_s = 3'600;
  Snapshot snapshot = SnapshotBuilder()
                          .Now(1'000)
                          .Model("A100")
                          .Node(WithWindow(MakeNode("n1", "A100", 3), 4'000, 8'000))
                          .Queue("q")
                          .Job(ends)
                          .Job(Pending("tiny", 10))
                          .Build();
  Decisions d = ScheduleOk(snapshot, policy);
  ASSERT_EQ(d.node_actions.size(), 1u);
  EXPECT_EQ(d.node_actions[0].expected_empty_time, 2'500);
  EXPECT_EQ(FindPending(d, "tiny")->reason, PendingReason::kNodeRestrictions);  // n1 drains

  snapshot.jobs.push_back(forever);
  d = ScheduleOk(snapshot, policy);
  ASSERT_EQ(d.node_actions.size(), 1u);
  EXPECT_EQ(d.node_actions[0].action, NodeAction::kDrain);
  EXPECT_EQ(d.node_actions[0].expected_empty_time, 4'000);
  EXPECT_EQ(d.node_actions[0].reason,
            "maintenance window from 4000 to 8000 starts in 3000 s (drain notice 3600 s): the "
            "node takes no new work, and the jobs still on it at 4000 are stopped then");
  EXPECT_TRUE(d.starts.empty());
  EXPECT_TRUE(d.preemptions.empty());
  ExpectFixedPoint(snapshot, policy, d);
}

}  // namespace
}  // namespace gpupool
