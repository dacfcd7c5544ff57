// Stage 6: preemption planning. Worked examples, then a brute-force oracle over every victim
// subset on small clusters.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cycle.h"
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

Policy PreemptingPolicy() {
  Policy policy;
  policy.preemption.enabled = true;
  return policy;
}

// A running job of queue q, priority 0, that last checkpointed at `checkpoint`.
Job Running(std::string id, std::string node, std::vector<int32_t> gpus, int64_t checkpoint,
            std::string queue = "q") {
  const int64_t milli = static_cast<int64_t>(gpus.size()) * kMilliPerGpu;
  Job job = MakeRunningJob(std::move(id), std::move(queue), GpuRequest(milli),
                           {Placement(std::move(node), std::move(gpus))}, /*start_time=*/0);
  job.checkpointing.interval_s = 1800;
  job.checkpointing.last_checkpoint_time = checkpoint;
  job.checkpointing.restore_time_s = 60;
  return job;
}

Job Urgent(std::string id, int64_t gpu_milli, int32_t priority = 10) {
  Job job = MakePendingJob(std::move(id), "q", GpuRequest(gpu_milli));
  job.priority = priority;
  job.submit_time = 900;
  return job;
}

// n1 is full: "stale" (4 GPUs) last checkpointed at t=100, "fresh" (4 GPUs) at t=900. At t=1000
// a priority-10 job needs 4 GPUs. Evicting fresh loses 4000 x (100 + 60 restore) = 640,000
// milli-GPU-seconds, stale would lose 4000 x (900 + 60): fresh goes, and the job takes its GPUs.
TEST(PreemptTest, EvictsTheVictimThatLosesLeastWork) {
  Snapshot snapshot = SnapshotBuilder()
                          .Now(1000)
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8))
                          .Queue("q")
                          .Job(Running("stale", "n1", {0, 1, 2, 3}, 100))
                          .Job(Running("fresh", "n1", {4, 5, 6, 7}, 900))
                          .Job(Urgent("urgent", 4000))
                          .Build();
  absl::StatusOr<Decisions> d = Schedule(snapshot, PreemptingPolicy());
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].job, "fresh");
  EXPECT_EQ(d->preemptions[0].for_job, "urgent");
  EXPECT_EQ(d->preemptions[0].lost_milli_gpu_seconds, 4000 * (100 + 60));
  const StartDecision* start = FindStart(*d, "urgent");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->placements[0].gpus, (std::vector<int32_t>{4, 5, 6, 7}));
  EXPECT_EQ(d->counters.preemptions, 1);
}

// Times after now (clocks that disagree): a running job whose start_time is after now counts as
// started in this cycle and is no victim; a checkpoint after now counts as just taken. n1 holds
// "early" (started at 2000 > now 1000) and "ahead" (checkpoint at 1500 > now): the urgent job
// takes ahead's GPUs, pricing them at the restore alone.
TEST(PreemptTest, TimesAfterNowAreAStartOfThisCycleAndAFreshCheckpoint) {
  Job early = Running("early", "n1", {0, 1, 2, 3}, 100);
  early.start_time = 2000;
  early.checkpointing.last_checkpoint_time.reset();
  Snapshot snapshot = SnapshotBuilder()
                          .Now(1000)
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8))
                          .Queue("q")
                          .Job(early)
                          .Job(Running("ahead", "n1", {4, 5, 6, 7}, 1500))
                          .Job(Urgent("urgent", 4000))
                          .Build();
  absl::StatusOr<Decisions> d = Schedule(snapshot, PreemptingPolicy());
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].job, "ahead");
  EXPECT_EQ(d->preemptions[0].lost_milli_gpu_seconds, 4000 * 60);

  // With only the early job on the node, nothing may go: the urgent job waits.
  Snapshot alone = SnapshotBuilder()
                       .Now(1000)
                       .Model("A100")
                       .Node(MakeNode("n1", "A100", 4))
                       .Queue("q")
                       .Job(early)
                       .Job(Urgent("urgent", 4000))
                       .Build();
  d = Schedule(alone, PreemptingPolicy());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());
  EXPECT_EQ(FindStart(*d, "urgent"), nullptr);
  // Nor does the counterfactual name it.
  const PendingDecision* pending = FindPending(*d, "urgent");
  ASSERT_NE(pending, nullptr);
  EXPECT_TRUE(pending->would_preempt.empty());
}

TEST(PreemptTest, OffByDefault) {
  Snapshot snapshot = SnapshotBuilder()
                          .Now(1000)
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8))
                          .Queue("q")
                          .Job(Running("a", "n1", {0, 1, 2, 3, 4, 5, 6, 7}, 900))
                          .Job(Urgent("urgent", 4000))
                          .Build();
  absl::StatusOr<Decisions> d = Schedule(snapshot, Policy{});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());
  const PendingDecision* pending = FindPending(*d, "urgent");
  ASSERT_NE(pending, nullptr);
  // The counterfactual says what would unblock it, and why that does not happen: evicting "a"
  // (8 GPUs x 100 s since its checkpoint + 60 s restore).
  EXPECT_EQ(pending->would_preempt, std::vector<std::string>{"a"});
  EXPECT_EQ(pending->counterfactual,
            "would start now if a were preempted (losing 1280000 milli-GPU-seconds of work), but "
            "preemption is off in this policy");
}

// Victims must be preemptible, past their minimum runtime, of the same queue, and of a lower
// priority. Each case leaves the only running job ineligible: nothing is evicted.
TEST(PreemptTest, OnlyEligibleVictims) {
  // `why_kept`: what the pending job's counterfactual says (empty counterfactual when the victim
  // could never be evicted at all).
  struct Case {
    const char* name;
    void (*edit)(Job& victim);
    const char* why_kept;
  };
  const Case cases[] = {
      {"not preemptible", [](Job& v) { v.preemptible = false; }, ""},
      {"within minimum runtime", [](Job& v) { v.min_runtime_s = 5000; }, ""},
      {"same priority", [](Job& v) { v.priority = 10; }, "v has priority 10, not below 10"},
      {"higher priority", [](Job& v) { v.priority = 20; }, "v has priority 20, not below 10"},
      {"other queue", [](Job& v) { v.queue = "other"; },
       "v is in queue other and reclaim_across_queues is off"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Job victim = Running("v", "n1", {0, 1, 2, 3, 4, 5, 6, 7}, 900);
    c.edit(victim);
    Snapshot snapshot = SnapshotBuilder()
                            .Now(1000)
                            .Model("A100")
                            .Node(MakeNode("n1", "A100", 8))
                            .Queue("q")
                            .Queue("other")
                            .Job(victim)
                            .Job(Urgent("urgent", 4000))
                            .Build();
    absl::StatusOr<Decisions> d = Schedule(snapshot, PreemptingPolicy());
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_TRUE(d->preemptions.empty());
    const PendingDecision* pending = FindPending(*d, "urgent");
    ASSERT_NE(pending, nullptr);
    if (std::string(c.why_kept).empty()) {
      EXPECT_EQ(pending->counterfactual, "");
    } else {
      EXPECT_THAT(pending->counterfactual, ::testing::HasSubstr(c.why_kept));
    }
  }
}

// A gang of two replicas (n1 and n2) is evicted whole, even though the job needs only n1.
TEST(PreemptTest, EvictsWholeGangs) {
  Job gang = MakeRunningJob(
      "gang", "q", GpuRequest(8000),
      {Placement("n1", {0, 1, 2, 3, 4, 5, 6, 7}, 0), Placement("n2", {0, 1, 2, 3, 4, 5, 6, 7}, 1)},
      /*start_time=*/900);
  Snapshot snapshot = SnapshotBuilder()
                          .Now(1000)
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8))
                          .Node(MakeNode("n2", "A100", 8))
                          .Queue("q")
                          .Job(gang)
                          .Job(Urgent("urgent", 8000))
                          .Build();
  absl::StatusOr<Decisions> d = Schedule(snapshot, PreemptingPolicy());
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].job, "gang");
  // 16 GPUs x 100 s since its start (no checkpoint yet), no restore time.
  EXPECT_EQ(d->preemptions[0].lost_milli_gpu_seconds, 16000 * 100);
  ASSERT_NE(FindStart(*d, "urgent"), nullptr);
}

// Nothing is evicted unless the job then places: 16 GPUs on one 8-GPU node never fit.
TEST(PreemptTest, NothingEvictedForNothing) {
  Snapshot snapshot = SnapshotBuilder()
                          .Now(1000)
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8))
                          .Queue("q")
                          .Job(Running("a", "n1", {0, 1, 2, 3}, 900))
                          .Job(Urgent("urgent", 16000))
                          .Build();
  absl::StatusOr<Decisions> d = Schedule(snapshot, PreemptingPolicy());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());
  EXPECT_NE(FindPending(*d, "urgent"), nullptr);
}

// With a grace period at least its checkpoint cost, a victim checkpoints on demand and loses
// only that cost (30 s) plus its restore time, instead of 900 s of work.
TEST(PreemptTest, CheckpointGraceLimitsTheLoss) {
  Job victim = Running("v", "n1", {0, 1, 2, 3, 4, 5, 6, 7}, 100);
  victim.checkpointing.checkpoint_cost_s = 30;
  Snapshot snapshot = SnapshotBuilder()
                          .Now(1000)
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8))
                          .Queue("q")
                          .Job(victim)
                          .Job(Urgent("urgent", 8000))
                          .Build();
  Policy policy = PreemptingPolicy();
  policy.preemption.checkpoint_grace_s = 60;
  absl::StatusOr<Decisions> d = Schedule(snapshot, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].lost_milli_gpu_seconds, 8000 * (30 + 60));
}

// Two cheap one-GPU victims cost less than one expensive four-GPU victim: the planner takes the
// cheaper set even though it has more victims.
TEST(PreemptTest, CheapestSetNotFewestVictims) {
  Snapshot snapshot = SnapshotBuilder()
                          .Now(1000)
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 4))
                          .Node(MakeNode("n2", "A100", 2))
                          .Queue("q")
                          .Job(Running("big", "n1", {0, 1, 2, 3}, 0))
                          .Job(Running("small1", "n2", {0}, 990))
                          .Job(Running("small2", "n2", {1}, 990))
                          .Job(Urgent("urgent", 2000))
                          .Build();
  absl::StatusOr<Decisions> d = Schedule(snapshot, PreemptingPolicy());
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->preemptions.size(), 2u);
  EXPECT_EQ(d->preemptions[0].job, "small1");
  EXPECT_EQ(d->preemptions[1].job, "small2");
  EXPECT_EQ(FindStart(*d, "urgent")->placements[0].node, "n2");
}

// The two victim orders disagree when the cheapest victim has the higher priority. n1 holds
// "cheap" (priority 5, 4 GPUs, checkpointed at t=900) and "dear" (priority 1, 4 GPUs,
// checkpointed at t=100); "urgent" (priority 10) needs 4 GPUs at t=1000.
//   - cheapest-first: cheap loses 4000 x (100 + 60) = 640,000 against dear's 3,840,000: cheap goes.
//   - lowest-priority-first: dear (priority 1) goes although it loses six times as much.
TEST(PreemptTest, VictimOrderDecidesBetweenCheapAndLowPriority) {
  Job cheap = Running("cheap", "n1", {0, 1, 2, 3}, 900);
  cheap.priority = 5;
  Job dear = Running("dear", "n1", {4, 5, 6, 7}, 100);
  dear.priority = 1;
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(1000)
                                .Model("A100")
                                .Node(MakeNode("n1", "A100", 8))
                                .Queue("q")
                                .Job(cheap)
                                .Job(dear)
                                .Job(Urgent("urgent", 4000))
                                .Build();
  const struct {
    VictimOrder order;
    const char* victim;
    int64_t lost;
  } kCases[] = {{VictimOrder::kCheapestFirst, "cheap", 4000 * (100 + 60)},
                {VictimOrder::kLowestPriorityFirst, "dear", 4000 * (900 + 60)}};
  for (const auto& c : kCases) {
    SCOPED_TRACE(VictimOrderName(c.order));
    Policy policy = PreemptingPolicy();
    policy.preemption.victim_order = c.order;
    // The planner's choice, in the cycle's first pass.
    const Decisions d = internal::RunCyclePass(snapshot, policy);
    ASSERT_EQ(d.preemptions.size(), 1u);
    EXPECT_EQ(d.preemptions[0].job, c.victim);
    EXPECT_EQ(d.preemptions[0].lost_milli_gpu_seconds, c.lost);
    EXPECT_NE(FindStart(d, "urgent"), nullptr);
  }
  // Settled, cheapest-first costs more here: cheap (priority 5), evicted, outranks dear
  // (priority 1) and takes its GPUs in the second pass, as the next cycle would; lowest-priority-
  // first evicts dear alone.
  Policy policy = PreemptingPolicy();
  policy.preemption.victim_order = VictimOrder::kCheapestFirst;
  absl::StatusOr<Decisions> settled = Schedule(snapshot, policy);
  ASSERT_TRUE(settled.ok()) << settled.status();
  ASSERT_EQ(settled->preemptions.size(), 2u);
  EXPECT_EQ(settled->preemptions[0].job, "cheap");
  EXPECT_EQ(settled->preemptions[1].job, "dear");
  EXPECT_EQ(settled->preemptions[1].for_job, "cheap");
  const StartDecision* restarted = FindStart(*settled, "cheap");
  ASSERT_NE(restarted, nullptr);
  EXPECT_EQ(restarted->placements[0].gpus, (std::vector<int32_t>{4, 5, 6, 7}));
  EXPECT_EQ(settled->counters.passes, 3);
}

// --- More than PreemptionPlanner::kExactCandidates candidates: the node-local search. ---

// Two racks of three 4-GPU nodes, every GPU busy with a 1-GPU job of priority 0 (24 candidates).
// At t=10,000 a gang of 2 x 4 GPUs that must sit in one rack arrives. Per job, the price is
// 1000 x (seconds since its checkpoint + 60 s restore); the nodes' jobs checkpointed at:
//   rack ra: a0 9,900 (160,000 each), a1 9,000 (1,060,000), a2 1,000 (9,060,000);
//   rack rb: b0 9,960 (100,000 each), b1 and b2 1,000 (9,060,000).
// The two cheapest nodes, b0 and a0, are in different racks. In ra the best pair is a0 + a1
// (4 x 1,220,000), in rb b0 + b1 (4 x 9,160,000): the eight jobs of a0 and a1 go.
Snapshot TwoFullRacks(int32_t gang_replicas) {
  SnapshotBuilder builder;
  builder.Now(10'000).Levels({"rack"}).Model("A100").Queue("q");
  const struct {
    const char* node;
    const char* rack;
    int64_t checkpoint;
  } kNodes[] = {{"a0", "ra", 9'900}, {"a1", "ra", 9'000}, {"a2", "ra", 1'000},
                {"b0", "rb", 9'960}, {"b1", "rb", 1'000}, {"b2", "rb", 1'000}};
  for (const auto& n : kNodes) {
    Node node = MakeNode(n.node, "A100", 4);
    node.path = {{"rack", n.rack}};
    builder.Node(node);
    for (int32_t g = 0; g < 4; ++g) {
      builder.Job(
          Running(std::string(n.node) + "-" + std::to_string(g), n.node, {g}, n.checkpoint));
    }
  }
  Job gang = MakePendingJob("gang", "q", GpuRequest(4000), gang_replicas);
  gang.priority = 10;
  gang.groups[0].topology.gang_level = "rack";
  return builder.Job(gang).Build();
}

TEST(PreemptSearchTest, FreesTheCheapestNodesOfOneRack) {
  absl::StatusOr<Decisions> d = Schedule(TwoFullRacks(2), PreemptingPolicy());
  ASSERT_TRUE(d.ok()) << d.status();
  std::vector<std::string> victims;
  int64_t lost = 0;
  for (const PreemptDecision& p : d->preemptions) {
    victims.push_back(p.job);
    lost += p.lost_milli_gpu_seconds;
  }
  EXPECT_THAT(victims, ::testing::ElementsAre("a0-0", "a0-1", "a0-2", "a0-3", "a1-0", "a1-1",
                                              "a1-2", "a1-3"));
  EXPECT_EQ(lost, 4 * (160'000 + 1'060'000));
  const StartDecision* start = FindStart(*d, "gang");
  ASSERT_NE(start, nullptr);
  ASSERT_EQ(start->placements.size(), 2u);
  EXPECT_EQ(start->placements[0].node.substr(0, 1), "a");
  EXPECT_EQ(start->placements[1].node.substr(0, 1), "a");
  // One plan simulated, then the real eviction.
  EXPECT_EQ(d->counters.preemption_plans, 1);
}

// A gang of four 4-GPU replicas in one rack of three nodes can never fit: nothing is simulated.
TEST(PreemptSearchTest, NoSimulationWhenNoRackCouldHoldTheGang) {
  absl::StatusOr<Decisions> d = Schedule(TwoFullRacks(4), PreemptingPolicy());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());
  EXPECT_EQ(d->counters.preemption_plans, 0);
  EXPECT_NE(FindPending(*d, "gang"), nullptr);
}

// The plan budget bounds the search: with none left, nothing is evicted.
TEST(PreemptSearchTest, BudgetBoundsTheSearch) {
  Policy policy = PreemptingPolicy();
  policy.budgets.max_preemption_plans = 1;
  // Two gangs: the first spends the only plan, the second finds the budget spent.
  Snapshot snapshot = TwoFullRacks(2);
  Job second = snapshot.jobs.back();
  second.id = "gang2";
  snapshot.jobs.push_back(second);
  absl::StatusOr<Decisions> d = Schedule(snapshot, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->counters.preemption_plans, 1);
  EXPECT_NE(FindStart(*d, "gang"), nullptr);
  EXPECT_NE(FindPending(*d, "gang2"), nullptr);
  EXPECT_TRUE(d->counters.budget_exhausted);
}

// A queue limit, not room, stops the job: q may hold 12 GPUs and holds 12 (one-GPU jobs on n0-n2,
// 12 candidates), n3 is empty. The job (2 GPUs) needs 2,000 milli-GPUs of q's usage back: the
// two cheapest jobs go (r05 and r09 checkpointed at 9,990, the others at 1,000), found without
// a room plan, in one simulation.
TEST(PreemptSearchTest, QueueLimitMetByTheCheapestJobsOfTheQueue) {
  SnapshotBuilder builder;
  Queue q = ::gpupool::testing::MakeQueue("q");
  q.quotas = {::gpupool::testing::MakeLimit("*", 12'000)};
  builder.Now(10'000).Model("A100").Queue(q);
  for (int n = 0; n < 4; ++n) builder.Node(MakeNode("n" + std::to_string(n), "A100", 4));
  for (int k = 0; k < 12; ++k) {
    const std::string id = (k < 10 ? "r0" : "r") + std::to_string(k);
    builder.Job(
        Running(id, "n" + std::to_string(k / 4), {k % 4}, k == 5 || k == 9 ? 9'990 : 1'000));
  }
  const Snapshot snapshot = builder.Job(Urgent("urgent", 2000)).Build();
  absl::StatusOr<Decisions> d = Schedule(snapshot, PreemptingPolicy());
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->preemptions.size(), 2u);
  EXPECT_EQ(d->preemptions[0].job, "r05");
  EXPECT_EQ(d->preemptions[1].job, "r09");
  EXPECT_NE(FindStart(*d, "urgent"), nullptr);
  EXPECT_EQ(d->counters.preemption_plans, 1);
}

// The limit stops the job, and evicting its queue's jobs to pass the limit would not give it
// room either: q may hold 4 GPUs and holds 4 ("small" on n0, "mid" on n1); queue p holds the
// rest of each node, 3 GPUs of n0 and 1 of n1. "urgent" (4 GPUs on one node) would pass the limit
// with small and mid gone, but no node would then have 4 free GPUs. Its reason is its own try's,
// the queue limit, as the next cycle gives it; not the room the failed plan's simulation lacked.
// So a blocked job's drain (preemption.drain_blocked_jobs, for capacity reasons only) does not
// hold or drain anything for it.
TEST(PreemptSearchTest, AFailedPlanLeavesTheReasonOfTheJobsOwnTry) {
  Queue q = ::gpupool::testing::MakeQueue("q");
  q.quotas = {::gpupool::testing::MakeLimit("*", 4'000)};
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(10'000)
                                .Model("A100")
                                .Node(MakeNode("n0", "A100", 4))
                                .Node(MakeNode("n1", "A100", 4))
                                .Queue(q)
                                .Queue("p")
                                .Job(Running("small", "n0", {0}, 9'990))
                                .Job(Running("o1", "n0", {1, 2, 3}, 9'990, "p"))
                                .Job(Running("mid", "n1", {0, 1, 2}, 9'990))
                                .Job(Running("o2", "n1", {3}, 9'990, "p"))
                                .Job(Urgent("urgent", 4000))
                                .Build();
  for (int32_t drain : {0, 1}) {
    SCOPED_TRACE(::testing::Message() << "drain_blocked_jobs " << drain);
    Policy policy = PreemptingPolicy();
    policy.preemption.drain_blocked_jobs = drain;
    absl::StatusOr<Decisions> d = Schedule(snapshot, policy);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_TRUE(d->preemptions.empty());
    EXPECT_TRUE(d->reservations.empty());
    const PendingDecision* pending = FindPending(*d, "urgent");
    ASSERT_NE(pending, nullptr);
    EXPECT_EQ(pending->reason, PendingReason::kQueueLimit);
    EXPECT_EQ(pending->queue, "q");
    EXPECT_EQ(pending->gpu_model, "*");
    EXPECT_EQ(pending->shortfall_milli, 4000);
  }
}

// The greedy search's estimate is optimistic about isolation, and its last resort mends that.
// Queue q never shares a node (exclusive-node); n1-n3 each run one job of queue "other" beside
// three of q's priority-0 jobs, checkpointed 10 s ago; n4 runs four of q's, checkpointed 100,
// 200, 300 and 400 s ago. "urgent" (q, priority 10, 1 GPU) has 13 candidates, more than the
// exact search takes, so the search builds one greedy plan: the cheapest job of n1, then grown
// by the cheapest of n2 and of n3. None places the job (the other job stays on each of those
// nodes). The last resort evicts all 13 at once: the job goes to n4; the victims elsewhere are
// dropped, then n4's costliest are taken back one by one while it still places, and only the
// cheapest, n4-0, goes: 1,000 x (100 + 60 restore).
TEST(PreemptSearchTest, TheGreedySearchFallsBackOnEveryCandidateWhenItsPlansDoNotPlace) {
  Queue q = ::gpupool::testing::MakeQueue("q");
  q.isolation = Isolation::kExclusiveNode;
  SnapshotBuilder builder;
  builder.Now(10'000).Model("A100").Queue(q).Queue("other");
  for (int n = 1; n <= 4; ++n) {
    const std::string node = "n" + std::to_string(n);
    builder.Node(MakeNode(node, "A100", 4));
    for (int32_t g = 0; g < 4; ++g) {
      const std::string id = node + "-" + std::to_string(g);
      if (n < 4 && g == 3) {
        builder.Job(Running(id, node, {g}, 9'990, "other"));
      } else {
        builder.Job(Running(id, node, {g}, n < 4 ? 9'990 : 9'900 - 100 * g));
      }
    }
  }
  const Snapshot snapshot = builder.Job(Urgent("urgent", 1000)).Build();
  absl::StatusOr<Decisions> d = Schedule(snapshot, PreemptingPolicy());
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].job, "n4-0");
  EXPECT_EQ(d->preemptions[0].lost_milli_gpu_seconds, 1000 * (100 + 60));
  const StartDecision* start = FindStart(*d, "urgent");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->placements[0].node, "n4");
  EXPECT_EQ(start->placements[0].gpus, (std::vector<int32_t>{0}));
  // The greedy plan and its two growths; every candidate; n4's four; three take-backs.
  EXPECT_EQ(d->counters.preemption_plans, 3 + 1 + 1 + 3);
}

// --- Reclaim across queues (preemption.reclaim_across_queues). ---

Policy ReclaimingPolicy() {
  Policy policy = PreemptingPolicy();
  policy.preemption.reclaim_across_queues = true;
  return policy;
}

Queue QueueWithGuarantee(std::string id, int64_t guaranteed_milli) {
  Queue queue = ::gpupool::testing::MakeQueue(std::move(id));
  Quota quota;
  quota.guaranteed_milli = guaranteed_milli;
  queue.quotas.push_back(quota);
  return queue;
}

Job PendingIn(std::string id, std::string queue, int64_t gpu_milli) {
  Job job = MakePendingJob(std::move(id), std::move(queue), GpuRequest(gpu_milli));
  job.submit_time = 900;
  return job;
}

// Queue "owner" is guaranteed the whole 8-GPU node n1 but idle until its job "o" (8 GPUs)
// arrives; "borrower" (no guarantee) runs "b" on all of n1.
Snapshot OwnerAndBorrower() {
  return SnapshotBuilder()
      .Now(1000)
      .Model("A100")
      .Node(MakeNode("n1", "A100", 8))
      .Queue(QueueWithGuarantee("owner", 8000))
      .Queue("borrower")
      .Job(Running("b", "n1", {0, 1, 2, 3, 4, 5, 6, 7}, 900, "borrower"))
      .Job(PendingIn("o", "owner", 8000))
      .Build();
}

// Queue "owner" is guaranteed the whole 8-GPU node but idle; "borrower" (no guarantee) runs an
// 8-GPU job on it. When owner's job arrives, owner's entitlement is 8000 and borrower's 0, so the
// borrowed GPUs come back: owner reclaims within its guarantee.
TEST(ReclaimTest, QueueUnderItsGuaranteeReclaimsFromABorrower) {
  const Snapshot snapshot = OwnerAndBorrower();
  absl::StatusOr<Decisions> d = Schedule(snapshot, ReclaimingPolicy());
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].job, "b");
  EXPECT_THAT(d->preemptions[0].reason, ::testing::HasSubstr("queue borrower holds 8000"));
  EXPECT_NE(FindStart(*d, "o"), nullptr);
  // The fair share behind it, reported per queue ("*" rows).
  ASSERT_GE(d->queue_shares.size(), 2u);
  EXPECT_EQ(d->queue_shares[0].queue, "borrower");
  EXPECT_EQ(d->queue_shares[0].gpu_model, "*");
  EXPECT_EQ(d->queue_shares[0].entitlement_milli, 0);
  EXPECT_EQ(d->queue_shares[0].usage_milli, 8000);
}

// Same pool with reclaim off: nothing crosses queues.
TEST(ReclaimTest, OffUnlessAskedFor) {
  const Snapshot snapshot = OwnerAndBorrower();
  absl::StatusOr<Decisions> d = Schedule(snapshot, PreemptingPolicy());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());
}

// A queue within its guarantee keeps it: "guarded" is guaranteed 8000 and uses 8000, so a job
// of "other" (no guarantee, borrowing) cannot take any of it.
TEST(ReclaimTest, UsageWithinAGuaranteeIsNeverTakenForBorrowing) {
  Snapshot snapshot = SnapshotBuilder()
                          .Now(1000)
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8))
                          .Queue(QueueWithGuarantee("guarded", 8000))
                          .Queue("other")
                          .Job(Running("g", "n1", {0, 1, 2, 3, 4, 5, 6, 7}, 900, "guarded"))
                          .Job(PendingIn("x", "other", 4000))
                          .Build();
  absl::StatusOr<Decisions> d = Schedule(snapshot, ReclaimingPolicy());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());
  EXPECT_NE(FindPending(*d, "x"), nullptr);
}

// No loops. Two equal queues without guarantees share an 8-GPU node: each is entitled to 4000
// when both want it. "a" holds all 8 GPUs.
//   - With one 8-GPU job, evicting it would leave "a" at 0, 4000 below its entitlement, while
//     "b" would sit at its entitlement: "b" would end up further above its entitlement than
//     "a", which could then evict it back. Not allowed.
//   - With two 4-GPU jobs, evicting one leaves both at their entitlement: allowed, and the
//     cheaper one goes.
TEST(ReclaimTest, NoPreemptionThatCouldBeUndone) {
  {
    Snapshot snapshot = SnapshotBuilder()
                            .Now(1000)
                            .Model("A100")
                            .Node(MakeNode("n1", "A100", 8))
                            .Queue("a")
                            .Queue("b")
                            .Job(Running("big", "n1", {0, 1, 2, 3, 4, 5, 6, 7}, 900, "a"))
                            .Job(PendingIn("want", "b", 4000))
                            .Build();
    absl::StatusOr<Decisions> d = Schedule(snapshot, ReclaimingPolicy());
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_TRUE(d->preemptions.empty());
  }
  {
    Snapshot snapshot = SnapshotBuilder()
                            .Now(1000)
                            .Model("A100")
                            .Node(MakeNode("n1", "A100", 8))
                            .Queue("a")
                            .Queue("b")
                            .Job(Running("old", "n1", {0, 1, 2, 3}, 100, "a"))
                            .Job(Running("new", "n1", {4, 5, 6, 7}, 900, "a"))
                            .Job(PendingIn("want", "b", 4000))
                            .Build();
    absl::StatusOr<Decisions> d = Schedule(snapshot, ReclaimingPolicy());
    ASSERT_TRUE(d.ok()) << d.status();
    ASSERT_EQ(d->preemptions.size(), 1u);
    EXPECT_EQ(d->preemptions[0].job, "new");
    // And the next cycle, with the decisions applied, changes nothing.
    Snapshot next = snapshot;
    ASSERT_TRUE(ApplyDecisions(*d, next).ok());
    absl::StatusOr<Decisions> again = Schedule(next, ReclaimingPolicy());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(again->preemptions.empty());
    EXPECT_TRUE(again->starts.empty());
  }
}

// Queue a runs x1-x3 on GPUs 0-2 of the 4-GPU node n1, queue b runs low (priority 0) on GPU 3;
// b's want (priority 5, 2 GPUs) waits. a is above its entitlement, b below. With `spare_node`,
// an empty 1-GPU node n2 joins the pool.
Snapshot OwnVictimAndReclaim(bool spare_node) {
  SnapshotBuilder b;
  b.Now(1000).Model("A100").Node(MakeNode("n1", "A100", 4));
  if (spare_node) b.Node(MakeNode("n2", "A100", 1));
  b.Queue("a").Queue("b");
  b.Job(Running("x1", "n1", {0}, 900, "a"));
  b.Job(Running("x2", "n1", {1}, 900, "a"));
  b.Job(Running("x3", "n1", {2}, 900, "a"));
  b.Job(Running("low", "n1", {3}, 900, "b"));
  Job want = PendingIn("want", "b", 2000);
  want.priority = 5;
  b.Job(want);
  return b.Build();
}

// The no-loop rule counts a victim of the job's own queue off the job's side only if it stays
// off: one that would start again at once elsewhere frees nothing for good (docs/engine.md,
// stage 6, "Across queues").
TEST(ReclaimTest, AnOwnVictimCountsOnlyIfItStaysOff) {
  {
    // Entitlements 2000 each. want takes low's GPU and one of a's: b then holds 2000 (0 over),
    // a 2000 (0 over); low has nowhere to go.
    const Snapshot snapshot = OwnVictimAndReclaim(false);
    absl::StatusOr<Decisions> d = Schedule(snapshot, ReclaimingPolicy());
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_NE(FindStart(*d, "want"), nullptr) << ::gpupool::testing::DecisionsToText(*d);
    ASSERT_EQ(d->preemptions.size(), 2u);
    EXPECT_EQ(d->preemptions[0].job, "low");
    EXPECT_EQ(d->preemptions[1].job, "x1");
    EXPECT_EQ(FindStart(*d, "low"), nullptr);
  }
  {
    // Entitlements 2500 each. Evicted, low would start again on n2, and b would hold 3000 (500
    // over) against a's 2000 (500 under): the no-loop rule refuses, and want waits.
    const Snapshot snapshot = OwnVictimAndReclaim(true);
    absl::StatusOr<Decisions> d = Schedule(snapshot, ReclaimingPolicy());
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_TRUE(d->preemptions.empty()) << ::gpupool::testing::DecisionsToText(*d);
    EXPECT_TRUE(d->starts.empty());
    EXPECT_NE(FindPending(*d, "want"), nullptr);
  }
}

// --- Oracle: every victim subset, on 2 to 4 nodes with up to 8 running jobs. ---

uint64_t Next(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
int64_t Uniform(uint64_t& state, int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(Next(state) % static_cast<uint64_t>(hi - lo + 1));
}

int64_t OracleCost(const Job& job, int64_t now) {
  int64_t milli = 0;
  for (const ReplicaPlacement& p : job.placements) {
    milli += static_cast<int64_t>(p.gpus.size()) * job.groups[0].request.MilliPerGpu();
  }
  const int64_t since =
      std::max(*job.start_time, job.checkpointing.last_checkpoint_time.value_or(0));
  return milli * (now - since + job.checkpointing.restore_time_s);
}

// A victim set as the planner ranks it: total price, number of victims, priority of the
// highest-priority victim, and the victims' ids (sorted).
struct SetKey {
  int64_t cost = 0;
  int32_t count = 0;
  int32_t top_priority = -1;
  std::vector<std::string> ids;
};

// Is `a` better than `b` in `order`?
bool Better(const SetKey& a, const SetKey& b, VictimOrder order) {
  if (order == VictimOrder::kLowestPriorityFirst) {
    return std::tie(a.top_priority, a.cost, a.count, a.ids) <
           std::tie(b.top_priority, b.cost, b.count, b.ids);
  }
  return std::tie(a.cost, a.count, a.top_priority, a.ids) <
         std::tie(b.cost, b.count, b.top_priority, b.ids);
}

// The planner's choice must be the best feasible set in the policy's victim order, exactly
// (with up to 8 candidates the planner searches every subset).
void CheckPlannerAgainstOracle(VictimOrder order) {
  int checked_with_preemption = 0;
  int differs_between_orders = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    uint64_t rng = seed;
    const int nodes = static_cast<int>(Uniform(rng, 2, 4));
    SnapshotBuilder builder;
    builder.Now(10'000).Model("A100").Queue("q");
    std::vector<std::vector<int>> free_gpus(nodes);
    for (int n = 0; n < nodes; ++n) {
      builder.Node(MakeNode("n" + std::to_string(n), "A100", 4));
      free_gpus[n] = {0, 1, 2, 3};
    }
    std::vector<Job> running;
    const int jobs = static_cast<int>(Uniform(rng, 1, 8));
    for (int k = 0; k < jobs; ++k) {
      const int n = static_cast<int>(Uniform(rng, 0, nodes - 1));
      const int want = static_cast<int>(Uniform(rng, 1, 2));
      if (static_cast<int>(free_gpus[n].size()) < want) continue;
      std::vector<int32_t> gpus(free_gpus[n].begin(), free_gpus[n].begin() + want);
      free_gpus[n].erase(free_gpus[n].begin(), free_gpus[n].begin() + want);
      Job job =
          Running("r" + std::to_string(k), "n" + std::to_string(n), gpus, Uniform(rng, 0, 9'000));
      job.start_time = Uniform(rng, 0, 5'000);
      job.checkpointing.restore_time_s = Uniform(rng, 0, 300);
      job.priority = static_cast<int32_t>(Uniform(rng, 0, 4));
      job.preemptible = Uniform(rng, 0, 9) != 0;
      running.push_back(job);
    }
    Job urgent = Urgent("urgent", Uniform(rng, 1, 4) * 1000, /*priority=*/3);
    for (const Job& job : running) builder.Job(job);
    builder.Job(urgent);
    const Snapshot snapshot = builder.Build();

    Policy policy = PreemptingPolicy();
    policy.preemption.victim_order = order;
    // The planner's choice is the first pass's (settling may then let a victim that outranks
    // another running job take its place: docs/engine.md, "Settling").
    ASSERT_TRUE(ValidateSnapshot(snapshot).ok());
    const std::optional<Decisions> d = internal::RunCyclePass(snapshot, policy);
    if (FindStart(*d, "urgent") != nullptr && d->preemptions.empty()) continue;  // no need

    // Every subset of eligible victims, checked by scheduling the snapshot without them.
    std::vector<const Job*> eligible;
    for (const Job& job : running) {
      // A job that resumed from a checkpoint taken before its start, and has not checkpointed
      // since, is no victim (no job loses the same work twice: docs/engine.md, stage 6).
      const bool resumed = *job.checkpointing.last_checkpoint_time < *job.start_time;
      if (job.preemptible && job.priority < urgent.priority && !resumed) {
        eligible.push_back(&job);
      }
    }
    std::optional<SetKey> best, best_other;
    const VictimOrder other = order == VictimOrder::kCheapestFirst
                                  ? VictimOrder::kLowestPriorityFirst
                                  : VictimOrder::kCheapestFirst;
    for (uint32_t mask = 1; mask < (1u << eligible.size()); ++mask) {
      Snapshot without = snapshot;
      SetKey key;
      for (size_t i = 0; i < eligible.size(); ++i) {
        if (!(mask & (1u << i))) continue;
        key.top_priority = std::max(key.top_priority, eligible[i]->priority);
        key.cost += OracleCost(*eligible[i], snapshot.now);
        ++key.count;
        key.ids.push_back(eligible[i]->id);
        std::erase_if(without.jobs, [&](const Job& j) { return j.id == eligible[i]->id; });
      }
      std::sort(key.ids.begin(), key.ids.end());
      absl::StatusOr<Decisions> trial = Schedule(without, Policy{});
      ASSERT_TRUE(trial.ok()) << trial.status();
      if (FindStart(*trial, "urgent") == nullptr) continue;
      if (!best || Better(key, *best, order)) best = key;
      if (!best_other || Better(key, *best_other, other)) best_other = key;
    }
    SetKey chosen;
    for (const PreemptDecision& p : d->preemptions) {
      for (const Job& job : running) {
        if (job.id == p.job) chosen.top_priority = std::max(chosen.top_priority, job.priority);
      }
      chosen.cost += p.lost_milli_gpu_seconds;
      ++chosen.count;
      chosen.ids.push_back(p.job);
    }
    if (!best) {
      EXPECT_TRUE(d->preemptions.empty());
      EXPECT_EQ(FindStart(*d, "urgent"), nullptr);
    } else {
      ++checked_with_preemption;
      if (best->ids != best_other->ids) ++differs_between_orders;
      EXPECT_NE(FindStart(*d, "urgent"), nullptr);
      EXPECT_EQ(chosen.ids, best->ids) << "cost " << chosen.cost << " vs " << best->cost;
    }
  }
  // The generator must exercise the interesting case, not only trivial ones, including cases
  // where the two orders choose differently.
  EXPECT_GT(checked_with_preemption, 30);
  EXPECT_GT(differs_between_orders, 3);
}

TEST(PreemptOracleTest, CheapestFirstChoosesTheBestFeasibleVictimSet) {
  CheckPlannerAgainstOracle(VictimOrder::kCheapestFirst);
}

TEST(PreemptOracleTest, LowestPriorityFirstChoosesTheBestFeasibleVictimSet) {
  CheckPlannerAgainstOracle(VictimOrder::kLowestPriorityFirst);
}

}  // namespace
}  // namespace gpupool
