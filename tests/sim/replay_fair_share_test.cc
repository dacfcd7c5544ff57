// The replay's fair-share options and the protections tied to them, each worked by hand on one
// node, with one test per kind of bad value: the fair-share boost, the boost a running job of a
// whole node keeps, the boost over the past week (fair_share_history_hours) and the demotion of a
// running job far beyond its share, starved_min_run_s (and within the share), and
// max_victim_lost_within_share_s. The rest of the replay is in replay_test.cc.
#include <cstdint>
#include <string>
#include <vector>

#include "gpupool/sim/replay.h"
#include "gtest/gtest.h"
#include "tests/sim/replay_testing.h"

namespace gpupool::sim {
namespace {

using testing_replay::InvalidArgumentNaming;
using testing_replay::J;
using testing_replay::kOneNode;
using testing_replay::Named;

// The fair-share boost orders a level against its clusters' shares. The node is full of "a"'s
// eight 1-GPU jobs; X of "a" (at 10) and Y of "b" (at 20) wait, both at LAS level 0, and one GPU
// frees at 1,000. "b"'s later 8-GPU job gives it a guarantee of about 4.26 GPUs, so at 1,000
// (demand: "a" 9 GPUs, "b" 1) "b" is entitled to 1 GPU and "a" to the other 7, which it holds:
// with the boost Y (within "b"'s entitlement) goes before X (beyond "a"'s), and X starts when Y
// ends. Without it, FIFO inside the level: X first.
TEST(Replay, FairShareBoostServesTheClusterBelowItsEntitlement) {
  std::vector<TraceJob> jobs = {J(0, 1, 1000, "a")};
  for (int k = 0; k < 7; ++k) jobs.push_back(J(0, 1, 50000, "a"));
  jobs.push_back(J(10, 1, 100, "a"));  // X, index 8
  jobs.push_back(J(20, 1, 100, "b"));  // Y, index 9
  jobs.push_back(J(100000, 8, 50000, "b"));
  ReplayOptions boosted = Named("default", kOneNode);
  ASSERT_EQ(boosted.fair_share_boost_half_levels, 3);
  auto r = RunReplay(boosted, jobs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[9].first_start, 1000);
  EXPECT_EQ(r->jobs[8].first_start, 1100);
  ReplayOptions pure = boosted;
  pure.fair_share_boost_half_levels = 0;
  pure.boost_kept_from_gpus = 0;
  pure.fair_share_history_hours = 0;
  pure.demote_running_above_history_percent = 0;
  pure.starved_min_run_within_share = false;  // no boost, no entitlements to keep within
  pure.max_victim_lost_within_share_s.reset();
  auto p = RunReplay(pure, jobs);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->jobs[8].first_start, 1000);
  EXPECT_EQ(p->jobs[9].first_start, 1100);
}

// One test per kind of bad fair_share_boost_half_levels: negative, above 1,000, and set under the
// per-cluster FIFO mode, whose priorities are all 0.
TEST(Replay, BadFairShareBoostIsInvalidArgument) {
  ReplayOptions negative = Named("default", kOneNode);
  negative.fair_share_boost_half_levels = -1;
  EXPECT_TRUE(InvalidArgumentNaming(negative,
                                    "fair_share_boost_half_levels: must be in [0, 1000], got -1"));
  ReplayOptions huge = Named("default", kOneNode);
  huge.fair_share_boost_half_levels = 1001;
  EXPECT_TRUE(InvalidArgumentNaming(huge, "got 1001"));
  ReplayOptions fifo = Named("fifo", kOneNode);
  fifo.fair_share_boost_half_levels = 1;
  EXPECT_TRUE(InvalidArgumentNaming(fifo, "needs a LAS queue mode"));
}

// `default` keeps the boost of a running job of a whole node (boost_kept_from_gpus 8). P (1 GPU
// of "b") runs from 0; L (8 GPUs of "a") arrives at 10, at level 0. Equal demand makes "a"
// entitled to 7.11 GPUs and "b" to 0.89: neither is within its entitlement, so neither gets the
// boost for fair share. From 3,250 s P is at level 1 (priority -2), below L (0); at the cycle of
// 3,310 (every 300 s from 10) P's next checkpoint, at 3,600, is its first after an hour of run,
// so the host wakes then (wake_up_at_checkpoints_s) and L evicts P, which loses no work. P
// waits at level 1. With the boost kept, L (level 2 from 4,500, priority -4 + 3) stays above P
// and runs to its end at 103,600. Without it L is at -4, below P: the first cycle at one of
// L's checkpoints after its hour is the periodic one at 7,200 (the checkpoint wake-ups look at
// each job's next checkpoint only, and L's next one after the cycles of 4,500-5,100 is at 5,400,
// before its hour), where P evicts L, losing nothing but the restore.
TEST(Replay, DefaultKeepsTheBoostOfAWholeNodeJob) {
  const std::vector<TraceJob> jobs = {J(0, 1, 100000, "b"), J(10, 8, 100000, "a")};
  ReplayOptions kept = Named("default", kOneNode);
  ASSERT_EQ(kept.boost_kept_from_gpus, 8);
  auto r = RunReplay(kept, jobs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[1].first_start, 3600);
  EXPECT_EQ(r->jobs[1].completion, 103600);
  EXPECT_EQ(r->jobs[0].completion, 103600 + 60 + 100000 - 3600);
  EXPECT_EQ(r->metrics.preemptions, 1);

  ReplayOptions not_kept = kept;
  not_kept.boost_kept_from_gpus = 0;
  auto n = RunReplay(not_kept, jobs);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->jobs[1].first_start, 3600);
  EXPECT_EQ(n->metrics.preemptions, 2);
  // P evicts L at 7,200 and runs its 96,400 s left after its restore; L (its 3,600 s of work
  // kept) ranks with P once P reaches level 2, so it waits for P's end.
  EXPECT_EQ(n->jobs[0].completion, 7200 + 60 + 96400);
  EXPECT_EQ(n->jobs[1].completion, 7200 + 60 + 96400 + 60 + 96400);
}

// One test per kind of bad boost_kept_from_gpus: negative, above 2^20, and set without a boost.
TEST(Replay, BadBoostKeptFromGpusIsInvalidArgument) {
  ReplayOptions negative = Named("default", kOneNode);
  negative.boost_kept_from_gpus = -1;
  EXPECT_TRUE(
      InvalidArgumentNaming(negative, "boost_kept_from_gpus: must be in [0, 2^20], got -1"));
  ReplayOptions huge = Named("default", kOneNode);
  huge.boost_kept_from_gpus = (int64_t{1} << 20) + 1;
  EXPECT_TRUE(InvalidArgumentNaming(huge, "got 1048577"));
  ReplayOptions no_boost = Named("default", kOneNode);
  no_boost.fair_share_boost_half_levels = 0;
  EXPECT_TRUE(InvalidArgumentNaming(no_boost, "boost_kept_from_gpus: needs a boost"));
}

// The boost asks about the past week too (fair_share_history_hours 168). One node: C of "c" (4
// GPUs) and A of "a" (4 GPUs, 7,200 s) run from 0; X of "a" (3 GPUs, at 5) and Y of "b" (3
// GPUs, at 10) wait, both at LAS level 0, and when A ends at 7,200 only one of them fits beside
// C. The late 1-GPU jobs of "a" and "b" make the guarantees 3, 4.96 and 0.04 GPUs (demand 6, 9.92
// and 0.08 million GPU-s of 16). From 10 to 7,200 (demand: "a" 7 GPUs, "b" 3, "c" 4) "a" is
// entitled to 3.98 GPUs (its 3 guaranteed, and half of the 1.96 left with "c") and holds 4:
// over its share by 20 milli-GPU-s a second for 7,190 s, less the 1.48 GPUs under it from 5 to
// 10. At 7,200 (demand: "a" 3, "b" 3, "c" 4) "a" and "b" are entitled to 3 GPUs each, so X and Y
// both fit in their entitlements now; with the history only Y's cluster has not had more than
// its share, so Y goes first and X when Y ends. With the present only (0 hours), FIFO inside the
// boosted level: X first. Preemption is off, so that only the order decides.
TEST(Replay, FairShareHistoryServesTheClusterThatHadLess) {
  const std::vector<TraceJob> jobs = {J(0, 4, 20000, "c"),         J(0, 4, 7200, "a"),
                                      J(5, 3, 100, "a"),   // X: 2
                                      J(10, 3, 100, "b"),  // Y: 3
                                      J(1000000, 1, 5970900, "a"), J(1000000, 1, 9919700, "b")};
  ReplayOptions history = Named("default", kOneNode);
  ASSERT_EQ(history.fair_share_history_hours, 168);
  history.policy.preemption.enabled = false;
  history.wake_up_at_checkpoints_s = 0;
  history.starved_min_run_s = 0;
  history.starved_min_run_within_share = false;
  history.max_victim_lost_within_share_s.reset();
  auto r = RunReplay(history, jobs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[3].first_start, 7200);
  EXPECT_EQ(r->jobs[2].first_start, 7300);

  ReplayOptions present = history;
  present.fair_share_history_hours = 0;
  present.demote_running_above_history_percent = 0;
  auto p = RunReplay(present, jobs);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->jobs[2].first_start, 7200);
  EXPECT_EQ(p->jobs[3].first_start, 7300);
}

// One test per kind of bad fair_share_history_hours: negative, above 8,784 (a leap year), and set
// without a boost.
TEST(Replay, BadFairShareHistoryHoursIsInvalidArgument) {
  ReplayOptions negative = Named("default", kOneNode);
  negative.fair_share_history_hours = -1;
  EXPECT_TRUE(
      InvalidArgumentNaming(negative, "fair_share_history_hours: must be in [0, 8784], got -1"));
  ReplayOptions huge = Named("default", kOneNode);
  huge.fair_share_history_hours = 8785;
  EXPECT_TRUE(InvalidArgumentNaming(huge, "got 8785"));
  ReplayOptions no_boost = Named("default", kOneNode);
  no_boost.fair_share_boost_half_levels = 0;
  no_boost.boost_kept_from_gpus = 0;
  EXPECT_TRUE(InvalidArgumentNaming(no_boost, "fair_share_history_hours: needs a boost"));
}

// A running job of a cluster far beyond its share over the past week loses half a level
// (demote_running_above_history_percent 200). One node; the LAS thresholds are out of reach, so
// every job stays at level 0 and only the boost and the demotion order them. A (4 GPUs of "a",
// 20,000 s) and C0 (4 of "c") run from 0; C (4 of "c", 1,000 s) waits from 1, B (8 of "b") from
// 2, D (of "d") comes much later and only shapes the guarantees (shares of the trace's demand:
// "a" 0.106 GPUs, "c" 1.604, "b" 4.263). From 2 "a" is entitled to 0.78 GPUs and holds 4, so
// within seconds it has received more than twice its entitlement over the week; "c" holds 4
// against 2.28 (about 1.5 times over the week). Neither is within its share, so C and A are
// both at 0 and nothing is boosted. Demoted, A (-1) is below C: at 3,600, A's first checkpoint
// after its hour, C evicts it (A loses nothing), runs to 4,600, and A resumes there and ends at
// 4,600 + 60 (restore) + 16,400. Without the demotion A and C are level and C waits for A's
// end. (B, 8 GPUs, waits for the whole node in both cases.)
TEST(Replay, DemotionLowersARunningJobOfAClusterFarBeyondItsShare) {
  const std::vector<TraceJob> jobs = {J(0, 4, 20000, "a"),           // A
                                      J(0, 4, 300000, "c"),          // C0
                                      J(1, 4, 1000, "c"),            // C
                                      J(2, 8, 400000, "b"),          // B
                                      J(10000000, 8, 190000, "d")};  // D
  ReplayOptions demoted = Named("default", kOneNode);
  ASSERT_EQ(demoted.demote_running_above_history_percent, 200);
  demoted.las_thresholds_gpu_seconds = {int64_t{1} << 50};
  demoted.policy.las_thresholds_gpu_seconds = demoted.las_thresholds_gpu_seconds;
  auto r = RunReplay(demoted, jobs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[2].first_start, 3600);
  EXPECT_EQ(r->jobs[2].completion, 4600);
  EXPECT_EQ(r->jobs[0].completion, 4600 + 60 + 16400);

  ReplayOptions level = demoted;
  level.demote_running_above_history_percent = 0;
  auto l = RunReplay(level, jobs);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->jobs[0].completion, 20000);
  EXPECT_EQ(l->jobs[2].first_start, 20000);
}

// One test per kind of bad demote_running_above_history_percent: negative, above 1,000,000, and
// set without a history.
TEST(Replay, BadDemoteRunningAboveHistoryPercentIsInvalidArgument) {
  ReplayOptions negative = Named("default", kOneNode);
  negative.demote_running_above_history_percent = -1;
  EXPECT_TRUE(InvalidArgumentNaming(
      negative, "demote_running_above_history_percent: must be in [0, 1000000], got -1"));
  ReplayOptions huge = Named("default", kOneNode);
  huge.demote_running_above_history_percent = 1000001;
  EXPECT_TRUE(InvalidArgumentNaming(huge, "got 1000001"));
  ReplayOptions no_history = Named("default", kOneNode);
  no_history.fair_share_history_hours = 0;
  EXPECT_TRUE(
      InvalidArgumentNaming(no_history, "demote_running_above_history_percent: needs a history"));
}

// ReplayOptions::starved_min_run_s keeps a job the starvation guard served from eviction. One
// node, `default` (checkpoints every 1,800 s of work, 60 s restores, victims after 3,600 s of
// running and at most 120 s past a checkpoint, and the guard at 165,600 s of waiting, set here:
// `default`'s 162,000 moves every time below).
//   - L (8 GPUs, 173,600 s) starts at 0. A (8 GPUs, 168,400 s) arrives at 10 and evicts L at
//     its checkpoint at 3,600 (L is level 2 from 900 s, priority -1 with the kept boost; A is
//     level 0, priority 0).
//   - L then waits behind A (both level 2, and A's run keeps the boost) until it starves. The
//     periodic cycles come at 3,600 + 300k; A's checkpoints at 3,600 + 1,800k, so at 171,000
//     A is cheap and L's reservation drains it. L restarts at 171,000 with 3,600 s of work.
//   - N (1 GPU, 100 s) arrives at 200,000 and outranks L (level 0 against L's -1).
// With starved_min_run_s 2 days, L started after waiting 167,400 s (more than the bound) and
// stays until 171,000 + 172,800: it runs to its end at 171,060 + 170,000 = 341,060. A, starving
// by then, goes next and ends at 341,060 + 60 + 1,000 = 342,120; N starts then. Without it N
// evicts L at L's next checkpoint after 200,000 (171,060 + 1,800m - 3,600 = 201,660) and runs at
// once; L restarts when N ends, at 201,760, with 34,200 s of work (139,400 left), and checkpoints
// at 201,820 + 1,800m. A, pending since 171,000, starves after 336,600; at the periodic cycle at
// 336,760 its reservation drains the node, and the host wakes at L's next checkpoint, 336,820:
// L is evicted a third time, A ends at 336,820 + 60 + 1,000 = 337,880, and L at 337,880 + 60 +
// 4,400 = 342,340.
// With 2 days and preemption.starving_drain_past_min_runtime, N still waits, but A, starving,
// has no other way in than L's node: at the periodic cycle at 336,900 its reservation finds L
// 240 s past its checkpoint (171,060 + 1,800 x 92 = 336,660), and the host wakes at L's next
// one, 338,460, inside L's minimum (to 343,800): L is drained there, with all of its 171,000 s
// of work kept. A ends at 338,460 + 60 + 1,000 = 339,520; N (level 0) starts then and ends at
// 339,620, and L at 339,620 + 60 + 2,600 = 342,280.
TEST(Replay, StarvedMinRunKeepsAJobServedForStarving) {
  const std::vector<TraceJob> jobs = {J(0, 8, 173600, "a"), J(10, 8, 168400, "a"),
                                      J(200000, 1, 100, "a")};
  ReplayOptions options = Named("default", kOneNode);
  options.policy.starvation_bound_s = 165600;
  // `default` keeps such a job 3 days, within its cluster's share, and lets a starving job with
  // no other way in take it; one cluster here, which is always within its share.
  ASSERT_EQ(options.starved_min_run_s, 3 * 86400);
  ASSERT_TRUE(options.starved_min_run_within_share);
  ASSERT_TRUE(options.policy.preemption.starving_drain_past_min_runtime);
  options.policy.preemption.starving_drain_past_min_runtime = false;
  options.starved_min_run_s = 2 * 86400;
  auto r = RunReplay(options, jobs);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jobs[0].completion, 341060);
  EXPECT_EQ(r->jobs[0].preemptions, 1);
  EXPECT_EQ(r->jobs[1].first_start, 3600);
  EXPECT_EQ(r->jobs[1].completion, 342120);
  EXPECT_EQ(r->jobs[1].preemptions, 1);
  EXPECT_EQ(r->jobs[2].first_start, 342120);
  EXPECT_EQ(r->metrics.preemptions, 2);

  options.starved_min_run_s = 0;
  options.starved_min_run_within_share = false;
  auto without = RunReplay(options, jobs);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ(without->jobs[2].first_start, 201660);
  EXPECT_EQ(without->jobs[0].preemptions, 3);
  EXPECT_EQ(without->jobs[1].completion, 337880);
  EXPECT_EQ(without->jobs[0].completion, 342340);
  EXPECT_EQ(without->metrics.preemptions, 4);

  options.starved_min_run_s = 2 * 86400;
  options.policy.preemption.starving_drain_past_min_runtime = true;
  auto past = RunReplay(options, jobs);
  ASSERT_TRUE(past.ok()) << past.status();
  EXPECT_EQ(past->jobs[1].completion, 339520);
  EXPECT_EQ(past->jobs[2].first_start, 339520);
  EXPECT_EQ(past->jobs[0].preemptions, 2);
  EXPECT_EQ(past->jobs[0].completion, 342280);
  EXPECT_EQ(past->metrics.preemptions, 3);
  // Both evictions at checkpoints: only the 60 s restores on 8 GPUs.
  EXPECT_DOUBLE_EQ(past->metrics.gpu_hours_lost_to_preemption, 3 * 8 * 60 / 3600.0);
}

// ReplayOptions::starved_min_run_within_share (on in `default`) keeps a served job only while its
// cluster holds no more than its entitlement. The jobs of StarvedMinRunKeepsAJobServedForStarving
// under `default` (3 days; with that test's guard at 165,600 s), but N is of cluster "b", whose
// late job (1 GPU for 2,736,000 s from 1,000,000, when the others have ended) gives "a" and "b"
// guarantees of about 4 GPUs each (2,736,000 and 2,736,100 GPU-seconds of 5,472,100: 3,999 and
// 4,000 milli-GPUs). Until 200,000 "b" asks for nothing, so "a" is entitled to all 8 GPUs and
// everything goes as there: L, served for starving, restarts at 171,000. When N arrives at 200,000,
// "a" (L running, A waiting: 16 GPUs of demand) is entitled to 7 GPUs (its 3.999, and the 3.001
// that "b", asking for 1, leaves) and holds 8. So L is not kept, and N, boosted ("b" is within its
// entitlement), evicts it at its checkpoint at 201,660, as when nothing is kept: A drains L at
// 336,820 and ends at 337,880, L at 342,340. Kept whatever its cluster holds, L stays until A,
// starving with no other way in, drains it at 338,460; A ends at 339,520 and N starts then.
TEST(Replay, StarvedMinRunWithinShareKeepsNoJobOfAClusterBeyondIt) {
  const std::vector<TraceJob> jobs = {J(0, 8, 173600, "a"), J(10, 8, 168400, "a"),
                                      J(200000, 1, 100, "b"), J(1000000, 1, 2736000, "b")};
  ReplayOptions options = Named("default", kOneNode);
  options.policy.starvation_bound_s = 165600;
  auto within = RunReplay(options, jobs);
  ASSERT_TRUE(within.ok()) << within.status();
  EXPECT_EQ(within->jobs[2].first_start, 201660);
  EXPECT_EQ(within->jobs[0].preemptions, 3);
  EXPECT_EQ(within->jobs[1].completion, 337880);
  EXPECT_EQ(within->jobs[0].completion, 342340);
  EXPECT_EQ(within->metrics.preemptions, 4);

  options.starved_min_run_within_share = false;
  auto regardless = RunReplay(options, jobs);
  ASSERT_TRUE(regardless.ok()) << regardless.status();
  EXPECT_EQ(regardless->jobs[1].completion, 339520);
  EXPECT_EQ(regardless->jobs[2].first_start, 339520);
  EXPECT_EQ(regardless->jobs[0].preemptions, 2);
  EXPECT_EQ(regardless->jobs[0].completion, 342280);
  EXPECT_EQ(regardless->metrics.preemptions, 3);
}

TEST(Replay, BadStarvedMinRunIsInvalidArgument) {
  ReplayOptions negative = Named("default", kOneNode);
  negative.starved_min_run_s = -1;
  EXPECT_TRUE(
      InvalidArgumentNaming(negative, "starved_min_run_s: must be in [0, 31536000], got -1"));
  ReplayOptions huge = Named("default", kOneNode);
  huge.starved_min_run_s = 365 * 86400 + 1;
  EXPECT_TRUE(InvalidArgumentNaming(huge, "got 31536001"));
  ReplayOptions fifo = Named("fifo", kOneNode);
  fifo.starved_min_run_s = 3600;
  EXPECT_TRUE(InvalidArgumentNaming(fifo, "starved_min_run_s: needs preemption"));
  ReplayOptions unbounded = Named("default", kOneNode);
  unbounded.policy.starvation_bound_s = 0;
  unbounded.starved_min_run_s = 3600;
  EXPECT_TRUE(InvalidArgumentNaming(unbounded, "a starvation bound"));
}

// One test per kind of bad starved_min_run_within_share: set without starved_min_run_s, and
// without a boost.
TEST(Replay, BadStarvedMinRunWithinShareIsInvalidArgument) {
  ReplayOptions unkept = Named("default", kOneNode);
  unkept.starved_min_run_s = 0;
  EXPECT_TRUE(InvalidArgumentNaming(
      unkept, "starved_min_run_within_share: needs starved_min_run_s > 0 and a boost"));
  ReplayOptions no_boost = Named("las", kOneNode);
  no_boost.policy.starvation_bound_s = 86400;
  no_boost.starved_min_run_s = 3600;
  no_boost.starved_min_run_within_share = true;
  EXPECT_TRUE(InvalidArgumentNaming(no_boost, "(fair_share_boost_half_levels > 0)"));
}

// ReplayOptions::max_victim_lost_within_share_s (30 s in `default`): a victim of a cluster within
// its share loses at most that much. One node, `default` without the wake-ups at checkpoints, so
// that the cycles come every 300 s from S's arrival. L (8 GPUs, 10,000 s) starts at 0; S (1 GPU,
// 100 s) arrives at 4,000 and outranks L (level 0, priority 0, against L's level 2 with the kept
// boost, -1). L checkpoints every 1,800 s; the cycles at 4,000 + 300k find it 100 s or more past
// a checkpoint (5,500, 7,300, 9,100, ...), never within 30 s.
//   - S in L's cluster "a": "a" is the only cluster, entitled to the whole pool, and holds its 8
//     GPUs: within its share, so L is never a victim and S starts when L ends, at 10,000.
//   - S in cluster "b": "a" is entitled to 7.99 GPUs (its share of the demand, 80,000 of 80,100
//     GPU-seconds, of 8 GPUs, plus half of the milli-GPU left) and holds 8: beyond its share, so
//     L stays a victim up to the policy's 100 s, and S evicts it at 5,500 (L loses 100 s and its
//     60 s restore on 8 GPUs, and ends at 5,600 + 60 + 4,600).
//   - Without the limit, S evicts L at 5,500 in the first case too.
TEST(Replay, MaxVictimLostWithinShareSparesAVictimOfAClusterWithinIt) {
  ReplayOptions options = Named("default", kOneNode);
  ASSERT_EQ(options.max_victim_lost_within_share_s, 30);
  options.wake_up_at_checkpoints_s = 0;
  auto within = RunReplay(options, {J(0, 8, 10000, "a"), J(4000, 1, 100, "a")});
  ASSERT_TRUE(within.ok()) << within.status();
  EXPECT_EQ(within->jobs[1].first_start, 10000);
  EXPECT_EQ(within->jobs[1].completion, 10100);
  EXPECT_EQ(within->jobs[0].completion, 10000);
  EXPECT_EQ(within->metrics.preemptions, 0);

  auto beyond = RunReplay(options, {J(0, 8, 10000, "a"), J(4000, 1, 100, "b")});
  ASSERT_TRUE(beyond.ok()) << beyond.status();
  EXPECT_EQ(beyond->jobs[1].first_start, 5500);
  EXPECT_EQ(beyond->jobs[0].completion, 5600 + 60 + 4600);
  EXPECT_EQ(beyond->metrics.preemptions, 1);
  EXPECT_DOUBLE_EQ(beyond->metrics.gpu_hours_lost_to_preemption, 8 * 160 / 3600.0);

  options.max_victim_lost_within_share_s.reset();
  auto unlimited = RunReplay(options, {J(0, 8, 10000, "a"), J(4000, 1, 100, "a")});
  ASSERT_TRUE(unlimited.ok()) << unlimited.status();
  EXPECT_EQ(unlimited->jobs[1].first_start, 5500);
  EXPECT_EQ(unlimited->metrics.preemptions, 1);
}

// One test per kind of bad max_victim_lost_within_share_s: negative, above a day, set without a
// boost (which also covers a policy without preemption: `fifo` has neither), without
// checkpoints, and under free preemption.
TEST(Replay, BadMaxVictimLostWithinShareIsInvalidArgument) {
  ReplayOptions negative = Named("default", kOneNode);
  negative.max_victim_lost_within_share_s = -1;
  EXPECT_TRUE(InvalidArgumentNaming(
      negative, "max_victim_lost_within_share_s: must be in [0, 86400], got -1"));
  ReplayOptions huge = Named("default", kOneNode);
  huge.max_victim_lost_within_share_s = 86401;
  EXPECT_TRUE(InvalidArgumentNaming(huge, "got 86401"));
  ReplayOptions no_boost = Named("las", kOneNode);
  no_boost.max_victim_lost_within_share_s = 30;
  EXPECT_TRUE(InvalidArgumentNaming(
      no_boost,
      "max_victim_lost_within_share_s: needs a boost (fair_share_boost_half_levels > 0)"));
  ReplayOptions no_preemption = Named("default", kOneNode);
  no_preemption.policy.preemption.enabled = false;
  no_preemption.wake_up_at_checkpoints_s = 0;
  no_preemption.starved_min_run_s = 0;
  no_preemption.starved_min_run_within_share = false;
  EXPECT_TRUE(InvalidArgumentNaming(
      no_preemption,
      "max_victim_lost_within_share_s: needs a boost (fair_share_boost_half_levels "
      "> 0), preemption (policy.preemption.enabled)"));
  ReplayOptions no_checkpoints = Named("default", kOneNode);
  no_checkpoints.checkpoint_interval_s = 0;
  no_checkpoints.wake_up_at_checkpoints_s = 0;
  EXPECT_TRUE(InvalidArgumentNaming(no_checkpoints, "checkpoints (checkpoint_interval_s > 0)"));
  ReplayOptions costless = Named("las-free", kOneNode);
  costless.fair_share_boost_half_levels = 3;
  costless.max_victim_lost_within_share_s = 30;
  EXPECT_TRUE(InvalidArgumentNaming(costless, "costed preemption (free_preemption off)"));
}

}  // namespace
}  // namespace gpupool::sim
