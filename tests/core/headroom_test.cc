// Headroom for urgent work (Policy::headroom; docs/operations.md): worked examples with exact
// outcomes. Low-priority work may not take the headroom (pending reason headroom, with the
// numbers); urgent work starts in it at once; restoration evicts the cheapest allowed set of
// low-priority jobs, and the cycle after applying the decisions preempts nothing more.
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gpupool/apply.h"
#include "gpupool/schedule.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/generator.h"

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

// Best-fit, priority-FIFO, no queue turns (set explicitly: the defaults may change), and one rule:
// `count` units of A100 in `shape` kept for priority >= 100.
Policy HeadroomPolicy(int64_t count, HeadroomShape shape = HeadroomShape::kGpus,
                      bool restore = false) {
  Policy policy;
  policy.placement = PlacementStrategy::kBestFit;
  policy.job_order = JobOrder::kPriorityFifo;
  policy.queue_order = QueueOrder::kNone;
  policy.headroom = {HeadroomRule{"A100", count, shape, 100, restore}};
  return policy;
}

Job Pending(std::string id, int64_t gpu_milli, int32_t priority, int32_t replicas = 1) {
  Job job = MakePendingJob(std::move(id), "q", GpuRequest(gpu_milli), replicas);
  job.priority = priority;
  job.submit_time = 100;
  return job;
}

// A running priority-0 job of queue q that last checkpointed at `checkpoint` (restore 60 s).
Job Running(std::string id, std::string node, std::vector<int32_t> gpus, int64_t checkpoint,
            int32_t priority = 0) {
  const int64_t milli = static_cast<int64_t>(gpus.size()) * kMilliPerGpu;
  Job job = MakeRunningJob(std::move(id), "q", GpuRequest(milli),
                           {Placement(std::move(node), std::move(gpus))}, /*start_time=*/0);
  job.priority = priority;
  job.checkpointing.interval_s = 1800;
  job.checkpointing.last_checkpoint_time = checkpoint;
  job.checkpointing.restore_time_s = 60;
  return job;
}

// One 8-GPU node, 4 GPUs kept for priority >= 100. "big" (priority 0, 6 GPUs) would leave 2:
// pending, reason headroom, with the numbers. "small" (priority 0, 4 GPUs) leaves exactly 4:
// starts.
TEST(HeadroomTest, LowPriorityWorkLeavesTheHeadroomFree) {
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(1000)
                                .Model("A100")
                                .Node(MakeNode("n1", "A100", 8))
                                .Queue("q")
                                .Job(Pending("big", 6000, 0))
                                .Job(Pending("small", 4000, 0))
                                .Build();
  const absl::StatusOr<Decisions> decisions = Schedule(snapshot, HeadroomPolicy(4));
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  EXPECT_THAT(StartedJobs(*decisions), ElementsAre("small"));
  const PendingDecision* big = FindPending(*decisions, "big");
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->reason, PendingReason::kHeadroom);
  EXPECT_EQ(big->gpu_model, "A100");
  EXPECT_EQ(big->detail,
            "4 A100 GPUs are kept free for priority >= 100; 8 free now, and starting this job "
            "(priority 0) would leave 2");
  ASSERT_EQ(decisions->headroom.size(), 1u);
  const HeadroomReport& report = decisions->headroom[0];
  EXPECT_EQ(report.required, 4);
  EXPECT_EQ(report.free_before_restore, 4);
  EXPECT_EQ(report.free, 4);
  EXPECT_EQ(report.shortfall, 0);
  EXPECT_EQ(report.detail, "4 free of the 4 A100 GPUs kept free for priority >= 100");
}

// Urgent work (priority 100) takes all 8 GPUs at once, headroom included, without preemption;
// with restore off the report says the rule is 4 short and why.
TEST(HeadroomTest, UrgentWorkStartsInTheHeadroomAtOnce) {
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(1000)
                                .Model("A100")
                                .Node(MakeNode("n1", "A100", 8))
                                .Queue("q")
                                .Job(Pending("urgent", 8000, 100))
                                .Build();
  Policy policy = HeadroomPolicy(4);
  policy.preemption.enabled = true;
  const absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy);
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  EXPECT_THAT(StartedJobs(*decisions), ElementsAre("urgent"));
  EXPECT_THAT(decisions->preemptions, IsEmpty());
  ASSERT_EQ(decisions->headroom.size(), 1u);
  EXPECT_EQ(decisions->headroom[0].free, 0);
  EXPECT_EQ(decisions->headroom[0].shortfall, 4);
  EXPECT_EQ(decisions->headroom[0].detail,
            "0 free of the 4 A100 GPUs kept free for priority >= 100; 4 short: restore is off "
            "for this rule");
}

// Two 8-GPU nodes; "cheap" (4 GPUs on n1, checkpointed at t=950) and "dear" (4 GPUs on n2,
// checkpointed at t=100) run at priority 0. "urgent" (priority 100, 2 x 4 GPUs) takes the other
// 8 GPUs, leaving 0 of the 4 kept free. Restoration evicts the cheaper job: cheap loses
// 4000 x (50 + 60) = 440,000 milli-GPU-seconds, dear would lose 4000 x (900 + 60). Applying the
// decisions and scheduling again preempts nothing: cheap is pending (reason headroom: restarting
// it would leave 0).
TEST(HeadroomTest, RestorationEvictsTheCheapestLowPriorityJobAndIsAFixedPoint) {
  Snapshot snapshot = SnapshotBuilder()
                          .Now(1000)
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8))
                          .Node(MakeNode("n2", "A100", 8))
                          .Queue("q")
                          .Job(Running("cheap", "n1", {0, 1, 2, 3}, 950))
                          .Job(Running("dear", "n2", {0, 1, 2, 3}, 100))
                          .Job(Pending("urgent", 4000, 100, 2))
                          .Build();
  Policy policy = HeadroomPolicy(4, HeadroomShape::kGpus, /*restore=*/true);
  policy.preemption.enabled = true;
  absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy);
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  EXPECT_THAT(StartedJobs(*decisions), ElementsAre("urgent"));
  ASSERT_EQ(decisions->preemptions.size(), 1u);
  const PreemptDecision& preempt = decisions->preemptions[0];
  EXPECT_EQ(preempt.job, "cheap");
  EXPECT_EQ(preempt.for_job, "");
  EXPECT_EQ(preempt.lost_milli_gpu_seconds, 440000);
  EXPECT_EQ(preempt.reason,
            "headroom: urgent work left 0 free of the 4 A100 GPUs kept free for priority >= 100; "
            "evicting jobs below priority 100 restores them");
  ASSERT_EQ(decisions->headroom.size(), 1u);
  const HeadroomReport& report = decisions->headroom[0];
  EXPECT_EQ(report.free_before_restore, 0);
  EXPECT_EQ(report.free, 4);
  EXPECT_THAT(report.preempted, ElementsAre("cheap"));
  EXPECT_EQ(report.shortfall, 0);
  EXPECT_EQ(report.detail,
            "urgent work left 0 free of the 4 A100 GPUs kept free for priority >= 100; evicting "
            "1 job below priority 100 made 4 free");

  ASSERT_TRUE(ApplyDecisions(*decisions, snapshot).ok());
  decisions = Schedule(snapshot, policy);
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  EXPECT_THAT(decisions->starts, IsEmpty());
  EXPECT_THAT(decisions->preemptions, IsEmpty());
  const PendingDecision* cheap = FindPending(*decisions, "cheap");
  ASSERT_NE(cheap, nullptr);
  EXPECT_EQ(cheap->reason, PendingReason::kHeadroom);
  EXPECT_EQ(decisions->headroom[0].free, 4);
}

// Work below a restoring rule never evicts work the rule is kept for. One 8-GPU node, 2 kept for
// priority >= 100; "urgent" (priority 100) runs on 2 GPUs, "fixed" (not preemptible) on 4; "st"
// (priority 0, 2 GPUs) has waited past the starvation bound, so it outranks every job of its
// queue. Starting on the 2 free GPUs would leave none: headroom. Evicting urgent would let it
// start and leave 2, but urgent would then start again on those (the headroom is kept for it),
// and restoring the rule would evict st: so urgent stays, st waits (reason headroom), and the
// next cycle does nothing either. Before this rule the cycle went round until its cap of 8
// passes.
TEST(HeadroomTest, WorkBelowARestoringRuleNeverEvictsWorkTheRuleIsKeptFor) {
  Job fixed = Running("fixed", "n1", {2, 3, 4, 5}, 900);
  fixed.preemptible = false;
  Snapshot snapshot = SnapshotBuilder()
                          .Now(2000)
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8))
                          .Queue("q")
                          .Job(Running("urgent", "n1", {0, 1}, 1900, /*priority=*/100))
                          .Job(fixed)
                          .Job(Pending("st", 2000, 0))
                          .Build();
  Policy policy = HeadroomPolicy(2, HeadroomShape::kGpus, /*restore=*/true);
  policy.preemption.enabled = true;
  policy.starvation_bound_s = 1000;
  absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy);
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  EXPECT_THAT(decisions->starts, IsEmpty());
  EXPECT_THAT(decisions->preemptions, IsEmpty());
  EXPECT_EQ(decisions->counters.passes, 1);
  const PendingDecision* st = FindPending(*decisions, "st");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->reason, PendingReason::kHeadroom);
  EXPECT_EQ(st->detail,
            "2 A100 GPUs are kept free for priority >= 100; 2 free now, and starting this job "
            "(priority 0) would leave 0");
  EXPECT_EQ(st->counterfactual, "");

  // Without the rule's restore, urgent may go for st (st outranks it), and nothing loops.
  policy.headroom[0].restore = false;
  decisions = Schedule(snapshot, policy);
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  EXPECT_THAT(StartedJobs(*decisions), ElementsAre("st", "urgent"));
  ASSERT_EQ(decisions->preemptions.size(), 1u);
  EXPECT_EQ(decisions->preemptions[0].job, "urgent");

  // With the rule restoring and no GPU free (urgent on 4, fixed on 4), st waits for capacity,
  // and its counterfactual names the rule that keeps urgent.
  policy.headroom[0].restore = true;
  Job wide = Running("urgent", "n1", {0, 1, 2, 3}, 1900, /*priority=*/100);
  fixed.placements = {Placement("n1", {4, 5, 6, 7})};
  fixed.groups[0].request = GpuRequest(4000);
  snapshot.jobs = {wide, fixed, snapshot.jobs[2]};
  decisions = Schedule(snapshot, policy);
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  EXPECT_THAT(decisions->preemptions, IsEmpty());
  st = FindPending(*decisions, "st");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->reason, PendingReason::kInsufficientCapacity);
  EXPECT_THAT(st->would_preempt, ElementsAre("urgent"));
  EXPECT_EQ(st->counterfactual,
            "would start now if urgent were preempted (losing 640000 milli-GPU-seconds of work), "
            "but urgent has priority 100, at or above the 100 of the headroom rule for A100 GPUs "
            "that restores: evicted, it could take the headroom, and restoring it would evict st");
}

// Restoration keeps guarantees: "cheap" belongs to queue g, whose guarantee (4 GPUs) is all it
// uses, so only "dear" may go; it does, and the report says 4 are free again.
TEST(HeadroomTest, RestorationNeverTakesUsageWithinAGuarantee) {
  Queue guaranteed = testing::MakeQueue("g");
  guaranteed.quotas = {Quota{"A100", 4000, std::nullopt, 1}};
  Job cheap = Running("cheap", "n1", {0, 1, 2, 3}, 950);
  cheap.queue = "g";
  Snapshot snapshot = SnapshotBuilder()
                          .Now(1000)
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8))
                          .Node(MakeNode("n2", "A100", 8))
                          .Queue("q")
                          .Queue(guaranteed)
                          .Job(cheap)
                          .Job(Running("dear", "n2", {0, 1, 2, 3}, 100))
                          .Job(Pending("urgent", 4000, 100, 2))
                          .Build();
  Policy policy = HeadroomPolicy(4, HeadroomShape::kGpus, /*restore=*/true);
  policy.preemption.enabled = true;
  const absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy);
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  ASSERT_EQ(decisions->preemptions.size(), 1u);
  EXPECT_EQ(decisions->preemptions[0].job, "dear");
  EXPECT_THAT(decisions->headroom[0].preempted, ElementsAre("dear"));
  EXPECT_EQ(decisions->headroom[0].free, 4);
}

// Nothing may go (the only low-priority job is not preemptible): the rule stays 4 short, and the
// report says no allowed set frees that much.
TEST(HeadroomTest, RestorationReportsWhatItCannotRestore) {
  Job pinned = Running("pinned", "n1", {0, 1, 2, 3}, 950);
  pinned.preemptible = false;
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(1000)
                                .Model("A100")
                                .Node(MakeNode("n1", "A100", 8))
                                .Queue("q")
                                .Job(pinned)
                                .Job(Pending("urgent", 4000, 100))
                                .Build();
  Policy policy = HeadroomPolicy(4, HeadroomShape::kGpus, /*restore=*/true);
  policy.preemption.enabled = true;
  const absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy);
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  EXPECT_THAT(StartedJobs(*decisions), ElementsAre("urgent"));
  EXPECT_THAT(decisions->preemptions, IsEmpty());
  EXPECT_EQ(decisions->headroom[0].shortfall, 4);
  EXPECT_EQ(decisions->headroom[0].detail,
            "0 free of the 4 A100 GPUs kept free for priority >= 100; 4 short: no set of running "
            "jobs below priority 100 that the preemption rules let go frees that much");
}

// Restoration preempts only with preemption.enabled, whatever `restore` says.
TEST(HeadroomTest, RestorationNeedsPreemptionEnabled) {
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(1000)
                                .Model("A100")
                                .Node(MakeNode("n1", "A100", 8))
                                .Queue("q")
                                .Job(Running("low", "n1", {0, 1, 2, 3}, 950))
                                .Job(Pending("urgent", 4000, 100))
                                .Build();
  const absl::StatusOr<Decisions> decisions =
      Schedule(snapshot, HeadroomPolicy(4, HeadroomShape::kGpus, /*restore=*/true));
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  EXPECT_THAT(decisions->preemptions, IsEmpty());
  EXPECT_EQ(decisions->headroom[0].detail,
            "0 free of the 4 A100 GPUs kept free for priority >= 100; 4 short: preemption is off "
            "(preemption.enabled)");
}

// Whole nodes: one of two 8-GPU nodes is kept whole. n1 already runs a job, so a 1-GPU job goes
// there (best-fit) and starts; a 2 x 6-GPU job would need n2 too: pending, headroom.
TEST(HeadroomTest, WholeNodesStayWhole) {
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(1000)
                                .Model("A100")
                                .Node(MakeNode("n1", "A100", 8))
                                .Node(MakeNode("n2", "A100", 8))
                                .Queue("q")
                                .Job(Running("r", "n1", {0}, 950))
                                .Job(Pending("one", 1000, 0))
                                .Job(Pending("wide", 6000, 0, 2))
                                .Build();
  const absl::StatusOr<Decisions> decisions =
      Schedule(snapshot, HeadroomPolicy(1, HeadroomShape::kNodes));
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  EXPECT_THAT(StartedJobs(*decisions), ElementsAre("one"));
  ASSERT_NE(FindStart(*decisions, "one"), nullptr);
  EXPECT_EQ(FindStart(*decisions, "one")->placements[0].node, "n1");
  const PendingDecision* wide = FindPending(*decisions, "wide");
  ASSERT_NE(wide, nullptr);
  EXPECT_EQ(wide->reason, PendingReason::kHeadroom);
  EXPECT_EQ(wide->detail,
            "1 whole A100 node is kept free for priority >= 100; 1 free now, and starting this "
            "job (priority 0) would leave 0");
  EXPECT_EQ(decisions->headroom[0].free, 1);
}

// Whole islands: a node of two 4-GPU islands, one kept whole. A 4-GPU priority-0 job would take
// an island and leave 1: it starts; a second one would leave 0: pending.
TEST(HeadroomTest, WholeIslandsStayWhole) {
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(1000)
                                .Model("A100")
                                .Node(MakeNode("n1", "A100", 8, {4, 4}))
                                .Queue("q")
                                .Job(Pending("a", 4000, 0))
                                .Job(Pending("b", 4000, 0))
                                .Build();
  const absl::StatusOr<Decisions> decisions =
      Schedule(snapshot, HeadroomPolicy(1, HeadroomShape::kIslands));
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  EXPECT_THAT(StartedJobs(*decisions), ElementsAre("a"));
  ASSERT_NE(FindPending(*decisions, "b"), nullptr);
  EXPECT_EQ(FindPending(*decisions, "b")->reason, PendingReason::kHeadroom);
  EXPECT_EQ(decisions->headroom[0].shape, HeadroomShape::kIslands);
  EXPECT_EQ(decisions->headroom[0].free, 1);
}

// Spot nodes are no headroom: with 8 GPUs on a spot node and 8 on a normal one, a 4-GPU
// priority-0 job that may use spot goes wherever best-fit puts it as long as the normal node
// keeps 4 free; a second 4-GPU job that may not use spot would leave 0 on the normal node.
TEST(HeadroomTest, SpotCapacityIsNoHeadroom) {
  Node spot = MakeNode("s1", "A100", 8);
  spot.spot = true;
  Job tolerant = Pending("tolerant", 4000, 0);
  tolerant.spot_tolerant = true;
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(1000)
                                .Model("A100")
                                .Node(MakeNode("n1", "A100", 8))
                                .Node(spot)
                                .Queue("q")
                                .Job(Pending("a", 4000, 0))
                                .Job(Pending("b", 4000, 0))
                                .Job(tolerant)
                                .Build();
  const absl::StatusOr<Decisions> decisions = Schedule(snapshot, HeadroomPolicy(4));
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  // a takes n1 (leaves 4); b may not use s1 and would leave 0 on n1; tolerant goes to s1.
  EXPECT_THAT(StartedJobs(*decisions), ElementsAre("a", "tolerant"));
  EXPECT_EQ(FindStart(*decisions, "tolerant")->placements[0].node, "s1");
  EXPECT_EQ(FindPending(*decisions, "b")->reason, PendingReason::kHeadroom);
  EXPECT_EQ(decisions->headroom[0].free, 4);
}

// Without rules nothing is reported.
TEST(HeadroomTest, NoRulesNoReport) {
  const Snapshot snapshot = SnapshotBuilder()
                                .Model("A100")
                                .Node(MakeNode("n1", "A100", 8))
                                .Queue("q")
                                .Job(Pending("a", 8000, 0))
                                .Build();
  const absl::StatusOr<Decisions> decisions = Schedule(snapshot, Policy{});
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  EXPECT_THAT(StartedJobs(*decisions), ElementsAre("a"));
  EXPECT_THAT(decisions->headroom, IsEmpty());
}

// Brute-force oracle for restoration on tiny pools: 2 nodes of 4 GPUs (each GPU its own island),
// 1-4 running priority-0 jobs of 1-3 GPUs with random checkpoint times, and an urgent job of
// 1-GPU replicas that takes every free GPU. The rule keeps 1-4 units (random shape) for
// priority >= 100 and restores them. The oracle tries every subset of the running jobs: the
// cheapest (then fewest, then first in id order) whose eviction frees `count` units is the one
// the engine must evict, or none when no subset does.
TEST(HeadroomTest, RestorationMatchesABruteForceOracle) {
  int restored = 0, short_cases = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    testing::Rng rng(seed);
    SnapshotBuilder builder;
    builder.Now(10000).Model("A100").Queue("q");
    for (const char* id : {"n1", "n2"}) builder.Node(MakeNode(id, "A100", 4, {1, 1, 1, 1}));
    std::vector<std::pair<std::string, int32_t>> free_gpus;
    std::set<std::pair<std::string, int32_t>> used;
    struct Victim {
      std::string id;
      std::vector<std::pair<std::string, int32_t>> gpus;
      int64_t cost;
    };
    std::vector<Victim> running;
    const int64_t jobs = rng.UniformInt(1, 4);
    for (int64_t k = 0; k < jobs; ++k) {
      const std::string node = rng.Percent(50) ? "n1" : "n2";
      const int64_t want = rng.UniformInt(1, 3);
      std::vector<int32_t> gpus;
      for (int32_t g = 0; g < 4 && static_cast<int64_t>(gpus.size()) < want; ++g) {
        if (!used.count({node, g})) gpus.push_back(g);
      }
      if (static_cast<int64_t>(gpus.size()) < want) continue;
      Victim v{"r" + std::to_string(k), {}, 0};
      for (int32_t g : gpus) {
        used.insert({node, g});
        v.gpus.push_back({node, g});
      }
      const int64_t checkpoint = rng.UniformInt(0, 9999);
      v.cost = static_cast<int64_t>(gpus.size()) * kMilliPerGpu * (10000 - checkpoint + 60);
      builder.Job(Running(v.id, node, gpus, checkpoint));
      running.push_back(std::move(v));
    }
    const int64_t free_now = 8 - static_cast<int64_t>(used.size());
    if (free_now > 0) builder.Job(Pending("urgent", 1000, 100, static_cast<int32_t>(free_now)));
    const HeadroomShape shape = static_cast<HeadroomShape>(rng.UniformInt(0, 2));
    const int64_t count = rng.UniformInt(1, 4);
    Policy policy = HeadroomPolicy(count, shape, /*restore=*/true);
    policy.preemption.enabled = true;
    const absl::StatusOr<Decisions> decisions = Schedule(builder.Build(), policy);
    ASSERT_TRUE(decisions.ok()) << decisions.status();

    // Units free with every GPU taken (the urgent job took the rest) but those of `evicted`.
    auto units_free = [&](uint32_t mask) {
      std::set<std::pair<std::string, int32_t>> freed;
      for (size_t i = 0; i < running.size(); ++i) {
        if (mask & (1u << i)) freed.insert(running[i].gpus.begin(), running[i].gpus.end());
      }
      int64_t units = 0;
      for (const char* node : {"n1", "n2"}) {
        int64_t node_free = 0;
        for (int32_t g = 0; g < 4; ++g) node_free += freed.count({node, g}) ? 1 : 0;
        units += shape == HeadroomShape::kNodes ? (node_free == 4 ? 1 : 0) : node_free;
      }
      return units;
    };
    std::vector<std::string> best;
    int64_t best_cost = -1;
    for (uint32_t mask = 1; mask < (1u << running.size()); ++mask) {
      if (units_free(mask) < count) continue;
      int64_t cost = 0;
      std::vector<std::string> ids;
      for (size_t i = 0; i < running.size(); ++i) {
        if (mask & (1u << i)) {
          cost += running[i].cost;
          ids.push_back(running[i].id);
        }
      }
      if (best_cost < 0 || cost < best_cost ||
          (cost == best_cost &&
           (ids.size() < best.size() || (ids.size() == best.size() && ids < best)))) {
        best_cost = cost;
        best = ids;
      }
    }
    ASSERT_EQ(decisions->headroom.size(), 1u);
    EXPECT_EQ(decisions->headroom[0].preempted, best);
    int64_t engine_cost = 0;
    for (const PreemptDecision& p : decisions->preemptions) engine_cost += p.lost_milli_gpu_seconds;
    EXPECT_EQ(engine_cost, std::max<int64_t>(best_cost, 0));
    if (best.empty()) {
      ++short_cases;
      EXPECT_GT(decisions->headroom[0].shortfall, 0);
    } else {
      ++restored;
      EXPECT_EQ(decisions->headroom[0].shortfall, 0);
    }
  }
  // Both outcomes occur.
  EXPECT_GT(restored, 50);
  EXPECT_GT(short_cases, 5);
}

}  // namespace
}  // namespace gpupool
