// The time rules of a victim, looked ahead (src/engine/lost_work.h, EligibleVictimFrom): when a
// running job next may go, which stage 7 ranks nodes by for a starving job's drain.
#include "lost_work.h"

#include <cstdint>
#include <limits>
#include <optional>

#include "gpupool/job.h"
#include "gpupool/policy.h"
#include "gtest/gtest.h"

namespace gpupool::internal {
namespace {

constexpr int64_t kNow = 100000;
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// A job that started `ran` seconds ago, checkpoints every 1,800 s and last did `since` seconds
// ago (unset: never).
Job Running(int64_t ran, std::optional<int64_t> since) {
  Job job;
  job.id = "v";
  job.state = JobState::kRunning;
  job.start_time = kNow - ran;
  job.attained_service_s = ran;
  job.checkpointing.interval_s = 1800;
  if (since) job.checkpointing.last_checkpoint_time = kNow - *since;
  return job;
}

Policy Limits(int64_t max_lost_s, int64_t min_run_s) {
  Policy policy;
  policy.preemption.enabled = true;
  policy.preemption.max_victim_lost_s = max_lost_s;
  policy.preemption.min_victim_run_s = min_run_s;
  return policy;
}

TEST(EligibleVictimFromTest, NowWhenTheRulesAllowItNow) {
  EXPECT_EQ(EligibleVictimFrom(Running(4000, 100), kNow, Limits(300, 3600)), kNow);
  EXPECT_EQ(EligibleVictimFrom(Running(4000, 1000), kNow, Limits(0, 0)), kNow);
}

TEST(EligibleVictimFromTest, AtTheNextCheckpointWhenItWouldLoseTooMuch) {
  // Checkpointed 1,000 s ago: the next one is due in 800 s.
  EXPECT_EQ(EligibleVictimFrom(Running(4000, 1000), kNow, Limits(300, 0)), kNow + 800);
}

TEST(EligibleVictimFromTest, OnceItHasRunLongEnough) {
  // Started 600 s ago from scratch (no checkpoint yet, nothing lost before): at 3,600 s of run it
  // has checkpointed at 1,800 and 3,600 s, so it loses nothing then.
  EXPECT_EQ(EligibleVictimFrom(Running(600, std::nullopt), kNow, Limits(300, 3600)), kNow + 3000);
  // With no limit on lost work, the minimum run alone decides.
  EXPECT_EQ(EligibleVictimFrom(Running(600, std::nullopt), kNow, Limits(0, 1000)), kNow + 400);
  // Its own min_runtime_s counts too.
  Job job = Running(600, std::nullopt);
  job.min_runtime_s = 2000;
  EXPECT_EQ(EligibleVictimFrom(job, kNow, Limits(0, 1000)), kNow + 1400);
}

TEST(EligibleVictimFromTest, AResumedJobWaitsForItsFirstCheckpoint) {
  // Resumed 100 s ago from a checkpoint taken before: not before its next one, 1,700 s away.
  Job job = Running(100, 5000);
  job.attained_service_s = 9000;
  EXPECT_EQ(EligibleVictimFrom(job, kNow, Limits(0, 0)), kNow + 1700);
}

TEST(EligibleVictimFromTest, NeverWhenItCannotGo) {
  Job pinned = Running(4000, 100);
  pinned.preemptible = false;
  EXPECT_EQ(EligibleVictimFrom(pinned, kNow, Limits(0, 0)), kNever);
  // It does not checkpoint and has run more than the loss allowed.
  Job no_checkpoints = Running(4000, std::nullopt);
  no_checkpoints.checkpointing.interval_s = 0;
  EXPECT_EQ(EligibleVictimFrom(no_checkpoints, kNow, Limits(300, 0)), kNever);
  // A pending job is no victim.
  Job pending = Running(4000, 100);
  pending.state = JobState::kPending;
  EXPECT_EQ(EligibleVictimFrom(pending, kNow, Limits(0, 0)), kNever);
}

}  // namespace
}  // namespace gpupool::internal
