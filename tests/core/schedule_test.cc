// Schedule(): exact outcomes on small pools, each test a worked example. The comment above each
// case states the expected outcome; the asserts check it exactly.
#include "gpupool/schedule.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gpupool/apply.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace gpupool {
namespace {

using ::gpupool::testing::DecisionsToText;
using ::gpupool::testing::FindPending;
using ::gpupool::testing::FindStart;
using ::gpupool::testing::GpuRequest;
using ::gpupool::testing::MakeCpuNode;
using ::gpupool::testing::MakeGroup;
using ::gpupool::testing::MakeLimit;
using ::gpupool::testing::MakeModel;
using ::gpupool::testing::MakeNode;
using ::gpupool::testing::MakePendingJob;
using ::gpupool::testing::MakeQueue;
using ::gpupool::testing::MakeRunningJob;
using ::gpupool::testing::PendingJobs;
using ::gpupool::testing::Placement;
using ::gpupool::testing::ShuffleSnapshot;
using ::gpupool::testing::SnapshotBuilder;
using ::gpupool::testing::StartedJobs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

Decisions ScheduleOk(const Snapshot& snapshot, const Policy& policy = Policy{}) {
  absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy);
  EXPECT_TRUE(decisions.ok()) << decisions.status();
  return decisions.ok() ? *std::move(decisions) : Decisions{};
}

Policy WithPlacement(PlacementStrategy strategy) {
  Policy policy;
  policy.placement = strategy;
  return policy;
}

// A placement as a Start decision states it: gpu_milli always set.
ReplicaPlacement At(std::string node, std::vector<int32_t> gpus, int64_t gpu_milli,
                    int32_t replica = 0, std::string group = "main") {
  return Placement(std::move(node), std::move(gpus), replica, std::move(group), gpu_milli);
}

// Asserts that `job` starts with exactly `want`.
void ExpectStart(const Decisions& decisions, std::string_view job,
                 const std::vector<ReplicaPlacement>& want) {
  const StartDecision* start = FindStart(decisions, job);
  ASSERT_NE(start, nullptr) << job << " did not start:\n" << DecisionsToText(decisions);
  EXPECT_EQ(start->placements, want) << job;
}

// Asserts that `job` stays pending for `reason`.
const PendingDecision* ExpectPending(const Decisions& decisions, std::string_view job,
                                     PendingReason reason) {
  const PendingDecision* pending = FindPending(decisions, job);
  EXPECT_NE(pending, nullptr) << job << " is not pending:\n" << DecisionsToText(decisions);
  if (pending == nullptr) return nullptr;
  EXPECT_EQ(PendingReasonName(pending->reason), std::string(PendingReasonName(reason)))
      << job << ": " << pending->detail;
  EXPECT_FALSE(pending->detail.empty()) << job;
  return pending;
}

Job WithPriority(Job job, int32_t priority, int64_t submit_time = 0) {
  job.priority = priority;
  job.submit_time = submit_time;
  return job;
}

Job WithModels(Job job, std::vector<std::string> models) {
  for (TaskGroup& group : job.groups) group.gpu_models = models;
  return job;
}

Node WithPath(Node node, std::vector<TopologyLabel> path) {
  node.path = std::move(path);
  return node;
}

// --- Job order ---------------------------------------------------------------------------------

// One node of 2 GPUs; four 1-GPU jobs:
//   a (priority 0, submitted 0), b (5, 10), c (5, 5), d (5, 5).
// Order: priority desc, submit asc, id asc → c, d, b, a. Only two fit: c gets GPU 0, d GPU 1;
// b and a wait for capacity, 1000 milli short each.
TEST(ScheduleTest, PendingJobsInPriorityThenSubmitTimeThenIdOrder) {
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 2))
                          .Queue("q")
                          .Job(WithPriority(MakePendingJob("a", "q", GpuRequest(1000)), 0, 0))
                          .Job(WithPriority(MakePendingJob("b", "q", GpuRequest(1000)), 5, 10))
                          .Job(WithPriority(MakePendingJob("d", "q", GpuRequest(1000)), 5, 5))
                          .Job(WithPriority(MakePendingJob("c", "q", GpuRequest(1000)), 5, 5))
                          .Build();
  Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(StartedJobs(d), ElementsAre("c", "d"));
  ExpectStart(d, "c", {At("n1", {0}, 1000)});
  ExpectStart(d, "d", {At("n1", {1}, 1000)});
  EXPECT_THAT(PendingJobs(d), ElementsAre("a", "b"));
  for (const char* job : {"a", "b"}) {
    const PendingDecision* p = ExpectPending(d, job, PendingReason::kInsufficientCapacity);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->shortfall_milli, 1000) << job;
  }
}

// A running job holds GPU 1 of a 2-GPU node: p gets GPU 0, and p2 has nothing left.
TEST(ScheduleTest, RunningAllocationsConsumeCapacityFirst) {
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 2))
                          .Queue("q")
                          .Job(MakeRunningJob("r", "q", GpuRequest(1000), {Placement("n1", {1})}))
                          .Job(MakePendingJob("p", "q", GpuRequest(1000)))
                          .Job(MakePendingJob("p2", "q", GpuRequest(1000)))
                          .Build();
  Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(StartedJobs(d), ElementsAre("p"));
  ExpectStart(d, "p", {At("n1", {0}, 1000)});
  EXPECT_THAT(PendingJobs(d), ElementsAre("p2"));
  const PendingDecision* p2 = ExpectPending(d, "p2", PendingReason::kInsufficientCapacity);
  ASSERT_NE(p2, nullptr);
  EXPECT_EQ(p2->shortfall_milli, 1000);
}

// --- Node choice by strategy -------------------------------------------------------------------

// Three 8-GPU nodes: n1 has 4 free (GPUs 4-7), n2 has 2 free (6-7), n3 is empty. A 1-GPU job:
//   best-fit → n2 (fewest free) GPU 6; spread → n3 (most free) GPU 0; first-fit → n1 (first in
//   topology order, i.e. by id here) GPU 4.
struct StrategyCase {
  PlacementStrategy strategy;
  ReplicaPlacement want;
};

TEST(ScheduleTest, StrategiesChooseTheirNode) {
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100")
          .Node(MakeNode("n1", "A100", 8))
          .Node(MakeNode("n2", "A100", 8))
          .Node(MakeNode("n3", "A100", 8))
          .Queue("q")
          .Job(MakeRunningJob("r1", "q", GpuRequest(4000), {Placement("n1", {0, 1, 2, 3})}))
          .Job(MakeRunningJob("r2", "q", GpuRequest(6000), {Placement("n2", {0, 1, 2, 3, 4, 5})}))
          .Job(MakePendingJob("j", "q", GpuRequest(1000)))
          .Build();
  for (const StrategyCase& c : {StrategyCase{PlacementStrategy::kBestFit, At("n2", {6}, 1000)},
                                StrategyCase{PlacementStrategy::kSpread, At("n3", {0}, 1000)},
                                StrategyCase{PlacementStrategy::kFirstFit, At("n1", {4}, 1000)}}) {
    SCOPED_TRACE(PlacementStrategyName(c.strategy));
    ExpectStart(ScheduleOk(snapshot, WithPlacement(c.strategy)), "j", {c.want});
  }
}

// n1 and n2 have the same free GPUs, but a CPU-only job holds half of n2's CPU. best-fit breaks
// the GPU tie on free CPU (least) → n2; spread (most) → n1.
TEST(ScheduleTest, GpuTieBrokenOnFreeCpu) {
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100")
          .Node(MakeNode("n1", "A100", 8))
          .Node(MakeNode("n2", "A100", 8))
          .Queue("q")
          .Job(MakeRunningJob("cpu", "q", GpuRequest(0, 32000), {Placement("n2", {})}))
          .Job(MakePendingJob("j", "q", GpuRequest(1000, 1000)))
          .Build();
  ExpectStart(ScheduleOk(snapshot, WithPlacement(PlacementStrategy::kBestFit)), "j",
              {At("n2", {0}, 1000)});
  ExpectStart(ScheduleOk(snapshot, WithPlacement(PlacementStrategy::kSpread)), "j",
              {At("n1", {0}, 1000)});
}

// Levels block > rack. Three empty identical nodes: "a" in b2/r1, "b" in b1/r2, "c" in b1/r1.
// Topology order compares path values level by level: c (b1,r1), b (b1,r2), a (b2,r1) — not the
// ids. Two 1-GPU jobs j1 then j2:
//   best-fit: j1 → c GPU 0 (all tie), j2 → c GPU 1 (now the fullest);
//   spread:   j1 → c GPU 0, j2 → b GPU 0 (b and a tie with 8 free; b is first);
//   first-fit: j1 → c GPU 0, j2 → c GPU 1.
TEST(ScheduleTest, TiesGoToTopologyOrderThenId) {
  Snapshot snapshot =
      SnapshotBuilder()
          .Levels({"block", "rack"})
          .Model("A100")
          .Node(WithPath(MakeNode("a", "A100", 8), {{"block", "b2"}, {"rack", "r1"}}))
          .Node(WithPath(MakeNode("b", "A100", 8), {{"rack", "r2"}, {"block", "b1"}}))
          .Node(WithPath(MakeNode("c", "A100", 8), {{"block", "b1"}, {"rack", "r1"}}))
          .Queue("q")
          .Job(WithPriority(MakePendingJob("j1", "q", GpuRequest(1000)), 0, 1))
          .Job(WithPriority(MakePendingJob("j2", "q", GpuRequest(1000)), 0, 2))
          .Build();
  {
    SCOPED_TRACE("best-fit");
    Decisions d = ScheduleOk(snapshot, WithPlacement(PlacementStrategy::kBestFit));
    ExpectStart(d, "j1", {At("c", {0}, 1000)});
    ExpectStart(d, "j2", {At("c", {1}, 1000)});
  }
  {
    SCOPED_TRACE("spread");
    Decisions d = ScheduleOk(snapshot, WithPlacement(PlacementStrategy::kSpread));
    ExpectStart(d, "j1", {At("c", {0}, 1000)});
    ExpectStart(d, "j2", {At("b", {0}, 1000)});
  }
  {
    SCOPED_TRACE("first-fit");
    Decisions d = ScheduleOk(snapshot, WithPlacement(PlacementStrategy::kFirstFit));
    ExpectStart(d, "j1", {At("c", {0}, 1000)});
    ExpectStart(d, "j2", {At("c", {1}, 1000)});
  }
}

// Two nodes with the same free GPUs and CPU, no levels: the tie goes to the smaller id.
TEST(ScheduleTest, TieWithoutLevelsGoesToSmallerId) {
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Node(MakeNode("n9", "A100", 4))
                          .Node(MakeNode("n10", "A100", 4))
                          .Queue("q")
                          .Job(MakePendingJob("j", "q", GpuRequest(2000)))
                          .Build();
  ExpectStart(ScheduleOk(snapshot), "j", {At("n10", {0, 1}, 1000)});
}

// --- Inside a node -----------------------------------------------------------------------------

// GPUs of n1 have 200, 500, 700 and 1000 milli free. A 400-milli replica goes on the GPU with
// the least free milli that still fits: GPU 1.
TEST(ScheduleTest, FractionalReplicaGoesOnTightestGpu) {
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 4))
                          .Queue("q")
                          .Job(MakeRunningJob("r0", "q", GpuRequest(800), {Placement("n1", {0})}))
                          .Job(MakeRunningJob("r1", "q", GpuRequest(500), {Placement("n1", {1})}))
                          .Job(MakeRunningJob("r2", "q", GpuRequest(300), {Placement("n1", {2})}))
                          .Job(MakePendingJob("j", "q", GpuRequest(400)))
                          .Build();
  Decisions d = ScheduleOk(snapshot);
  ExpectStart(d, "j", {At("n1", {1}, 400)});
}

// GPUs 1 and 3 both have 600 free, GPU 0 1000, GPU 2 100: a 500-milli replica takes GPU 1
// (tie on free milli → lowest index).
TEST(ScheduleTest, FractionalTieGoesToLowestIndex) {
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 4))
                          .Queue("q")
                          .Job(MakeRunningJob("r3", "q", GpuRequest(400), {Placement("n1", {3})}))
                          .Job(MakeRunningJob("r1", "q", GpuRequest(400), {Placement("n1", {1})}))
                          .Job(MakeRunningJob("r2", "q", GpuRequest(900), {Placement("n1", {2})}))
                          .Job(MakePendingJob("j", "q", GpuRequest(500)))
                          .Build();
  ExpectStart(ScheduleOk(snapshot), "j", {At("n1", {1}, 500)});
}

// n1 has islands {0-3} and {4-7}; a 500-milli job holds GPU 0, so island 0 has 3 fully-free GPUs
// and island 1 has 4. In order:
//   a (2 GPUs) → island 0, the one with the fewest fully-free GPUs that holds 2: GPUs 1, 2;
//   b (4 GPUs) → only island 1 holds 4: GPUs 4-7;
//   c (1 GPU)  → island 0's last fully-free GPU: 3;
//   d (250 milli) → the GPU with the least free milli that fits: GPU 0 (500 free).
TEST(ScheduleTest, WholeGpusGoToTightestIslandThatHoldsThem) {
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8, {4, 4}))
                          .Queue("q")
                          .Job(MakeRunningJob("r", "q", GpuRequest(500), {Placement("n1", {0})}))
                          .Job(WithPriority(MakePendingJob("a", "q", GpuRequest(2000)), 1))
                          .Job(WithPriority(MakePendingJob("b", "q", GpuRequest(4000)), 0, 1))
                          .Job(WithPriority(MakePendingJob("c", "q", GpuRequest(1000)), 0, 2))
                          .Job(WithPriority(MakePendingJob("d", "q", GpuRequest(250)), 0, 3))
                          .Build();
  Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(StartedJobs(d), ElementsAre("a", "b", "c", "d"));
  ExpectStart(d, "a", {At("n1", {1, 2}, 1000)});
  ExpectStart(d, "b", {At("n1", {4, 5, 6, 7}, 1000)});
  ExpectStart(d, "c", {At("n1", {3}, 1000)});
  ExpectStart(d, "d", {At("n1", {0}, 250)});
  EXPECT_THAT(d.pending, IsEmpty());
}

// Two empty islands of 4: a 3-GPU replica goes into the lowest island, lowest indices first.
TEST(ScheduleTest, IslandTieGoesToLowestIsland) {
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8, {4, 4}))
                          .Queue("q")
                          .Job(MakePendingJob("j", "q", GpuRequest(3000)))
                          .Build();
  ExpectStart(ScheduleOk(snapshot), "j", {At("n1", {0, 1, 2}, 1000)});
}

// n1 (islands {0-3}, {4-7}) has GPUs 2, 3, 6, 7 free: 4 GPUs, but no island holds 4.
//   replica_scope island, required: does not fit → pending, fragmentation (nothing is missing
//   in quantity, so shortfall 0);
//   island, preferred: falls back to spanning islands → GPUs 2, 3, 6, 7;
//   node scope (the default): the same.
TEST(ScheduleTest, IslandScopeRequiredWaitsPreferredSpans) {
  auto snapshot_with = [](ReplicaScope scope, Strictness strictness) {
    Job j = MakePendingJob("j", "q", GpuRequest(4000));
    j.groups[0].topology.replica_scope = scope;
    j.groups[0].topology.replica_strictness = strictness;
    return SnapshotBuilder()
        .Model("A100")
        .Node(MakeNode("n1", "A100", 8, {4, 4}))
        .Queue("q")
        .Job(MakeRunningJob("r1", "q", GpuRequest(2000), {Placement("n1", {0, 1})}))
        .Job(MakeRunningJob("r2", "q", GpuRequest(2000), {Placement("n1", {4, 5})}))
        .Job(j)
        .Build();
  };
  {
    SCOPED_TRACE("island, required");
    Decisions d = ScheduleOk(snapshot_with(ReplicaScope::kIsland, Strictness::kRequired));
    EXPECT_THAT(d.starts, IsEmpty());
    const PendingDecision* p = ExpectPending(d, "j", PendingReason::kFragmentation);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->shortfall_milli, 0);
  }
  {
    SCOPED_TRACE("island, preferred");
    ExpectStart(ScheduleOk(snapshot_with(ReplicaScope::kIsland, Strictness::kPreferred)), "j",
                {At("n1", {2, 3, 6, 7}, 1000)});
  }
  {
    SCOPED_TRACE("node");
    ExpectStart(ScheduleOk(snapshot_with(ReplicaScope::kNode, Strictness::kRequired)), "j",
                {At("n1", {2, 3, 6, 7}, 1000)});
  }
}

// With island scope required, a node whose free GPUs are split is skipped for one whose island
// holds the replica, even though best-fit would prefer the first.
TEST(ScheduleTest, IslandScopeRequiredSkipsSplitNode) {
  Job j = MakePendingJob("j", "q", GpuRequest(2000));
  j.groups[0].topology.replica_scope = ReplicaScope::kIsland;
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 4, {2, 2}))
                          .Node(MakeNode("n2", "A100", 8, {4, 4}))
                          .Queue("q")
                          .Job(MakeRunningJob("r1", "q", GpuRequest(1000), {Placement("n1", {0})}))
                          .Job(MakeRunningJob("r2", "q", GpuRequest(1000), {Placement("n1", {2})}))
                          .Job(j)
                          .Build();
  ExpectStart(ScheduleOk(snapshot), "j", {At("n2", {0, 1}, 1000)});
}

// --- Gangs ------------------------------------------------------------------------------------

// Three 4-GPU nodes, n3 full. "big" (priority 1) needs ps 1 GPU + 2 workers x 4 GPUs = 9 GPUs;
// only 8 are free → nothing of it starts (insufficient capacity, 1000 short). The lower-priority
// "small" (4 GPUs) then finds the pool untouched: n1 (ties with n2, smaller id) GPUs 0-3.
TEST(ScheduleTest, GangIsAllOrNothing) {
  Job big = WithPriority(MakePendingJob("big", "q", GpuRequest(1000)), 1);
  big.groups[0].name = "ps";
  big.groups.push_back(MakeGroup("worker", GpuRequest(4000), 2));
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100")
          .Node(MakeNode("n1", "A100", 4))
          .Node(MakeNode("n2", "A100", 4))
          .Node(MakeNode("n3", "A100", 4))
          .Queue("q")
          .Job(MakeRunningJob("r", "q", GpuRequest(4000), {Placement("n3", {0, 1, 2, 3})}))
          .Job(big)
          .Job(MakePendingJob("small", "q", GpuRequest(4000)))
          .Build();
  Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(StartedJobs(d), ElementsAre("small"));
  ExpectStart(d, "small", {At("n1", {0, 1, 2, 3}, 1000)});
  const PendingDecision* p = ExpectPending(d, "big", PendingReason::kInsufficientCapacity);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->shortfall_milli, 1000);
}

// A gang of a CPU-only "ps" and 2 workers of 4 GPUs on three empty 4-GPU nodes. The ps goes to
// the node with the least (free GPU, free CPU) where it fits and the workers fill n1 and n2;
// whatever order the engine places groups in, the result is: ps on n1, worker 0 on n1, worker 1
// on n2. Placements come in group order (ps, worker), then replica order, gpu_milli set.
TEST(ScheduleTest, MultiGroupGangStartsInGroupThenReplicaOrder) {
  Job job = MakePendingJob("j", "q", GpuRequest(0, 2000));
  job.groups[0].name = "ps";
  job.groups.push_back(MakeGroup("worker", GpuRequest(4000, 1000), 2));
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 4))
                          .Node(MakeNode("n2", "A100", 4))
                          .Node(MakeNode("n3", "A100", 4))
                          .Queue("q")
                          .Job(job)
                          .Build();
  ExpectStart(ScheduleOk(snapshot), "j",
              {At("n1", {}, 0, 0, "ps"), At("n1", {0, 1, 2, 3}, 1000, 0, "worker"),
               At("n2", {0, 1, 2, 3}, 1000, 1, "worker")});
}

// An elastic group of 1..4 replicas... min 2, max 4, 1 GPU each, on a 4-GPU node with GPU 0
// busy: the minimum places, then replicas are added one by one while they fit → 3 replicas on
// GPUs 1, 2, 3. The same job with min 4 needs 4 GPUs, 3 are free → pending, 1000 short.
TEST(ScheduleTest, ElasticGroupGrowsWhileItFits) {
  auto snapshot_with = [](int32_t min_replicas) {
    Job e = MakePendingJob("e", "q", GpuRequest(1000), 4);
    e.groups[0].min_replicas = min_replicas;
    return SnapshotBuilder()
        .Model("A100")
        .Node(MakeNode("n1", "A100", 4))
        .Queue("q")
        .Job(MakeRunningJob("r", "q", GpuRequest(1000), {Placement("n1", {0})}))
        .Job(e)
        .Build();
  };
  ExpectStart(ScheduleOk(snapshot_with(2)), "e",
              {At("n1", {1}, 1000, 0), At("n1", {2}, 1000, 1), At("n1", {3}, 1000, 2)});
  Decisions d = ScheduleOk(snapshot_with(4));
  EXPECT_THAT(d.starts, IsEmpty());
  const PendingDecision* p = ExpectPending(d, "e", PendingReason::kInsufficientCapacity);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->shortfall_milli, 1000);
}

// Level rack. n1 (rack r1) has 4 free GPUs (4-7), n2 (rack r2) is empty. A gang of 2 x 4 GPUs:
//   no gang level: best-fit puts replica 0 on n1 (fewest free) and replica 1 on n2;
//   gang_level rack, required: only r2 holds both → both on n2;
//   gang_level rack, preferred: tried within one rack first → both on n2.
TEST(ScheduleTest, GangLevelKeepsGangInOneDomain) {
  auto snapshot_with = [](std::optional<std::string> level, Strictness strictness) {
    Job j = MakePendingJob("j", "q", GpuRequest(4000), 2);
    j.groups[0].topology.gang_level = level;
    j.groups[0].topology.gang_strictness = strictness;
    return SnapshotBuilder()
        .Levels({"rack"})
        .Model("A100")
        .Node(WithPath(MakeNode("n1", "A100", 8), {{"rack", "r1"}}))
        .Node(WithPath(MakeNode("n2", "A100", 8), {{"rack", "r2"}}))
        .Queue("q")
        .Job(MakeRunningJob("r", "q", GpuRequest(4000), {Placement("n1", {0, 1, 2, 3})}))
        .Job(j)
        .Build();
  };
  {
    SCOPED_TRACE("no gang level");
    ExpectStart(ScheduleOk(snapshot_with(std::nullopt, Strictness::kRequired)), "j",
                {At("n1", {4, 5, 6, 7}, 1000, 0), At("n2", {0, 1, 2, 3}, 1000, 1)});
  }
  for (Strictness strictness : {Strictness::kRequired, Strictness::kPreferred}) {
    SCOPED_TRACE(strictness == Strictness::kRequired ? "rack, required" : "rack, preferred");
    ExpectStart(ScheduleOk(snapshot_with("rack", strictness)), "j",
                {At("n2", {0, 1, 2, 3}, 1000, 0), At("n2", {4, 5, 6, 7}, 1000, 1)});
  }
}

// n1 (r1) and n2 (r2) have 4 free GPUs each; n3 is empty but declares no rack, so it belongs to
// no rack and a rack constraint excludes it. A gang of 2 x 4 GPUs:
//   rack, required: no rack holds 8 → pending, topology;
//   rack, preferred: no rack holds it, so anywhere: best-fit puts replica 0 on n1 (4 free, first
//   in topology order among n1/n2) and replica 1 on n2.
TEST(ScheduleTest, GangLevelRequiredWaitsPreferredSpreads) {
  auto snapshot_with = [](Strictness strictness) {
    Job j = MakePendingJob("j", "q", GpuRequest(4000), 2);
    j.groups[0].topology.gang_level = "rack";
    j.groups[0].topology.gang_strictness = strictness;
    return SnapshotBuilder()
        .Levels({"rack"})
        .Model("A100")
        .Node(WithPath(MakeNode("n1", "A100", 8), {{"rack", "r1"}}))
        .Node(WithPath(MakeNode("n2", "A100", 8), {{"rack", "r2"}}))
        .Node(MakeNode("n3", "A100", 8))
        .Queue("q")
        .Job(MakeRunningJob("r1", "q", GpuRequest(4000), {Placement("n1", {0, 1, 2, 3})}))
        .Job(MakeRunningJob("r2", "q", GpuRequest(4000), {Placement("n2", {0, 1, 2, 3})}))
        .Job(j)
        .Build();
  };
  {
    SCOPED_TRACE("required");
    Decisions d = ScheduleOk(snapshot_with(Strictness::kRequired));
    EXPECT_THAT(d.starts, IsEmpty());
    ExpectPending(d, "j", PendingReason::kTopology);
  }
  {
    SCOPED_TRACE("preferred");
    ExpectStart(ScheduleOk(snapshot_with(Strictness::kPreferred)), "j",
                {At("n1", {4, 5, 6, 7}, 1000, 0), At("n2", {4, 5, 6, 7}, 1000, 1)});
  }
}

// gang_level "node": n2 has 2 free GPUs (6, 7), n1 has 4 (4-7). A gang of 2 x 2 GPUs must sit on
// one node: n1, GPUs 4,5 and 6,7 (without the constraint best-fit would start on n2).
TEST(ScheduleTest, GangLevelNodeKeepsGangOnOneNode) {
  Job j = MakePendingJob("j", "q", GpuRequest(2000), 2);
  j.groups[0].topology.gang_level = "node";
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100")
          .Node(MakeNode("n1", "A100", 8))
          .Node(MakeNode("n2", "A100", 8))
          .Queue("q")
          .Job(MakeRunningJob("r1", "q", GpuRequest(4000), {Placement("n1", {0, 1, 2, 3})}))
          .Job(MakeRunningJob("r2", "q", GpuRequest(6000), {Placement("n2", {0, 1, 2, 3, 4, 5})}))
          .Job(j)
          .Build();
  ExpectStart(ScheduleOk(snapshot), "j", {At("n1", {4, 5}, 1000, 0), At("n1", {6, 7}, 1000, 1)});
}

// --- Filters -----------------------------------------------------------------------------------

// n1 cordoned, n2 draining, n3 down (all empty); n4 ready with GPUs 0 and 1 unhealthy. A 1-GPU
// job goes to n4 GPU 2. An 8-GPU job can never fit: the only node that may take work has 6
// healthy GPUs.
TEST(ScheduleTest, OnlyReadyNodesAndHealthyGpus) {
  Node n1 = MakeNode("n1", "A100", 8);
  n1.state = NodeState::kCordoned;
  Node n2 = MakeNode("n2", "A100", 8);
  n2.state = NodeState::kDraining;
  Node n3 = MakeNode("n3", "A100", 8);
  n3.state = NodeState::kDown;
  Node n4 = MakeNode("n4", "A100", 8);
  n4.gpus[0].healthy = false;
  n4.gpus[1].healthy = false;
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Node(n1)
                          .Node(n2)
                          .Node(n3)
                          .Node(n4)
                          .Queue("q")
                          .Job(WithPriority(MakePendingJob("one", "q", GpuRequest(1000)), 1))
                          .Job(MakePendingJob("eight", "q", GpuRequest(8000)))
                          .Build();
  Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(StartedJobs(d), ElementsAre("one"));
  ExpectStart(d, "one", {At("n4", {2}, 1000)});
  ExpectPending(d, "eight", PendingReason::kNeverFits);
}

// Queues org-a > team-a1, and org-b. n1 is reserved to org-a and has 4 free GPUs; n2 is open
// and empty. a (team-a1) may use n1 through its ancestor: best-fit → n1 GPUs 4, 5. b (org-b)
// would prefer n1 (2 free left) but may not use it → n2 GPUs 0, 1.
TEST(ScheduleTest, OwnerQueuesAdmitDescendants) {
  Node n1 = MakeNode("n1", "A100", 8);
  n1.owner_queues = {"org-a"};
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100")
          .Node(n1)
          .Node(MakeNode("n2", "A100", 8))
          .Queue("org-a")
          .Queue("team-a1", "org-a")
          .Queue("org-b")
          .Job(MakeRunningJob("r", "team-a1", GpuRequest(4000), {Placement("n1", {0, 1, 2, 3})}))
          .Job(WithPriority(MakePendingJob("a", "team-a1", GpuRequest(2000)), 0, 1))
          .Job(WithPriority(MakePendingJob("b", "org-b", GpuRequest(2000)), 0, 2))
          .Build();
  Decisions d = ScheduleOk(snapshot);
  ExpectStart(d, "a", {At("n1", {4, 5}, 1000)});
  ExpectStart(d, "b", {At("n2", {0, 1}, 1000)});
}

// Queue iso (exclusive-gpu) with children iso-a and iso-b; queue other. n1 has 2 GPUs; a job of
// "other" uses 500 of GPU 0.
//   i1 (iso-a, 250) must not share GPU 0 with another tenant → GPU 1 (best-fit would pick 0);
//   o2 (other, 600): GPU 0 has 500 free, GPU 1 carries tenant iso → stays pending;
//   i2 (iso-b, 250): same tenant as i1 (the subtree of iso) → shares GPU 1.
TEST(ScheduleTest, ExclusiveGpuIsolation) {
  Queue iso = MakeQueue("iso");
  iso.isolation = Isolation::kExclusiveGpu;
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100")
          .Node(MakeNode("n1", "A100", 2))
          .Queue(iso)
          .Queue("iso-a", "iso")
          .Queue("iso-b", "iso")
          .Queue("other")
          .Job(MakeRunningJob("o1", "other", GpuRequest(500), {Placement("n1", {0})}))
          .Job(WithPriority(MakePendingJob("i1", "iso-a", GpuRequest(250)), 0, 1))
          .Job(WithPriority(MakePendingJob("o2", "other", GpuRequest(600)), 0, 2))
          .Job(WithPriority(MakePendingJob("i2", "iso-b", GpuRequest(250)), 0, 3))
          .Build();
  Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(StartedJobs(d), ElementsAre("i1", "i2"));
  ExpectStart(d, "i1", {At("n1", {1}, 250)});
  ExpectStart(d, "i2", {At("n1", {1}, 250)});
  EXPECT_THAT(PendingJobs(d), ElementsAre("o2"));
}

// Queue iso is exclusive-node. n1 runs a job of "other" on 7 of its 8 GPUs; n2 is empty.
//   i1 (iso, 1 GPU) must not share a node with another tenant → n2 GPU 0 (best-fit would pick
//   n1);
//   o2 (other, 2 GPUs): n1 has 1 free, n2 now belongs to tenant iso → stays pending.
TEST(ScheduleTest, ExclusiveNodeIsolation) {
  Queue iso = MakeQueue("iso");
  iso.isolation = Isolation::kExclusiveNode;
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8))
                          .Node(MakeNode("n2", "A100", 8))
                          .Queue(iso)
                          .Queue("other")
                          .Job(MakeRunningJob("o1", "other", GpuRequest(7000),
                                              {Placement("n1", {0, 1, 2, 3, 4, 5, 6})}))
                          .Job(WithPriority(MakePendingJob("i1", "iso", GpuRequest(1000)), 0, 1))
                          .Job(WithPriority(MakePendingJob("o2", "other", GpuRequest(2000)), 0, 2))
                          .Build();
  Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(StartedJobs(d), ElementsAre("i1"));
  ExpectStart(d, "i1", {At("n2", {0}, 1000)});
  EXPECT_THAT(PendingJobs(d), ElementsAre("o2"));
}

// A running job that requests nothing (no GPU, CPU or memory) still occupies its node for
// exclusive-node isolation: n1 runs such a job of "other", so i1 (iso) goes to n2. (Both nodes
// have the same free GPUs and CPU, so best-fit would otherwise take n1, first in topology order.)
// Found by the long property run (seed 60391).
TEST(ScheduleTest, ExclusiveNodeIsolationCountsJobsThatRequestNothing) {
  Queue iso = MakeQueue("iso");
  iso.isolation = Isolation::kExclusiveNode;
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8))
                          .Node(MakeNode("n2", "A100", 8))
                          .Queue(iso)
                          .Queue("other")
                          .Job(MakeRunningJob("o1", "other", GpuRequest(0), {Placement("n1", {})}))
                          .Job(MakePendingJob("i1", "iso", GpuRequest(1000)))
                          .Build();
  Decisions d = ScheduleOk(snapshot, WithPlacement(PlacementStrategy::kBestFit));
  ExpectStart(d, "i1", {At("n2", {0}, 1000)});
}

// L4 GPUs have 24 GiB, A100 80 GiB; both jobs prefer L4, then A100. "a-l4" has one free GPU;
// "b-a100" is empty. j needs 40000 MiB per GPU → no L4 holds it, so A100: b-a100 GPU 0. k needs
// 20000 MiB → L4 fits: a-l4 GPU 3.
TEST(ScheduleTest, GpuMemoryPerGpu) {
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100", 81920)
          .Model("L4", 24576)
          .Node(MakeNode("a-l4", "L4", 4))
          .Node(MakeNode("b-a100", "A100", 8))
          .Queue("q")
          .Job(MakeRunningJob("r", "q", GpuRequest(3000), {Placement("a-l4", {0, 1, 2})}))
          .Job(WithPriority(
              WithModels(MakePendingJob("j", "q", GpuRequest(1000, 0, 0, 40000)), {"L4", "A100"}),
              0, 1))
          .Job(WithPriority(
              WithModels(MakePendingJob("k", "q", GpuRequest(1000, 0, 0, 20000)), {"L4", "A100"}),
              0, 2))
          .Build();
  Decisions d = ScheduleOk(snapshot);
  ExpectStart(d, "j", {At("b-a100", {0}, 1000)});
  ExpectStart(d, "k", {At("a-l4", {3}, 1000)});
}

// GPU memory is shared by the replicas on one GPU. n1 has 2 A100 (80 GiB); r holds 250 milli
// and 60000 MiB of GPU 0.
//   j (250 milli, 30000 MiB): GPU 0 has the least free milli but only 21920 MiB left → GPU 1;
//   k (250 milli, 20000 MiB): GPUs 0 and 1 both have 750 milli free → GPU 0, whose 21920 MiB
//   hold it.
TEST(ScheduleTest, GpuMemoryIsSharedOnAGpu) {
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100", 81920)
          .Node(MakeNode("n1", "A100", 2))
          .Queue("q")
          .Job(MakeRunningJob("r", "q", GpuRequest(250, 0, 0, 60000), {Placement("n1", {0})}))
          .Job(WithPriority(MakePendingJob("j", "q", GpuRequest(250, 0, 0, 30000)), 0, 1))
          .Job(WithPriority(MakePendingJob("k", "q", GpuRequest(250, 0, 0, 20000)), 0, 2))
          .Build();
  Decisions d = ScheduleOk(snapshot);
  ExpectStart(d, "j", {At("n1", {1}, 250)});
  ExpectStart(d, "k", {At("n1", {0}, 250)});
}

// n1 (2 free GPUs, 8 cores, 64 GiB) is best-fit's favourite; n2 (8 free GPUs, 64 cores,
// 512 GiB) is not; "z-cpu" has no GPU. In order:
//   c (1 GPU, 16 cores): n1 lacks CPU → n2 GPU 0;
//   m (1 GPU, 100000 MiB): n1 lacks memory → n2 GPU 1;
//   s (1 GPU, 4 cores, 4 GiB): fits n1 → n1 GPU 6;
//   x (CPU only, 2 cores): best-fit's smallest (free milli-GPUs, free CPU) is the CPU node.
TEST(ScheduleTest, CpuAndMemoryCapacity) {
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100")
          .Node(MakeNode("n1", "A100", 8, {}, 8000, 65536))
          .Node(MakeNode("n2", "A100", 8))
          .Node(MakeCpuNode("z-cpu", 16000, 65536))
          .Queue("q")
          .Job(MakeRunningJob("r", "q", GpuRequest(6000), {Placement("n1", {0, 1, 2, 3, 4, 5})}))
          .Job(WithPriority(MakePendingJob("c", "q", GpuRequest(1000, 16000)), 0, 1))
          .Job(WithPriority(MakePendingJob("m", "q", GpuRequest(1000, 0, 100000)), 0, 2))
          .Job(WithPriority(MakePendingJob("s", "q", GpuRequest(1000, 4000, 4096)), 0, 3))
          .Job(WithPriority(MakePendingJob("x", "q", GpuRequest(0, 2000)), 0, 4))
          .Build();
  Decisions d = ScheduleOk(snapshot);
  ExpectStart(d, "c", {At("n2", {0}, 1000)});
  ExpectStart(d, "m", {At("n2", {1}, 1000)});
  ExpectStart(d, "s", {At("n1", {6}, 1000)});
  ExpectStart(d, "x", {At("z-cpu", {}, 0)});
}

// --- GPU models --------------------------------------------------------------------------------

// h1 has 8 H100; a1 and a2 have 8 A100 each. g (2 x 8 GPUs, prefers H100 then A100): H100 holds
// only one replica, so the whole gang goes to A100: a1 and a2. s (1 GPU, same preferences) →
// H100 h1 GPU 0.
TEST(ScheduleTest, WholeGangOnFirstModelWhereItPlaces) {
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100")
          .Model("H100")
          .Node(MakeNode("a1", "A100", 8))
          .Node(MakeNode("a2", "A100", 8))
          .Node(MakeNode("h1", "H100", 8))
          .Queue("q")
          .Job(WithPriority(
              WithModels(MakePendingJob("g", "q", GpuRequest(8000), 2), {"H100", "A100"}), 1))
          .Job(WithModels(MakePendingJob("s", "q", GpuRequest(1000)), {"H100", "A100"}))
          .Build();
  Decisions d = ScheduleOk(snapshot);
  ExpectStart(
      d, "g",
      {At("a1", {0, 1, 2, 3, 4, 5, 6, 7}, 1000, 0), At("a2", {0, 1, 2, 3, 4, 5, 6, 7}, 1000, 1)});
  ExpectStart(d, "s", {At("h1", {0}, 1000)});
}

// An empty model list accepts any model: best-fit picks the fullest node of any model, the A100
// node with 2 free GPUs.
TEST(ScheduleTest, EmptyModelListAcceptsAnyModel) {
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100")
          .Model("H100")
          .Node(MakeNode("a1", "A100", 8))
          .Node(MakeNode("h1", "H100", 8))
          .Queue("q")
          .Job(MakeRunningJob("r", "q", GpuRequest(6000), {Placement("a1", {0, 1, 2, 3, 4, 5})}))
          .Job(MakePendingJob("j", "q", GpuRequest(1000)))
          .Build();
  ExpectStart(ScheduleOk(snapshot), "j", {At("a1", {6}, 1000)});
}

// All groups of a job go on one model, also when it accepts any: a gang of 2 x 8 GPUs cannot
// take the A100 node and the H100 node together. No single model has 16 GPUs even when empty
// → never-fits.
TEST(ScheduleTest, AnyModelGangStaysOnOneModel) {
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Model("H100")
                          .Node(MakeNode("a1", "A100", 8))
                          .Node(MakeNode("h1", "H100", 8))
                          .Queue("q")
                          .Job(MakePendingJob("g", "q", GpuRequest(8000), 2))
                          .Build();
  Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(d.starts, IsEmpty());
  ExpectPending(d, "g", PendingReason::kNeverFits);
}

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

// --- Pending reasons ----------------------------------------------------------------------------

// The pool has only A100 nodes (H100 is declared, B200 is not): a job accepting only H100 or
// B200 waits with no-allowed-gpu-model.
TEST(ScheduleTest, PendingNoAllowedGpuModel) {
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Model("H100")
                          .Node(MakeNode("a1", "A100", 8))
                          .Queue("q")
                          .Job(WithModels(MakePendingJob("h", "q", GpuRequest(1000)), {"H100"}))
                          .Job(WithModels(MakePendingJob("b", "q", GpuRequest(1000)), {"B200"}))
                          .Build();
  Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(d.starts, IsEmpty());
  ExpectPending(d, "h", PendingReason::kNoAllowedGpuModel);
  ExpectPending(d, "b", PendingReason::kNoAllowedGpuModel);
}

// The only A100 node is down; the other is reserved to another queue → node-restrictions.
TEST(ScheduleTest, PendingNodeRestrictions) {
  Node down = MakeNode("n1", "A100", 8);
  down.state = NodeState::kDown;
  Node reserved = MakeNode("n2", "A100", 8);
  reserved.owner_queues = {"vip"};
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Node(down)
                          .Node(reserved)
                          .Queue("q")
                          .Queue("vip")
                          .Job(MakePendingJob("j", "q", GpuRequest(1000)))
                          .Build();
  Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(d.starts, IsEmpty());
  ExpectPending(d, "j", PendingReason::kNodeRestrictions);
}

// A replica of 16 GPUs on nodes of 8 can never fit.
TEST(ScheduleTest, PendingNeverFits) {
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8))
                          .Node(MakeNode("n2", "A100", 8))
                          .Queue("q")
                          .Job(MakePendingJob("j", "q", GpuRequest(16000)))
                          .Build();
  Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(d.starts, IsEmpty());
  ExpectPending(d, "j", PendingReason::kNeverFits);
}

// 3 GPUs are free on n1; a gang of 2 x 2 GPUs needs 4 → insufficient capacity, 1000 short.
TEST(ScheduleTest, PendingInsufficientCapacity) {
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100")
          .Node(MakeNode("n1", "A100", 8))
          .Queue("q")
          .Job(MakeRunningJob("r", "q", GpuRequest(5000), {Placement("n1", {0, 1, 2, 3, 4})}))
          .Job(MakePendingJob("j", "q", GpuRequest(2000), 2))
          .Build();
  Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(d.starts, IsEmpty());
  const PendingDecision* p = ExpectPending(d, "j", PendingReason::kInsufficientCapacity);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->shortfall_milli, 1000);
}

// Two 4-GPU nodes with 2 free GPUs each: 4 are free in total, but a 4-GPU replica needs them on
// one node → fragmentation, nothing missing in quantity.
TEST(ScheduleTest, PendingFragmentation) {
  Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100")
          .Node(MakeNode("n1", "A100", 4))
          .Node(MakeNode("n2", "A100", 4))
          .Queue("q")
          .Job(MakeRunningJob("r1", "q", GpuRequest(2000), {Placement("n1", {0, 1})}))
          .Job(MakeRunningJob("r2", "q", GpuRequest(2000), {Placement("n2", {2, 3})}))
          .Job(MakePendingJob("j", "q", GpuRequest(4000)))
          .Build();
  Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(d.starts, IsEmpty());
  const PendingDecision* p = ExpectPending(d, "j", PendingReason::kFragmentation);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->shortfall_milli, 0);
}

// Topology and queue-limit reasons are covered by GangLevelRequiredWaitsPreferredSpreads and
// the QueueLimit tests above.

// A budget of 1 candidate: the first job (one node to evaluate) starts and spends it; the two
// identical jobs after it are not tried → budget-exhausted.
TEST(ScheduleTest, PendingBudgetExhausted) {
  Snapshot snapshot = SnapshotBuilder()
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8))
                          .Queue("q")
                          .Job(WithPriority(MakePendingJob("j1", "q", GpuRequest(1000)), 0, 1))
                          .Job(WithPriority(MakePendingJob("j2", "q", GpuRequest(1000)), 0, 2))
                          .Job(WithPriority(MakePendingJob("j3", "q", GpuRequest(1000)), 0, 3))
                          .Build();
  Policy policy;
  policy.budgets.max_candidates = 1;
  Decisions d = ScheduleOk(snapshot, policy);
  EXPECT_THAT(StartedJobs(d), ElementsAre("j1"));
  ExpectStart(d, "j1", {At("n1", {0}, 1000)});
  ExpectPending(d, "j2", PendingReason::kBudgetExhausted);
  ExpectPending(d, "j3", PendingReason::kBudgetExhausted);
  EXPECT_TRUE(d.counters.budget_exhausted);
  // Without a budget all three start.
  EXPECT_THAT(StartedJobs(ScheduleOk(snapshot)), ElementsAre("j1", "j2", "j3"));
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

// --- Output form and fixed point ---------------------------------------------------------------

// A pool with a bit of everything, for the whole-result properties below.
Snapshot MixedSnapshot() {
  Queue org = MakeQueue("org");
  org.quotas = {MakeLimit("*", 20000)};
  Job gang = MakePendingJob("gang", "team", GpuRequest(4000), 2);
  gang.groups[0].topology.gang_level = "rack";
  gang.groups.push_back(MakeGroup("ps", GpuRequest(0, 2000), 1));
  Job elastic = MakePendingJob("elastic", "team", GpuRequest(1000), 6);
  elastic.groups[0].min_replicas = 1;
  return SnapshotBuilder()
      .Now(500)
      .Levels({"rack"})
      .Model("A100")
      .Model("H100")
      .Node(WithPath(MakeNode("n1", "A100", 8, {4, 4}), {{"rack", "r1"}}))
      .Node(WithPath(MakeNode("n2", "A100", 8, {4, 4}), {{"rack", "r1"}}))
      .Node(WithPath(MakeNode("n3", "H100", 8), {{"rack", "r2"}}))
      .Node(MakeCpuNode("n4"))
      .Queue(org)
      .Queue("team", "org")
      .Queue("other")
      .Job(MakeRunningJob("run", "other", GpuRequest(2000), {Placement("n3", {0, 1})}, 100))
      .Job(WithPriority(MakePendingJob("zeta", "other", GpuRequest(250)), 0, 1))
      .Job(WithPriority(gang, 2, 2))
      .Job(WithPriority(MakePendingJob("alpha", "other", GpuRequest(500)), 0, 3))
      .Job(WithPriority(elastic, 0, 4))
      .Job(WithPriority(MakePendingJob("huge", "team", GpuRequest(32000)), 0, 5))
      .Job(WithPriority(WithModels(MakePendingJob("mid", "other", GpuRequest(1000)), {"H100"}), 1,
                        6))
      .Build();
}

// Every decision list is sorted by job id; every Start placement has gpu_milli set, and comes in
// group order then replica order.
TEST(ScheduleTest, OutputsSortedByJobId) {
  Decisions d = ScheduleOk(MixedSnapshot());
  ASSERT_FALSE(d.starts.empty());
  ASSERT_FALSE(d.pending.empty());
  for (size_t i = 1; i < d.starts.size(); ++i) {
    EXPECT_LT(d.starts[i - 1].job, d.starts[i].job);
  }
  for (size_t i = 1; i < d.pending.size(); ++i) {
    EXPECT_LT(d.pending[i - 1].job, d.pending[i].job);
  }
  for (const StartDecision& s : d.starts) {
    for (size_t i = 0; i < s.placements.size(); ++i) {
      const ReplicaPlacement& p = s.placements[i];
      if (!p.gpus.empty()) {
        EXPECT_GT(p.gpu_milli, 0) << s.job;
      }
      if (i > 0) {
        const ReplicaPlacement& q = s.placements[i - 1];
        EXPECT_TRUE(q.group < p.group || (q.group == p.group && q.replica + 1 == p.replica))
            << s.job;
      }
    }
  }
  // Every pending job of the input has exactly one outcome.
  EXPECT_EQ(d.starts.size() + d.pending.size(), 6u);
  // huge (32 GPUs in one replica) can never fit.
  ExpectPending(d, "huge", PendingReason::kNeverFits);
}

TEST(ScheduleTest, SameSnapshotTwiceGivesEqualDecisions) {
  Snapshot snapshot = MixedSnapshot();
  EXPECT_EQ(DecisionsToText(ScheduleOk(snapshot)), DecisionsToText(ScheduleOk(snapshot)));
}

TEST(ScheduleTest, ShuffledListsGiveEqualDecisions) {
  const std::string want = DecisionsToText(ScheduleOk(MixedSnapshot()));
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Snapshot shuffled = MixedSnapshot();
    ShuffleSnapshot(shuffled, seed);
    const std::string got = DecisionsToText(ScheduleOk(shuffled));
    EXPECT_EQ(got, want) << "shuffle seed " << seed;
    if (got != want) break;  // one difference is enough to read
  }
}

// The order in which a job declares its groups changes nothing: not where replicas go, not the
// order of the Start placements (group name order: ps before worker), not the fingerprint.
// Three empty 4-GPU nodes; ps (CPU only) and workers 2 x 4 GPUs, as in
// MultiGroupGangStartsInGroupThenReplicaOrder.
TEST(ScheduleTest, GroupDeclarationOrderChangesNothing) {
  Job job = MakePendingJob("j", "q", GpuRequest(4000, 1000), 2);
  job.groups[0].name = "worker";
  job.groups.push_back(MakeGroup("ps", GpuRequest(0, 2000), 1));
  Snapshot worker_first = SnapshotBuilder()
                              .Model("A100")
                              .Node(MakeNode("n1", "A100", 4))
                              .Node(MakeNode("n2", "A100", 4))
                              .Node(MakeNode("n3", "A100", 4))
                              .Queue("q")
                              .Job(job)
                              .Build();
  Snapshot ps_first = worker_first;
  std::swap(ps_first.jobs[0].groups[0], ps_first.jobs[0].groups[1]);
  Decisions a = ScheduleOk(worker_first);
  Decisions b = ScheduleOk(ps_first);
  const std::vector<ReplicaPlacement> want = {At("n1", {}, 0, 0, "ps"),
                                              At("n1", {0, 1, 2, 3}, 1000, 0, "worker"),
                                              At("n2", {0, 1, 2, 3}, 1000, 1, "worker")};
  ExpectStart(a, "j", want);
  ExpectStart(b, "j", want);
  EXPECT_EQ(a.input_fingerprint, b.input_fingerprint);
  EXPECT_EQ(DecisionsToText(a), DecisionsToText(b));
}

// Applying the starts and scheduling again starts nothing more, and the jobs still pending get
// the same reasons.
TEST(ScheduleTest, ApplyStartsThenScheduleStartsNothing) {
  Snapshot snapshot = MixedSnapshot();
  Decisions first = ScheduleOk(snapshot);
  ASSERT_FALSE(first.starts.empty());
  ASSERT_TRUE(ApplyStarts(first, snapshot).ok());
  ASSERT_TRUE(ValidateSnapshot(snapshot).ok()) << ValidateSnapshot(snapshot);
  for (const StartDecision& s : first.starts) {
    for (const Job& job : snapshot.jobs) {
      if (job.id != s.job) continue;
      EXPECT_EQ(job.state, JobState::kRunning);
      EXPECT_EQ(job.start_time, snapshot.now);
    }
  }
  Decisions second = ScheduleOk(snapshot);
  EXPECT_THAT(second.starts, IsEmpty()) << DecisionsToText(second);
  EXPECT_EQ(PendingJobs(second), PendingJobs(first));
}

// A bad snapshot is refused by Schedule() with ValidateSnapshot's error.
TEST(ScheduleTest, InvalidSnapshotIsRefused) {
  Snapshot snapshot = MixedSnapshot();
  snapshot.jobs[0].queue = "nope";
  absl::StatusOr<Decisions> d = Schedule(snapshot, Policy{});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status(), ValidateSnapshot(snapshot));
}

}  // namespace
}  // namespace gpupool
