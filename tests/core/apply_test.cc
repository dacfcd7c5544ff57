// ApplyDecisions (apply.h): the snapshot a host would see after carrying out the decisions.
#include "gpupool/apply.h"

#include "gmock/gmock.h"
#include "gpupool/schedule.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace gpupool {
namespace {

using ::gpupool::testing::GpuRequest;
using ::gpupool::testing::MakeNode;
using ::gpupool::testing::MakePendingJob;
using ::gpupool::testing::MakeRunningJob;
using ::gpupool::testing::Placement;
using ::gpupool::testing::SnapshotBuilder;

// Fuzz finding (snapshot_mutator): a running job whose submit_time is after `now` was evicted
// with pending_since = now, which validation then refused as "before its submit_time". The
// victim's pending_since is now never before its submit time, and the result validates.
TEST(ApplyTest, EvictedJobSubmittedAfterNowStaysValid) {
  Job early_riser = MakeRunningJob("victim", "q", GpuRequest(1000), {Placement("n1", {0})},
                                   /*start_time=*/900);
  early_riser.submit_time = 2'949;
  Job urgent = MakePendingJob("urgent", "q", GpuRequest(1000));
  urgent.priority = 10;
  Snapshot snapshot = SnapshotBuilder()
                          .Now(1'001)
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 1))
                          .Queue("q")
                          .Job(early_riser)
                          .Job(urgent)
                          .Build();
  ASSERT_TRUE(ValidateSnapshot(snapshot).ok());
  Policy policy;
  policy.preemption.enabled = true;
  absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy);
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  ASSERT_EQ(decisions->preemptions.size(), 1u);
  Snapshot next = snapshot;
  ASSERT_TRUE(ApplyDecisions(*decisions, next).ok());
  for (const Job& job : next.jobs) {
    if (job.id == "victim") {
      EXPECT_EQ(job.pending_since, 2'949);
    }
  }
  EXPECT_TRUE(ValidateSnapshot(next).ok()) << ValidateSnapshot(next);
}

TEST(ApplyTest, EvictedJobIsPendingSinceNow) {
  Job victim = MakeRunningJob("victim", "q", GpuRequest(1000), {Placement("n1", {0})}, 900);
  victim.submit_time = 100;
  Job urgent = MakePendingJob("urgent", "q", GpuRequest(1000));
  urgent.priority = 10;
  Snapshot snapshot = SnapshotBuilder()
                          .Now(1'001)
                          .Model("A100")
                          .Node(MakeNode("n1", "A100", 1))
                          .Queue("q")
                          .Job(victim)
                          .Job(urgent)
                          .Build();
  Policy policy;
  policy.preemption.enabled = true;
  absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy);
  ASSERT_TRUE(decisions.ok()) << decisions.status();
  Snapshot next = snapshot;
  ASSERT_TRUE(ApplyDecisions(*decisions, next).ok());
  for (const Job& job : next.jobs) {
    if (job.id == "victim") {
      EXPECT_EQ(job.state, JobState::kPending);
      EXPECT_EQ(job.pending_since, 1'001);
    }
    if (job.id == "urgent") {
      EXPECT_EQ(job.state, JobState::kRunning);
    }
  }
}

}  // namespace
}  // namespace gpupool
