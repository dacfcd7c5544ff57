// Queues that do not lend (can_lend: false): their unused guarantee is held for their subtree.
// Worked examples (a per-model guarantee, partial use, a "*" guarantee, nested queues, elastic
// growth, budgets, the fair-share rows), then a seeded check against an oracle written from
// docs/fair-share.md's rule on small random trees.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gpupool/schedule.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "tests/core/lending_helpers.h"
#include "tests/core/schedule_helpers.h"

namespace gpupool::schedule_testing {
namespace {

// One 8-GPU node; queue a is guaranteed 4 GPUs and does not lend them, b has no guarantee. b's
// 6-GPU job would use 2 of a's 4: it waits, queue-limit naming a. b's 4-GPU job starts. With
// can_lend true, the 6-GPU job starts.
TEST(LendingTest, OtherQueuesDoNotStartOnAnUnlentGuarantee) {
  auto snapshot_with = [](bool can_lend, int64_t gpus) {
    Queue a = Lender("a", 4000);
    a.can_lend = can_lend;
    return SnapshotBuilder()
        .Model("A100")
        .Node(MakeNode("n1", "A100", 8))
        .Queue(a)
        .Queue("b")
        .Job(MakePendingJob("j", "b", GpuRequest(gpus * 1000)))
        .Build();
  };
  const Decisions waits = ScheduleOk(snapshot_with(false, 6));
  EXPECT_TRUE(waits.starts.empty());
  const PendingDecision* p = ExpectPending(waits, "j", PendingReason::kQueueLimit);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->queue, "a");
  EXPECT_EQ(p->gpu_model, "A100");
  EXPECT_EQ(p->shortfall_milli, 2000);
  EXPECT_EQ(p->detail,
            "starting the job (6000 milli-GPUs) would use capacity held for queues that do not "
            "lend their unused guarantee (can_lend: false): of the 8000 milli-GPUs free on A100, "
            "4000 are held for queue a");
  ExpectStart(ScheduleOk(snapshot_with(false, 4)), "j", {At("n1", {0, 1, 2, 3}, 1000)});
  ExpectStart(ScheduleOk(snapshot_with(true, 6)), "j", {At("n1", {0, 1, 2, 3, 4, 5}, 1000)});
}

// a runs 2 GPUs of its 4: it holds the other 2. Of the 6 free, b may take 4, not 5; a's own
// new job may take all 6.
TEST(LendingTest, WhatTheQueueUsesIsNoLongerHeld) {
  auto snapshot_with = [](std::string queue, int64_t gpus) {
    return SnapshotBuilder()
        .Model("A100")
        .Node(MakeNode("n1", "A100", 8))
        .Queue(Lender("a", 4000))
        .Queue("b")
        .Job(Running("ra", "a", "n1", {0, 1}))
        .Job(MakePendingJob("j", queue, GpuRequest(gpus * 1000)))
        .Build();
  };
  EXPECT_EQ(StartedJobs(ScheduleOk(snapshot_with("b", 4))), std::vector<std::string>{"j"});
  EXPECT_TRUE(ScheduleOk(snapshot_with("b", 5)).starts.empty());
  EXPECT_EQ(StartedJobs(ScheduleOk(snapshot_with("a", 6))), std::vector<std::string>{"j"});
}

// A "*" guarantee of 4 holds 4 GPUs of any model: b fills the A100 node (8 of 16 free stay),
// then a job of b on the H100 node would leave 0 free in all: it waits, naming "*".
TEST(LendingTest, AnAllModelsGuaranteeHoldsOnAllModelsTogether) {
  Job second = WithModels(MakePendingJob("second", "b", GpuRequest(8000)), {"H100"});
  second.submit_time = 1;
  const Snapshot snapshot =
      SnapshotBuilder()
          .Model("A100")
          .Model("H100")
          .Node(MakeNode("a1", "A100", 8))
          .Node(MakeNode("h1", "H100", 8))
          .Queue(Lender("a", 4000, "*"))
          .Queue("b")
          .Job(WithModels(MakePendingJob("first", "b", GpuRequest(8000)), {"A100"}))
          .Job(second)
          .Build();
  const Decisions d = ScheduleOk(snapshot);
  EXPECT_EQ(StartedJobs(d), std::vector<std::string>{"first"});
  const PendingDecision* p = ExpectPending(d, "second", PendingReason::kQueueLimit);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->queue, "a");
  EXPECT_EQ(p->gpu_model, "*");
  EXPECT_EQ(p->shortfall_milli, 4000);
}

// a (4, does not lend) has children a1 (2, does not lend) and a2. For b, outside both, a holds
// 4 (a1's 2 inside it, counted once): b may take 4 of 8. For a2, inside a but outside a1, a1
// holds 2: a2 may take 6. a1 may take all 8.
TEST(LendingTest, NestedQueuesThatDoNotLendCountOnce) {
  auto snapshot_with = [](std::string queue, int64_t gpus) {
    return SnapshotBuilder()
        .Model("A100")
        .Node(MakeNode("n1", "A100", 8))
        .Queue(Lender("a", 4000))
        .Queue(Lender("a1", 2000, "A100", "a"))
        .Queue("a2", "a")
        .Queue("b")
        .Job(MakePendingJob("j", queue, GpuRequest(gpus * 1000)))
        .Build();
  };
  for (auto [queue, fits, too_many] :
       {std::tuple<std::string, int64_t, int64_t>{"b", 4, 5}, {"a2", 6, 7}, {"a1", 8, 9}}) {
    SCOPED_TRACE(queue);
    EXPECT_EQ(StartedJobs(ScheduleOk(snapshot_with(queue, fits))), std::vector<std::string>{"j"});
    EXPECT_TRUE(ScheduleOk(snapshot_with(queue, too_many)).starts.empty());
  }
}

// An elastic job of b (1..8 one-GPU replicas) grows until a's 4 are all that is left free.
TEST(LendingTest, ElasticGrowthStopsAtTheHeldCapacity) {
  Job e = MakePendingJob("e", "b", GpuRequest(1000), 8);
  e.groups[0].min_replicas = 1;
  const Decisions d = ScheduleOk(SnapshotBuilder()
                                     .Model("A100")
                                     .Node(MakeNode("n1", "A100", 8))
                                     .Queue(Lender("a", 4000))
                                     .Queue("b")
                                     .Job(e)
                                     .Build());
  const StartDecision* start = FindStart(d, "e");
  ASSERT_NE(start, nullptr) << DecisionsToText(d);
  EXPECT_EQ(start->placements.size(), 4u);
}

// Over its GPU-hour budget under enforcement (the default) a queue has no guarantee, and holds
// nothing; under report-only it keeps its guarantee, and holds it.
TEST(LendingTest, AQueueOverItsEnforcedBudgetHoldsNothing) {
  Queue a = Lender("a", 4000);
  a.budget_milli_gpu_seconds = 1000;
  a.budget_used_milli_gpu_seconds = 1000;
  const Snapshot snapshot = SnapshotBuilder()
                                .Model("A100")
                                .Node(MakeNode("n1", "A100", 8))
                                .Queue(a)
                                .Queue("b")
                                .Job(MakePendingJob("j", "b", GpuRequest(8000)))
                                .Build();
  EXPECT_EQ(StartedJobs(ScheduleOk(snapshot)), std::vector<std::string>{"j"});  // enforced
  Policy report_only;
  report_only.fair_share.gpu_hour_budgets = BudgetEnforcement::kReportOnly;
  EXPECT_TRUE(ScheduleOk(snapshot, report_only).starts.empty());  // the guarantee stands
}

// Fair share holds the unused guarantee too: a, with no demand, is entitled to its 4 GPUs, and
// b only to the other 4 (its demand, 6, is reported as it is). With can_lend true, b is entitled
// to 6 and a to nothing.
TEST(LendingTest, TheUnlentGuaranteeIsNotDividedAmongOtherQueues) {
  auto shares_with = [](bool can_lend) {
    Queue a = Lender("a", 4000);
    a.can_lend = can_lend;
    return ScheduleOk(SnapshotBuilder()
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 8))
                          .Queue(a)
                          .Queue("b")
                          .Job(MakePendingJob("j", "b", GpuRequest(6000)))
                          .Build())
        .queue_shares;
  };
  auto row = [](const std::vector<QueueShare>& rows, const std::string& queue,
                std::string model = "A100") {
    for (const QueueShare& r : rows) {
      if (r.queue == queue && r.gpu_model == model) return r;
    }
    ADD_FAILURE() << "no " << model << " row for " << queue;
    return QueueShare{};
  };
  const std::vector<QueueShare> held = shares_with(false);
  EXPECT_EQ(row(held, "a").entitlement_milli, 4000);
  EXPECT_EQ(row(held, "a").demand_milli, 0);
  EXPECT_EQ(row(held, "a", "*").entitlement_milli, 4000);
  EXPECT_EQ(row(held, "a", "*").demand_milli, 0);
  EXPECT_EQ(row(held, "b").entitlement_milli, 4000);
  EXPECT_EQ(row(held, "b").demand_milli, 6000);
  const std::vector<QueueShare> lent = shares_with(true);
  EXPECT_EQ(row(lent, "a").entitlement_milli, 0);
  EXPECT_EQ(row(lent, "b").entitlement_milli, 6000);
}

// --- Oracle ------------------------------------------------------------------------------------

// Random trees of 4 queues (each a root or a child of an earlier one), each with a random A100
// guarantee of 0-4 GPUs and can_lend false half the time; random running 1-GPU jobs on two
// 8-GPU nodes; one pending job of k GPUs of a random queue. The oracle, from docs/fair-share.md:
// hold(Q) = max(guarantee - subtree usage, sum of hold(R) over the nearest queues R below Q
// that do not lend); the job starts iff free - k >= the sum of hold(Q) over the queues Q that
// do not lend, do not contain the job's queue, and whose nearest ancestor that does not lend
// (if any) contains it. 3,000 seeds.
TEST(LendingTest, StartsExactlyWhenTheOracleLeavesRoom) {
  constexpr int kQueues = 4;
  for (uint32_t seed = 0; seed < 3000; ++seed) {
    std::mt19937 rng(seed);
    auto draw = [&](int32_t lo, int32_t hi) {
      return std::uniform_int_distribution<int32_t>(lo, hi)(rng);
    };
    SnapshotBuilder builder;
    builder.Model("A100").Node(MakeNode("n1", "A100", 8)).Node(MakeNode("n2", "A100", 8));
    const RandomLenders tree(kQueues, rng, builder);
    std::vector<int64_t> usage_own(kQueues, 0);
    int32_t used = 0;
    for (int node = 0; node < 2; ++node) {
      const int32_t taken = draw(0, 8);
      for (int32_t g = 0; g < taken; ++g) {
        const int q = draw(0, kQueues - 1);
        usage_own[q] += 1000;
        builder.Job(Running("r" + std::to_string(node) + "_" + std::to_string(g),
                            RandomLenders::Name(q), "n" + std::to_string(node + 1), {g}));
      }
      used += taken;
    }
    const int job_queue = draw(0, kQueues - 1);
    const int32_t k = draw(1, 8);
    builder.Job(MakePendingJob("j", RandomLenders::Name(job_queue), GpuRequest(k * 1000)));

    const std::vector<int64_t> hold = tree.Holds(usage_own);
    int64_t held = 0;
    for (int q : tree.Holders(job_queue, hold)) held += hold[q];
    const int64_t free = (16 - used) * int64_t{1000};
    const bool expected = free - k * 1000 >= held && k <= 8;
    // A gang of k GPUs must also fit on one node.
    const Snapshot snapshot = builder.Build();
    int32_t room = 0;
    for (int node = 0; node < 2; ++node) {
      int32_t on = 0;
      for (const Job& job : snapshot.jobs) {
        for (const ReplicaPlacement& p : job.placements) {
          if (p.node == "n" + std::to_string(node + 1)) on += static_cast<int32_t>(p.gpus.size());
        }
      }
      room = std::max(room, 8 - on);
    }
    const Decisions d = ScheduleOk(snapshot);
    SCOPED_TRACE("seed " + std::to_string(seed));
    EXPECT_EQ(FindStart(d, "j") != nullptr, expected && k <= room) << DecisionsToText(d);
  }
}

}  // namespace
}  // namespace gpupool::schedule_testing
