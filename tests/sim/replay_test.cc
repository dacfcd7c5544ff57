// The replay: hand-checked FIFO and preemption examples, determinism, and a 14-day window of the
// real Philly trace when ../shared/data has it. The fair-share options (the boost, its history
// and demotion) and the protections tied to them are in replay_fair_share_test.cc.
#include "gpupool/sim/replay.h"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/sim/replay_testing.h"

namespace gpupool::sim {
namespace {

using testing_replay::InvalidArgumentNaming;
using testing_replay::J;
using testing_replay::kOneNode;
using testing_replay::Named;

// Two nodes of 8 GPUs, one rack.
constexpr ReplayPool kTwoNodes{.nodes = 2, .gpus_per_node = 8, .nodes_per_rack = 2};

TEST(Replay, FifoStartTimesAndJctsByHand) {
  // A and B fill both nodes. C (4 GPUs) waits for B's end at 60; D (8) is next but only 4 GPUs
  // are left, so E (4) starts beside C at 60 (the engine passes over a job that does not fit).
  // D gets a whole node when C ends at 90.
  std::vector<TraceJob> jobs = {J(0, 8, 100), J(10, 8, 50), J(20, 4, 30), J(30, 8, 10),
                                J(40, 4, 5)};
  auto r = RunReplay(Named("fifo", kTwoNodes), jobs);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<int64_t> start = {0, 10, 60, 90, 60};
  const std::vector<int64_t> end = {100, 60, 90, 100, 65};
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(r->jobs[i].first_start, start[i]) << i;
    EXPECT_EQ(r->jobs[i].completion, end[i]) << i;
  }
  const ReplayMetrics& m = r->metrics;
  EXPECT_DOUBLE_EQ(m.jct_mean_s, (100 + 50 + 70 + 70 + 25) / 5.0);
  EXPECT_DOUBLE_EQ(m.jct_p50_s, 70);
  EXPECT_DOUBLE_EQ(m.jct_p99_s, 100);
  EXPECT_DOUBLE_EQ(m.queue_delay_mean_s, (0 + 0 + 40 + 60 + 20) / 5.0);
  EXPECT_EQ(m.max_wait_s, 60);
  EXPECT_EQ(m.makespan_s, 100);
  EXPECT_EQ(m.preemptions, 0);
  // Busy GPU-seconds: 8x100 + 8x50 + 4x30 + 8x10 + 4x5 = 1420 of 16 x 100.
  EXPECT_DOUBLE_EQ(m.utilization, 1420.0 / 1600.0);
}

TEST(Replay, JobsLargerThanARackAreUnschedulableNotHung) {
  std::vector<TraceJob> jobs = {J(0, 32, 10), J(0, 1, 10)};
  auto r = RunReplay(Named("fifo", kTwoNodes), jobs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->metrics.jobs_unschedulable, 1);
  EXPECT_EQ(r->metrics.jobs_completed, 1);
  EXPECT_EQ(r->jobs[0].completion, -1);
  EXPECT_EQ(r->jobs[1].completion, 10);
}

TEST(Replay, MultiNodeGangTakesWholeNodesInOneRack) {
  // 16 GPUs = 2 replicas of 8 in one rack: waits for both nodes.
  std::vector<TraceJob> jobs = {J(0, 8, 100), J(5, 16, 10)};
  auto r = RunReplay(Named("fifo", kTwoNodes), jobs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[1].first_start, 100);
  EXPECT_EQ(r->jobs[1].completion, 110);
}

// One node of 8 GPUs. L (8 GPUs, 10,000 s) has run 4,000 s when S (1 GPU, 100 s) arrives:
// L's 32,000 GPU-seconds put it in LAS level 2, S is in level 0, so S preempts L.
TEST(Replay, LasPreemptionLosesWorkSinceCheckpointAndPaysRestore) {
  std::vector<TraceJob> jobs = {J(0, 8, 10000), J(4000, 1, 100, "b")};
  auto r = RunReplay(Named("las", kOneNode), jobs);
  ASSERT_TRUE(r.ok()) << r.status();
  // L keeps 3,600 s (two checkpoints of 1,800), loses 400 s, restarts when S ends at 4,100 and
  // pays 60 s of restore: 4,100 + 60 + 6,400 = 10,560.
  EXPECT_EQ(r->jobs[1].first_start, 4000);
  EXPECT_EQ(r->jobs[1].completion, 4100);
  EXPECT_EQ(r->jobs[0].completion, 10560);
  EXPECT_EQ(r->jobs[0].preemptions, 1);
  EXPECT_EQ(r->metrics.preemptions, 1);
  // 8 GPUs x (400 + 60) s.
  EXPECT_DOUBLE_EQ(r->metrics.gpu_hours_lost_to_preemption, 8 * 460 / 3600.0);
  // L waited 100 s after its preemption.
  EXPECT_EQ(r->jobs[0].pending_s, 100);
  EXPECT_EQ(r->metrics.max_wait_s, 100);
}

TEST(Replay, LasFreePreemptionKeepsAllWork) {
  std::vector<TraceJob> jobs = {J(0, 8, 10000), J(4000, 1, 100, "b")};
  auto r = RunReplay(Named("las-free", kOneNode), jobs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[1].completion, 4100);
  // 4,100 + the 6,000 s left, no restore.
  EXPECT_EQ(r->jobs[0].completion, 10100);
  EXPECT_EQ(r->metrics.preemptions, 1);
  EXPECT_DOUBLE_EQ(r->metrics.gpu_hours_lost_to_preemption, 0);
}

// The default preempts by LAS level, but only a victim that loses at most 100 s of work: at
// 4,000 L (level 2, 8 GPUs, so it keeps the boost: priority -1) has run 400 s since its
// checkpoint at 3,600, so S (level 0, priority 0) waits. L's next checkpoint is at 5,400, and
// the host runs a cycle then (wake_up_at_checkpoints_s): S evicts L at 5,400, when L loses no
// work, only its 60 s restore. Without the wake-ups (and without the 30 s limit for a victim of
// a cluster within its share, tested below) the cycles every 300 s from 4,000 find L at 5,500,
// 100 s past its checkpoint.
TEST(Replay, DefaultEvictsAVictimAtItsCheckpoint) {
  const std::vector<TraceJob> jobs = {J(0, 8, 10000, "a"), J(4000, 1, 100, "a")};
  const ReplayOptions options = Named("default", kOneNode);
  ASSERT_EQ(options.wake_up_at_checkpoints_s, 10);
  auto r = RunReplay(options, jobs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[1].first_start, 5400);
  EXPECT_EQ(r->jobs[1].completion, 5500);
  // L keeps 5,400 s of work, restarts at 5,500 and pays 60 s of restore.
  EXPECT_EQ(r->jobs[0].completion, 5500 + 60 + 4600);
  EXPECT_EQ(r->metrics.preemptions, 1);
  EXPECT_DOUBLE_EQ(r->metrics.gpu_hours_lost_to_preemption, 8 * 60 / 3600.0);

  ReplayOptions periodic = options;
  periodic.wake_up_at_checkpoints_s = 0;
  periodic.max_victim_lost_within_share_s.reset();
  auto p = RunReplay(periodic, jobs);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->jobs[1].first_start, 5500);
  EXPECT_EQ(p->jobs[0].completion, 5600 + 60 + 4600);
  EXPECT_DOUBLE_EQ(p->metrics.gpu_hours_lost_to_preemption, 8 * 160 / 3600.0);
}

// A checkpoint wake-up comes no sooner than wake_up_at_checkpoints_s after the previous cycle.
// No periodic cycles, victims losing at most 300 s. S arrives at 4,000, 400 s past L's
// checkpoint; L's next one is at 5,400. With a gap of 1,500 s the wake-up is at 5,500, where L
// has lost 100 s: S evicts it. With 1,800 s it is at 5,800, 400 s past the checkpoint, too late;
// the next, at 7,600 (7,200 + 400), is too late again, and S waits for L's end at 10,000: a gap
// above max_victim_lost_s can miss every checkpoint.
TEST(Replay, CheckpointWakeUpsComeNoSoonerThanTheGap) {
  const std::vector<TraceJob> jobs = {J(0, 8, 10000, "a"), J(4000, 1, 100, "a")};
  ReplayOptions options = Named("default", kOneNode);
  options.wake_up_every_s = 0;
  options.policy.preemption.max_victim_lost_s = 300;
  options.max_victim_lost_within_share_s.reset();
  options.wake_up_at_checkpoints_s = 1500;
  auto r = RunReplay(options, jobs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[1].first_start, 5500);
  EXPECT_EQ(r->metrics.preemptions, 1);
  // At 0 (L arrives), 4,000 (S arrives), 5,500 (the wake-up) and 5,600 (S ends; L restarts).
  EXPECT_EQ(r->metrics.cycles, 4);

  options.wake_up_at_checkpoints_s = 1800;
  auto late = RunReplay(options, jobs);
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_EQ(late->jobs[1].first_start, 10000);
  EXPECT_EQ(late->metrics.preemptions, 0);
}

// A reservation that drains its nodes for a starving job (preemption.starving_drain) wakes the
// host at the checkpoints of the jobs on them, whatever their priority. One node, `default`
// with a periodic cycle every 7,000 s, so that the cycles fall off the checkpoints:
//   - L (8 GPUs, 17,200 s) starts at 0. A (8 GPUs, 200,000 s) arrives at 10 (level 0,
//     priority 0, below L's 3: L is level 0 with the kept boost). At the periodic cycle at
//     7,010 L is level 2 (priority -1) but 1,610 s past its checkpoint; A evicts it at the
//     wake-up at L's checkpoint at 7,200 (L keeps 7,200 s of work).
//   - L waits (priority -4, below running A's -1 with the kept boost) and starves after
//     7,200 + 162,000 = 169,200. The periodic cycles come at 7,200 + 7,000k; at 175,200 (the
//     first after 168,200) L gets a reservation that drains the node, but A is 600 s past its
//     checkpoint at 174,600.
//   - The host wakes at A's next checkpoint, 176,400: A goes, losing only its restore, and L
//     restarts, ending at 176,400 + 60 + 10,000 = 186,460; A (30,800 s left) then ends at
//     186,460 + 60 + 30,800 = 217,320.
// Before the wake-ups counted the drain, the periodic cycles found A 400 s and 200 s past its
// checkpoints at 182,200 and 189,200 and drained it only at 196,200 (7,200 + 7,000 x 27, a
// checkpoint by chance): L waited 19,800 s more and ended at 206,260.
TEST(Replay, StarvingDrainWakesAtTheCheckpointsOfTheJobsInItsWay) {
  const std::vector<TraceJob> jobs = {J(0, 8, 17200, "a"), J(10, 8, 200000, "a")};
  ReplayOptions options = Named("default", kOneNode);
  ASSERT_EQ(options.policy.starvation_bound_s, 162000);  // 45 h
  ASSERT_TRUE(options.policy.preemption.starving_drain);
  options.wake_up_every_s = 7000;
  auto r = RunReplay(options, jobs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[1].first_start, 7200);
  EXPECT_EQ(r->jobs[0].completion, 186460);
  EXPECT_EQ(r->jobs[0].preemptions, 1);
  EXPECT_EQ(r->jobs[1].completion, 217320);
  EXPECT_EQ(r->jobs[1].preemptions, 1);
  // Each eviction at a checkpoint: only the 60 s restore on 8 GPUs.
  EXPECT_DOUBLE_EQ(r->metrics.gpu_hours_lost_to_preemption, 2 * 8 * 60 / 3600.0);
}

// Under `guarantees` the reclaim rules hold across virtual clusters: S's cluster "b" is
// guaranteed almost nothing (its share of the demand), so it would borrow, and L's cluster "a"
// would drop below its guarantee. S waits for L.
TEST(Replay, GuaranteesKeepsAnotherClustersGuarantee) {
  auto r = RunReplay(Named("guarantees", kOneNode), {J(0, 8, 10000, "a"), J(4000, 1, 100, "b")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[0].completion, 10000);
  EXPECT_EQ(r->jobs[1].completion, 10100);
  EXPECT_EQ(r->metrics.preemptions, 0);
}

// `default` is 2D-LAS over every cluster: the same S of another cluster evicts L as in
// DefaultEvictsAVictimAtItsCheckpoint. Neither gets the fair-share boost: "b" is
// entitled to about 10 milli-GPUs (its share of the demand, 100 of 80,100 GPU-s), less than S's
// GPU, and "a" holds all 8 GPUs, more than its 7.99.
TEST(Replay, DefaultPreemptsAcrossClusters) {
  auto r = RunReplay(Named("default", kOneNode), {J(0, 8, 10000, "a"), J(4000, 1, 100, "b")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[1].first_start, 5400);
  EXPECT_EQ(r->jobs[0].completion, 5500 + 60 + 4600);
  EXPECT_EQ(r->metrics.preemptions, 1);
}

// One test per kind of bad wake_up_every_s: negative, above a day (a sum with the cycle's time
// that could overflow).
TEST(Replay, BadWakeUpEveryIsInvalidArgument) {
  ReplayOptions negative = Named("default", kOneNode);
  negative.wake_up_every_s = -1;
  EXPECT_TRUE(InvalidArgumentNaming(negative, "wake_up_every_s: must be in [0, 86400], got -1"));
  ReplayOptions huge = Named("default", kOneNode);
  huge.wake_up_every_s = std::numeric_limits<int64_t>::max();
  EXPECT_TRUE(InvalidArgumentNaming(huge, "got 9223372036854775807"));
}

// One test per kind of bad wake_up_at_checkpoints_s: negative, above a day, set without
// preemption, without checkpoints, and under free preemption.
TEST(Replay, BadWakeUpAtCheckpointsIsInvalidArgument) {
  ReplayOptions negative = Named("default", kOneNode);
  negative.wake_up_at_checkpoints_s = -1;
  EXPECT_TRUE(
      InvalidArgumentNaming(negative, "wake_up_at_checkpoints_s: must be in [0, 86400], got -1"));
  ReplayOptions huge = Named("default", kOneNode);
  huge.wake_up_at_checkpoints_s = 86401;
  EXPECT_TRUE(InvalidArgumentNaming(huge, "got 86401"));
  ReplayOptions fifo = Named("fifo", kOneNode);
  fifo.wake_up_at_checkpoints_s = 60;
  EXPECT_TRUE(InvalidArgumentNaming(fifo, "wake_up_at_checkpoints_s: needs preemption"));
  ReplayOptions no_checkpoints = Named("default", kOneNode);
  no_checkpoints.checkpoint_interval_s = 0;
  EXPECT_TRUE(InvalidArgumentNaming(no_checkpoints, "wake_up_at_checkpoints_s: needs checkpoints"));
  ReplayOptions costless = Named("las-free", kOneNode);
  costless.wake_up_at_checkpoints_s = 60;
  EXPECT_TRUE(InvalidArgumentNaming(costless, "free_preemption off"));
}

TEST(Replay, DefaultOrdersByLasThenFifo) {
  // FIFO within a LAS level: B (8 GPUs, submitted at 10) and X (1 GPU, at 20) are both level 0
  // when A ends at 100; B goes first and X, with no GPU left, waits for it.
  auto r = RunReplay(Named("default", kOneNode),
                     {J(0, 8, 100, "a"), J(10, 8, 50, "a"), J(20, 1, 5, "a")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[1].first_start, 100);
  EXPECT_EQ(r->jobs[2].first_start, 150);
}

TEST(Replay, FifoNeverPreempts) {
  std::vector<TraceJob> jobs = {J(0, 8, 10000), J(4000, 1, 100, "b")};
  auto r = RunReplay(Named("fifo", kOneNode), jobs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[0].completion, 10000);
  EXPECT_EQ(r->jobs[1].completion, 10100);
}

TEST(Replay, ShareReceivedVersusEntitlementByHand) {
  // One node; "a" and "b" each submit 8 GPUs x 100 s at 0, so each is guaranteed 4 GPUs. FIFO
  // runs a's job over [0, 100) and b's over [100, 200). Entitlements: 4 GPUs each while both
  // want 8, then all 8 to b. a: received 800 / entitled 400 = 2; b: 800 / (400 + 800) = 2/3.
  std::vector<TraceJob> jobs = {J(0, 8, 100, "a"), J(0, 8, 100, "b")};
  auto r = RunReplay(Named("fifo", kOneNode), jobs);
  ASSERT_TRUE(r.ok()) << r.status();
  const ReplayMetrics& m = r->metrics;
  ASSERT_EQ(m.queues.size(), 2u);
  EXPECT_EQ(m.queues[0].guaranteed_milli, 4000);
  EXPECT_DOUBLE_EQ(m.queues[0].received_gpu_seconds, 800);
  EXPECT_DOUBLE_EQ(m.queues[0].entitled_gpu_seconds, 400);
  EXPECT_DOUBLE_EQ(m.queues[1].entitled_gpu_seconds, 1200);
  EXPECT_DOUBLE_EQ(m.queues[1].share_ratio, 800.0 / 1200.0);
  // Jain of {2, 2/3}: (8/3)^2 / (2 x (4 + 4/9)) = 0.8.
  EXPECT_NEAR(m.jain_fairness, 0.8, 1e-12);
}

TEST(Replay, UnknownPolicyIsInvalidArgument) {
  EXPECT_EQ(MakeReplayOptions("srtf").status().code(), absl::StatusCode::kInvalidArgument);
}

// A seeded synthetic workload (in-test LCG) that loads a 4-node pool.
std::vector<TraceJob> Synthetic(uint64_t seed, int count) {
  uint64_t x = seed;
  auto next = [&]() {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x >> 33;
  };
  std::vector<TraceJob> jobs;
  int64_t t = 0;
  const int32_t sizes[] = {1, 1, 1, 1, 2, 4, 8, 16};
  for (int i = 0; i < count; ++i) {
    t += static_cast<int64_t>(next() % 120);
    jobs.push_back(J(t, sizes[next() % 8], 60 + static_cast<int64_t>(next() % 20000),
                     std::string(1, static_cast<char>('a' + next() % 4))));
  }
  return jobs;
}

TEST(Replay, SameInputSameMetricsBytes) {
  const ReplayPool pool{.nodes = 4, .gpus_per_node = 8, .nodes_per_rack = 2};
  std::vector<TraceJob> jobs = Synthetic(7, 400);
  for (const std::string& name : ReplayPolicyNames()) {
    auto a = RunReplay(Named(name.c_str(), pool), jobs);
    auto b = RunReplay(Named(name.c_str(), pool), jobs);
    ASSERT_TRUE(a.ok() && b.ok()) << name;
    EXPECT_EQ(ReplayMetricsToJson(a->metrics), ReplayMetricsToJson(b->metrics)) << name;
    EXPECT_EQ(a->metrics.jobs_completed + a->metrics.jobs_unschedulable, 400) << name;
    // Every job runs its whole duration: completion - submit covers at least the work.
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (a->jobs[i].completion < 0) continue;
      EXPECT_GE(a->jobs[i].completion - jobs[i].submit_time, jobs[i].duration_s) << name << i;
    }
  }
}

TEST(Replay, JsonHasEveryE2Key) {
  auto r = RunReplay(Named("fifo", kTwoNodes), {J(0, 1, 10)});
  ASSERT_TRUE(r.ok());
  const std::string json = ReplayMetricsToJson(r->metrics);
  for (const char* key :
       {"jct_mean_s", "jct_p50_s", "jct_p99_s", "queue_delay_mean_s", "queue_delay_p99_s",
        "makespan_s", "utilization", "preemptions", "gpu_hours_lost_to_preemption", "jain_fairness",
        "max_wait_s", "queues"}) {
    EXPECT_NE(json.find(std::string("\"") + key + "\":"), std::string::npos) << key;
  }
}

std::string PhillyPath() {
  for (std::string dir :
       {std::string(GPUPOOL_SOURCE_DIR) + "/../shared/data",
        std::string(std::getenv("GPUPOOL_DATA_DIR") != nullptr ? std::getenv("GPUPOOL_DATA_DIR")
                                                               : "")}) {
    if (dir.empty()) continue;
    for (std::string p : {dir + "/philly/philly.csv", dir + "/philly.csv"}) {
      if (std::ifstream(p).good()) return p;
    }
  }
  return "";
}

TEST(PhillyReplay, FourteenDayWindowFifo) {
  const std::string path = PhillyPath();
  if (path.empty()) {
    GTEST_SKIP() << "philly.csv not found in ../shared/data/philly or GPUPOOL_DATA_DIR; skipped";
  }
  auto all = ReadPhillyCsv(path);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->size(), 82247u);
  // November: a 14-day window light enough to replay in seconds (October takes 4x longer).
  std::vector<TraceJob> window = SelectWindow(*all, *ParseUtcTime("2017-11-01"), 14);
  EXPECT_EQ(window.size(), 11634u);
  auto r = RunReplay(*MakeReplayOptions("fifo"), window);
  ASSERT_TRUE(r.ok()) << r.status();
  const ReplayMetrics& m = r->metrics;
  std::cout << ReplayMetricsToJson(m);
  EXPECT_EQ(m.jobs_completed + m.jobs_unschedulable, static_cast<int64_t>(window.size()));
  EXPECT_EQ(m.preemptions, 0);
  EXPECT_GT(m.utilization, 0.3);
  EXPECT_LE(m.utilization, 1.0);
  EXPECT_GE(m.jct_p99_s, m.jct_p50_s);
  EXPECT_GT(m.jain_fairness, 0);
  EXPECT_LE(m.jain_fairness, 1.0 + 1e-9);
}

}  // namespace
}  // namespace gpupool::sim
