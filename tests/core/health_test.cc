// Health rules and diagnostics (docs/operations.md, "Health and diagnostics"): exact outcomes on
// small pools, one rule per test.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gpupool/apply.h"
#include "gpupool/schedule.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace gpupool {
namespace {

using ::gpupool::testing::FindStart;
using ::gpupool::testing::GpuRequest;
using ::gpupool::testing::MakeNode;
using ::gpupool::testing::MakePendingJob;
using ::gpupool::testing::MakeRunningJob;
using ::gpupool::testing::Placement;
using ::gpupool::testing::SnapshotBuilder;

Policy HealthPolicy() {
  Policy policy;
  policy.placement = PlacementStrategy::kFirstFit;
  policy.job_order = JobOrder::kPriorityFifo;
  policy.queue_order = QueueOrder::kNone;
  policy.health.enabled = true;
  policy.health.xid_errors_to_cordon = 5;
  policy.health.ecc_errors_to_cordon = 1;
  return policy;
}

Decisions ScheduleOk(const Snapshot& snapshot, const Policy& policy) {
  absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy);
  EXPECT_TRUE(decisions.ok()) << decisions.status();
  return decisions.ok() ? *decisions : Decisions();
}

std::vector<std::string> Actions(const Decisions& decisions) {
  std::vector<std::string> out;
  for (const NodeActionDecision& a : decisions.node_actions) {
    out.push_back(a.node + " " + NodeActionName(a.action));
  }
  return out;
}

// Applies the decisions and schedules again: the second cycle must change nothing.
void ExpectFixedPoint(const Snapshot& snapshot, const Policy& policy, const Decisions& first) {
  Snapshot next = snapshot;
  ASSERT_TRUE(ApplyDecisions(first, next).ok());
  ASSERT_TRUE(ValidateSnapshot(next).ok()) << ValidateSnapshot(next);
  const Decisions second = ScheduleOk(next, policy);
  EXPECT_TRUE(second.starts.empty());
  EXPECT_TRUE(second.preemptions.empty());
  EXPECT_THAT(Actions(second), ::testing::IsEmpty());
}

// n1 (first in order) has a GPU with 5 XID errors; a pending 1-GPU job goes to n2.
Snapshot ErringPool() {
  Node n1 = MakeNode("n1", "A100", 2);
  n1.gpus[1].xid_errors = 5;
  n1.gpus[1].errors_since = 100;
  return SnapshotBuilder()
      .Now(1000)
      .Model("A100")
      .Node(n1)
      .Node(MakeNode("n2", "A100", 2))
      .Queue("q")
      .Job(MakeRunningJob("running", "q", GpuRequest(1000), {Placement("n1", {0})}, 0))
      .Job(MakePendingJob("new", "q", GpuRequest(1000)))
      .Build();
}

TEST(HealthTest, OffByDefaultErrorCountsChangeNothing) {
  Policy policy = HealthPolicy();
  policy.health = HealthOptions{};
  const Decisions d = ScheduleOk(ErringPool(), policy);
  // First fit: the free GPU 1 of n1, error counts ignored.
  ASSERT_NE(FindStart(d, "new"), nullptr);
  EXPECT_EQ(FindStart(d, "new")->placements[0].node, "n1");
  EXPECT_TRUE(d.node_actions.empty());
}

TEST(HealthTest, XidThresholdCordonsTheNodeAndKeepsItsWork) {
  const Snapshot snapshot = ErringPool();
  const Decisions d = ScheduleOk(snapshot, HealthPolicy());
  ASSERT_EQ(d.node_actions.size(), 1u);
  EXPECT_EQ(d.node_actions[0].node, "n1");
  EXPECT_EQ(d.node_actions[0].action, NodeAction::kCordon);
  EXPECT_EQ(d.node_actions[0].reason, "GPU 1 has 5 XID errors since 100 (threshold 5)");
  // No new work on the cordoned node; its running job stays.
  ASSERT_NE(FindStart(d, "new"), nullptr);
  EXPECT_EQ(FindStart(d, "new")->placements[0].node, "n2");
  EXPECT_TRUE(d.preemptions.empty());
  ExpectFixedPoint(snapshot, HealthPolicy(), d);
}

TEST(HealthTest, EccThresholdAndFailedDiagnosticCordon) {
  Node n1 = MakeNode("n1", "A100", 1);
  n1.gpus[0].ecc_errors = 2;
  Node n2 = MakeNode("n2", "A100", 1);
  n2.last_diagnostic = DiagnosticRun{500, false};
  const Snapshot snapshot =
      SnapshotBuilder().Now(1000).Model("A100").Node(n1).Node(n2).Queue("q").Build();
  const Decisions d = ScheduleOk(snapshot, HealthPolicy());
  ASSERT_EQ(d.node_actions.size(), 2u);
  EXPECT_EQ(d.node_actions[0].reason, "GPU 0 has 2 uncorrectable ECC errors (threshold 1)");
  EXPECT_EQ(d.node_actions[1].reason, "its last diagnostic, at 500, failed");
  EXPECT_THAT(Actions(d), ::testing::ElementsAre("n1 cordon", "n2 cordon"));
}

TEST(HealthTest, NodeCordonedForHealthIsUncordonedWhenItPassesAndTakesWorkAtOnce) {
  Node n1 = MakeNode("n1", "A100", 1);
  n1.state = NodeState::kCordoned;
  n1.state_cause = NodeStateCause::kHealth;
  n1.last_diagnostic = DiagnosticRun{900, true};
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(1000)
                                .Model("A100")
                                .Node(n1)
                                .Queue("q")
                                .Job(MakePendingJob("new", "q", GpuRequest(1000)))
                                .Build();
  const Decisions d = ScheduleOk(snapshot, HealthPolicy());
  ASSERT_EQ(d.node_actions.size(), 1u);
  EXPECT_EQ(d.node_actions[0].action, NodeAction::kUncordon);
  EXPECT_EQ(d.node_actions[0].reason,
            "passes the health rules again: no GPU at an error threshold, and its last "
            "diagnostic, at 900, passed");
  ASSERT_NE(FindStart(d, "new"), nullptr);
  ExpectFixedPoint(snapshot, HealthPolicy(), d);
}

TEST(HealthTest, NodeCordonedByAnOperatorIsLeftAlone) {
  Node n1 = MakeNode("n1", "A100", 1);
  n1.state = NodeState::kCordoned;  // state_cause kHost
  n1.gpus[0].xid_errors = 9;
  const Snapshot snapshot = SnapshotBuilder().Now(1000).Model("A100").Node(n1).Queue("q").Build();
  EXPECT_TRUE(ScheduleOk(snapshot, HealthPolicy()).node_actions.empty());
}

// "victim" runs on n1's GPU 0, which has failed. It last checkpointed at 400, restores in 60 s:
// it loses 1000 milli-GPUs x (600 + 60) s. It goes back to pending and restarts on n2 in the
// same cycle.
TEST(HealthTest, JobsOnAFailedGpuAreStoppedPricedAndRestartElsewhere) {
  Node n1 = MakeNode("n1", "A100", 1);
  n1.gpus[0].healthy = false;
  Job victim = MakeRunningJob("victim", "q", GpuRequest(1000), {Placement("n1", {0})}, 0);
  victim.checkpointing.interval_s = 600;
  victim.checkpointing.last_checkpoint_time = 400;
  victim.checkpointing.restore_time_s = 60;
  victim.preemptible = false;  // a failed GPU does not ask
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(1000)
                                .Model("A100")
                                .Node(n1)
                                .Node(MakeNode("n2", "A100", 1))
                                .Queue("q")
                                .Job(victim)
                                .Build();
  const Decisions d = ScheduleOk(snapshot, HealthPolicy());
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].job, "victim");
  EXPECT_EQ(d.preemptions[0].for_job, "");
  EXPECT_EQ(d.preemptions[0].reason,
            "GPU 0 of node n1 has failed: the job is checkpointed and stopped, and goes back to "
            "its queue");
  EXPECT_EQ(d.preemptions[0].lost_milli_gpu_seconds, 1000 * (600 + 60));
  EXPECT_EQ(d.counters.preemptions, 1);
  ASSERT_NE(FindStart(d, "victim"), nullptr);
  EXPECT_EQ(FindStart(d, "victim")->placements[0].node, "n2");
  ExpectFixedPoint(snapshot, HealthPolicy(), d);

  // Health rules off: the job keeps running on the failed GPU, as before.
  Policy off = HealthPolicy();
  off.health.enabled = false;
  EXPECT_TRUE(ScheduleOk(snapshot, off).preemptions.empty());
}

TEST(HealthTest, UnhealthyGpusAreNeverUsed) {
  Node n1 = MakeNode("n1", "A100", 8);
  n1.gpus[3].healthy = false;
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(1000)
                                .Model("A100")
                                .Node(n1)
                                .Queue("q")
                                .Job(MakePendingJob("eight", "q", GpuRequest(8000)))
                                .Job(MakePendingJob("seven", "q", GpuRequest(7000)))
                                .Build();
  for (bool enabled : {false, true}) {
    Policy policy = HealthPolicy();
    policy.health.enabled = enabled;
    const Decisions d = ScheduleOk(snapshot, policy);
    EXPECT_EQ(FindStart(d, "eight"), nullptr);
    ASSERT_NE(FindStart(d, "seven"), nullptr);
    EXPECT_THAT(FindStart(d, "seven")->placements[0].gpus,
                ::testing::ElementsAre(0, 1, 2, 4, 5, 6, 7));
  }
}

Policy DiagnosticPolicy() {
  Policy policy = HealthPolicy();
  policy.health.diagnostic_interval_s = 86'400;
  policy.health.diagnostic_idle_window_s = 600;
  return policy;
}

// At now = 100,000: n1 is idle, last diagnosed at 0 (stale); n2 was diagnosed at 50,000
// (fresh); n3 is busy with a job without an estimate; n4 runs a job that ends in 300 s.
TEST(HealthTest, DiagnosticsGoToIdleAndSoonIdleNodesOnly) {
  Node n1 = MakeNode("n1", "A100", 1);
  n1.last_diagnostic = DiagnosticRun{0, true};
  Node n2 = MakeNode("n2", "A100", 1);
  n2.last_diagnostic = DiagnosticRun{50'000, true};
  Job long_job = MakeRunningJob("long", "q", GpuRequest(1000), {Placement("n3", {0})}, 0);
  Job ending = MakeRunningJob("ending", "q", GpuRequest(1000), {Placement("n4", {0})}, 0);
  ending.runtime_estimate_s = 10'000;
  ending.attained_service_s = 9'700;
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(100'000)
                                .Model("A100")
                                .Node(n1)
                                .Node(n2)
                                .Node(MakeNode("n3", "A100", 1))
                                .Node(MakeNode("n4", "A100", 1))
                                .Queue("q")
                                .Job(long_job)
                                .Job(ending)
                                .Build();
  const Decisions d = ScheduleOk(snapshot, DiagnosticPolicy());
  ASSERT_THAT(Actions(d), ::testing::ElementsAre("n1 diagnose", "n4 diagnose"));
  EXPECT_EQ(d.node_actions[0].reason,
            "its last diagnostic, at 0, is 100000 s old (interval 86400 s), and it is idle");
  EXPECT_EQ(d.node_actions[0].expected_empty_time, 100'000);
  EXPECT_EQ(d.node_actions[1].reason,
            "it has no diagnostic on record, and its running jobs are expected to end by 100300 "
            "(within the idle window of 600 s)");
  EXPECT_EQ(d.node_actions[1].expected_empty_time, 100'300);
  EXPECT_TRUE(d.preemptions.empty());  // never by evicting work
  ExpectFixedPoint(snapshot, DiagnosticPolicy(), d);

  // At most one node diagnosing at once: the stalest, n4 (never diagnosed), goes first.
  Policy capped = DiagnosticPolicy();
  capped.health.max_diagnosing_nodes = 1;
  EXPECT_THAT(Actions(ScheduleOk(snapshot, capped)), ::testing::ElementsAre("n4 diagnose"));
}

// A job past its runtime estimate that still runs ends at an unknown time: its node is not idle,
// with the idle window at 0 (idle nodes only) or at 600 s (an outside test saw such a node
// diagnosed "and it is idle").
TEST(HealthTest, ANodeWithAJobPastItsEstimateIsNotIdle) {
  Job overrun = MakeRunningJob("overrun", "q", GpuRequest(1000), {Placement("n1", {0})}, 0);
  overrun.runtime_estimate_s = 1'000;
  overrun.attained_service_s = 1'500;
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(100'000)
                                .Model("A100")
                                .Node(MakeNode("n1", "A100", 1))
                                .Queue("q")
                                .Job(overrun)
                                .Build();
  EXPECT_TRUE(ScheduleOk(snapshot, DiagnosticPolicy()).node_actions.empty());
  Policy idle_only = DiagnosticPolicy();
  idle_only.health.diagnostic_idle_window_s = 0;
  EXPECT_TRUE(ScheduleOk(snapshot, idle_only).node_actions.empty());
}

TEST(HealthTest, ANodeThatTakesWorkThisCycleIsNotDiagnosed) {
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(100'000)
                                .Model("A100")
                                .Node(MakeNode("n1", "A100", 1))
                                .Node(MakeNode("n2", "A100", 1))
                                .Queue("q")
                                .Job(MakePendingJob("new", "q", GpuRequest(1000)))
                                .Build();
  const Decisions d = ScheduleOk(snapshot, DiagnosticPolicy());
  ASSERT_NE(FindStart(d, "new"), nullptr);
  EXPECT_EQ(FindStart(d, "new")->placements[0].node, "n1");
  EXPECT_THAT(Actions(d), ::testing::ElementsAre("n2 diagnose"));
}

TEST(HealthTest, ADiagnosticResultEndsTheWait) {
  auto waiting = [](std::optional<DiagnosticRun> run) {
    Node n1 = MakeNode("n1", "A100", 1);
    n1.state = NodeState::kCordoned;
    n1.state_cause = NodeStateCause::kDiagnostic;
    n1.last_diagnostic = run;
    return SnapshotBuilder().Now(100'000).Model("A100").Node(n1).Queue("q").Build();
  };
  // Not reported yet (the last run is stale): the node keeps waiting, no action.
  EXPECT_TRUE(ScheduleOk(waiting(DiagnosticRun{0, true}), DiagnosticPolicy()).node_actions.empty());
  // Passed: uncordon.
  Decisions passed = ScheduleOk(waiting(DiagnosticRun{99'000, true}), DiagnosticPolicy());
  ASSERT_EQ(passed.node_actions.size(), 1u);
  EXPECT_EQ(passed.node_actions[0].action, NodeAction::kUncordon);
  EXPECT_EQ(passed.node_actions[0].reason, "its diagnostic, at 99000, passed");
  // Failed: cordoned for health.
  Decisions failed = ScheduleOk(waiting(DiagnosticRun{99'000, false}), DiagnosticPolicy());
  ASSERT_EQ(failed.node_actions.size(), 1u);
  EXPECT_EQ(failed.node_actions[0].action, NodeAction::kCordon);
  ExpectFixedPoint(waiting(DiagnosticRun{99'000, false}), DiagnosticPolicy(), failed);
}

}  // namespace
}  // namespace gpupool
