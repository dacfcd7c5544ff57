// Preemption over many cycles: 1,000 seeded multi-queue scenarios (GenerateMultiQueueScenario),
// each replayed for kCycles cycles as a host would run them: Schedule(), check the decisions,
// ApplyDecisions() (evictions, then starts), advance `now` by a fixed step (300 s or 1,200 s,
// by seed) and each running job's attained_service_s by the same step, and at the end of each
// stretch of 4-8 cycles inject an external change (1-3 jobs arrive, a running job completes, a
// running job reports a checkpoint). Within a stretch nothing changes but time and what the
// decisions do. Policies: preemption on; reclaim_across_queues on 3 seeds in 5; fair-share queue
// turns on 1 in 3; victim_order cheapest-first or lowest-priority-first, half each; best-fit or
// spread; a checkpoint grace on some.
//
// Properties, checked on every cycle (the letters are those of the issue):
//   (s) sanity: Schedule() and ApplyDecisions() succeed and the applied snapshot validates;
//   (a) nothing is evicted without the beneficiary placing: every Preempt's for_job was pending
//       (or is a victim of the same cycle placed again) and has a Start in the same decisions;
//   A cycle that settled in several passes (counters.passes > 1; docs/engine.md, "Settling") is
//   also checked pass by pass, each pass on the state it saw (CheckPasses()): (a)-(d) hold for
//   every pass exactly as for a one-pass cycle, and (c) is judged only there;
//   (b) victims are whole gangs, preemptible and past their minimum runtime: each victim runs in
//       the snapshot, is preempted once, is preemptible, has run at least min_runtime_s (now -
//       start_time), and once applied holds nothing unless the same decisions restart it whole
//       (every Start places every replica of every group);
//   (c) guarantees, exactly the rules of PlanAllowed (src/engine/preempt.h) for each plan (the
//       victims with one for_job) that takes victims of other queues: sides S (victim) and J
//       (beneficiary) are the queues just below the lowest common ancestor (neither queue is an
//       ancestor of the other) and J is the same for every victim; m_S is what the plan takes
//       from S, own the beneficiary's own-queue victims, gang the beneficiary at min replicas,
//       U the usage over all models at the time of the plan, E the "*" entitlement of the cycle
//       (queue_shares), G the guarantee (max of the "*" guarantee and the per-model sum):
//         (c1) U_S > E_S;
//         (c2) if J borrows (U_J + gang - own > G_J): U_S - m_S >= G_S (usage within the
//              guarantee is never taken for another queue's borrowing); else U_S > G_S;
//         (c3) no loops: U_J + gang - own - E_J <= U_S - m_S - E_S.
//       U_S at the time of the plan is read from the Preempt's reason ("queue S holds U
//       milli-GPUs, above its entitlement of E"), which must name S and E_S. U_J is known only
//       within bounds (starts earlier in the cycle raise it, other plans' evictions lower it):
//       low = its usage at the start of the cycle minus every other plan's victims in J, high =
//       start plus every other start into J. A rule is failed when it fails for every U_J in
//       [low, high]; plans where (c2) depends on where U_J lies are counted as undetermined;
//   (d) within a queue a victim has a strictly lower priority than its beneficiary; a victim of
//       another queue only with reclaim_across_queues;
//   (e) no loop. A cycle is quiet when it has no Start and no Preempt. A trigger is an external
//       change before the cycle (or the first cycle), or a preemptible job that was running at
//       the previous cycle inside its minimum runtime and is past it now (a new possible
//       victim). Checked:
//         (e1) quiescence: there are never 4 consecutive non-quiet cycles of which the last 3
//              follow no trigger;
//         (e2) a quiet state stays quiet: a cycle after a quiet one is quiet unless a trigger
//              precedes it (the snapshot differs only in `now`);
//         (e3) no eviction back: within a stretch (between external changes), if A was evicted
//              for B, B is never evicted for A;
//         (e4) within a stretch, no job is preempted more than once;
//   (f) determinism: replaying the same seed again gives byte-identical decisions every cycle.
// A failure prints the seed, the cycle, the snapshot before it and its decisions; replay one seed
// cycle by cycle with
//   GPUPOOL_CYCLES_SEED=<seed> preemption_cycles_test --gtest_also_run_disabled_tests
//       --gtest_filter='*PrintReplay*'
//
// (e1), (e3) and (e4), which failed on some seeds once, are checked in their own tests below,
// with the seeds they failed on and the causes; the others are all checked by
// InvariantsHoldOverCycles.
//
// The checks are in preemption_cycles_checks.h, the replay in preemption_cycles_replay.h.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "tests/core/preemption_cycles_checks.h"
#include "tests/core/preemption_cycles_replay.h"

namespace gpupool {
namespace {

using ::gpupool::preemption_cycles::AllResults;
using ::gpupool::preemption_cycles::ExpectProperty;
using ::gpupool::preemption_cycles::kBeneficiaryStarts;
using ::gpupool::preemption_cycles::kCycles;
using ::gpupool::preemption_cycles::kDeterminism;
using ::gpupool::preemption_cycles::kGuarantees;
using ::gpupool::preemption_cycles::kNoEvictionBack;
using ::gpupool::preemption_cycles::kOnePreemptionPerStretch;
using ::gpupool::preemption_cycles::kPriorityWithinQueue;
using ::gpupool::preemption_cycles::kPropertyCount;
using ::gpupool::preemption_cycles::kPropertyNames;
using ::gpupool::preemption_cycles::kQuiesces;
using ::gpupool::preemption_cycles::kSanity;
using ::gpupool::preemption_cycles::kSeeds;
using ::gpupool::preemption_cycles::kStaysQuiet;
using ::gpupool::preemption_cycles::kWholePreemptibleVictims;
using ::gpupool::preemption_cycles::Property;
using ::gpupool::preemption_cycles::Replay;
using ::gpupool::preemption_cycles::Results;
using ::gpupool::preemption_cycles::RunReplay;
using ::gpupool::preemption_cycles::Stats;
using ::gpupool::preemption_cycles::Violation;

// Every property that holds today, and that the scenarios exercise what they check.
TEST(PreemptionCyclesTest, InvariantsHoldOverCycles) {
  const Results& r = AllResults();
  std::string summary;
  for (int p = 0; p < kPropertyCount; ++p) {
    summary += fmt::format(
        "  {}: {} failing seeds (reclaim off/on {}/{}, cheapest-first/lowest-priority-first "
        "{}/{})\n",
        kPropertyNames[p], r.failing[p].size(), r.by_reclaim[p][0], r.by_reclaim[p][1],
        r.by_victim_order[p][0], r.by_victim_order[p][1]);
  }
  const Stats& s = r.stats;
  std::cout << fmt::format(
      "{} seeds x {} cycles: {} cycles ({} quiet) in {} stretches, {} starts, {} preemptions "
      "({} across queues, {} victims restarted at once, {} handed on by settling), {} "
      "cross-queue plans ({} leaving the victim side within one GPU of its guarantee, {} taking "
      "it below (J reclaiming), {} of "
      "them undetermined; {} reasons unparsed)\n{}",
      kSeeds, kCycles, s.cycles, s.quiet_cycles, s.stretches, s.starts, s.preemptions,
      s.cross_queue_preemptions, s.restarted_victims, s.handed_on, s.cross_queue_plans,
      s.near_guarantee_plans, s.below_guarantee_plans, s.undetermined_plans, s.unparsed_reasons,
      summary);
  for (Property p : {kSanity, kBeneficiaryStarts, kWholePreemptibleVictims, kGuarantees,
                     kPriorityWithinQueue, kStaysQuiet, kDeterminism}) {
    ExpectProperty(p);
  }
  // Not vacuous.
  EXPECT_GT(s.preemptions, 1000);
  EXPECT_GT(s.cross_queue_plans, 200);
  EXPECT_GT(s.stretches, 3 * static_cast<int64_t>(kSeeds));
  EXPECT_GT(s.cycles - s.quiet_cycles, 2000);
}

// (e1), (e3) and (e4) failed on a few seeds, found by replaying them (GPUPOOL_CYCLES_SEED, see
// the top of the file); each failure says whether the "*" entitlements moved during its stretch.
// Three causes, all fixed: (e1), (e3) and (e4) hold on every seed.
//
// 1. (Fixed.) Entitlements moved with placement. A running job's demand counted on the GPU model it
// ran
//    on, a pending job's on the first model it accepts (src/engine/entitlements.cc), so evicting or
//    (re)starting a job that accepts several models moves its demand between models; the
//    per-model water-filling changes and so do the "*" entitlements that PlanAllowed compares.
//    The no-loop rule (c3) holds in each cycle against that cycle's entitlements, but the next
//    cycle's may let the victim's side reclaim back. Seed 171 (one A100 and three H100 nodes):
//    cycle 0, j06 (q1) evicts j05 and j10 of q2 (entitlements q1 2438, q2 2562); j05 and j10
//    ran on H100 and now count as pending A100 demand, so in cycle 1 q1's entitlement is 1626
//    and q2's 3374, and j05 (q2) reclaims j06 from q1 (3500 > 1626): B evicts A after A evicted
//    B (e3); j06 then evicts j00 a second time in cycle 2 (e4). Seed 715: j05 (q0) reclaims
//    j04 on H100 while counted as A100 demand; running on H100 it drops q0's entitlement from
//    6000 to 5000 (H100 is contended) and j04 reclaims it back. Seed 272 is the same. Counting
//    a running job's demand like a pending one's (on its first accepted model) removes every
//    (e3) failure and 3 of the 5 (e1) ones; src/engine/entitlements.cc now does so for jobs that
//    accept several models, and (e3) is enabled: 0 of 1,000 seeds fail it (engine of 353cc65 plus
//    that change); (e1) fails on 502 635 and (e4) on 107 216 372 385 421 456 476 502 582 606 635
//    686 800 821, all with reclaim across queues on.
//
// 2. (Fixed by settling, src/engine/settle.cc.) No second chance within the cycle. Victims were
//    retried only
//    without preemption (stage 6b), a job that failed before an eviction or a start is not
//    retried with preemption afterwards, jobs started in the cycle are never victims, and both
//    passes serve jobs in job order whatever their queue's share. So capacity a reclaim frees
//    can go to a job of a queue far above its entitlement (or to the victim itself, restarted
//    in 6b), which the under-served queue reclaims the next cycle; each hop of such a cascade
//    takes a cycle, and a job just restarted, having lost almost no work, is the cheapest
//    victim. Seed 222 (entitlements constant): cycle 16, j15 (q0, below its entitlement)
//    reclaims j12 from q2 (5500 > 750); cycle 17, j00 (q1) evicts j15 and j10 of q0; cycle 18,
//    j10 reclaims j11 from q4 and j12 (q2, priority 3) starts in what that freed before j15
//    (priority 1) is tried; cycle 19, j15 reclaims j12 again: four busy cycles in a row (e1) and
//    j12 preempted twice in one stretch (e4). Seed 216: j11 (q1, above its entitlement) is
//    reclaimed for j06 (q0) and restarted in 6b in the same cycle, then reclaimed again the next
//    cycle by j13 (q0), itself a victim of the first cycle that could not preempt until then.
//    Retrying failed jobs and victims with preemption in 6b (tried on a scratch copy) did not
//    fix this alone (e4 17 -> 16 seeds). Settling does: a cycle that evicts runs more passes on
//    the state its decisions leave, where the victims are pending again and may preempt, and
//    where this cycle's own starts may be revoked at no cost whatever their minimum runtime, until
//    a pass changes nothing. With it (e1) went from 5 seeds to 0 and (e4) from 17 to 3.
//
// 3. (Fixed: no job loses the same work twice, src/engine/lost_work.h RedoingLostWork().) A
//    restarted victim was protected only for a while. A victim that stage 6b places again (or
//    a job whose start the cycle keeps) starts a new minimum runtime. Later in the same
//    stretch, once a job's minimum runtime lapses (a trigger of (e1): time passes, nothing else
//    changes), a pending job may take that job and the restarted victim together. Seed 728
//    (reclaim off, cheapest-first): cycle 0, j07 (priority 3) is evicted for j11 (4) and placed
//    again elsewhere; cycle 1, j09's minimum runtime lapses and j04 (4) evicts j09 and j07, the
//    only set that frees j04's quota. Seeds 385 and 711 are the same across queues; in all
//    three the restarted victim is in the only set that works, so no victim order or price can
//    spare it, and a protection that lapses with time (tried: 600 to 7,200 s from the restart)
//    only moves the second eviction later in the stretch and breaks (e2) on 4 to 23 seeds (its
//    lapse is a change the host does not see). The rule (docs/engine.md, stage 6, "Who may be
//    evicted"): a job that resumed (its last checkpoint is before its start, or its attained
//    service is more than its time since its start) and has not checkpointed since is no
//    victim: evicting it would lose the same work a second time. A victim restarted in a stretch
//    is such a job until its next checkpoint, which this host reports only as an external change.
//    The replay reports attained service as a host does (a running job does a step more work each
//    step; it did not before, which changes nothing by itself: the same 3 seeds failed (e4) and
//    no other property failed on any seed). With the rule (e4) holds on 1,000 of 1,000 seeds,
//    with 1,790 preemptions instead of 1,912.
//
// Failing seeds of 1,000 before settling (engine of 19d1f5e, the same at 67c5ff8 and 91f63a4):
// (e1) 222 502 635 802 955; (e3) 171 272 715; (e4) 171 216 222 272 385 421 456 476 502 522 582
// 606 635 686 802 912 955. With settling: (e4) 385 711 728. With the resumed-job rule: none.
TEST(PreemptionCyclesTest, QuietWithinFourCyclesOfATrigger) { ExpectProperty(kQuiesces); }

TEST(PreemptionCyclesTest, NoJobEvictsAJobThatEvictedIt) { ExpectProperty(kNoEvictionBack); }

TEST(PreemptionCyclesTest, NoJobPreemptedTwiceInAStretch) {
  ExpectProperty(kOnePreemptionPerStretch);
}

// Seeds on which a victim was named for a job that does not start (found with 10,000 seeds):
// the passes moved the victim for a job that a later pass undid again (seed 1695: j00 evicted
// for j12's quota, re-placed on another node; a reclaim undid j12, and j13 took the GPU j00
// had held). for_job now names the job that took the victim's GPUs (docs/engine.md,
// "Settling").
// The replay of `seed`, with a failure for each violation of a property.
Replay ReplayWithoutViolations(uint64_t seed) {
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  Replay replay = RunReplay(seed);
  for (const Violation& v : replay.violations) {
    ADD_FAILURE() << fmt::format("cycle {}: {}: {}", v.cycle, kPropertyNames[v.property], v.what);
  }
  return replay;
}

TEST(PreemptionCyclesTest, AVictimMovedForAnUndoneStartNamesWhoTookItsRoom) {
  for (uint64_t seed : {1695, 3610}) ReplayWithoutViolations(seed);
}

// A chain of undone starts that ends at the victim itself names no one; the room went to the job
// that starts on the victim's GPUs, or else on its nodes. Found with 20,000 seeds: in 16147,
// cycle 17 moves j02 from n0 (it was evicted for j15, whose start a later pass undid for j02)
// and reported "preempt j02 for j02"; j16 starts on n0, so it now names j16. In 17997 cycle 16
// reached the cap of 8 passes, and its last pass moved j12, evicted "for" j18, whose start a
// later pass undid for j12 ("preempt j12 for j12"); no start took its room, and it named j18, as
// its reason does. With the cap at 16 (kMaxSettlingPasses) that cycle settles in 9 passes
// (docs/engine.md "Guarantees", "The cap of passes"), and names no one as its own beneficiary.
TEST(PreemptionCyclesTest, NoVictimIsNamedAsItsOwnBeneficiary) {
  const Replay moved = ReplayWithoutViolations(16147);
  ASSERT_GE(moved.texts.size(), 18u);
  EXPECT_NE(moved.texts[17].find("preempt j02 for j16 "), std::string::npos) << moved.texts[17];
  const Replay replay = RunReplay(17997, /*verbose=*/false);
  ASSERT_GE(replay.texts.size(), 17u);
  EXPECT_EQ(replay.texts[16].find("preempt j12 for j12"), std::string::npos) << replay.texts[16];
  EXPECT_NE(replay.texts[16].find("preempt j12 for j18"), std::string::npos) << replay.texts[16];
  for (const Violation& v : replay.violations) {
    EXPECT_EQ(v.what.find("itself"), std::string::npos) << v.what;
  }
}

// Seeds on which victims were moved for nothing (found with 10,000 seeds), now put back where
// they ran (docs/engine.md, "Settling"):
//   - 8655, (a) and (e1): in cycle 1, j06 (q1) was moved from n3 to n4 "for j05", a running job
//     of q1 that the passes evicted (queues q0 and q1 reclaim from each other) and put back where
//     it ran; in cycle 2 j00 the same way, and so on for four cycles. Cycles 1 and 2 now decide
//     nothing;
//   - 9740, (e3): in cycle 0, q0 and q2 reclaimed from each other and two running jobs on n0
//     swapped places, j01 moved "for" j04 and j04 "for" j01 (the job the reclaim was for, j00,
//     lost its start to j01). Neither goes back alone (each holds the other's room); both go
//     back together, and cycle 0 only starts j08 and j12.
TEST(PreemptionCyclesTest, VictimsMovedForNothingGoBack) {
  const Replay a = ReplayWithoutViolations(8655);
  const Replay b = ReplayWithoutViolations(9740);
  ASSERT_GE(a.texts.size(), 3u);
  ASSERT_GE(b.texts.size(), 1u);
  for (const std::string& text : {a.texts[1], a.texts[2], b.texts[0]}) {
    EXPECT_EQ(text.find("\npreempt "), std::string::npos) << text;
  }
  const std::string& first = b.texts[0];
  EXPECT_NE(first.find("\nstart j08 main/0@n1[1,2]x1000\nstart j12 "), std::string::npos) << first;
  EXPECT_EQ(first.find("start j01"), std::string::npos) << first;
  EXPECT_EQ(first.find("start j04"), std::string::npos) << first;
}

// Prints one replay cycle by cycle: GPUPOOL_CYCLES_SEED=<seed>.
TEST(PreemptionCyclesTest, DISABLED_PrintReplay) {
  const char* env = std::getenv("GPUPOOL_CYCLES_SEED");
  if (env == nullptr) GTEST_SKIP() << "set GPUPOOL_CYCLES_SEED";
  const uint64_t seed = std::strtoull(env, nullptr, 10);
  const Replay replay = RunReplay(seed, /*verbose=*/true);
  for (const Violation& v : replay.violations) {
    std::cout << fmt::format("VIOLATION cycle {}: {}: {}\n", v.cycle, kPropertyNames[v.property],
                             v.what);
  }
}

}  // namespace
}  // namespace gpupool
