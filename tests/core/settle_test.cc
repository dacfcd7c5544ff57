// Settling (src/engine/settle.cc; docs/engine.md, "Settling: the cycle is a fixed point"): a
// cycle whose first pass evicts jobs runs more passes on the state its decisions leave, and its
// decisions are the difference between the snapshot and the settled state. Exact outcomes on
// small cases; the random properties are in property_test.cc, settling_property_test.cc,
// preemption_cycles_test.cc and backfill_property_test.cc.
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cycle.h"
#include "gpupool/apply.h"
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

Job WithModels(Job job, int32_t priority, std::vector<std::string> models) {
  job.priority = priority;
  job.groups[0].gpu_models = std::move(models);
  return job;
}

// examples/scenarios/settle_requeue: n1 (H100) runs mid (priority 5, H100 or A100), n2 (A100)
// runs low (1, A100); hi (9, H100 only) and new (3, A100 only) wait, 4 GPUs each.
Snapshot RequeueSnapshot() {
  return SnapshotBuilder()
      .Now(2000)
      .Model("A100")
      .Model("H100")
      .Node(MakeNode("n1", "H100", 4))
      .Node(MakeNode("n2", "A100", 4))
      .Queue("lab")
      .Job(
          WithModels(MakeRunningJob("mid", "lab", GpuRequest(4000), {Placement("n1", {0, 1, 2, 3})},
                                    /*start_time=*/100),
                     5, {"H100", "A100"}))
      .Job(
          WithModels(MakeRunningJob("low", "lab", GpuRequest(4000), {Placement("n2", {0, 1, 2, 3})},
                                    /*start_time=*/100),
                     1, {"A100"}))
      .Job(WithModels(MakePendingJob("hi", "lab", GpuRequest(4000)), 9, {"H100"}))
      .Job(WithModels(MakePendingJob("new", "lab", GpuRequest(4000)), 3, {"A100"}))
      .Build();
}

Policy PreemptionOn() {
  Policy policy;
  policy.preemption.enabled = true;
  return policy;
}

std::vector<std::string> Jobs(const auto& list) {
  std::vector<std::string> out;
  for (const auto& item : list) out.push_back(item.job);
  return out;
}

// One A100 node of 4 GPUs at now 10000, queue lab, and `jobs`.
Snapshot OneNodeAt10000(const std::vector<Job>& jobs) {
  SnapshotBuilder builder;
  builder.Now(10000).Model("A100").Node(MakeNode("n1", "A100", 4)).Queue("lab");
  for (const Job& job : jobs) builder.Job(job);
  return builder.Build();
}

// `d` holds one reservation, for `job`, on `nodes`, expected to start at `at`.
void ExpectOnlyReservation(const Decisions& d, const std::string& job,
                           const std::vector<std::string>& nodes, int64_t at) {
  ASSERT_EQ(Jobs(d.reservations), (std::vector<std::string>{job}));
  EXPECT_EQ(d.reservations[0].nodes, nodes);
  EXPECT_EQ(d.reservations[0].expected_start, at);
}

// `snapshot` with `d` carried out (ApplyDecisions), into `applied`, and the cycle run on it.
absl::StatusOr<Decisions> NextCycleNow(const Snapshot& snapshot, const Decisions& d,
                                       const Policy& policy, Snapshot& applied) {
  applied = snapshot;
  if (absl::Status status = ApplyDecisions(d, applied); !status.ok()) return status;
  return Schedule(applied, policy);
}

// One pass would start hi (evicting mid) and new (evicting low), leaving mid, of a higher
// priority than new, pending: the next cycle would evict new for mid. Settled, new never starts.
TEST(SettleTest, AVictimIsServedBeforeALowerPriorityJob) {
  const Snapshot snapshot = RequeueSnapshot();
  absl::StatusOr<Decisions> d = Schedule(snapshot, PreemptionOn());
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(Jobs(d->starts), (std::vector<std::string>{"hi", "mid"}));
  EXPECT_EQ(d->starts[0].placements[0].node, "n1");
  EXPECT_EQ(d->starts[1].placements[0].node, "n2");
  ASSERT_EQ(Jobs(d->preemptions), (std::vector<std::string>{"low", "mid"}));
  // low was evicted for new, whom mid then evicted: in the end, for mid.
  EXPECT_EQ(d->preemptions[0].for_job, "mid");
  EXPECT_EQ(d->preemptions[1].for_job, "hi");
  ASSERT_EQ(Jobs(d->pending), (std::vector<std::string>{"new"}));
  EXPECT_EQ(d->counters.jobs_started, 2);
  EXPECT_EQ(d->counters.preemptions, 2);

  // The fixed point: applied, the next cycle changes nothing.
  Snapshot applied = snapshot;
  ASSERT_TRUE(ApplyDecisions(*d, applied).ok());
  absl::StatusOr<Decisions> again = Schedule(applied, PreemptionOn());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->starts.empty());
  EXPECT_TRUE(again->preemptions.empty());
}

// A job the host started at this very moment is no victim (docs/snapshot-format.md, jobs). The
// starving st (priority 0) evicts hi (priority 1, just checkpointed) and starts; once both are
// carried out, st runs since now and is no longer starving, so hi outranks it. The cycle run
// again at the same moment must not undo the first (found by an outside test from the docs).
TEST(SettleTest, AJobStartedAtThisMomentIsNoVictimOfTheNextCycle) {
  Job hi = MakeRunningJob("hi", "lab", GpuRequest(4000), {Placement("n1", {0, 1, 2, 3})},
                          /*start_time=*/9000);
  hi.priority = 1;
  hi.submit_time = 5000;
  hi.checkpointing.interval_s = 600;
  hi.checkpointing.last_checkpoint_time = 9900;
  Job st = MakePendingJob("st", "lab", GpuRequest(4000));
  st.submit_time = 100;
  const Snapshot snapshot = OneNodeAt10000({hi, st});
  Policy policy = PreemptionOn();
  policy.starvation_bound_s = 1000;
  absl::StatusOr<Decisions> d = Schedule(snapshot, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(Jobs(d->starts), (std::vector<std::string>{"st"}));
  ASSERT_EQ(Jobs(d->preemptions), (std::vector<std::string>{"hi"}));
  EXPECT_EQ(d->preemptions[0].for_job, "st");

  Snapshot applied;
  absl::StatusOr<Decisions> again = NextCycleNow(snapshot, *d, policy, applied);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->starts.empty());
  EXPECT_TRUE(again->preemptions.empty());
  ASSERT_EQ(Jobs(again->pending), (std::vector<std::string>{"hi"}));
  EXPECT_EQ(again->pending[0].would_preempt, (std::vector<std::string>{"st"}));
  EXPECT_EQ(again->pending[0].counterfactual,
            "would start now if st were preempted (losing 0 milli-GPU-seconds of work), but st "
            "started at 10000, this very moment: it may go once it has run");

  // A second later st has run, and hi takes it back (the policy's business: min_victim_run_s,
  // docs/engine.md, stage 6).
  applied.now = 10001;
  absl::StatusOr<Decisions> later = Schedule(applied, policy);
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_EQ(Jobs(later->preemptions), (std::vector<std::string>{"st"}));
}

// The same with the job order deciding: shortest-remaining starts quick, whose start the
// later-ordered important (priority 5) would undo in a cycle run again at the same moment.
TEST(SettleTest, AHigherPriorityJobDoesNotUndoTheStartTheHostJustCarriedOut) {
  Job quick = MakePendingJob("quick", "lab", GpuRequest(4000));
  quick.submit_time = 100;
  quick.runtime_estimate_s = 100;
  Job important = MakePendingJob("important", "lab", GpuRequest(4000));
  important.submit_time = 200;
  important.priority = 5;
  important.runtime_estimate_s = 10000;
  const Snapshot snapshot = OneNodeAt10000({quick, important});
  Policy policy = PreemptionOn();
  policy.job_order = JobOrder::kShortestRemaining;
  absl::StatusOr<Decisions> d = Schedule(snapshot, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(Jobs(d->starts), (std::vector<std::string>{"quick"}));
  Snapshot applied;
  absl::StatusOr<Decisions> again = NextCycleNow(snapshot, *d, policy, applied);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->starts.empty());
  EXPECT_TRUE(again->preemptions.empty());
}

// A starving job's reservation is made after the pass's starts are placed, and does not empty a
// node of them; the next cycle, where they run, does. Without preemption and backfill the cycle
// settles all the same (found by an outside test from the docs). rA (n1, ends at 15000) and rB
// (n2, ends at 12000) run; s1 (1 GPU, starving), big (4 GPUs, starving) and small (3 GPUs) wait.
// One pass started s1 on n2 and reserved n1 for big at 15000, since emptying n2 left s1 there;
// the next cycle reserved n2 at 12000 and started small on n1. Settled, this cycle does that.
TEST(SettleTest, AStarvingJobsReservationCountsTheCyclesStartsAsWorkItsNodesEmptyOf) {
  auto running = [](std::string id, std::vector<int32_t> gpus, std::string node, int64_t estimate) {
    const ResourceRequest request = GpuRequest(1000 * static_cast<int64_t>(gpus.size()));
    Job job = MakeRunningJob(std::move(id), "lab", request,
                             {Placement(std::move(node), std::move(gpus))}, /*start_time=*/9000);
    job.submit_time = 0;
    job.runtime_estimate_s = estimate;
    job.attained_service_s = 1000;
    return job;
  };
  auto pending = [](std::string id, int64_t gpus, int64_t submit) {
    Job job = MakePendingJob(std::move(id), "lab", GpuRequest(1000 * gpus));
    job.submit_time = submit;
    return job;
  };
  Job s1 = pending("s1", 1, 100);
  s1.runtime_estimate_s = 500;
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(10000)
                                .Model("A100")
                                .Node(MakeNode("n1", "A100", 4))
                                .Node(MakeNode("n2", "A100", 4))
                                .Queue("lab")
                                .Job(running("rA", {0}, "n1", 6000))
                                .Job(running("rB", {0, 1}, "n2", 3000))
                                .Job(s1)
                                .Job(pending("big", 4, 200))
                                .Job(pending("small", 3, 9900))
                                .Build();
  Policy policy;
  policy.starvation_bound_s = 1000;
  absl::StatusOr<Decisions> d = Schedule(snapshot, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(Jobs(d->starts), (std::vector<std::string>{"s1", "small"}));
  EXPECT_EQ(d->starts[0].placements[0].node, "n2");
  EXPECT_EQ(d->starts[1].placements[0].node, "n1");
  ExpectOnlyReservation(*d, "big", {"n2"}, 12000);

  Snapshot applied;
  absl::StatusOr<Decisions> again = NextCycleNow(snapshot, *d, policy, applied);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->starts.empty());
  ExpectOnlyReservation(*again, "big", {"n2"}, 12000);
}

// A start a pass made for a starving job ranks, in a later pass's draining reservation, as the
// next cycle will rank it: by the job's own priority, not by the rank it started with (a starving
// job's, above every priority, which no drain passes). Both "small" (1 GPU) and "big" (4 GPUs on
// one node) have waited past the bound; small, waiting longest, starts first, on n2 (best fit).
// n1 frees at 10,100 (its job "fresh" has min_runtime_s 300); n2 at 10,001: "busy" may be
// drained now, and small, once the host has started it, a second later. The first pass ranked
// small by its estimate (10,500) and reserved n1; the next cycle, seeing small running at
// priority 0, reserved n2 and drained busy (found by an outside test from the docs). Now the
// second pass does.
TEST(SettleTest, AStartForAStarvingJobRanksByItsOwnPriorityInALaterDrain) {
  Job busy = MakeRunningJob("busy", "lab", GpuRequest(2000), {Placement("n2", {0, 1})},
                            /*start_time=*/1000);
  busy.priority = 1;
  busy.runtime_estimate_s = 20000;
  busy.checkpointing.interval_s = 300;
  busy.checkpointing.last_checkpoint_time = 9900;
  Job fresh = MakeRunningJob("fresh", "lab", GpuRequest(1000), {Placement("n1", {0})},
                             /*start_time=*/9800);
  fresh.min_runtime_s = 300;
  Job small = MakePendingJob("small", "lab", GpuRequest(1000));
  small.submit_time = 6000;
  small.runtime_estimate_s = 500;
  Job big = MakePendingJob("big", "lab", GpuRequest(4000));
  big.submit_time = 7000;
  const Snapshot snapshot = SnapshotBuilder()
                                .Now(10000)
                                .Model("A100")
                                .Node(MakeNode("n1", "A100", 4))
                                .Node(MakeNode("n2", "A100", 4))
                                .Queue("lab")
                                .Job(busy)
                                .Job(fresh)
                                .Job(small)
                                .Job(big)
                                .Build();
  Policy policy = PreemptionOn();
  policy.starvation_bound_s = 1000;
  policy.preemption.starving_drain = true;
  absl::StatusOr<Decisions> d = Schedule(snapshot, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(Jobs(d->starts), (std::vector<std::string>{"busy", "small"}));
  EXPECT_EQ(d->starts[0].placements[0].node, "n1");
  EXPECT_EQ(d->starts[1].placements[0].node, "n2");
  ASSERT_EQ(Jobs(d->preemptions), (std::vector<std::string>{"busy"}));
  EXPECT_EQ(d->preemptions[0].for_job, "big");
  ExpectOnlyReservation(*d, "big", {"n2"}, 10001);

  Snapshot applied;
  absl::StatusOr<Decisions> again = NextCycleNow(snapshot, *d, policy, applied);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->starts.empty());
  EXPECT_TRUE(again->preemptions.empty());
  ExpectOnlyReservation(*again, "big", {"n2"}, 10001);
}

// Without preemption nothing is evicted and the cycle is one pass: the counters are that pass's.
TEST(SettleTest, ACycleWithoutEvictionsIsOnePass) {
  const Snapshot snapshot = RequeueSnapshot();
  absl::StatusOr<Decisions> d = Schedule(snapshot, Policy{});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->starts.empty());
  EXPECT_EQ(d->counters.jobs_considered, 2);
}

// The passes share the candidate budget: when the first pass spends it all, no second pass
// runs, and the decisions are the first pass's (new starts; mid waits, unsettled).
TEST(SettleTest, ThePassesShareTheCandidateBudget) {
  const Snapshot snapshot = RequeueSnapshot();
  Policy policy = PreemptionOn();
  const Decisions one_pass = internal::RunCyclePass(snapshot, policy);
  EXPECT_EQ(Jobs(one_pass.starts), (std::vector<std::string>{"hi", "new"}));
  policy.budgets.max_candidates = one_pass.counters.candidates_evaluated;
  absl::StatusOr<Decisions> d = Schedule(snapshot, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(Jobs(d->starts), (std::vector<std::string>{"hi", "new"}));
  EXPECT_EQ(d->counters.candidates_evaluated, one_pass.counters.candidates_evaluated);
  // One candidate more lets the second pass begin: it evicts new for mid.
  policy.budgets.max_candidates = one_pass.counters.candidates_evaluated + 1;
  d = Schedule(snapshot, policy);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(Jobs(d->starts), (std::vector<std::string>{"hi", "mid"}));
}

}  // namespace
}  // namespace gpupool
