// Spot nodes (Node::spot, Node::reclaiming; docs/operations.md): worked examples with exact
// outcomes. Spot nodes take only spot-tolerant or preemptible checkpointing jobs; a reclaimed
// node's jobs are stopped (priced) and started elsewhere when they fit, else re-queued; the
// reclaimed node takes nothing new.
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
using ::gpupool::testing::StartedJobs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

Policy SpotPolicy() {
  Policy policy;
  policy.placement = PlacementStrategy::kBestFit;
  policy.job_order = JobOrder::kPriorityFifo;
  policy.queue_order = QueueOrder::kNone;
  policy.spot.max_checkpoint_interval_s = 3600;
  return policy;
}

Node Spot(std::string id, int32_t gpus) {
  Node node = MakeNode(std::move(id), "A100", gpus);
  node.spot = true;
  return node;
}

// A pending 4-GPU job that checkpoints every `interval_s` (0: never).
Job Pending(std::string id, int64_t interval_s, bool preemptible = true) {
  Job job = MakePendingJob(std::move(id), "q", GpuRequest(4000));
  job.checkpointing.interval_s = interval_s;
  job.preemptible = preemptible;
  return job;
}

// Only a spot node: a job that checkpoints every 600 s (<= 3600) and a spot-tolerant job that
// never checkpoints start there; one that checkpoints every 7200 s, one that never checkpoints
// and one that is not preemptible stay pending, reason node-restrictions naming the spot rule.
TEST(SpotTest, SpotNodesTakeOnlyJobsThatMayLoseThem) {
  Job tolerant = Pending("e-tolerant", 0, /*preemptible=*/false);
  tolerant.spot_tolerant = true;
  const Snapshot snapshot = SnapshotBuilder()
                                .Model("A100")
                                .Node(Spot("s1", 16))
                                .Node(Spot("s2", 4))
                                .Queue("q")
                                .Job(Pending("a-often", 600))
                                .Job(Pending("b-rare", 7200))
                                .Job(Pending("c-never", 0))
                                .Job(Pending("d-pinned", 600, /*preemptible=*/false))
                                .Job(tolerant)
                                .Build();
  const absl::StatusOr<Decisions> decisions = Schedule(snapshot, SpotPolicy());
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  EXPECT_THAT(StartedJobs(*decisions), ElementsAre("a-often", "e-tolerant"));
  for (const char* id : {"b-rare", "c-never", "d-pinned"}) {
    const PendingDecision* pending = FindPending(*decisions, id);
    ASSERT_NE(pending, nullptr) << id;
    EXPECT_EQ(pending->reason, PendingReason::kNodeRestrictions) << id;
    EXPECT_EQ(pending->detail,
              "no node of an accepted model (any model) may take the job: 0 not ready, 0 "
              "reserved for other queues, 0 without a healthy GPU, 2 spot (spot nodes take only "
              "spot_tolerant jobs and preemptible jobs that checkpoint at least every 3600 s)")
        << id;
  }
}

// A spot node and a normal node: a job that may not use spot goes to the normal node even when
// best-fit would prefer the fuller spot node.
TEST(SpotTest, OtherJobsGoToNormalNodes) {
  const Snapshot snapshot = SnapshotBuilder()
                                .Model("A100")
                                .Node(MakeNode("n1", "A100", 8))
                                .Node(Spot("s1", 4))
                                .Queue("q")
                                .Job(Pending("never", 0))
                                .Build();
  const absl::StatusOr<Decisions> decisions = Schedule(snapshot, SpotPolicy());
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  ASSERT_NE(FindStart(*decisions, "never"), nullptr);
  EXPECT_EQ(FindStart(*decisions, "never")->placements[0].node, "n1");
}

// s1 is being reclaimed at t=1000. "r" (4 GPUs, checkpointed at t=400, restore 60 s) runs there:
// it is stopped, losing 4000 x (600 + 60) = 2,640,000 milli-GPU-seconds, and started on n1 in
// the same cycle. "p" (pending, spot-eligible) may not go to s1, which takes nothing new: it
// takes 4 of n1's GPUs in the main pass, and r, retried after it, the other 4.
TEST(SpotTest, ReclaimedNodeStopsItsJobsAndTheyMove) {
  Node reclaimed = Spot("s1", 8);
  reclaimed.reclaiming = true;
  Job running = MakeRunningJob("r", "q", GpuRequest(4000), {Placement("s1", {0, 1, 2, 3})},
                               /*start_time=*/0);
  running.checkpointing = {.interval_s = 600,
                           .last_checkpoint_time = 400,
                           .checkpoint_cost_s = 30,
                           .restore_time_s = 60};
  Snapshot snapshot = SnapshotBuilder()
                          .Now(1000)
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8))
                          .Node(reclaimed)
                          .Queue("q")
                          .Job(running)
                          .Job(Pending("p", 600))
                          .Build();
  absl::StatusOr<Decisions> decisions = Schedule(snapshot, SpotPolicy());
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  ASSERT_EQ(decisions->preemptions.size(), 1u);
  const PreemptDecision& preempt = decisions->preemptions[0];
  EXPECT_EQ(preempt.job, "r");
  EXPECT_EQ(preempt.for_job, "");
  EXPECT_EQ(preempt.lost_milli_gpu_seconds, 2640000);
  EXPECT_EQ(preempt.reason,
            "spot reclaim: the provider takes node s1 back; the job stops, losing 600 s of work");
  EXPECT_THAT(StartedJobs(*decisions), ElementsAre("p", "r"));
  EXPECT_EQ(FindStart(*decisions, "p")->placements[0].node, "n1");
  EXPECT_EQ(FindStart(*decisions, "r")->placements[0].node, "n1");
  EXPECT_EQ(decisions->counters.preemptions, 1);

  // Applied, the next cycle has nothing more to do.
  ASSERT_TRUE(ApplyDecisions(*decisions, snapshot).ok());
  decisions = Schedule(snapshot, SpotPolicy());
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  EXPECT_THAT(decisions->starts, IsEmpty());
  EXPECT_THAT(decisions->preemptions, IsEmpty());
}

// With a deadline 120 s away, a job whose checkpoint takes 30 s checkpoints first and loses only
// that: 4000 x (30 + 60) = 360,000. No other node fits it: it is re-queued (preempted, no start),
// and in the next cycle it is pending: the reclaimed node counts as not ready.
TEST(SpotTest, DeadlineLetsTheJobCheckpointAndItIsRequeued) {
  Node reclaimed = Spot("s1", 8);
  reclaimed.reclaiming = true;
  reclaimed.reclaim_deadline = 1120;
  Job running = MakeRunningJob("r", "q", GpuRequest(4000), {Placement("s1", {0, 1, 2, 3})},
                               /*start_time=*/0);
  running.checkpointing = {.interval_s = 600,
                           .last_checkpoint_time = 400,
                           .checkpoint_cost_s = 30,
                           .restore_time_s = 60};
  Snapshot snapshot =
      SnapshotBuilder().Now(1000).Model("A100").Node(reclaimed).Queue("q").Job(running).Build();
  absl::StatusOr<Decisions> decisions = Schedule(snapshot, SpotPolicy());
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  ASSERT_EQ(decisions->preemptions.size(), 1u);
  EXPECT_EQ(decisions->preemptions[0].lost_milli_gpu_seconds, 360000);
  EXPECT_EQ(decisions->preemptions[0].reason,
            "spot reclaim: the provider takes node s1 back by 1120 (120 s from now); the job "
            "checkpoints first (30 s) and stops");
  EXPECT_THAT(decisions->starts, IsEmpty());

  ASSERT_TRUE(ApplyDecisions(*decisions, snapshot).ok());
  decisions = Schedule(snapshot, SpotPolicy());
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  EXPECT_THAT(decisions->preemptions, IsEmpty());
  const PendingDecision* pending = FindPending(*decisions, "r");
  ASSERT_NE(pending, nullptr);
  EXPECT_EQ(pending->reason, PendingReason::kNodeRestrictions);
}

// The provider does not ask: a job that is not preemptible and still within its minimum runtime
// is stopped too.
TEST(SpotTest, ReclaimStopsEvenJobsThatAreNotPreemptible) {
  Node reclaimed = Spot("s1", 8);
  reclaimed.reclaiming = true;
  Job running = MakeRunningJob("r", "q", GpuRequest(1000), {Placement("s1", {0})},
                               /*start_time=*/900);
  running.preemptible = false;
  running.spot_tolerant = true;
  running.min_runtime_s = 3600;
  const Snapshot snapshot =
      SnapshotBuilder().Now(1000).Model("A100").Node(reclaimed).Queue("q").Job(running).Build();
  const absl::StatusOr<Decisions> decisions = Schedule(snapshot, SpotPolicy());
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  ASSERT_EQ(decisions->preemptions.size(), 1u);
  // 1000 x (100 s since its start + 0 restore).
  EXPECT_EQ(decisions->preemptions[0].lost_milli_gpu_seconds, 100000);
}

}  // namespace
}  // namespace gpupool
