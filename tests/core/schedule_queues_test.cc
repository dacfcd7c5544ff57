// Schedule(), worked examples (see schedule_test.cc): queue limits (per model and "*", on the
// queue and its ancestors, with shares and elastic growth) and preemption within a queue.
#include <cstdint>
#include <string>
#include <vector>

#include "gpupool/apply.h"
#include "gpupool/schedule.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "tests/core/schedule_helpers.h"

namespace gpupool::schedule_testing {
namespace {

// --- Queue limits -------------------------------------------------------------------------------

// Queue q may use 2000 milli of A100 and already uses 1000. p (2000) would reach 3000 → pending,
// queue-limit on q / A100, 1000 over. p2 (1000) reaches exactly the limit → starts on GPU 1.
TEST(ScheduleTest, QueueLimitOnOwnQueue) {
  Queue q = MakeQueue("q");
  q.quotas = {MakeLimit("A100", 2000)};
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8))
                          .Queue(q)
                          .Job(MakeRunningJob("r", "q", GpuRequest(1000), {Placement("n1", {0})}))
                          .Job(WithPriority(MakePendingJob("p", "q", GpuRequest(2000)), 0, 1))
                          .Job(WithPriority(MakePendingJob("p2", "q", GpuRequest(1000)), 0, 2))
                          .Build();
  Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(StartedJobs(d), ElementsAre("p2"));
  ExpectStart(d, "p2", {At("n1", {1}, 1000)});
  const PendingDecision* p = ExpectPending(d, "p", PendingReason::kQueueLimit);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->queue, "q");
  EXPECT_EQ(p->gpu_model, "A100");
  EXPECT_EQ(p->shortfall_milli, 1000);
}

// org may use 3000 milli over all models ("*"); its child team runs 2000 on A100. p (team, 2000,
// any model) would take org to 4000 on either model → pending, queue-limit on org / "*", 1000
// over. p2 (1000) fits the limit: best-fit → the A100 node (6 free) GPU 2.
TEST(ScheduleTest, QueueLimitOfAncestorOverAllModels) {
  Queue org = MakeQueue("org");
  org.quotas = {MakeLimit("*", 3000)};
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100")
          .Model("H100")
          .Node(MakeNode("a1", "A100", 8))
          .Node(MakeNode("h1", "H100", 8))
          .Queue(org)
          .Queue("team", "org")
          .Job(MakeRunningJob("r", "team", GpuRequest(2000), {Placement("a1", {0, 1})}))
          .Job(WithPriority(MakePendingJob("p", "team", GpuRequest(2000)), 0, 1))
          .Job(WithPriority(MakePendingJob("p2", "team", GpuRequest(1000)), 0, 2))
          .Build();
  Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(StartedJobs(d), ElementsAre("p2"));
  ExpectStart(d, "p2", {At("a1", {2}, 1000)});
  const PendingDecision* p = ExpectPending(d, "p", PendingReason::kQueueLimit);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->queue, "org");
  EXPECT_EQ(p->gpu_model, "*");
  EXPECT_EQ(p->shortfall_milli, 1000);
}

// Shares count by their milli-GPUs: q may use 500 over all models and runs a 250 share. p (500)
// would take it to 750 → queue-limit on q / "*", 250 over; p2 (250) reaches exactly 500 and
// shares GPU 0 with the running share (the GPU with the least free milli that fits).
TEST(ScheduleTest, QueueLimitCountsShares) {
  Queue q = MakeQueue("q");
  q.quotas = {MakeLimit("*", 500)};
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 2))
                          .Queue(q)
                          .Job(MakeRunningJob("r", "q", GpuRequest(250), {Placement("n1", {0})}))
                          .Job(WithPriority(MakePendingJob("p", "q", GpuRequest(500)), 0, 1))
                          .Job(WithPriority(MakePendingJob("p2", "q", GpuRequest(250)), 0, 2))
                          .Build();
  Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(StartedJobs(d), ElementsAre("p2"));
  ExpectStart(d, "p2", {At("n1", {0}, 250)});
  const PendingDecision* p = ExpectPending(d, "p", PendingReason::kQueueLimit);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->queue, "q");
  EXPECT_EQ(p->gpu_model, "*");
  EXPECT_EQ(p->shortfall_milli, 250);
}

// An elastic group grows only while its queue stays within its limit: q may use 3000 milli of
// A100; e (1..5 replicas of 1 GPU) on an empty 8-GPU node starts with 3 replicas, GPUs 0-2.
TEST(ScheduleTest, ElasticGrowthStopsAtQueueLimit) {
  Queue q = MakeQueue("q");
  q.quotas = {MakeLimit("A100", 3000)};
  Job e = MakePendingJob("e", "q", GpuRequest(1000), 5);
  e.groups[0].min_replicas = 1;
  Snapshot snapshot =
      SnapshotBuilder().Model("A100").Node(MakeNode("n1", "A100", 8)).Queue(q).Job(e).Build();
  ExpectStart(ScheduleOk(snapshot), "e",
              {At("n1", {0}, 1000, 0), At("n1", {1}, 1000, 1), At("n1", {2}, 1000, 2)});
}

// q's A100 limit is 0; a job preferring A100 then H100 starts on H100.
TEST(ScheduleTest, QueueLimitOnPreferredModelFallsBackToNext) {
  Queue q = MakeQueue("q");
  q.quotas = {MakeLimit("A100", 0)};
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100")
          .Model("H100")
          .Node(MakeNode("a1", "A100", 8))
          .Node(MakeNode("h1", "H100", 8))
          .Queue(q)
          .Job(WithModels(MakePendingJob("j", "q", GpuRequest(1000)), {"A100", "H100"}))
          .Build();
  ExpectStart(ScheduleOk(snapshot), "j", {At("h1", {0}, 1000)});
}

// --- Preemption (policy.preemption.enabled) -----------------------------------------------------

// Queue q, one node of 2 GPUs, now = 1000. Running: v8 (priority 8, GPU 0, started at 990: cheap
// to evict) and l1 (priority 1, GPU 1, started at 0: dear). Pending: h9 (priority 9) and m6
// (priority 6), 1 GPU each.
// Evicting the cheapest victim (v8) would let m6 evict l1 next; v8 (priority 8) would then be
// out while m6 (priority 6) runs, and the next cycle v8 would preempt m6: an inversion.
// Expected: no job starts while a job of the same queue with a higher priority is evicted, and
// the next cycle (victims evicted, starts applied) preempts and starts nothing. The planner
// prefers the set whose highest-priority victim is lowest: h9 evicts l1, and m6 waits.
TEST(ScheduleTest, PreemptionNeverEvictsAboveAJobItStarts) {
  Job v8 = MakeRunningJob("v8", "q", GpuRequest(1000), {Placement("n1", {0})}, 990);
  v8.priority = 8;
  Job l1 = MakeRunningJob("l1", "q", GpuRequest(1000), {Placement("n1", {1})}, 0);
  l1.priority = 1;
  Snapshot snapshot = SnapshotBuilder()
                          .Now(1000)
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 2))
                          .Queue("q")
                          .Job(v8)
                          .Job(l1)
                          .Job(WithPriority(MakePendingJob("h9", "q", GpuRequest(1000)), 9))
                          .Job(WithPriority(MakePendingJob("m6", "q", GpuRequest(1000)), 6))
                          .Build();
  Policy policy;
  policy.preemption.enabled = true;
  policy.preemption.victim_order = VictimOrder::kLowestPriorityFirst;
  Decisions d = ScheduleOk(snapshot, policy);
  ExpectStart(d, "h9", {At("n1", {1}, 1000)});
  ASSERT_EQ(d.preemptions.size(), 1u) << DecisionsToText(d);
  EXPECT_EQ(d.preemptions[0].job, "l1");
  EXPECT_EQ(d.preemptions[0].for_job, "h9");
  ExpectPending(d, "m6", PendingReason::kInsufficientCapacity);
  // The next cycle, with l1 evicted and h9 running, does nothing more.
  for (Job& job : snapshot.jobs) {
    if (job.id == "l1") {
      job.state = JobState::kPending;
      job.placements.clear();
      job.start_time.reset();
    }
  }
  ASSERT_TRUE(ApplyStarts(d, snapshot).ok());
  Decisions next = ScheduleOk(snapshot, policy);
  EXPECT_THAT(next.starts, IsEmpty()) << DecisionsToText(next);
  EXPECT_THAT(next.preemptions, IsEmpty()) << DecisionsToText(next);
}

// Worked example of preemption as the engine does it: q runs lo (priority 1) on the only GPU;
// hi (priority 5) preempts it and starts on GPU 0. The victim loses its work since it started
// (1000 milli x 600 s) plus its restore time (1000 milli x 60 s).
TEST(ScheduleTest, PreemptionEvictsLowerPriorityOfSameQueue) {
  Job lo = MakeRunningJob("lo", "q", GpuRequest(1000), {Placement("n1", {0})}, 400);
  lo.priority = 1;
  lo.checkpointing.restore_time_s = 60;
  Job other = MakeRunningJob("other", "r", GpuRequest(1000), {Placement("n2", {0})}, 400);
  Snapshot snapshot = SnapshotBuilder()
                          .Now(1000)
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 1))
                          .Node(MakeNode("n2", "A100", 1))
                          .Queue("q")
                          .Queue("r")
                          .Job(lo)
                          .Job(other)
                          .Job(WithPriority(MakePendingJob("hi", "q", GpuRequest(1000)), 5))
                          .Build();
  Policy policy;
  policy.preemption.enabled = true;
  Decisions d = ScheduleOk(snapshot, policy);
  ExpectStart(d, "hi", {At("n1", {0}, 1000)});
  ASSERT_EQ(d.preemptions.size(), 1u) << DecisionsToText(d);
  EXPECT_EQ(d.preemptions[0].job, "lo");
  EXPECT_EQ(d.preemptions[0].for_job, "hi");
  EXPECT_EQ(d.preemptions[0].lost_milli_gpu_seconds, 1000 * 600 + 1000 * 60);
  // Off by default: the same snapshot with the default policy preempts nothing.
  Decisions off = ScheduleOk(snapshot);
  EXPECT_THAT(off.preemptions, IsEmpty());
  ExpectPending(off, "hi", PendingReason::kInsufficientCapacity);
}

}  // namespace
}  // namespace gpupool::schedule_testing
