// topology.max_replicas_per_node: at most that many replicas of a group on one node. Worked
// examples (placement, elastic growth, other groups, pending reasons, preemption, validation,
// equivalent jobs), then a brute-force oracle on tiny pools: the job starts exactly when some
// assignment of its replicas to nodes respects the cap and the free GPUs.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gpupool/schedule.h"
#include "gpupool/validate.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "tests/core/schedule_helpers.h"

namespace gpupool::schedule_testing {
namespace {

using ::testing::HasSubstr;

Job Spread(Job job, int32_t most, std::string_view group = "main") {
  for (TaskGroup& g : job.groups) {
    if (g.name == group) g.topology.max_replicas_per_node = most;
  }
  return job;
}

Snapshot TwoEmptyNodes(const Job& job) {
  return SnapshotBuilder()
      .Model("A100")
      .Node(MakeNode("n1", "A100", 8))
      .Node(MakeNode("n2", "A100", 8))
      .Queue("q")
      .Job(job)
      .Build();
}

// --- Placement ---------------------------------------------------------------------------------

// Two empty 8-GPU nodes, a gang of 2 x 4 GPUs. Best-fit packs both replicas on n1 (after the
// first, n1 is the node with the fewest free GPUs that still holds one); with at most 1 per node
// the second goes to n2; with at most 2, both on n1 again.
TEST(ReplicaSpreadTest, OnePerNodePutsReplicasOnDistinctNodes) {
  const Job job = MakePendingJob("j", "q", GpuRequest(4000), 2);
  ExpectStart(ScheduleOk(TwoEmptyNodes(job)), "j",
              {At("n1", {0, 1, 2, 3}, 1000, 0), At("n1", {4, 5, 6, 7}, 1000, 1)});
  ExpectStart(ScheduleOk(TwoEmptyNodes(Spread(job, 1))), "j",
              {At("n1", {0, 1, 2, 3}, 1000, 0), At("n2", {0, 1, 2, 3}, 1000, 1)});
  ExpectStart(ScheduleOk(TwoEmptyNodes(Spread(job, 2))), "j",
              {At("n1", {0, 1, 2, 3}, 1000, 0), At("n1", {4, 5, 6, 7}, 1000, 1)});
}

// The same under every placement strategy: spread already puts them apart, first-fit packs them
// without the cap.
TEST(ReplicaSpreadTest, EveryStrategyKeepsTheCap) {
  const Job job = Spread(MakePendingJob("j", "q", GpuRequest(2000), 3), 2);
  for (PlacementStrategy strategy :
       {PlacementStrategy::kBestFit, PlacementStrategy::kSpread, PlacementStrategy::kFirstFit,
        PlacementStrategy::kExpectedWaste}) {
    SCOPED_TRACE(static_cast<int>(strategy));
    const Decisions d = ScheduleOk(TwoEmptyNodes(job), WithPlacement(strategy));
    const StartDecision* start = FindStart(d, "j");
    ASSERT_NE(start, nullptr) << DecisionsToText(d);
    int on_n1 = 0;
    for (const ReplicaPlacement& p : start->placements) on_n1 += p.node == "n1" ? 1 : 0;
    EXPECT_GE(on_n1, 1);
    EXPECT_LE(on_n1, 2);
  }
}

// An elastic group of 1..4 one-GPU replicas, at most 1 per node, on two empty nodes: it grows to
// one replica per node and stops there, though 14 GPUs are still free.
TEST(ReplicaSpreadTest, ElasticGrowthStopsAtTheCap) {
  Job job = Spread(MakePendingJob("e", "q", GpuRequest(1000), 4), 1);
  job.groups[0].min_replicas = 1;
  ExpectStart(ScheduleOk(TwoEmptyNodes(job)), "e",
              {At("n1", {0}, 1000, 0), At("n2", {0}, 1000, 1)});
}

// The cap counts replicas of its own group only: the one-GPU "ps" joins worker 0 on n1.
TEST(ReplicaSpreadTest, OtherGroupsDoNotCount) {
  Job job = MakePendingJob("j", "q", GpuRequest(1000));
  job.groups[0].name = "ps";
  job.groups.push_back(MakeGroup("worker", GpuRequest(4000), 2));
  ExpectStart(ScheduleOk(TwoEmptyNodes(Spread(job, 1, "worker"))), "j",
              {At("n1", {4}, 1000, 0, "ps"), At("n1", {0, 1, 2, 3}, 1000, 0, "worker"),
               At("n2", {0, 1, 2, 3}, 1000, 1, "worker")});
}

// --- Pending reasons ---------------------------------------------------------------------------

// One 8-GPU node can never hold 2 replicas at 1 per node: never-fits, saying why.
TEST(ReplicaSpreadTest, TooFewNodesNeverFits) {
  const Snapshot snapshot = SnapshotBuilder()
                                .Model("A100")
                                .Node(MakeNode("n1", "A100", 8))
                                .Node(MakeNode("n2", "A100", 2))
                                .Queue("q")
                                .Job(Spread(MakePendingJob("j", "q", GpuRequest(4000), 2), 1))
                                .Build();
  const Decisions d = ScheduleOk(snapshot);
  const PendingDecision* p = ExpectPending(d, "j", PendingReason::kNeverFits);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->detail,
            "group main needs its 2 replicas on at least 2 nodes (at most 1 per node, "
            "topology.max_replicas_per_node), and only 1 eligible node of any model can hold "
            "one, even when empty");
}

// Racks r1 (n1, n2) and r2 (n3); a gang of 3 one-GPU replicas, 1 per node, in one rack
// (required): no rack has 3 nodes.
TEST(ReplicaSpreadTest, TooFewNodesInAnyDomainNeverFits) {
  Job job = Spread(MakePendingJob("j", "q", GpuRequest(1000), 3), 1);
  job.groups[0].topology.gang_level = "rack";
  const Snapshot snapshot = SnapshotBuilder()
                                .Levels({"rack"})
                                .Model("A100")
                                .Node(WithPath(MakeNode("n1", "A100", 8), {{"rack", "r1"}}))
                                .Node(WithPath(MakeNode("n2", "A100", 8), {{"rack", "r1"}}))
                                .Node(WithPath(MakeNode("n3", "A100", 8), {{"rack", "r2"}}))
                                .Queue("q")
                                .Job(job)
                                .Build();
  const Decisions d = ScheduleOk(snapshot);
  const PendingDecision* p = ExpectPending(d, "j", PendingReason::kNeverFits);
  ASSERT_NE(p, nullptr);
  EXPECT_THAT(p->detail, HasSubstr("on at least 3 nodes"));
  EXPECT_THAT(p->detail,
              HasSubstr("no rack has more than 2 eligible nodes of any model that can hold one"));
}

// n2 is full; n1 has 8 free GPUs, room for both 2-GPU replicas, but only one may go there:
// topology, naming the group and its cap.
TEST(ReplicaSpreadTest, RoomOnOneNodeOnlyIsTopology) {
  const Snapshot snapshot = SnapshotBuilder()
                                .Model("A100")
                                .Node(MakeNode("n1", "A100", 8))
                                .Node(MakeNode("n2", "A100", 8))
                                .Queue("q")
                                .Job(MakeRunningJob("r", "q", GpuRequest(8000),
                                                    {Placement("n2", {0, 1, 2, 3, 4, 5, 6, 7})}))
                                .Job(Spread(MakePendingJob("j", "q", GpuRequest(2000), 2), 1))
                                .Build();
  const Decisions d = ScheduleOk(snapshot);
  const PendingDecision* p = ExpectPending(d, "j", PendingReason::kTopology);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->detail,
            "8 GPUs are free in total, but group main may have at most 1 of its replicas on one "
            "node (topology.max_replicas_per_node), and not enough nodes have room for them");
}

// Racks r1 (n1 empty, n2 full) and r2 (n3 empty): each rack has 8 free GPUs, but on one node.
// A gang of 2 x 2 GPUs, 1 per node, in one rack (required) would fit across the racks:
// topology, and the detail says the cap is part of what no rack has room for.
TEST(ReplicaSpreadTest, AGangLevelTopologyDetailNamesTheCap) {
  Job job = Spread(MakePendingJob("j", "q", GpuRequest(2000), 2), 1);
  job.groups[0].topology.gang_level = "rack";
  const Snapshot snapshot = SnapshotBuilder()
                                .Levels({"rack"})
                                .Model("A100")
                                .Node(WithPath(MakeNode("n1", "A100", 8), {{"rack", "r1"}}))
                                .Node(WithPath(MakeNode("n2", "A100", 8), {{"rack", "r1"}}))
                                .Node(WithPath(MakeNode("n3", "A100", 8), {{"rack", "r2"}}))
                                .Queue("q")
                                .Job(MakeRunningJob("full", "q", GpuRequest(8000),
                                                    {Placement("n2", {0, 1, 2, 3, 4, 5, 6, 7})}))
                                .Job(job)
                                .Build();
  const Decisions d = ScheduleOk(snapshot);
  const PendingDecision* p = ExpectPending(d, "j", PendingReason::kTopology);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->detail,
            "16 GPUs are free in total, but no single rack has room for the whole gang (4 GPUs) "
            "with at most 1 replica of group main per node (topology.max_replicas_per_node)");
}

// --- Preemption --------------------------------------------------------------------------------

// n1 is empty; n2 holds "stale" (GPUs 0-3, checkpointed at 100) and "fresh" (4-7, at 900). A
// priority-10 gang of 2 x 4 GPUs fits on n1 alone; at 1 per node its second replica needs room
// on n2, and the cheaper victim there, fresh, goes. (Best-fit then puts replica 0 on n2, the
// node with fewer free GPUs.)
TEST(ReplicaSpreadTest, PreemptionMakesRoomOnASecondNode) {
  auto running = [](std::string id, std::vector<int32_t> gpus, int64_t checkpoint) {
    Job job = MakeRunningJob(std::move(id), "q", GpuRequest(4000),
                             {Placement("n2", std::move(gpus))}, /*start_time=*/0);
    job.checkpointing.interval_s = 1800;
    job.checkpointing.last_checkpoint_time = checkpoint;
    job.checkpointing.restore_time_s = 60;
    return job;
  };
  auto snapshot_with = [&](const Job& urgent) {
    return SnapshotBuilder()
        .Now(1000)
        .Model("A100")
        .Node(MakeNode("n1", "A100", 8))
        .Node(MakeNode("n2", "A100", 8))
        .Queue("q")
        .Job(running("stale", {0, 1, 2, 3}, 100))
        .Job(running("fresh", {4, 5, 6, 7}, 900))
        .Job(urgent)
        .Build();
  };
  Policy policy;
  policy.preemption.enabled = true;
  const Job urgent = WithPriority(MakePendingJob("urgent", "q", GpuRequest(4000), 2), 10, 900);
  {
    SCOPED_TRACE("no cap");
    const Decisions d = ScheduleOk(snapshot_with(urgent), policy);
    EXPECT_TRUE(d.preemptions.empty());
    ExpectStart(d, "urgent", {At("n1", {0, 1, 2, 3}, 1000, 0), At("n1", {4, 5, 6, 7}, 1000, 1)});
  }
  {
    SCOPED_TRACE("1 per node");
    const Decisions d = ScheduleOk(snapshot_with(Spread(urgent, 1)), policy);
    ASSERT_EQ(d.preemptions.size(), 1u) << DecisionsToText(d);
    EXPECT_EQ(d.preemptions[0].job, "fresh");
    ExpectStart(d, "urgent", {At("n2", {4, 5, 6, 7}, 1000, 0), At("n1", {0, 1, 2, 3}, 1000, 1)});
  }
}

// --- Equivalent jobs and validation ------------------------------------------------------------

// Two jobs alike but for the cap are not one shape: after "spread" (first by submit time) fails,
// "packed" still starts.
TEST(ReplicaSpreadTest, JobsDifferingOnlyInTheCapAreNotEquivalent) {
  const Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100")
          .Node(MakeNode("n1", "A100", 8))
          .Queue("q")
          .Job(WithPriority(Spread(MakePendingJob("spread", "q", GpuRequest(2000), 2), 1), 0, 1))
          .Job(WithPriority(MakePendingJob("packed", "q", GpuRequest(2000), 2), 0, 2))
          .Build();
  const Decisions d = ScheduleOk(snapshot);
  EXPECT_THAT(StartedJobs(d), ElementsAre("packed"));
  ExpectPending(d, "spread", PendingReason::kNeverFits);
}

// The cap is part of the input fingerprint: unset, 1 and 2 give three fingerprints.
TEST(ReplicaSpreadTest, TheCapIsPartOfTheFingerprint) {
  const Job job = MakePendingJob("j", "q", GpuRequest(4000), 2);
  const std::string unset = ScheduleOk(TwoEmptyNodes(job)).input_fingerprint;
  const std::string one = ScheduleOk(TwoEmptyNodes(Spread(job, 1))).input_fingerprint;
  const std::string two = ScheduleOk(TwoEmptyNodes(Spread(job, 2))).input_fingerprint;
  EXPECT_NE(unset, one);
  EXPECT_NE(unset, two);
  EXPECT_NE(one, two);
}

// A cap equal to the replicas of a one-node gang is valid; so is any cap with a preferred one.
TEST(ReplicaSpreadTest, CapsAGangOnOneNodeCanHoldAreValid) {
  Job job = MakePendingJob("j", "q", GpuRequest(1000), 3);
  job.groups[0].topology.gang_level = "node";
  EXPECT_TRUE(ValidateSnapshot(TwoEmptyNodes(Spread(job, 3))).ok());
  job.groups[0].topology.gang_strictness = Strictness::kPreferred;
  EXPECT_TRUE(ValidateSnapshot(TwoEmptyNodes(Spread(job, 1))).ok());
}

// --- Oracle ------------------------------------------------------------------------------------

// Is there an assignment of `replicas` replicas of `gpus` whole GPUs each to nodes with `free`
// GPUs, at most `most` per node? Brute force over every assignment.
bool Feasible(const std::vector<int32_t>& free, int32_t replicas, int32_t gpus, int32_t most) {
  std::vector<int32_t> at(static_cast<size_t>(replicas), 0);
  while (true) {
    std::vector<int32_t> used(free.size(), 0), count(free.size(), 0);
    bool ok = true;
    for (int32_t n : at) {
      used[static_cast<size_t>(n)] += gpus;
      ++count[static_cast<size_t>(n)];
    }
    for (size_t n = 0; n < free.size(); ++n) {
      ok = ok && used[n] <= free[n] && count[n] <= most;
    }
    if (ok) return true;
    size_t i = 0;
    while (i < at.size() && ++at[i] == static_cast<int32_t>(free.size())) at[i++] = 0;
    if (i == at.size()) return false;
  }
}

// Random tiny pools (2-4 nodes of 4 GPUs, some taken), one pending gang of 1-4 replicas of 1-4
// GPUs at most 1-3 per node: it starts exactly when the brute force finds room, and never with
// more replicas on a node than its cap. 2,000 seeds.
TEST(ReplicaSpreadTest, StartsExactlyWhenSomeAssignmentFits) {
  for (uint32_t seed = 0; seed < 2000; ++seed) {
    std::mt19937 rng(seed);
    auto draw = [&](int32_t lo, int32_t hi) {
      return std::uniform_int_distribution<int32_t>(lo, hi)(rng);
    };
    const int32_t nodes = draw(2, 4);
    const int32_t replicas = draw(1, 4), gpus = draw(1, 4), most = draw(1, 3);
    SnapshotBuilder builder;
    builder.Model("A100").Queue("q");
    std::vector<int32_t> free;
    for (int32_t n = 0; n < nodes; ++n) {
      const std::string id = "n" + std::to_string(n);
      builder.Node(MakeNode(id, "A100", 4));
      const int32_t taken = draw(0, 4);
      free.push_back(4 - taken);
      if (taken == 0) continue;
      std::vector<int32_t> held;
      for (int32_t g = 0; g < taken; ++g) held.push_back(g);
      builder.Job(MakeRunningJob("r" + std::to_string(n), "q", GpuRequest(taken * 1000),
                                 {Placement(id, held)}));
    }
    builder.Job(Spread(MakePendingJob("j", "q", GpuRequest(gpus * 1000), replicas), most));
    const Decisions d = ScheduleOk(builder.Build());
    const StartDecision* start = FindStart(d, "j");
    SCOPED_TRACE("seed " + std::to_string(seed));
    ASSERT_EQ(start != nullptr, Feasible(free, replicas, gpus, most)) << DecisionsToText(d);
    if (start == nullptr) continue;
    std::vector<int32_t> count(static_cast<size_t>(nodes), 0);
    for (const ReplicaPlacement& p : start->placements) {
      EXPECT_LE(++count[static_cast<size_t>(std::stoi(p.node.substr(1)))], most);
    }
  }
}

}  // namespace
}  // namespace gpupool::schedule_testing
