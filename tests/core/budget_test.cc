// GPU-hour budgets (Queue::budget_milli_gpu_seconds): a queue that has spent its budget for the
// period keeps running on idle GPUs but loses its guarantee, is reclaimed first, and its pending
// jobs say why.
#include <string>

#include "gmock/gmock.h"
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
using ::testing::HasSubstr;

constexpr int64_t kGpuHour = 3'600'000;  // milli-GPU-seconds

Queue Guaranteed(std::string id, int64_t guaranteed_milli, std::string parent = "") {
  Queue queue{.id = std::move(id), .parent = std::move(parent)};
  queue.quotas.push_back({.gpu_model = kAnyGpuModel, .guaranteed_milli = guaranteed_milli});
  return queue;
}

Policy Reclaim() {
  Policy policy;
  policy.preemption.enabled = true;
  policy.preemption.reclaim_across_queues = true;
  return policy;
}

const QueueShare* Share(const Decisions& decisions, const std::string& queue) {
  for (const QueueShare& share : decisions.queue_shares) {
    if (share.queue == queue && share.gpu_model == kAnyGpuModel) return &share;
  }
  return nullptr;
}

// One node of 4 GPUs. "team-a" is guaranteed all 4 and runs 4 one-GPU jobs; "team-b" has no
// guarantee and one pending one-GPU job. Within budget, team-a's guarantee protects its work;
// over budget (`used` of 10 GPU-hours), its guarantee is gone, the two queues share the surplus
// 2 and 2, and team-b reclaims one GPU from team-a.
Snapshot FullPool(int64_t used_milli_gpu_seconds) {
  Queue a = Guaranteed("team-a", 4000);
  a.budget_milli_gpu_seconds = 10 * kGpuHour;
  a.budget_used_milli_gpu_seconds = used_milli_gpu_seconds;
  SnapshotBuilder builder;
  builder.Now(10'000).Model("A100").Node(MakeNode("n1", "A100", 4)).Queue(a).Queue("team-b");
  for (int i = 0; i < 4; ++i) {
    builder.Job(MakeRunningJob("a" + std::to_string(i), "team-a", GpuRequest(1000),
                               {Placement("n1", {i})}, /*start_time=*/1000 + i));
  }
  builder.Job(MakePendingJob("b0", "team-b", GpuRequest(1000)));
  return builder.Build();
}

TEST(BudgetTest, WithinBudgetTheGuaranteeProtectsTheQueue) {
  absl::StatusOr<Decisions> d = Schedule(FullPool(9 * kGpuHour), Reclaim());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());
  ASSERT_NE(Share(*d, "team-a"), nullptr);
  EXPECT_EQ(Share(*d, "team-a")->guaranteed_milli, 4000);
  EXPECT_FALSE(Share(*d, "team-a")->over_budget);
  const PendingDecision* pending = FindPending(*d, "b0");
  ASSERT_NE(pending, nullptr);
  EXPECT_THAT(pending->detail, ::testing::Not(HasSubstr("budget")));
}

TEST(BudgetTest, OverBudgetQueueLosesItsGuaranteeAndIsReclaimed) {
  // Used exactly the budget: over (the budget is spent).
  absl::StatusOr<Decisions> d = Schedule(FullPool(10 * kGpuHour), Reclaim());
  ASSERT_TRUE(d.ok()) << d.status();
  const QueueShare* a = Share(*d, "team-a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->guaranteed_milli, 0);
  EXPECT_TRUE(a->over_budget);
  EXPECT_EQ(a->entitlement_milli, 3000);  // its demand 4 against b's 1: surplus 3 + 1
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].for_job, "b0");
  EXPECT_NE(FindStart(*d, "b0"), nullptr);
}

TEST(BudgetTest, OverBudgetQueueStillRunsOnIdleGpus) {
  Snapshot snapshot = FullPool(20 * kGpuHour);
  snapshot.jobs.erase(snapshot.jobs.begin() + 3);  // a3 ended: one GPU idle
  snapshot.jobs.push_back(MakePendingJob("a-next", "team-a", GpuRequest(1000)));
  snapshot.jobs.back().submit_time = 0;
  // Under fair-share queue order b0 takes the idle GPU first (team-a is above its entitlement);
  // a-next waits and is told why.
  Policy fair;
  fair.queue_order = QueueOrder::kFairShare;
  absl::StatusOr<Decisions> d = Schedule(snapshot, fair);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->starts.size(), 1u);
  const PendingDecision* pending = FindPending(*d, "a-next");
  ASSERT_NE(pending, nullptr);
  EXPECT_THAT(pending->detail,
              HasSubstr("queue team-a is over its GPU-hour budget (20.00 of 10.00 GPU-hours "
                        "used this period), so it has no guarantee"));

  // Without team-b's job, the idle GPU goes to the over-budget queue.
  std::erase_if(snapshot.jobs, [](const Job& job) { return job.id == "b0"; });
  d = Schedule(snapshot, fair);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NE(FindStart(*d, "a-next"), nullptr);
}

// A parent's budget covers its subtree: the child loses its guarantee too, and its pending jobs
// name the parent.
TEST(BudgetTest, ParentOverBudgetTakesTheChildsGuarantee) {
  Snapshot snapshot = FullPool(0);
  Queue org{.id = "org", .budget_milli_gpu_seconds = kGpuHour};
  org.budget_used_milli_gpu_seconds = 2 * kGpuHour;
  snapshot.queues.push_back(org);
  snapshot.queues[0].parent = "org";
  snapshot.jobs.push_back(MakePendingJob("a-next", "team-a", GpuRequest(1000)));
  absl::StatusOr<Decisions> d = Schedule(snapshot, Reclaim());
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_NE(Share(*d, "team-a"), nullptr);
  EXPECT_EQ(Share(*d, "team-a")->guaranteed_milli, 0);
  EXPECT_TRUE(Share(*d, "team-a")->over_budget);
  const PendingDecision* pending = FindPending(*d, "a-next");
  ASSERT_NE(pending, nullptr);
  EXPECT_THAT(pending->detail, HasSubstr("queue org is over its GPU-hour budget (2.00 of 1.00 "
                                         "GPU-hours used this period), so queue team-a has no "
                                         "guarantee"));
}

// Four GPUs: team-a (budget of one GPU-hour, spent when `a_over_budget`) and team-b (no guarantee)
// each run two one-GPU jobs, team-b's just checkpointed; team-c, guaranteed two GPUs, waits
// with two jobs.
Snapshot ThreeTeams(bool a_over_budget) {
  Queue a{.id = "team-a", .budget_milli_gpu_seconds = kGpuHour};
  if (a_over_budget) a.budget_used_milli_gpu_seconds = kGpuHour;
  SnapshotBuilder builder;
  builder.Now(10'000).Model("A100").Node(MakeNode("n1", "A100", 4)).Queue(a).Queue("team-b");
  builder.Queue(Guaranteed("team-c", 2000));
  for (int i = 0; i < 2; ++i) {
    builder.Job(MakeRunningJob("a" + std::to_string(i), "team-a", GpuRequest(1000),
                               {Placement("n1", {i})}, /*start_time=*/0));
    Job b = MakeRunningJob("b" + std::to_string(i), "team-b", GpuRequest(1000),
                           {Placement("n1", {2 + i})}, /*start_time=*/0);
    b.checkpointing = {.interval_s = 600, .last_checkpoint_time = 9'990};
    builder.Job(b);
  }
  builder.Job(MakePendingJob("c0", "team-c", GpuRequest(1000)));
  builder.Job(MakePendingJob("c1", "team-c", GpuRequest(1000)));
  return builder.Build();
}

// Reclaim takes over-budget queues' jobs first, even when a within-budget queue's are cheaper.
// 4 GPUs: "team-a" (over budget) and "team-b" each run two one-GPU jobs; team-a's would lose
// 10,000 s of work, team-b's 10 s (they just checkpointed). "team-c", guaranteed two GPUs, has
// two pending one-GPU jobs, so a and b are each entitled to one GPU and hold one more: the first
// reclaim (for c0) may take from either, and the second then takes from the other.
TEST(BudgetTest, OverBudgetQueueIsReclaimedFirst) {
  auto victim_for = [](const Decisions& d, const std::string& job) -> std::string {
    for (const PreemptDecision& p : d.preemptions) {
      if (p.for_job == job) return p.job;
    }
    return "(none)";
  };
  absl::StatusOr<Decisions> d = Schedule(ThreeTeams(/*a_over_budget=*/false), Reclaim());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(victim_for(*d, "c0"), "b0");  // the cheapest
  EXPECT_EQ(victim_for(*d, "c1"), "a0");
  d = Schedule(ThreeTeams(/*a_over_budget=*/true), Reclaim());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(victim_for(*d, "c0"), "a0");  // over budget goes first, though dearer
  EXPECT_EQ(victim_for(*d, "c1"), "b0");
}

// Report-only (policy fair_share.gpu_hour_budgets): the same over-budget pool as above, but the
// queue keeps its guarantee of 4 GPUs, so nothing of team-a's is reclaimed; the budget is still
// reported in queue_shares and in the detail of team-a's pending job.
TEST(BudgetTest, ReportOnlyKeepsTheGuaranteeAndReportsTheBudget) {
  Policy policy = Reclaim();
  policy.fair_share.gpu_hour_budgets = BudgetEnforcement::kReportOnly;
  absl::StatusOr<Decisions> d = Schedule(FullPool(20 * kGpuHour), policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());
  const QueueShare* a = Share(*d, "team-a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->guaranteed_milli, 4000);
  EXPECT_TRUE(a->over_budget);

  // A pending job of the over-budget queue is told, with the figures, that nothing follows.
  Snapshot snapshot = FullPool(20 * kGpuHour);
  snapshot.jobs.push_back(MakePendingJob("a-next", "team-a", GpuRequest(1000)));
  d = Schedule(snapshot, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  const PendingDecision* pending = FindPending(*d, "a-next");
  ASSERT_NE(pending, nullptr);
  EXPECT_THAT(pending->detail,
              HasSubstr("; queue team-a is over its GPU-hour budget (20.00 of 10.00 GPU-hours "
                        "used this period), which the policy only reports "
                        "(fair_share.gpu_hour_budgets: report-only)"));
}

// Report-only takes away the over-budget queue's place at the front of the victim order: the
// over-budget pool of OverBudgetQueueIsReclaimedFirst loses the same victims as the pool within
// budget, the cheapest first.
TEST(BudgetTest, ReportOnlyDoesNotReclaimOverBudgetQueuesFirst) {
  Policy policy = Reclaim();
  policy.fair_share.gpu_hour_budgets = BudgetEnforcement::kReportOnly;
  absl::StatusOr<Decisions> d = Schedule(ThreeTeams(/*a_over_budget=*/true), policy);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->preemptions.size(), 2u);
  EXPECT_EQ(d->preemptions[0].job, "a0");
  EXPECT_EQ(d->preemptions[0].for_job, "c1");
  EXPECT_EQ(d->preemptions[1].job, "b0");
  EXPECT_EQ(d->preemptions[1].for_job, "c0");  // the cheapest, as within budget
}

TEST(BudgetTest, ZeroBudgetIsSpentFromTheStart) {
  Snapshot snapshot = FullPool(0);
  snapshot.queues[0].budget_milli_gpu_seconds = 0;
  absl::StatusOr<Decisions> d = Schedule(snapshot, Reclaim());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(Share(*d, "team-a")->over_budget);
}

TEST(BudgetTest, NegativeUsageIsRefused) {
  Snapshot snapshot = FullPool(-1);
  absl::Status status = ValidateSnapshot(snapshot);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("queues[team-a].budget_used_milli_gpu_seconds"));
}

TEST(BudgetTest, NegativeBudgetIsRefused) {
  Snapshot snapshot = FullPool(0);
  snapshot.queues[0].budget_milli_gpu_seconds = -5;
  absl::Status status = ValidateSnapshot(snapshot);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("queues[team-a].budget_milli_gpu_seconds"));
}

}  // namespace
}  // namespace gpupool
