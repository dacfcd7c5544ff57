// Which running jobs may be victims at all: the policy's max_victim_lost_s and min_victim_run_s,
// a job that resumed and has not checkpointed since, and nodes held for a starving job's
// reservation.
#include <optional>
#include <string>
#include <vector>

#include "gpupool/apply.h"
#include "gpupool/schedule.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace gpupool {
namespace {

using testing::GpuRequest;
using testing::MakeNode;
using testing::MakePendingJob;
using testing::MakeRunningJob;
using testing::Placement;
using testing::SnapshotBuilder;

// One 4-GPU node, full with a low-priority 4-GPU job that started `ran_s` ago and checkpointed
// `since_checkpoint_s` ago; a high-priority 4-GPU job waits.
Snapshot OneVictim(int64_t ran_s, int64_t since_checkpoint_s) {
  const int64_t now = 10000;
  Job victim =
      MakeRunningJob("low", "q", GpuRequest(4000), {Placement("n1", {0, 1, 2, 3})}, now - ran_s);
  victim.checkpointing.interval_s = 600;
  victim.checkpointing.last_checkpoint_time = now - since_checkpoint_s;
  victim.checkpointing.restore_time_s = 30;
  Job high = MakePendingJob("high", "q", GpuRequest(4000));
  high.priority = 5;
  high.submit_time = now;
  return SnapshotBuilder()
      .Now(now)
      .Model("a100")
      .Node(MakeNode("n1", "a100", 4))
      .Queue("q")
      .Job(victim)
      .Job(high)
      .Build();
}

Policy Preemptive(int64_t max_lost_s, int64_t min_run_s) {
  Policy policy;
  policy.preemption.enabled = true;
  policy.preemption.max_victim_lost_s = max_lost_s;
  policy.preemption.min_victim_run_s = min_run_s;
  return policy;
}

TEST(VictimRulesTest, MaxLostWorkKeepsAVictimThatWouldLoseMore) {
  // 400 s since its checkpoint: evicted under no limit or a 400 s limit, kept under 399 s.
  for (const auto& [limit, evicted] :
       std::vector<std::pair<int64_t, bool>>{{0, true}, {400, true}, {399, false}}) {
    SCOPED_TRACE(limit);
    absl::StatusOr<Decisions> d = Schedule(OneVictim(5000, 400), Preemptive(limit, 0));
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->preemptions.size(), evicted ? 1u : 0u);
    EXPECT_EQ(testing::FindStart(*d, "high") != nullptr, evicted);
    if (evicted) {
      EXPECT_EQ(d->preemptions[0].lost_milli_gpu_seconds, 4000 * (400 + 30));
    }
  }
}

TEST(VictimRulesTest, MinRunKeepsAJobJustStarted) {
  // Started 300 s ago and checkpointed 100 s ago (a job that resumed and has not checkpointed
  // since is kept whatever min_victim_run_s says: AResumedJobStaysUntilItCheckpoints).
  for (const auto& [min_run, evicted] :
       std::vector<std::pair<int64_t, bool>>{{0, true}, {300, true}, {301, false}}) {
    SCOPED_TRACE(min_run);
    absl::StatusOr<Decisions> d = Schedule(OneVictim(300, 100), Preemptive(0, min_run));
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->preemptions.size(), evicted ? 1u : 0u);
  }
}

TEST(VictimRulesTest, AJobKeptForItsLostWorkIsAReclaimInProgress) {
  absl::StatusOr<Decisions> d = Schedule(OneVictim(5000, 400), Preemptive(399, 0));
  ASSERT_TRUE(d.ok()) << d.status();
  const PendingDecision* high = testing::FindPending(*d, "high");
  ASSERT_NE(high, nullptr);
  EXPECT_EQ(high->would_preempt, (std::vector<std::string>{"low"}));
  // Last checkpoint at 9,600, every 600 s: the next is due at 10,200.
  EXPECT_NE(high->counterfactual.find("waiting for a reclaim in progress: low would lose 400 s of "
                                      "work now, more than max_victim_lost_s 399; it may go "
                                      "after its next checkpoint, due at 10200"),
            std::string::npos)
      << high->counterfactual;
}

// No job loses the same work twice. "low" started 300 s ago (at 9,700) from a checkpoint taken
// at 9,000, before that start: it resumed, and until it checkpoints again, evicting it would
// throw away the work from 9,000 on a second time. It stays, and "high" waits; once "low" has
// checkpointed since its start (at 9,800), it is a victim like any other.
TEST(VictimRulesTest, AResumedJobStaysUntilItCheckpoints) {
  absl::StatusOr<Decisions> d = Schedule(OneVictim(300, 1000), Preemptive(0, 0));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());
  const PendingDecision* high = testing::FindPending(*d, "high");
  ASSERT_NE(high, nullptr);
  EXPECT_EQ(high->would_preempt, (std::vector<std::string>{"low"}));
  // Every 600 s from its start: the next checkpoint is due at 10,300.
  EXPECT_NE(high->counterfactual.find("low resumed at 9700 and has not checkpointed since: "
                                      "evicting it now would lose the same work a second time; "
                                      "it may go after its next checkpoint, due at 10300"),
            std::string::npos)
      << high->counterfactual;

  d = Schedule(OneVictim(300, 200), Preemptive(0, 0));
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].job, "low");
  EXPECT_EQ(d->preemptions[0].lost_milli_gpu_seconds, 4000 * (200 + 30));
}

// A job that does not checkpoint restarts from the beginning: it resumed when its attained
// service is more than the time since its start (it ran before), and it then stays until it
// ends. A job whose attained service is only its current run is a victim as before.
TEST(VictimRulesTest, AResumedJobThatDoesNotCheckpointStays) {
  for (const auto& [attained, evicted] :
       std::vector<std::pair<int64_t, bool>>{{0, true}, {300, true}, {301, false}}) {
    SCOPED_TRACE(attained);
    Snapshot s = OneVictim(300, 0);
    for (Job& job : s.jobs) {
      if (job.id != "low") continue;
      job.checkpointing = Checkpointing{};
      job.attained_service_s = attained;
    }
    absl::StatusOr<Decisions> d = Schedule(s, Preemptive(0, 0));
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->preemptions.size(), evicted ? 1u : 0u);
    EXPECT_EQ(testing::FindStart(*d, "high") != nullptr, evicted);
    if (!evicted) {
      const PendingDecision* high = testing::FindPending(*d, "high");
      ASSERT_NE(high, nullptr);
      EXPECT_NE(high->counterfactual.find("low resumed at 9700 and has not checkpointed since: "
                                          "evicting it now would lose the same work a second "
                                          "time; it may go only when it ends: it does not "
                                          "checkpoint"),
                std::string::npos)
          << high->counterfactual;
    }
  }
}

// Regression (tests/core/preemption_cycles_test.cc, property e4, seed 728): a victim restarted
// at once was preempted again in the next cycle. Queue q may use 4 GPUs; on one 8-GPU node run
// r (priority 1, ran 1,000 s), y (priority 0, ran 5,000 s) and x (priority 0, 2 GPUs, inside
// its 600 s minimum runtime); a (priority 5, 1 GPU) and b (priority 4, 3 GPUs) wait for quota.
// Cycle 0: a evicts r, the cheapest; r, pending again, evicts y and restarts. b would need x as
// well. Cycle 1, 300 s later: x's minimum runtime has lapsed, and b could take x and r; but r
// resumed 300 s ago (its attained service, 1,300 s, says it ran before) and does not checkpoint,
// so evicting it would lose the same work again: it stays, and b waits.
TEST(VictimRulesTest, ARestartedVictimIsNotPreemptedAgainInTheNextCycle) {
  const int64_t now = 100000;
  Queue q = testing::MakeQueue("q");
  q.quotas.push_back(testing::MakeLimit("*", 4000));
  Job r = MakeRunningJob("r", "q", GpuRequest(1000), {Placement("n1", {0})}, now - 1000);
  r.priority = 1;
  r.attained_service_s = 1000;
  Job y = MakeRunningJob("y", "q", GpuRequest(1000), {Placement("n1", {1})}, now - 5000);
  y.attained_service_s = 5000;
  Job x = MakeRunningJob("x", "q", GpuRequest(2000), {Placement("n1", {2, 3})}, now - 400);
  x.min_runtime_s = 600;
  x.attained_service_s = 400;
  Job a = MakePendingJob("a", "q", GpuRequest(1000));
  a.priority = 5;
  a.submit_time = now - 10;
  Job b = MakePendingJob("b", "q", GpuRequest(3000));
  b.priority = 4;
  b.submit_time = now - 10;
  Snapshot s = SnapshotBuilder()
                   .Now(now)
                   .Model("a100")
                   .Node(MakeNode("n1", "a100", 8))
                   .Queue(q)
                   .Job(r)
                   .Job(y)
                   .Job(x)
                   .Job(a)
                   .Job(b)
                   .Build();
  const Policy policy = Preemptive(0, 0);

  absl::StatusOr<Decisions> d = Schedule(s, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->preemptions.size(), 2u);
  EXPECT_EQ(d->preemptions[0].job, "r");
  EXPECT_EQ(d->preemptions[0].for_job, "a");
  EXPECT_EQ(d->preemptions[1].job, "y");
  EXPECT_EQ(d->preemptions[1].for_job, "r");
  EXPECT_NE(testing::FindStart(*d, "a"), nullptr);
  EXPECT_NE(testing::FindStart(*d, "r"), nullptr);
  EXPECT_EQ(testing::FindStart(*d, "b"), nullptr);

  // The host applies the decisions, and 300 s later reports the work done.
  ASSERT_TRUE(ApplyDecisions(*d, s).ok());
  s.now += 300;
  for (Job& job : s.jobs) {
    if (job.state == JobState::kRunning) job.attained_service_s += 300;
  }
  d = Schedule(s, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());
  EXPECT_TRUE(d->starts.empty());
  // b waits for quota (no counterfactual: that reason has none).
  const PendingDecision* waiting = testing::FindPending(*d, "b");
  ASSERT_NE(waiting, nullptr);
  EXPECT_EQ(waiting->reason, PendingReason::kQueueLimit);

  // Once r has checkpointed since it resumed, b takes x and r.
  for (Job& job : s.jobs) {
    if (job.id != "r") continue;
    job.checkpointing.interval_s = 200;
    job.checkpointing.last_checkpoint_time = now + 200;
  }
  d = Schedule(s, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->preemptions.size(), 2u);
  EXPECT_EQ(d->preemptions[0].job, "r");
  EXPECT_EQ(d->preemptions[1].job, "x");
  EXPECT_NE(testing::FindStart(*d, "b"), nullptr);
}

// Queue "a" is guaranteed the node and reclaims it from "b", which holds it with a job of a
// higher priority: reclaim takes it unless reclaim_lower_priority_only is on.
// An elastic job (8 one-GPU workers, at least 2) fills the node; a higher-priority job of the
// same queue needs `gpus` GPUs.
Snapshot ElasticVictim(int64_t gpus) {
  std::vector<ReplicaPlacement> placements;
  for (int32_t r = 0; r < 8; ++r) placements.push_back(Placement("n1", {r}, r, "workers"));
  Job elastic;
  elastic.id = "elastic";
  elastic.queue = "q";
  TaskGroup workers = testing::MakeGroup("workers", GpuRequest(1000), 8);
  workers.min_replicas = 2;
  elastic.groups.push_back(workers);
  elastic.state = JobState::kRunning;
  elastic.start_time = 0;
  elastic.placements = placements;
  elastic.checkpointing.interval_s = 600;
  elastic.checkpointing.last_checkpoint_time = 9900;
  Job high = MakePendingJob("high", "q", GpuRequest(gpus * 1000));
  high.priority = 5;
  high.submit_time = 10000;
  return SnapshotBuilder()
      .Now(10000)
      .Model("a100")
      .Node(MakeNode("n1", "a100", 8))
      .Queue("q")
      .Job(elastic)
      .Job(high)
      .Build();
}

TEST(VictimRulesTest, AnElasticJobGivesUpItsReplicasAboveItsMinimum) {
  Snapshot s = ElasticVictim(3);
  absl::StatusOr<Decisions> d = Schedule(s, Preemptive(0, 0));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());
  ASSERT_EQ(d->resizes.size(), 1u);
  const ResizeDecision& r = d->resizes[0];
  EXPECT_EQ(r.job, "elastic");
  EXPECT_EQ(r.group, "workers");
  EXPECT_EQ(r.from_replicas, 8);
  EXPECT_EQ(r.to_replicas, 2);
  EXPECT_EQ(r.for_job, "high");
  EXPECT_EQ(r.lost_milli_gpu_seconds, 6000 * 100);  // 6 GPUs x 100 s since the checkpoint
  ASSERT_NE(testing::FindStart(*d, "high"), nullptr);
  // Applied, the group keeps its two lowest replicas, and the next cycle is quiet.
  ASSERT_TRUE(ApplyDecisions(*d, s).ok());
  for (const Job& job : s.jobs) {
    if (job.id != "elastic") continue;
    ASSERT_EQ(job.placements.size(), 2u);
    EXPECT_EQ(job.placements[0].replica, 0);
    EXPECT_EQ(job.placements[1].replica, 1);
  }
  absl::StatusOr<Decisions> next = Schedule(s, Preemptive(0, 0));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_TRUE(next->starts.empty());
  EXPECT_TRUE(next->preemptions.empty());
  EXPECT_TRUE(next->resizes.empty());
}

// Regression: a cycle whose only victim action was a shrink reported counters.preemptions = 1,
// though that counter counts jobs evicted (Preempt decisions). A shrink counts in resizes.
TEST(VictimRulesTest, AShrinkAloneCountsAsAResizeNotAPreemption) {
  absl::StatusOr<Decisions> d = Schedule(ElasticVictim(3), Preemptive(0, 0));
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->resizes.size(), 1u);
  ASSERT_TRUE(d->preemptions.empty());
  EXPECT_EQ(d->counters.preemptions, 0);
  EXPECT_EQ(d->counters.resizes, 1);
  // Evicting the elastic job whole is a preemption, and no resize.
  absl::StatusOr<Decisions> whole = Schedule(ElasticVictim(7), Preemptive(0, 0));
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ(whole->preemptions.size(), 1u);
  EXPECT_EQ(whole->counters.preemptions, 1);
  EXPECT_EQ(whole->counters.resizes, 0);
}

TEST(VictimRulesTest, AnElasticJobThatCannotShrinkEnoughGoesWhole) {
  absl::StatusOr<Decisions> d = Schedule(ElasticVictim(7), Preemptive(0, 0));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->resizes.empty());
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].job, "elastic");
}

// Past the starvation bound a job outranks every running job of its queue.
TEST(VictimRulesTest, AStarvingJobOutranksItsQueue) {
  Snapshot s = OneVictim(5000, 0);
  for (Job& j : s.jobs) {
    if (j.id == "high") {
      j.priority = -5;  // below the running job's 0
      j.submit_time = 0;
    }
  }
  Policy policy = Preemptive(0, 0);
  absl::StatusOr<Decisions> d = Schedule(s, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());
  policy.starvation_bound_s = 5000;
  d = Schedule(s, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].for_job, "high");
  policy.preemption.starving_outrank = false;
  d = Schedule(s, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());
}

TEST(VictimRulesTest, ReclaimLowerPriorityOnly) {
  Queue a = testing::MakeQueue("a");
  a.quotas.push_back(Quota{.gpu_model = "*", .guaranteed_milli = 4000});
  Job running = MakeRunningJob("b-job", "b", GpuRequest(4000), {Placement("n1", {0, 1, 2, 3})}, 0);
  running.priority = 5;
  Job waiting = MakePendingJob("a-job", "a", GpuRequest(4000));
  waiting.submit_time = 100;
  const Snapshot s = SnapshotBuilder()
                         .Now(1000)
                         .Model("a100")
                         .Node(MakeNode("n1", "a100", 4))
                         .Queue(a)
                         .Queue("b")
                         .Job(running)
                         .Job(waiting)
                         .Build();
  Policy policy = Preemptive(0, 0);
  policy.preemption.reclaim_across_queues = true;
  absl::StatusOr<Decisions> d = Schedule(s, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].job, "b-job");
  policy.preemption.reclaim_lower_priority_only = true;
  d = Schedule(s, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());
  const PendingDecision* pending = testing::FindPending(*d, "a-job");
  ASSERT_NE(pending, nullptr);
  EXPECT_NE(pending->counterfactual.find("reclaim_lower_priority_only is on"), std::string::npos)
      << pending->counterfactual;
}

// A starving 4-GPU job holds n1, where a 2-GPU job of low priority runs; a high-priority 2-GPU
// job that could evict it may not, and evicts the one on n2 instead.
TEST(VictimRulesTest, NothingIsEvictedFromANodeHeldForAReservation) {
  const int64_t now = 3 * 86400;
  SnapshotBuilder b;
  b.Now(now).Model("a100").Node(MakeNode("n1", "a100", 4)).Node(MakeNode("n2", "a100", 4));
  b.Queue("q").Queue("s");
  Job on_n1 = MakeRunningJob("a-on-n1", "q", GpuRequest(2000), {Placement("n1", {0, 1})}, 0);
  on_n1.attained_service_s = now;
  on_n1.runtime_estimate_s = now + 100;  // ends soon: n1 is where the starving job goes
  on_n1.checkpointing.last_checkpoint_time = now - 1;  // and is the cheapest victim
  Job on_n2 =
      MakeRunningJob("b-on-n2", "q", GpuRequest(4000), {Placement("n2", {0, 1, 2, 3})}, now - 60);
  on_n2.runtime_estimate_s = 100000;
  on_n2.checkpointing.last_checkpoint_time = now - 30;  // costlier than a-on-n1
  // In a queue of its own: past the bound it outranks every job of its queue, but may not take
  // from queue q (no reclaim across queues), so it gets a reservation instead.
  Job starving = MakePendingJob("starving", "s", GpuRequest(4000));
  starving.submit_time = 0;
  starving.priority = -1;
  Job high = MakePendingJob("high", "q", GpuRequest(2000));
  high.submit_time = now;
  high.priority = 5;
  b.Job(on_n1).Job(on_n2).Job(starving).Job(high);
  Policy policy = Preemptive(0, 0);
  policy.starvation_bound_s = 86400;
  absl::StatusOr<Decisions> d = Schedule(b.Build(), policy);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->reservations.size(), 1u);
  EXPECT_EQ(d->reservations[0].nodes, (std::vector<std::string>{"n1"}));
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].job, "b-on-n2");
  const StartDecision* started = testing::FindStart(*d, "high");
  ASSERT_NE(started, nullptr);
  EXPECT_EQ(started->placements[0].node, "n2");
}

// take_back_from_gpus: a 4-GPU job submitted at 100 waits; n1 has 3 GPUs free and a 1-GPU job
// of the same priority submitted at 200 (after it) on the fourth; n2 holds a 1-GPU job of the
// same priority submitted at 50 (before it) and a 3-GPU job of a higher priority.
Snapshot HolesFilledByLaterJobs(int64_t later_submit, int32_t later_gpus) {
  const int64_t now = 10000;
  std::vector<int32_t> gpus;
  for (int32_t g = 0; g < later_gpus; ++g) gpus.push_back(g);
  Job later =
      MakeRunningJob("later", "q", GpuRequest(1000 * later_gpus), {Placement("n1", gpus)}, 5000);
  later.submit_time = later_submit;
  Job earlier = MakeRunningJob("earlier", "q", GpuRequest(1000), {Placement("n2", {0})}, 5000);
  earlier.submit_time = 50;
  Job high = MakeRunningJob("high", "q", GpuRequest(3000), {Placement("n2", {1, 2, 3})}, 5000);
  high.priority = 9;
  Job big = MakePendingJob("big", "q", GpuRequest(4000));
  big.submit_time = 100;
  return SnapshotBuilder()
      .Now(now)
      .Model("a100")
      .Node(MakeNode("n1", "a100", 4))
      .Node(MakeNode("n2", "a100", 4))
      .Queue("q")
      .Job(later)
      .Job(earlier)
      .Job(high)
      .Job(big)
      .Build();
}

TEST(VictimRulesTest, AWaitingGangTakesBackTheHoleALaterSmallerJobFilled) {
  Policy policy = Preemptive(0, 0);
  absl::StatusOr<Decisions> d = Schedule(HolesFilledByLaterJobs(200, 1), policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());  // off: equal priorities never evict each other
  EXPECT_EQ(testing::FindStart(*d, "big"), nullptr);

  policy.preemption.take_back_from_gpus = 4;
  d = Schedule(HolesFilledByLaterJobs(200, 1), policy);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].job, "later");  // never "earlier", submitted before "big"
  EXPECT_EQ(d->preemptions[0].for_job, "big");
  EXPECT_NE(d->preemptions[0].reason.find("take_back_from_gpus"), std::string::npos)
      << d->preemptions[0].reason;
  const StartDecision* start = testing::FindStart(*d, "big");
  ASSERT_NE(start, nullptr);
  EXPECT_EQ(start->placements[0].node, "n1");

  // A fixed point: "later" may not take the GPUs back ("big" came first), nor take "earlier"'s
  // (it needs 1 GPU, below 4).
  Snapshot next = HolesFilledByLaterJobs(200, 1);
  ASSERT_TRUE(ApplyDecisions(*d, next).ok());
  d = Schedule(next, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->starts.empty());
  EXPECT_TRUE(d->preemptions.empty());
}

TEST(VictimRulesTest, TakeBackSparesEarlierEqualOrLargerJobsAndSmallGangs) {
  struct Case {
    int64_t later_submit;
    int32_t later_gpus;
    int64_t from_gpus;
  };
  // Submitted before "big"; as large as "big"; "big" below the threshold.
  for (const Case c : {Case{99, 1, 4}, Case{200, 4, 4}, Case{200, 1, 5}}) {
    SCOPED_TRACE(::testing::Message()
                 << c.later_submit << " " << c.later_gpus << " " << c.from_gpus);
    Policy policy = Preemptive(0, 0);
    policy.preemption.take_back_from_gpus = c.from_gpus;
    absl::StatusOr<Decisions> d =
        Schedule(HolesFilledByLaterJobs(c.later_submit, c.later_gpus), policy);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_TRUE(d->preemptions.empty());
    EXPECT_EQ(testing::FindStart(*d, "big"), nullptr);
  }
}

TEST(VictimRulesTest, TakeBackAfterAWait) {
  // "big" has been pending since its submit_time, 100: 9,900 s at now 10,000.
  for (const auto& [after_s, taken] :
       std::vector<std::pair<int64_t, bool>>{{0, true}, {9900, true}, {9901, false}}) {
    SCOPED_TRACE(after_s);
    Policy policy = Preemptive(0, 0);
    policy.preemption.take_back_from_gpus = 4;
    policy.preemption.take_back_after_s = after_s;
    absl::StatusOr<Decisions> d = Schedule(HolesFilledByLaterJobs(200, 1), policy);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->preemptions.size(), taken ? 1u : 0u);
  }
}

TEST(VictimRulesTest, TheCounterfactualNamesTheTakeBackWait) {
  // "big" has waited 9,900 s of 9,901: "later" is kept by its priority for one more second.
  Policy policy = Preemptive(0, 0);
  policy.preemption.take_back_from_gpus = 4;
  policy.preemption.take_back_after_s = 9901;
  absl::StatusOr<Decisions> d = Schedule(HolesFilledByLaterJobs(200, 1), policy);
  ASSERT_TRUE(d.ok()) << d.status();
  const PendingDecision* big = testing::FindPending(*d, "big");
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->counterfactual,
            "would start now if earlier, later were preempted (losing 10000000 milli-GPU-seconds "
            "of work), but earlier has priority 0, not below 0; big may take later back "
            "(preemption.take_back_from_gpus) once it has been pending take_back_after_s 9901 s, "
            "in 1 s");

  // Without the rule, or where it never applies ("later" as large as "big"), no such clause.
  for (const auto& [from_gpus, later_gpus] :
       std::vector<std::pair<int64_t, int32_t>>{{0, 1}, {4, 4}}) {
    SCOPED_TRACE(from_gpus);
    policy.preemption.take_back_from_gpus = from_gpus;
    d = Schedule(HolesFilledByLaterJobs(200, later_gpus), policy);
    ASSERT_TRUE(d.ok()) << d.status();
    big = testing::FindPending(*d, "big");
    ASSERT_NE(big, nullptr);
    EXPECT_EQ(big->counterfactual.find("take_back"), std::string::npos) << big->counterfactual;
  }
}

TEST(VictimRulesTest, TakeBackWaitsForACheapVictim) {
  // The other rules still hold: "later" started 100 s ago, inside min_victim_run_s.
  Policy policy = Preemptive(0, 3600);
  policy.preemption.take_back_from_gpus = 4;
  Snapshot s = HolesFilledByLaterJobs(200, 1);
  for (Job& j : s.jobs) {
    if (j.id == "later") j.start_time = s.now - 100;
  }
  absl::StatusOr<Decisions> d = Schedule(s, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());
}

// victim_remaining_percent: in OneVictim, "low" has attained 5,000 s of an estimate of 6,000 s
// (1,000 s expected left); "high" (priority 5, "low" 0) is expected to need `high_estimate_s`.
Snapshot ShorterVictim(std::optional<int64_t> high_estimate_s,
                       std::optional<int64_t> low_estimate_s) {
  Snapshot s = OneVictim(5000, 0);
  for (Job& j : s.jobs) {
    if (j.id == "low") {
      j.attained_service_s = 5000;
      j.runtime_estimate_s = low_estimate_s;
    } else {
      j.runtime_estimate_s = high_estimate_s;
    }
  }
  return s;
}

Policy ShorterVictimsStay(int64_t percent, int64_t max_gap) {
  Policy policy = Preemptive(0, 0);
  policy.preemption.victim_remaining_percent = percent;
  policy.preemption.victim_remaining_max_gap = max_gap;
  return policy;
}

// Whether "high" evicts "low".
bool Evicts(const Snapshot& s, const Policy& policy) {
  absl::StatusOr<Decisions> d = Schedule(s, policy);
  EXPECT_TRUE(d.ok()) << d.status();
  if (!d.ok()) return false;
  const bool started = testing::FindStart(*d, "high") != nullptr;
  EXPECT_EQ(d->preemptions.size(), started ? 1u : 0u);
  return started;
}

TEST(VictimRulesTest, AVictimExpectedToEndFirstStays) {
  // 1,000 s left against 1,000 s needed: not more, it stays; against 999 s it goes.
  EXPECT_FALSE(Evicts(ShorterVictim(1000, 6000), ShorterVictimsStay(100, 0)));
  EXPECT_TRUE(Evicts(ShorterVictim(999, 6000), ShorterVictimsStay(100, 0)));
  // 50 %: "low" stays against 2,000 s, goes against 1,999 s.
  EXPECT_FALSE(Evicts(ShorterVictim(2000, 6000), ShorterVictimsStay(50, 0)));
  EXPECT_TRUE(Evicts(ShorterVictim(1999, 6000), ShorterVictimsStay(50, 0)));
  // Off; or either job without an estimate: priority alone.
  EXPECT_TRUE(Evicts(ShorterVictim(1000, 6000), ShorterVictimsStay(0, 0)));
  EXPECT_TRUE(Evicts(ShorterVictim(std::nullopt, 6000), ShorterVictimsStay(100, 0)));
  EXPECT_TRUE(Evicts(ShorterVictim(1000, std::nullopt), ShorterVictimsStay(100, 0)));
  // A victim past its estimate is expected to need 0 s: it stays for any job (0 <= 0).
  EXPECT_FALSE(Evicts(ShorterVictim(0, 4000), ShorterVictimsStay(100, 0)));
}

TEST(VictimRulesTest, AShorterVictimStaysOnlyWithinTheGap) {
  // "high" is 5 above "low": with a gap of at most 4 it evicts by priority alone.
  EXPECT_TRUE(Evicts(ShorterVictim(1000, 6000), ShorterVictimsStay(100, 4)));
  EXPECT_FALSE(Evicts(ShorterVictim(1000, 6000), ShorterVictimsStay(100, 5)));
}

TEST(VictimRulesTest, AStarvingJobEvictsAShorterVictim) {
  Snapshot s = ShorterVictim(1000, 6000);
  Policy policy = ShorterVictimsStay(100, 0);
  policy.starvation_bound_s = 3600;
  EXPECT_FALSE(Evicts(s, policy));  // "high" submitted now: not starving
  for (Job& j : s.jobs) {
    if (j.id == "high") j.submit_time = s.now - 3601;
  }
  EXPECT_TRUE(Evicts(s, policy));
}

TEST(VictimRulesTest, TheCounterfactualNamesAShorterVictim) {
  absl::StatusOr<Decisions> d = Schedule(ShorterVictim(1500, 6000), ShorterVictimsStay(100, 0));
  ASSERT_TRUE(d.ok()) << d.status();
  const PendingDecision* high = testing::FindPending(*d, "high");
  ASSERT_NE(high, nullptr);
  EXPECT_EQ(high->counterfactual,
            "would start now if low were preempted (losing 120000 milli-GPU-seconds of work), "
            "but low is expected to need 1000 s more, not above 100 % of the 1500 s high is "
            "expected to need, so it stays (preemption.victim_remaining_percent)");
}

TEST(VictimRulesTest, JobsOfOneShapeWithOtherRemainingWorkAreNotEquivalent) {
  // n1 is full: "low" (priority 0, 4 GPUs) is expected to need 1,000 s more. "first" and
  // "second" wait, alike but for their estimates: "first" (submitted first) needs 1,500 s, so
  // "low" stays for it; "second" needs 500 s, so it may evict "low". The failure of "first"
  // does not answer for "second".
  Snapshot s = ShorterVictim(1500, 6000);
  for (Job& j : s.jobs) {
    if (j.id == "high") j.id = "first";
  }
  Job second = MakePendingJob("second", "q", GpuRequest(4000));
  second.priority = 5;
  second.submit_time = s.now;
  second.runtime_estimate_s = 500;
  s.jobs.push_back(second);
  absl::StatusOr<Decisions> d = Schedule(s, ShorterVictimsStay(100, 0));
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].job, "low");
  EXPECT_EQ(d->preemptions[0].for_job, "second");
  EXPECT_NE(testing::FindStart(*d, "second"), nullptr);
  EXPECT_EQ(testing::FindStart(*d, "first"), nullptr);
}

}  // namespace
}  // namespace gpupool
