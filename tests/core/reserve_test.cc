// Stage 7: reservations for jobs past the starvation bound (src/engine/reserve.h).
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

constexpr int64_t kDay = 86400;

// Three 4-GPU nodes, each with one 2-GPU job running; their work ends at different times. A
// 2-node gang (2 x 4 GPUs) submitted three days ago waits; a 2-GPU job submitted now waits behind
// it.
Snapshot StarvingGang(bool with_estimates) {
  SnapshotBuilder b;
  b.Now(3 * kDay).Model("a100");
  for (const char* id : {"n1", "n2", "n3"}) b.Node(MakeNode(id, "a100", 4));
  b.Queue("q");
  const int64_t ends[] = {5000, 100, 900};  // seconds of work left on n1, n2, n3
  for (int i = 0; i < 3; ++i) {
    Job running = MakeRunningJob("r" + std::to_string(i + 1), "q", GpuRequest(2000),
                                 {Placement("n" + std::to_string(i + 1), {0, 1})}, 3 * kDay - 60);
    running.attained_service_s = 60;
    if (with_estimates) running.runtime_estimate_s = 60 + ends[i];
    b.Job(running);
  }
  Job gang = MakePendingJob("gang", "q", GpuRequest(4000), 2);
  gang.submit_time = 0;
  b.Job(gang);
  Job small = MakePendingJob("small", "q", GpuRequest(2000));
  small.submit_time = 3 * kDay;
  b.Job(small);
  return b.Build();
}

Policy WithBound(int64_t bound_s) {
  Policy policy;
  policy.starvation_bound_s = bound_s;
  return policy;
}

TEST(ReserveTest, StarvingGangHoldsTheNodesThatFreeUpFirst) {
  absl::StatusOr<Decisions> d = Schedule(StarvingGang(true), WithBound(2 * kDay));
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->reservations.size(), 1u);
  EXPECT_EQ(d->reservations[0].job, "gang");
  // n2 frees up after 100 s and n3 after 900 s; n1 not before 5,000 s.
  EXPECT_EQ(d->reservations[0].nodes, (std::vector<std::string>{"n2", "n3"}));
  EXPECT_EQ(d->reservations[0].expected_start, 3 * kDay + 900);
  // The small job may not take the free GPUs of n2 or n3: it goes to n1.
  const StartDecision* small = testing::FindStart(*d, "small");
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(small->placements[0].node, "n1");
  EXPECT_NE(testing::FindPending(*d, "gang"), nullptr);
}

TEST(ReserveTest, NoBoundNoReservation) {
  absl::StatusOr<Decisions> d = Schedule(StarvingGang(true), Policy{});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->reservations.empty());
  // Best-fit puts the small job on the lowest node of equal free capacity: n1.
  ASSERT_NE(testing::FindStart(*d, "small"), nullptr);
}

TEST(ReserveTest, YoungJobsGetNoReservation) {
  absl::StatusOr<Decisions> d = Schedule(StarvingGang(true), WithBound(4 * kDay));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->reservations.empty());
}

TEST(ReserveTest, WithoutEstimatesTheLeastBusyNodesAndNoExpectedStart) {
  Snapshot s = StarvingGang(false);
  // n3's job is gone: n3 is empty, so it is the first choice; n1 and n2 tie on busy GPUs and
  // go by topology order.
  std::erase_if(s.jobs, [](const Job& j) { return j.id == "r3"; });
  absl::StatusOr<Decisions> d = Schedule(s, WithBound(2 * kDay));
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->reservations.size(), 1u);
  EXPECT_EQ(d->reservations[0].nodes, (std::vector<std::string>{"n1", "n3"}));
  EXPECT_EQ(d->reservations[0].expected_start, -1);
  // The small job now fits only on n2.
  const StartDecision* small = testing::FindStart(*d, "small");
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(small->placements[0].node, "n2");
}

// Waiting is measured from pending_since when the host sets it (an evicted job re-queued an
// hour ago has not waited three days).
TEST(ReserveTest, WaitingCountsFromPendingSince) {
  Snapshot s = StarvingGang(true);
  for (Job& j : s.jobs) {
    if (j.id == "gang") j.pending_since = 3 * kDay - 3600;
  }
  absl::StatusOr<Decisions> d = Schedule(s, WithBound(2 * kDay));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->reservations.empty());
  for (Job& j : s.jobs) {
    if (j.id == "gang") j.pending_since = kDay - 1;
  }
  d = Schedule(s, WithBound(2 * kDay));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->reservations.size(), 1u);
}

TEST(ReserveTest, ANeverFittingJobGetsNone) {
  Snapshot s = StarvingGang(true);
  for (Job& j : s.jobs) {
    if (j.id == "gang") j.groups[0].replicas = 4;  // 16 GPUs in a 12-GPU pool
  }
  absl::StatusOr<Decisions> d = Schedule(s, WithBound(2 * kDay));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->reservations.empty());
}

// With fair-share turns, a starving job of a queue far above its share still comes first, so
// the capacity it waits for is not handed to the other queue's turn.
TEST(ReserveTest, StarvingJobsComeBeforeQueueTurns) {
  SnapshotBuilder b;
  b.Now(3 * kDay).Model("a100");
  b.Node(MakeNode("n1", "a100", 4));
  Queue rich = testing::MakeQueue("rich");
  Queue poor = testing::MakeQueue("poor");
  poor.quotas.push_back(Quota{.gpu_model = "*", .guaranteed_milli = 4000});
  b.Queue(rich).Queue(poor);
  Job old = MakePendingJob("old", "rich", GpuRequest(4000));
  old.submit_time = 0;
  Job fresh = MakePendingJob("fresh", "poor", GpuRequest(4000));
  fresh.submit_time = 3 * kDay;
  b.Job(old).Job(fresh);
  Policy policy = WithBound(2 * kDay);
  policy.queue_order = QueueOrder::kFairShare;
  absl::StatusOr<Decisions> d = Schedule(b.Build(), policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(testing::StartedJobs(*d), (std::vector<std::string>{"old"}));
  policy.starvation_bound_s = 0;
  d = Schedule(b.Build(), policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(testing::StartedJobs(*d), (std::vector<std::string>{"fresh"}));
}

// The pool and jobs of the drain tests; DrainSnapshot() is the default of each field.
struct DrainSetup {
  int64_t ends[3] = {5000, 100, 900};          // seconds of work left on n1, n2, n3
  int64_t checkpointed[3] = {400, 100, 1000};  // seconds ago
  int32_t n3_gpus = 4;
  int64_t r1_min_runtime_s = 0;
};

Snapshot DrainSnapshotOf(const DrainSetup& setup) {
  SnapshotBuilder b;
  b.Now(3 * kDay).Model("a100");
  b.Node(MakeNode("n1", "a100", 4));
  b.Node(MakeNode("n2", "a100", 4));
  b.Node(MakeNode("n3", "a100", setup.n3_gpus));
  b.Queue("q");
  for (int i = 0; i < 3; ++i) {
    Job running = MakeRunningJob("r" + std::to_string(i + 1), "q", GpuRequest(2000),
                                 {Placement("n" + std::to_string(i + 1), {0, 1})}, 3 * kDay - 4000);
    running.attained_service_s = 4000;
    running.runtime_estimate_s = 4000 + setup.ends[i];
    running.checkpointing.interval_s = 1800;
    running.checkpointing.last_checkpoint_time = 3 * kDay - setup.checkpointed[i];
    if (i == 0) running.min_runtime_s = setup.r1_min_runtime_s;
    b.Job(running);
  }
  Job gang = MakePendingJob("gang", "q", GpuRequest(4000), 2);
  gang.submit_time = 0;
  b.Job(gang);
  return b.Build();
}

// preemption.starving_drain. Three 4-GPU nodes, each with a 2-GPU job that has run 4,000 s and
// checkpoints every 1,800 s: r1 (on n1) checkpointed 400 s ago, r2 (on n2) 100 s ago, r3 (on n3)
// 1,000 s ago. With max_victim_lost_s 300 only r2 may be a victim now, so the starving 2 x 4-GPU
// gang cannot preempt its way in (every pair of nodes has a job that may not go) and gets a
// reservation on n2 and n3, whose work ends first (by the estimates: in 100 and 900 s), and
// which drain first (r2 now, r3 at its next checkpoint in 800 s, r1 at its own in 1,400 s).
Snapshot DrainSnapshot() { return DrainSnapshotOf(DrainSetup{}); }

Policy DrainPolicy(bool drain) {
  Policy policy = WithBound(2 * kDay);
  policy.preemption.enabled = true;
  policy.preemption.max_victim_lost_s = 300;
  policy.preemption.starving_drain = drain;
  return policy;
}

TEST(ReserveTest, WithoutDrainTheReservationWaitsForTheWorkToEnd) {
  absl::StatusOr<Decisions> d = Schedule(DrainSnapshot(), DrainPolicy(false));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());
  ASSERT_EQ(d->reservations.size(), 1u);
  EXPECT_EQ(d->reservations[0].nodes, (std::vector<std::string>{"n2", "n3"}));
  EXPECT_EQ(d->reservations[0].expected_start, 3 * kDay + 900);
}

TEST(ReserveTest, DrainEvictsTheJobsInTheWayThatMayGo) {
  absl::StatusOr<Decisions> d = Schedule(DrainSnapshot(), DrainPolicy(true));
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->reservations.size(), 1u);
  EXPECT_EQ(d->reservations[0].nodes, (std::vector<std::string>{"n2", "n3"}));
  // r2 goes now, losing its 100 s since the checkpoint on 2 GPUs; r3 stays until it may go, at
  // its next checkpoint, 800 s from now: the expected start (its estimate says 900 s).
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].job, "r2");
  EXPECT_EQ(d->preemptions[0].for_job, "gang");
  EXPECT_EQ(d->preemptions[0].lost_milli_gpu_seconds, 2000 * 100);
  EXPECT_NE(d->preemptions[0].reason.find("preemption.starving_drain"), std::string::npos)
      << d->preemptions[0].reason;
  EXPECT_EQ(d->reservations[0].expected_start, 3 * kDay + 800);
  // r2 may not come back on n2's held GPUs; it fits beside r1 on n1.
  const StartDecision* r2 = testing::FindStart(*d, "r2");
  ASSERT_NE(r2, nullptr);
  EXPECT_EQ(r2->placements[0].node, "n1");
  EXPECT_NE(testing::FindPending(*d, "gang"), nullptr);

  // A fixed point: applied, the next cycle at the same moment evicts nothing more.
  Snapshot applied = DrainSnapshot();
  ASSERT_TRUE(ApplyDecisions(*d, applied).ok());
  absl::StatusOr<Decisions> again = Schedule(applied, DrainPolicy(true));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->preemptions.empty());
  EXPECT_TRUE(again->starts.empty());
  ASSERT_EQ(again->reservations.size(), 1u);
  EXPECT_EQ(again->reservations[0].nodes, (std::vector<std::string>{"n2", "n3"}));

  // Once r3 has checkpointed too, the gang evicts it and starts (stage 6, no reservation).
  for (Job& j : applied.jobs) {
    if (j.id == "r3") j.checkpointing.last_checkpoint_time = 3 * kDay - 10;
  }
  again = Schedule(applied, DrainPolicy(true));
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_NE(testing::FindStart(*again, "gang"), nullptr);
  ASSERT_EQ(again->preemptions.size(), 1u);
  EXPECT_EQ(again->preemptions[0].job, "r3");
  EXPECT_TRUE(again->reservations.empty());
}

// The drain takes only jobs the starving job may evict: without starving_outrank, jobs of its
// own priority stay.
TEST(ReserveTest, DrainKeepsTheVictimRules) {
  Policy policy = DrainPolicy(true);
  policy.preemption.starving_outrank = false;
  absl::StatusOr<Decisions> d = Schedule(DrainSnapshot(), policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());
  ASSERT_EQ(d->reservations.size(), 1u);
  // Nor does a job that is not starving drain anything, even when it gets a reservation.
  Snapshot young = DrainSnapshot();
  for (Job& j : young.jobs) {
    if (j.id == "gang") j.submit_time = 3 * kDay - 60;
  }
  policy = DrainPolicy(true);
  policy.backfill.enabled = true;
  d = Schedule(young, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());
  ASSERT_EQ(d->reservations.size(), 1u);
}

// preemption.drain_blocked_jobs: the gang is not starving (no bound), but it is the first job of
// the cycle left pending for lack of room, and it outranks the running jobs (priority 1 against
// 0): its reservation drains as a starving job's does.
TEST(ReserveTest, TheFirstBlockedJobDrainsWithDrainBlockedJobs) {
  Snapshot s = DrainSnapshot();
  for (Job& j : s.jobs) {
    if (j.id == "gang") j.priority = 1;
  }
  Policy policy = DrainPolicy(false);
  policy.starvation_bound_s = 0;
  absl::StatusOr<Decisions> d = Schedule(s, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->reservations.empty());
  EXPECT_TRUE(d->preemptions.empty());

  policy.preemption.drain_blocked_jobs = 1;
  d = Schedule(s, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->reservations.size(), 1u);
  EXPECT_EQ(d->reservations[0].nodes, (std::vector<std::string>{"n2", "n3"}));
  EXPECT_EQ(d->reservations[0].expected_start, 3 * kDay + 800);
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].job, "r2");
  EXPECT_EQ(d->preemptions[0].for_job, "gang");
  EXPECT_NE(d->preemptions[0].reason.find("preemption.drain_blocked_jobs"), std::string::npos)
      << d->preemptions[0].reason;

  // Of its own priority, the running jobs are no victims for it: a reservation, nothing drained.
  for (Job& j : s.jobs) {
    if (j.id == "gang") j.priority = 0;
  }
  d = Schedule(s, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->reservations.size(), 1u);
  EXPECT_TRUE(d->preemptions.empty());
}

// preemption.starving_drain_past_min_runtime. DrainSnapshot's pool, with r1 (on n1) kept by its
// own min_runtime_s of 2 days (it started 4,000 s ago) though otherwise a victim now: it
// checkpointed 100 s ago, as r2 did. Every job's work ends in 5,000 s. With `n3_gpus` 4 the gang
// fits on n2 and n3, which free first (r2 now, r3 at its checkpoint in 800 s); with 2, n3 never
// takes a 4-GPU replica, and the gang's only way in is n1 and n2.
Snapshot ProtectedSnapshot(int32_t n3_gpus) {
  return DrainSnapshotOf(DrainSetup{{5000, 5000, 5000}, {100, 100, 1000}, n3_gpus, 2 * kDay});
}

Policy PastMinRuntimePolicy(bool past_min_runtime) {
  Policy policy = DrainPolicy(true);
  policy.preemption.starving_drain_past_min_runtime = past_min_runtime;
  return policy;
}

// A drain takes a job only where that empties a GPU of the reservation's placement (stage 7,
// "Draining"). n1's one GPU is shared by `half` (500 milli-GPUs, just checkpointed: it may go)
// and `keep` (500, not preemptible, 500 s of work left); n2's by `other` (1,000, 5,000 s left).
// The starving 1-GPU job reserves n1, which frees first. Draining `half` alone would free half a
// GPU, which the reservation does not hold: `half` would start again in place, and the next
// cycle would drain it again. So nothing is drained, and the job expects to start when `keep`
// ends. With backfill the hold keeps what is free of each GPU, and `half` goes as before.
Snapshot SharedGpuSnapshot() {
  SnapshotBuilder b;
  b.Now(3 * kDay).Model("a100");
  b.Node(MakeNode("n1", "a100", 1));
  b.Node(MakeNode("n2", "a100", 1));
  b.Queue("q");
  auto running = [&](const char* id, const char* node, int64_t milli, int64_t left) {
    Job job = MakeRunningJob(id, "q", GpuRequest(milli), {Placement(node, {0})}, 3 * kDay - 4000);
    job.attained_service_s = 4000;
    job.runtime_estimate_s = 4000 + left;
    job.checkpointing.interval_s = 1800;
    job.checkpointing.last_checkpoint_time = 3 * kDay - 10;
    return job;
  };
  b.Job(running("half", "n1", 500, 3000));
  Job keep = running("keep", "n1", 500, 500);
  keep.preemptible = false;
  b.Job(keep);
  Job other = running("other", "n2", 1000, 5000);
  other.preemptible = false;
  b.Job(other);
  Job big = MakePendingJob("big", "q", GpuRequest(1000));
  big.submit_time = 0;
  b.Job(big);
  return b.Build();
}

TEST(ReserveTest, TheDrainLeavesAJobWhoseGpuOtherWorkKeeps) {
  absl::StatusOr<Decisions> d = Schedule(SharedGpuSnapshot(), DrainPolicy(true));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->preemptions.empty());
  EXPECT_TRUE(d->starts.empty());
  ASSERT_EQ(d->reservations.size(), 1u);
  EXPECT_EQ(d->reservations[0].job, "big");
  EXPECT_EQ(d->reservations[0].nodes, (std::vector<std::string>{"n1"}));
  EXPECT_EQ(d->reservations[0].expected_start, 3 * kDay + 500);
  EXPECT_EQ(d->counters.passes, 1);

  Policy backfill = DrainPolicy(true);
  backfill.backfill.enabled = true;
  d = Schedule(SharedGpuSnapshot(), backfill);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].job, "half");
  EXPECT_EQ(d->preemptions[0].for_job, "big");
  EXPECT_TRUE(d->starts.empty());
  ASSERT_EQ(d->reservations.size(), 1u);
  EXPECT_EQ(d->reservations[0].nodes, (std::vector<std::string>{"n1"}));
  // A fixed point: applied, the next cycle drains and starts nothing.
  Snapshot applied = SharedGpuSnapshot();
  ASSERT_TRUE(ApplyDecisions(*d, applied).ok());
  absl::StatusOr<Decisions> again = Schedule(applied, backfill);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->preemptions.empty());
  EXPECT_TRUE(again->starts.empty());
}

// A blocked job's reservation whose expected start is unknown drains nothing; a starving job's
// drains all the same (stage 7, "Draining"). n1's GPU 0 runs `forever` (not preemptible, no
// estimate), GPU 1 `victim` (just checkpointed: it may go). `big` needs both GPUs.
Snapshot UnknownStartSnapshot(int64_t big_submit) {
  SnapshotBuilder b;
  b.Now(3 * kDay).Model("a100");
  b.Node(MakeNode("n1", "a100", 2));
  b.Queue("q");
  Job forever = MakeRunningJob("forever", "q", GpuRequest(1000), {Placement("n1", {0})}, kDay);
  forever.preemptible = false;
  b.Job(forever);
  Job victim = MakeRunningJob("victim", "q", GpuRequest(1000), {Placement("n1", {1})}, kDay);
  victim.checkpointing.interval_s = 1800;
  victim.checkpointing.last_checkpoint_time = 3 * kDay - 10;
  b.Job(victim);
  Job big = MakePendingJob("big", "q", GpuRequest(1000), /*replicas=*/2);
  big.priority = 5;
  big.submit_time = big_submit;
  b.Job(big);
  return b.Build();
}

TEST(ReserveTest, ABlockedJobsReservationOfUnknownStartDrainsNothing) {
  Policy policy = DrainPolicy(false);
  policy.preemption.drain_blocked_jobs = 1;
  absl::StatusOr<Decisions> d = Schedule(UnknownStartSnapshot(3 * kDay - 100), policy);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->reservations.size(), 1u) << testing::DecisionsToText(*d);
  EXPECT_EQ(d->reservations[0].job, "big");
  EXPECT_EQ(d->reservations[0].expected_start, -1);
  EXPECT_TRUE(d->preemptions.empty()) << testing::DecisionsToText(*d);

  // Starving (submitted at 0, past the bound of 2 days), with starving_drain: victim goes.
  d = Schedule(UnknownStartSnapshot(0), DrainPolicy(true));
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->reservations.size(), 1u) << testing::DecisionsToText(*d);
  EXPECT_EQ(d->reservations[0].expected_start, -1);
  ASSERT_EQ(d->preemptions.size(), 1u) << testing::DecisionsToText(*d);
  EXPECT_EQ(d->preemptions[0].job, "victim");
  EXPECT_EQ(d->preemptions[0].for_job, "big");
}

// The hold (backfill off) takes, per replica, the GPUs of the reservation's own placement first,
// then GPUs no replica of the placement uses. n1 has two GPUs: GPU 0 free, GPU 1 busy for 1,000 s
// more. The starving job needs a whole GPU (`worker`) and a quarter of another (`main`); its
// placement puts the worker on GPU 0 and main on GPU 1. Holding main on the first GPU with room
// split GPU 0, so the worker held nothing and `small` (500 milli-GPUs) started on the rest of
// it, in the worker's way. Now GPU 0 is held whole for the worker, and `small` waits.
TEST(ReserveTest, TheHoldKeepsAGpuThePlacementNeedsWhole) {
  SnapshotBuilder b;
  b.Now(3 * kDay).Model("a100");
  b.Node(MakeNode("n1", "a100", 2));
  b.Queue("q");
  Job busy = MakeRunningJob("busy", "q", GpuRequest(1000), {Placement("n1", {1})}, 3 * kDay - 10);
  busy.preemptible = false;
  busy.attained_service_s = 10;
  busy.runtime_estimate_s = 1010;
  b.Job(busy);
  Job gang = MakePendingJob("gang", "q", GpuRequest(250));
  gang.groups.push_back(testing::MakeGroup("worker", GpuRequest(1000)));
  gang.submit_time = 0;
  b.Job(gang);
  Job small = MakePendingJob("small", "q", GpuRequest(500));
  small.submit_time = 3 * kDay - 100;
  b.Job(small);
  const Snapshot snapshot = b.Build();

  absl::StatusOr<Decisions> d = Schedule(snapshot, DrainPolicy(false));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->starts.empty()) << testing::DecisionsToText(*d);
  EXPECT_TRUE(d->preemptions.empty());
  ASSERT_EQ(d->reservations.size(), 1u);
  EXPECT_EQ(d->reservations[0].job, "gang");
  EXPECT_EQ(d->reservations[0].nodes, (std::vector<std::string>{"n1"}));
  EXPECT_EQ(d->reservations[0].expected_start, 3 * kDay + 1000);
  const PendingDecision* waits = testing::FindPending(*d, "small");
  ASSERT_NE(waits, nullptr);
}

// The protected job's node ranks as freeing when its minimum ends (here its work ends first, in
// 5,000 s), so a reservation that has nodes freeing sooner leaves it alone.
TEST(ReserveTest, PastMinRuntimeTheDrainStillPrefersNodesThatFreeSooner) {
  absl::StatusOr<Decisions> d = Schedule(ProtectedSnapshot(4), PastMinRuntimePolicy(true));
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->reservations.size(), 1u);
  EXPECT_EQ(d->reservations[0].nodes, (std::vector<std::string>{"n2", "n3"}));
  EXPECT_EQ(d->reservations[0].expected_start, 3 * kDay + 800);
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].job, "r2");
}

// With no other way in, the drain takes the protected job too (only with the switch on).
TEST(ReserveTest, PastMinRuntimeTheDrainTakesAProtectedJobWithNoOtherWayIn) {
  absl::StatusOr<Decisions> d = Schedule(ProtectedSnapshot(2), PastMinRuntimePolicy(false));
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->reservations.size(), 1u);
  EXPECT_EQ(d->reservations[0].nodes, (std::vector<std::string>{"n1", "n2"}));
  // r1 stays to the end of its work, which comes before the end of its minimum.
  EXPECT_EQ(d->reservations[0].expected_start, 3 * kDay + 5000);
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].job, "r2");

  d = Schedule(ProtectedSnapshot(2), PastMinRuntimePolicy(true));
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->preemptions.size(), 2u);
  EXPECT_EQ(d->preemptions[0].job, "r1");
  EXPECT_EQ(d->preemptions[0].for_job, "gang");
  EXPECT_NE(d->preemptions[0].reason.find("preemption.starving_drain"), std::string::npos)
      << d->preemptions[0].reason;
  EXPECT_EQ(d->preemptions[1].job, "r2");
  // Both gone, the gang starts on n1 and n2 in the same cycle (settling), without a reservation;
  // r1 and r2 find no room left.
  EXPECT_TRUE(d->reservations.empty());
  const StartDecision* gang = testing::FindStart(*d, "gang");
  ASSERT_NE(gang, nullptr);
  ASSERT_EQ(gang->placements.size(), 2u);
  EXPECT_EQ(gang->placements[0].node, "n1");
  EXPECT_EQ(gang->placements[1].node, "n2");
  EXPECT_EQ(testing::FindStart(*d, "r1"), nullptr);
  EXPECT_EQ(testing::FindStart(*d, "r2"), nullptr);

  // A job that does not starve drains as the first blocked job (drain_blocked_jobs), never past
  // a minimum: r1 stays.
  Snapshot young = ProtectedSnapshot(2);
  for (Job& j : young.jobs) {
    if (j.id == "gang") j.priority = 1;
  }
  Policy policy = PastMinRuntimePolicy(true);
  policy.starvation_bound_s = 0;
  policy.preemption.drain_blocked_jobs = 1;
  d = Schedule(young, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->preemptions.size(), 1u);
  EXPECT_EQ(d->preemptions[0].job, "r2");
  EXPECT_NE(d->preemptions[0].reason.find("preemption.drain_blocked_jobs"), std::string::npos)
      << d->preemptions[0].reason;
}

// Two starving gangs of the same shape: the second is answered by the first's failure (stage 5,
// identical jobs) and still gets a reservation of its own, on the nodes left.
TEST(ReserveTest, EveryStarvingJobOfAShapeGetsAReservation) {
  SnapshotBuilder b;
  b.Now(3 * kDay).Model("a100");
  for (const char* id : {"n1", "n2", "n3", "n4"}) b.Node(MakeNode(id, "a100", 4));
  b.Queue("q");
  const int64_t ends[] = {5000, 100, 900, 3000};
  for (int i = 0; i < 4; ++i) {
    Job running = MakeRunningJob("r" + std::to_string(i + 1), "q", GpuRequest(2000),
                                 {Placement("n" + std::to_string(i + 1), {0, 1})}, 3 * kDay - 60);
    running.attained_service_s = 60;
    running.runtime_estimate_s = 60 + ends[i];
    b.Job(running);
  }
  for (const char* id : {"gang1", "gang2"}) {
    Job gang = MakePendingJob(id, "q", GpuRequest(4000), 2);
    gang.submit_time = 0;
    b.Job(gang);
  }
  absl::StatusOr<Decisions> d = Schedule(b.Build(), WithBound(2 * kDay));
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->reservations.size(), 2u);
  EXPECT_EQ(d->reservations[0].job, "gang1");
  EXPECT_EQ(d->reservations[0].nodes, (std::vector<std::string>{"n2", "n3"}));
  EXPECT_EQ(d->reservations[1].job, "gang2");
  EXPECT_EQ(d->reservations[1].nodes, (std::vector<std::string>{"n1", "n4"}));
  EXPECT_EQ(d->reservations[1].expected_start, 3 * kDay + 5000);
}

}  // namespace
}  // namespace gpupool
