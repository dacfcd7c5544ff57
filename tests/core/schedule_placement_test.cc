// Schedule(), worked examples (see schedule_test.cc): where replicas go inside a node (the
// tightest GPU for a fraction, the tightest island for whole GPUs, island scope) and gangs (all or
// nothing, several groups, elastic groups, gang levels).
#include <cstdint>
#include <string>
#include <vector>

#include "gpupool/schedule.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "tests/core/schedule_helpers.h"

namespace gpupool::schedule_testing {
namespace {

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

}  // namespace
}  // namespace gpupool::schedule_testing
