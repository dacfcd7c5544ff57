// Schedule(): exact outcomes on small pools, each test a worked example. The comment above each
// case states the expected outcome; the asserts check it exactly. Here: the order of pending jobs,
// the node each placement strategy chooses and how ties break, and the form of the output (sorted,
// deterministic, the same for shuffled input) with the fixed point. Where replicas go inside a
// node and gangs are in schedule_placement_test.cc; node filters, GPU models and pending reasons in
// schedule_filters_test.cc; queue limits and preemption in schedule_queues_test.cc.
#include "gpupool/schedule.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpupool/apply.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "tests/core/schedule_helpers.h"

namespace gpupool::schedule_testing {
namespace {

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
}  // namespace gpupool::schedule_testing
