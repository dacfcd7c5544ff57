// Pending reasons (stage 9, Placer::Diagnose) in the corner cases docs/decisions-format.md
// spells out: which GPUs count as free, which models are eligible, and which limit a queue-limit
// names. Each test is a worked example; the comment states the expected decision.
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gpupool/schedule.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace gpupool {
namespace {

using ::gpupool::testing::DecisionsToText;
using ::gpupool::testing::FindPending;
using ::gpupool::testing::GpuRequest;
using ::gpupool::testing::MakeLimit;
using ::gpupool::testing::MakeNode;
using ::gpupool::testing::MakePendingJob;
using ::gpupool::testing::MakeQueue;
using ::gpupool::testing::MakeRunningJob;
using ::gpupool::testing::Placement;
using ::gpupool::testing::SnapshotBuilder;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Decisions ScheduleOk(const Snapshot& snapshot) {
  absl::StatusOr<Decisions> decisions = Schedule(snapshot, Policy{});
  EXPECT_TRUE(decisions.ok()) << decisions.status();
  return decisions.ok() ? *std::move(decisions) : Decisions{};
}

// The pending decision of `job`, which must wait for `reason`; a default decision (and a test
// failure) otherwise.
PendingDecision PendingFor(const Decisions& decisions, std::string_view job, PendingReason reason) {
  const PendingDecision* pending = FindPending(decisions, job);
  EXPECT_NE(pending, nullptr) << job << " is not pending:\n" << DecisionsToText(decisions);
  if (pending == nullptr) return PendingDecision{};
  EXPECT_EQ(std::string(PendingReasonName(pending->reason)), std::string(PendingReasonName(reason)))
      << job << ": " << pending->detail;
  return *pending;
}

Job WithModels(Job job, std::vector<std::string> models) {
  for (TaskGroup& group : job.groups) group.gpu_models = models;
  return job;
}

// --- GPU memory ---------------------------------------------------------------------------------

// j needs 40000 MiB per GPU and accepts L4 (24 GiB) or A100 (80 GiB). The L4 node's 4 GPUs are
// all free, the A100 node has 2 of 8 free, and j needs 4 GPUs on one node. The L4s are not
// eligible (too little memory), so only 2000 milli are free for j: insufficient-capacity, 2000
// short (not fragmentation, which the 4 free L4 GPUs used to suggest).
TEST(DiagnoseTest, GpusOfModelsWithTooLittleMemoryAreNotFree) {
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100", 81920)
          .Model("L4", 24576)
          .Node(MakeNode("a1", "A100", 8))
          .Node(MakeNode("l1", "L4", 4))
          .Queue("q")
          .Job(MakeRunningJob("r", "q", GpuRequest(6000), {Placement("a1", {0, 1, 2, 3, 4, 5})}))
          .Job(WithModels(MakePendingJob("j", "q", GpuRequest(4000, 0, 0, 40000)), {"L4", "A100"}))
          .Build();
  Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(d.starts, IsEmpty());
  PendingDecision p = PendingFor(d, "j", PendingReason::kInsufficientCapacity);
  EXPECT_EQ(p.shortfall_milli, 2000);
}

// j needs 40000 MiB per GPU and accepts only L4 (24 GiB): no accepted model has that much
// memory, so it never fits, and the detail names the memory.
TEST(DiagnoseTest, MoreGpuMemoryThanEveryAcceptedModelNeverFits) {
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100", 81920)
          .Model("L4", 24576)
          .Node(MakeNode("a1", "A100", 8))
          .Node(MakeNode("l1", "L4", 4))
          .Queue("q")
          .Job(WithModels(MakePendingJob("j", "q", GpuRequest(1000, 0, 0, 40000)), {"L4"}))
          .Build();
  Decisions d = ScheduleOk(snapshot);
  PendingDecision p = PendingFor(d, "j", PendingReason::kNeverFits);
  EXPECT_THAT(p.detail, HasSubstr("40000 MiB"));
}

// --- Unhealthy GPUs ----------------------------------------------------------------------------

// n1 and n2 have 4 GPUs each. On n1, r uses GPU 0 and GPUs 1-3 are unhealthy; on n2, r2 uses
// GPUs 0-2. j needs 2 GPUs. Only n2's GPU 3 is healthy and free: the three unhealthy GPUs hold no
// work but are never free, so j waits with insufficient-capacity, 1000 short (counting them
// would have made it fragmentation, 4 "free" in the wrong shape).
TEST(DiagnoseTest, UnhealthyGpusDoNotCountAsFree) {
  Node n1 = MakeNode("n1", "A100", 4);
  for (int g : {1, 2, 3}) n1.gpus[g].healthy = false;
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100")
          .Node(n1)
          .Node(MakeNode("n2", "A100", 4))
          .Queue("q")
          .Job(MakeRunningJob("r", "q", GpuRequest(1000), {Placement("n1", {0})}))
          .Job(MakeRunningJob("r2", "q", GpuRequest(3000), {Placement("n2", {0, 1, 2})}))
          .Job(MakePendingJob("j", "q", GpuRequest(2000)))
          .Build();
  Decisions d = ScheduleOk(snapshot);
  PendingDecision p = PendingFor(d, "j", PendingReason::kInsufficientCapacity);
  EXPECT_EQ(p.shortfall_milli, 1000);
}

// --- Isolation ---------------------------------------------------------------------------------

// Queue iso is exclusive-gpu. The pool's only GPU carries a 500-milli share of queue other, so
// 500 milli are free, but a share of iso may not join another tenant's GPU: nothing is free for
// i, which waits with insufficient-capacity, 250 short (not node-restrictions: the node is fine,
// the GPU is held by running work; not fragmentation: no other shape would fit either).
TEST(DiagnoseTest, IsolationAloneForbiddingTheOnlyGpuIsInsufficientCapacity) {
  Queue iso = MakeQueue("iso");
  iso.isolation = Isolation::kExclusiveGpu;
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100")
          .Node(MakeNode("n1", "A100", 1))
          .Queue(iso)
          .Queue("other")
          .Job(MakeRunningJob("o", "other", GpuRequest(500), {Placement("n1", {0})}))
          .Job(MakePendingJob("i", "iso", GpuRequest(250)))
          .Build();
  Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(d.starts, IsEmpty());
  PendingDecision p = PendingFor(d, "i", PendingReason::kInsufficientCapacity);
  EXPECT_EQ(p.shortfall_milli, 250);
  EXPECT_THAT(p.detail, HasSubstr("isolation"));
}

// Queue iso is exclusive-node. The only node runs a 1-GPU job of queue other, so 7 GPUs are
// free, but an exclusive-node tenant only goes on a node that is empty or holds only its own
// work: i (1 GPU) waits with insufficient-capacity, 1000 short.
TEST(DiagnoseTest, IsolationAloneForbiddingTheOnlyNodeIsInsufficientCapacity) {
  Queue iso = MakeQueue("iso");
  iso.isolation = Isolation::kExclusiveNode;
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100")
          .Node(MakeNode("n1", "A100", 8))
          .Queue(iso)
          .Queue("other")
          .Job(MakeRunningJob("o", "other", GpuRequest(1000), {Placement("n1", {0})}))
          .Job(MakePendingJob("i", "iso", GpuRequest(1000)))
          .Build();
  Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(d.starts, IsEmpty());
  PendingDecision p = PendingFor(d, "i", PendingReason::kInsufficientCapacity);
  EXPECT_EQ(p.shortfall_milli, 1000);
  EXPECT_THAT(p.detail, HasSubstr("isolation"));
}

// --- Queue limits ------------------------------------------------------------------------------

// team (child of org) may use 1000 milli of A100; org may use 1000 over all models. r (team)
// already uses 1000 of A100, so p (1000) would take both team and org over. The limit named is
// the nearest one: the job's own queue team, on A100, 1000 over.
TEST(DiagnoseTest, QueueLimitNamesTheNearestQueueOverItsLimit) {
  Queue org = MakeQueue("org");
  org.quotas = {MakeLimit("*", 1000)};
  Queue team = MakeQueue("team", "org");
  team.quotas = {MakeLimit("A100", 1000)};
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100")
          .Node(MakeNode("n1", "A100", 8))
          .Queue(org)
          .Queue(team)
          .Job(MakeRunningJob("r", "team", GpuRequest(1000), {Placement("n1", {0})}))
          .Job(MakePendingJob("p", "team", GpuRequest(1000)))
          .Build();
  Decisions d = ScheduleOk(snapshot);
  PendingDecision p = PendingFor(d, "p", PendingReason::kQueueLimit);
  EXPECT_EQ(p.queue, "team");
  EXPECT_EQ(p.gpu_model, "A100");
  EXPECT_EQ(p.shortfall_milli, 1000);
}

// q has both an A100 limit (1000) and an all-models limit (1500), and uses 1000 of A100. p
// (1000) would exceed both; within one queue the per-model limit is named first: q / A100, 1000
// over.
TEST(DiagnoseTest, QueueLimitNamesThePerModelLimitBeforeTheAllModelsOne) {
  Queue q = MakeQueue("q");
  q.quotas = {MakeLimit("A100", 1000), MakeLimit("*", 1500)};
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8))
                          .Queue(q)
                          .Job(MakeRunningJob("r", "q", GpuRequest(1000), {Placement("n1", {0})}))
                          .Job(MakePendingJob("p", "q", GpuRequest(1000)))
                          .Build();
  Decisions d = ScheduleOk(snapshot);
  PendingDecision p = PendingFor(d, "p", PendingReason::kQueueLimit);
  EXPECT_EQ(p.queue, "q");
  EXPECT_EQ(p.gpu_model, "A100");
  EXPECT_EQ(p.shortfall_milli, 1000);
}

}  // namespace
}  // namespace gpupool
