// Stage 4: the order in which pending jobs are considered. Each case puts jobs in competition
// for one GPU and reads the order off who starts.
#include <string>
#include <vector>

#include "gpupool/schedule.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace gpupool {
namespace {

using ::gpupool::testing::FindStart;
using ::gpupool::testing::GpuRequest;
using ::gpupool::testing::MakeNode;
using ::gpupool::testing::MakePendingJob;
using ::gpupool::testing::MakeRunningJob;
using ::gpupool::testing::Placement;
using ::gpupool::testing::SnapshotBuilder;
using ::gpupool::testing::StartedJobs;

Job Pending(std::string id, std::string queue, int64_t gpu_milli, int64_t submit_time) {
  Job job = MakePendingJob(std::move(id), std::move(queue), GpuRequest(gpu_milli));
  job.submit_time = submit_time;
  return job;
}

// Who gets the single free GPU of a one-GPU pool under `policy`.
std::string Winner(const std::vector<Job>& jobs, const Policy& policy) {
  SnapshotBuilder builder;
  builder.Now(100'000).Model("A100").Node(MakeNode("n1", "A100", 1)).Queue("q").Queue("r");
  for (const Job& job : jobs) builder.Job(job);
  absl::StatusOr<Decisions> d = Schedule(builder.Build(), policy);
  EXPECT_TRUE(d.ok()) << d.status();
  const std::vector<std::string> started = StartedJobs(*d);
  return started.size() == 1 ? started[0] : "(" + std::to_string(started.size()) + " started)";
}

TEST(OrderTest, PriorityThenFifoByDefault) {
  Job early = Pending("early", "q", 1000, 10);
  Job late_important = Pending("late", "q", 1000, 20);
  late_important.priority = 5;
  EXPECT_EQ(Winner({early, late_important}, Policy{}), "late");
  late_important.priority = 0;
  EXPECT_EQ(Winner({early, late_important}, Policy{}), "early");
}

// 2D-LAS: levels by attained GPU-seconds split at 3,250 and 7,200. "veteran" has run 2 GPUs x
// 2,000 s = 4,000 GPU-seconds (level 1); "fresh" 1 GPU x 100 s (level 0) goes first though it
// was submitted later; within a level, FIFO.
TEST(OrderTest, LeastAttainedServiceByLevelsThenFifo) {
  Policy las;
  las.job_order = JobOrder::kLeastAttainedService;
  Job veteran = Pending("veteran", "q", 2000, 10);
  veteran.attained_service_s = 2000;
  Job fresh = Pending("fresh", "q", 1000, 20);
  fresh.attained_service_s = 100;
  // One GPU cannot hold veteran's 2 GPUs, so use a 2-GPU request for both.
  fresh.groups[0].request.gpu_milli = 2000;
  SnapshotBuilder builder;
  builder.Now(100'000).Model("A100").Node(MakeNode("n1", "A100", 2)).Queue("q");
  absl::StatusOr<Decisions> d = Schedule(builder.Job(veteran).Job(fresh).Build(), las);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(StartedJobs(*d), std::vector<std::string>{"fresh"});
  // Same level (both below 3,250 GPU-seconds): the earlier submission wins.
  veteran.attained_service_s = 1000;  // 2,000 GPU-seconds
  d = Schedule(SnapshotBuilder()
                   .Now(100'000)
                   .Model("A100")
                   .Node(MakeNode("n1", "A100", 2))
                   .Queue("q")
                   .Job(veteran)
                   .Job(fresh)
                   .Build(),
               las);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(StartedJobs(*d), std::vector<std::string>{"veteran"});
}

// Shortest estimated remaining time: 500 s left beats 3,000 s left; no estimate goes last.
TEST(OrderTest, ShortestRemainingFirst) {
  Policy srt;
  srt.job_order = JobOrder::kShortestRemaining;
  Job long_job = Pending("long", "q", 1000, 10);
  long_job.runtime_estimate_s = 4000;
  long_job.attained_service_s = 1000;
  Job short_job = Pending("short", "q", 1000, 20);
  short_job.runtime_estimate_s = 600;
  short_job.attained_service_s = 100;
  Job unknown = Pending("unknown", "q", 1000, 0);
  EXPECT_EQ(Winner({long_job, short_job, unknown}, srt), "short");
  EXPECT_EQ(Winner({long_job, unknown}, srt), "long");
}

// Starvation guard: a job waiting longer than the bound goes before everything younger, even a
// higher priority.
TEST(OrderTest, StarvingJobsFirst) {
  Job old_job = Pending("old", "q", 1000, 1'000);  // waited 99,000 s
  Job urgent = Pending("urgent", "q", 1000, 99'000);
  urgent.priority = 9;
  Policy policy;
  EXPECT_EQ(Winner({old_job, urgent}, policy), "urgent");
  policy.starvation_bound_s = 50'000;
  EXPECT_EQ(Winner({old_job, urgent}, policy), "old");
}

// pending_since is read for pending jobs only (docs/snapshot-format.md, jobs). On a running job a
// host may keep it from before the job started: accepted, and it decides nothing. Here it would
// put "run" 99,000 s past its start of waiting, beyond the starvation bound; "wait" (priority 5)
// evicts "run" (priority 0) with or without it, and only the fingerprint differs.
TEST(OrderTest, ARunningJobsPendingSinceDecidesNothing) {
  Job run = MakeRunningJob("run", "q", GpuRequest(1000), {Placement("n1", {0})},
                           /*start_time=*/90'000);
  run.submit_time = 1'000;
  Job wait = Pending("wait", "q", 1000, 99'000);
  wait.priority = 5;
  Policy policy;
  policy.starvation_bound_s = 50'000;
  policy.preemption.enabled = true;
  auto scheduled = [&](const Job& running) {
    Snapshot snapshot = SnapshotBuilder()
                            .Now(100'000)
                            .Model("A100")
                            .Node(MakeNode("n1", "A100", 1))
                            .Queue("q")
                            .Job(running)
                            .Job(wait)
                            .Build();
    absl::StatusOr<Decisions> d = Schedule(snapshot, policy);
    EXPECT_TRUE(d.ok()) << d.status();
    d->input_fingerprint.clear();
    return testing::DecisionsToText(*d);
  };
  const std::string without = scheduled(run);
  run.pending_since = 1'000;
  EXPECT_EQ(scheduled(run), without);
  EXPECT_NE(without.find("preempt run for wait"), std::string::npos) << without;
}

// Fair-share turns: queues q and r are equal (no quotas, weight 1) and each wants 2 GPUs of a
// 2-GPU pool, so each is entitled to 1000. q already runs one GPU; with queue turns r (usage 0)
// goes first and takes the free GPU, although q's pending job is older.
TEST(OrderTest, FairShareTurnsServeTheQueueFurthestBelowItsEntitlement) {
  Job running = MakeRunningJob("q-running", "q", GpuRequest(1000), {Placement("n1", {0})});
  Job q_next = Pending("q-next", "q", 1000, 10);
  Job r_first = Pending("r-first", "r", 1000, 20);
  auto snapshot = [&] {
    return SnapshotBuilder()
        .Now(100'000)
        .Model("A100")
        .Node(MakeNode("n1", "A100", 2))
        .Queue("q")
        .Queue("r")
        .Job(running)
        .Job(q_next)
        .Job(r_first)
        .Build();
  };
  absl::StatusOr<Decisions> fifo = Schedule(snapshot(), Policy{});
  ASSERT_TRUE(fifo.ok()) << fifo.status();
  EXPECT_EQ(StartedJobs(*fifo), std::vector<std::string>{"q-next"});
  Policy fair;
  fair.queue_order = QueueOrder::kFairShare;
  absl::StatusOr<Decisions> turns = Schedule(snapshot(), fair);
  ASSERT_TRUE(turns.ok()) << turns.status();
  EXPECT_EQ(StartedJobs(*turns), std::vector<std::string>{"r-first"});
}

}  // namespace
}  // namespace gpupool
