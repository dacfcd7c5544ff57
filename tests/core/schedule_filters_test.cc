// Schedule(), worked examples (see schedule_test.cc): which nodes and GPUs a job may use (node
// state and GPU health, nodes reserved to queues, isolation, GPU memory, CPU and memory, GPU
// models), and the reason a job stays pending when none will do.
#include <cstdint>
#include <string>
#include <vector>

#include "gpupool/schedule.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "tests/core/schedule_helpers.h"

namespace gpupool::schedule_testing {
namespace {

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

}  // namespace
}  // namespace gpupool::schedule_testing
