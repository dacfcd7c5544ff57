// ComputeFairShare (stage 3): worked examples with exact expected entitlements. The oracle that
// recomputes the rules by progressive filling in exact rationals on tiny trees, and the seeded
// property tests of the invariants on random forests, including re-indexing the queues, are in
// fair_share_property_test.cc.
#include "fair_share.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/core/fair_share_helpers.h"

namespace gpupool::internal {
namespace {

using ::gpupool::internal::fair_share_testing::Tree;

int64_t Ent(const FairShareResult& r, const FairShareInput& in, int32_t q, int32_t m = 0) {
  return r.entitlement_milli[static_cast<size_t>(q) * in.model_count + m];
}
int64_t Dem(const FairShareResult& r, const FairShareInput& in, int32_t q, int32_t m = 0) {
  return r.demand_milli[static_cast<size_t>(q) * in.model_count + m];
}

constexpr int64_t kLots = 1'000'000;

// ---------------------------------------------------------------------------------------------
// Worked examples (one GPU model unless stated).

// Capacity 10000. a: guarantee 6000, wants 2000; b: guarantee 2000, wants 9000; c: guarantee
// 3000, wants nothing. Guarantees count only up to demand: a 2000, b 2000, c 0; the surplus 6000
// goes to the only queue that still wants more, b: a 2000, b 8000, c 0.
TEST(FairShareTest, GuaranteesAreBoundedByDemand) {
  Tree t(1, {10000});
  const int32_t a = t.Add(), b = t.Add(), c = t.Add();
  t.Guarantee(a, 0, 6000).Demand(a, 0, 2000);
  t.Guarantee(b, 0, 2000).Demand(b, 0, 9000);
  t.Guarantee(c, 0, 3000);
  const FairShareResult r = t.Run();
  EXPECT_EQ(Ent(r, t.input(), a), 2000);
  EXPECT_EQ(Ent(r, t.input(), b), 8000);
  EXPECT_EQ(Ent(r, t.input(), c), 0);
}

// Capacity 12000, three queues guaranteed 1000 each, weights 1:2:3, all wanting plenty. The
// surplus 9000 splits 1500 : 3000 : 4500, so 2500, 4000, 5500.
TEST(FairShareTest, WeightedSurplusOneTwoThree) {
  Tree t(1, {12000});
  const int32_t a = t.Add(), b = t.Add(), c = t.Add();
  for (int32_t q : {a, b, c}) t.Guarantee(q, 0, 1000).Demand(q, 0, kLots);
  t.Weight(b, 0, 2).Weight(c, 0, 3);
  const FairShareResult r = t.Run();
  EXPECT_EQ(Ent(r, t.input(), a), 2500);
  EXPECT_EQ(Ent(r, t.input(), b), 4000);
  EXPECT_EQ(Ent(r, t.input(), c), 5500);
}

// Capacity 12000, weights 1:2:3, c limited to 3000. Unlimited, c would get 6000; it stops at
// 3000 and the 9000 left split 1:2 between a and b: 3000, 6000, 3000.
TEST(FairShareTest, LimitCapsAndTheRestIsRedistributed) {
  Tree t(1, {12000});
  const int32_t a = t.Add(), b = t.Add(), c = t.Add();
  for (int32_t q : {a, b, c}) t.Demand(q, 0, kLots);
  t.Weight(b, 0, 2).Weight(c, 0, 3).Limit(c, 0, 3000);
  const FairShareResult r = t.Run();
  EXPECT_EQ(Ent(r, t.input(), a), 3000);
  EXPECT_EQ(Ent(r, t.input(), b), 6000);
  EXPECT_EQ(Ent(r, t.input(), c), 3000);
}

// Capacity 10000. a: guarantee 2000, may not borrow, wants 8000 -> 2000 and no more.
// b: guarantee 1000, wants 3000 -> 3000. c: no guarantee, wants plenty -> the rest, 5000.
TEST(FairShareTest, QueueThatMayNotBorrowStaysAtItsGuarantee) {
  Tree t(1, {10000});
  const int32_t a = t.Add(), b = t.Add(), c = t.Add();
  t.Guarantee(a, 0, 2000).Demand(a, 0, 8000).NoBorrow(a);
  t.Guarantee(b, 0, 1000).Demand(b, 0, 3000);
  t.Demand(c, 0, kLots);
  const FairShareResult r = t.Run();
  EXPECT_EQ(Ent(r, t.input(), a), 2000);
  EXPECT_EQ(Ent(r, t.input(), b), 3000);
  EXPECT_EQ(Ent(r, t.input(), c), 5000);
}

// Capacity 10000, guarantees 6000 + 6000 + 3000 = 15000: scaled by 10000/15000 to 4000, 4000,
// 2000, and nothing is left for surplus even though c has a larger weight.
TEST(FairShareTest, OversubscribedGuaranteesScaleDownInProportion) {
  Tree t(1, {10000});
  const int32_t a = t.Add(), b = t.Add(), c = t.Add();
  t.Guarantee(a, 0, 6000).Guarantee(b, 0, 6000).Guarantee(c, 0, 3000).Weight(c, 0, 5);
  for (int32_t q : {a, b, c}) t.Demand(q, 0, kLots);
  const FairShareResult r = t.Run();
  EXPECT_EQ(Ent(r, t.input(), a), 4000);
  EXPECT_EQ(Ent(r, t.input(), b), 4000);
  EXPECT_EQ(Ent(r, t.input(), c), 2000);
}

// One GPU (1000) and three queues guaranteed a whole GPU each: 333 each and one milli left over;
// the remainders are equal, so it goes to the lowest index: 334, 333, 333.
TEST(FairShareTest, OversubscribedGuaranteesLeftoverGoesToLowestIndexOnEqualRemainders) {
  Tree t(1, {1000});
  const int32_t a = t.Add(), b = t.Add(), c = t.Add();
  for (int32_t q : {a, b, c}) t.Guarantee(q, 0, 1000).Demand(q, 0, 1000);
  const FairShareResult r = t.Run();
  EXPECT_EQ(Ent(r, t.input(), a), 334);
  EXPECT_EQ(Ent(r, t.input(), b), 333);
  EXPECT_EQ(Ent(r, t.input(), c), 333);
}

// Capacity 1000, weights 4:2:1 (sum 7). Exact shares 571 3/7, 285 5/7, 142 6/7: floors 571,
// 285, 142 (998) and the two leftover units go to the largest remainders (6/7, then 5/7), not
// by index (which would give a and b a unit): 571, 286, 143.
TEST(FairShareTest, LeftoverUnitsGoToLargestRemainders) {
  Tree t(1, {1000});
  const int32_t a = t.Add(), b = t.Add(), c = t.Add();
  for (int32_t q : {a, b, c}) t.Demand(q, 0, kLots);
  t.Weight(a, 0, 4).Weight(b, 0, 2);
  const FairShareResult r = t.Run();
  EXPECT_EQ(Ent(r, t.input(), a), 571);
  EXPECT_EQ(Ent(r, t.input(), b), 286);
  EXPECT_EQ(Ent(r, t.input(), c), 143);
}

// Capacity 16000.
//   org (guarantee 8000)            lab (wants 4000 itself)
//     team-a (guarantee 6000)         team-b (wants 6000 itself)
//       x (wants 5000)  y (wants 5000, weight 3)
// Roots: org 8000 + lab 0 guaranteed; surplus 8000 at 1:1 would give 4000 each, which lab can
// just use: org 12000, lab 4000. org divides 12000: team-a 6000 guaranteed; surplus 6000 at 1:1:
// 3000 each (team-a could take 4000, team-b 6000): team-a 9000, team-b 3000. team-a divides
// 9000 at 1:3: y would get 6750 but wants 5000; x gets the other 4000.
TEST(FairShareTest, ThreeLevelTree) {
  Tree t(1, {16000});
  const int32_t org = t.Add(), lab = t.Add();
  const int32_t team_a = t.Add(org), team_b = t.Add(org);
  const int32_t x = t.Add(team_a), y = t.Add(team_a);
  t.Guarantee(org, 0, 8000).Demand(lab, 0, 4000);
  t.Guarantee(team_a, 0, 6000).Demand(team_b, 0, 6000);
  t.Demand(x, 0, 5000).Demand(y, 0, 5000).Weight(y, 0, 3);
  const FairShareResult r = t.Run();
  const FairShareInput& in = t.input();
  EXPECT_EQ(Ent(r, in, org), 12000);
  EXPECT_EQ(Ent(r, in, lab), 4000);
  EXPECT_EQ(Ent(r, in, team_a), 9000);
  EXPECT_EQ(Ent(r, in, team_b), 3000);
  EXPECT_EQ(Ent(r, in, x), 4000);
  EXPECT_EQ(Ent(r, in, y), 5000);
  // Demand includes descendants.
  EXPECT_EQ(Dem(r, in, org), 16000);
  EXPECT_EQ(Dem(r, in, team_a), 10000);
  EXPECT_EQ(Dem(r, in, x), 5000);
}

// A queue with its own jobs and a child: the own jobs are one more claimant with weight 1 and
// no guarantee. Capacity 8000, p wants 6000 itself, child c wants 6000: with c's weight 1 they
// split 4000 / 4000; with weight 3, c would get 6000 of the 8000 and can use it: c 6000.
TEST(FairShareTest, OwnJobsOfAnInnerQueueCompeteWithWeightOne) {
  const std::vector<std::pair<int64_t, int64_t>> cases = {{1, 4000}, {3, 6000}};
  for (const auto& [weight, expected_child] : cases) {
    Tree t(1, {8000});
    const int32_t p = t.Add();
    const int32_t c = t.Add(p);
    t.Demand(p, 0, 6000).Demand(c, 0, 6000).Weight(c, 0, weight);
    const FairShareResult r = t.Run();
    EXPECT_EQ(Ent(r, t.input(), p), 8000);
    EXPECT_EQ(Ent(r, t.input(), c), expected_child) << "child weight " << weight;
  }
}

// Weight 0: a queue gets surplus only after every positive weight is met. Capacity 10000, a
// (weight 0) and b (weight 1, wants 3000): b 3000, a the remaining 7000.
TEST(FairShareTest, WeightZeroTakesOnlyWhatOthersLeave) {
  Tree t(1, {10000});
  const int32_t a = t.Add(), b = t.Add();
  t.Weight(a, 0, 0).Demand(a, 0, kLots).Demand(b, 0, 3000);
  const FairShareResult r = t.Run();
  EXPECT_EQ(Ent(r, t.input(), a), 7000);
  EXPECT_EQ(Ent(r, t.input(), b), 3000);
}

// Models A (8000) and H (4000). q0: A guarantee 6000; q1: H weight 3. Both want everything.
// A: q0 6000 + half of 2000 = 7000, q1 1000. H: 1:3 -> 1000, 3000. Taking q1's H demand away
// changes nothing on A (q0 gets all of H).
TEST(FairShareTest, ModelsAreDividedIndependently) {
  for (const bool q1_wants_h : {true, false}) {
    Tree t(2, {8000, 4000});
    const int32_t q0 = t.Add(), q1 = t.Add();
    t.Guarantee(q0, 0, 6000).Weight(q1, 1, 3);
    t.Demand(q0, 0, 8000).Demand(q0, 1, 4000).Demand(q1, 0, 8000);
    if (q1_wants_h) t.Demand(q1, 1, 4000);
    const FairShareResult r = t.Run();
    const FairShareInput& in = t.input();
    EXPECT_EQ(Ent(r, in, q0, 0), 7000);
    EXPECT_EQ(Ent(r, in, q1, 0), 1000);
    EXPECT_EQ(Ent(r, in, q0, 1), q1_wants_h ? 1000 : 4000);
    EXPECT_EQ(Ent(r, in, q1, 1), q1_wants_h ? 3000 : 0);
  }
}

// "*" limit. Models A and B, 10000 each. t: "*" limit 6000, A guarantee 1000, wants A 8000 and
// B 2000; u wants 10000 of each. t's limit is split over the models first: A's guarantee 1000,
// then the other 5000 evenly (max-min): 2500 each, but B can use only 2000, so A takes 3000 more.
// t's caps: A 4000, B 2000. A: t 1000 guaranteed + surplus 9000 at 1:1 (t can take 3000 more):
// t 4000, u 6000. B: t 2000, u 8000. t's total is its "*" limit, 6000.
TEST(FairShareTest, AnyModelLimitIsSplitOverModelsGuaranteesFirstThenMaxMin) {
  Tree t(2, {10000, 10000});
  const int32_t q = t.Add(), u = t.Add();
  t.Limit(q, t.Any(), 6000).Guarantee(q, 0, 1000).Demand(q, 0, 8000).Demand(q, 1, 2000);
  t.Demand(u, 0, 10000).Demand(u, 1, 10000);
  const FairShareResult r = t.Run();
  const FairShareInput& in = t.input();
  EXPECT_EQ(Ent(r, in, q, 0), 4000);
  EXPECT_EQ(Ent(r, in, q, 1), 2000);
  EXPECT_EQ(Ent(r, in, u, 0), 6000);
  EXPECT_EQ(Ent(r, in, u, 1), 8000);
}

// "*" guarantee. Models A and B, 10000 each. g: "*" guarantee 3000, may not borrow, wants A
// 1000 and B 5000; u wants everything. The 3000 is split evenly over what g wants: A 1000 (all
// it wants), B the other 2000. g gets exactly that and no more: A 1000, B 2000; u the rest.
TEST(FairShareTest, AnyModelGuaranteeIsSplitOverWhatTheQueueWants) {
  Tree t(2, {10000, 10000});
  const int32_t g = t.Add(), u = t.Add();
  t.Guarantee(g, t.Any(), 3000).NoBorrow(g).Demand(g, 0, 1000).Demand(g, 1, 5000);
  t.Demand(u, 0, kLots).Demand(u, 1, kLots);
  const FairShareResult r = t.Run();
  const FairShareInput& in = t.input();
  EXPECT_EQ(Ent(r, in, g, 0), 1000);
  EXPECT_EQ(Ent(r, in, g, 1), 2000);
  EXPECT_EQ(Ent(r, in, u, 0), 9000);
  EXPECT_EQ(Ent(r, in, u, 1), 8000);
}

// Decay. Capacity 10000, half-life 100 s: D = 10000 x 100 = 1e6 milli-GPU-seconds. heavy has
// used exactly D, so its weight is halved (factor floor(2^20 * D / 2D) = 2^19); light has used
// nothing. Shares 1/3 : 2/3 = 3333 1/3, 6666 2/3 -> 3333, 6667. Without decay: 5000, 5000.
TEST(FairShareTest, DecayLowersTheShareOfAHeavyPastUser) {
  Tree t(1, {10000});
  const int32_t heavy = t.Add(), light = t.Add();
  t.Demand(heavy, 0, kLots).Demand(light, 0, kLots);
  const FairShareResult even = t.Run();
  EXPECT_EQ(Ent(even, t.input(), heavy), 5000);
  EXPECT_EQ(Ent(even, t.input(), light), 5000);
  t.Decay(100, {1'000'000, 0});
  const FairShareResult decayed = t.Run();
  EXPECT_EQ(Ent(decayed, t.input(), heavy), 3333);
  EXPECT_EQ(Ent(decayed, t.input(), light), 6667);
}

// Nothing overflows at the validated maxima: 2^40 capacity, weights 2^40 and 1, demands 2^40,
// and a huge decayed usage. Exact shares of 2^40 at (2^40 : 1) are 2^40 - 1 + 1/(2^40 + 1) and
// 2^40 / (2^40 + 1): floors 2^40 - 1 and 0, and the leftover unit goes to the larger remainder,
// the light queue's: heavy 2^40 - 1, light 1.
TEST(FairShareTest, LargeQuantitiesDoNotOverflow) {
  constexpr int64_t kMax = int64_t{1} << 40;
  Tree t(1, {kMax});
  const int32_t heavy = t.Add(), light = t.Add();
  t.Weight(heavy, 0, kMax).Demand(heavy, 0, kMax).Demand(light, 0, kMax);
  const FairShareResult r = t.Run();
  EXPECT_EQ(Ent(r, t.input(), heavy), kMax - 1);
  EXPECT_EQ(Ent(r, t.input(), light), 1);
  t.Decay(kMax, {kMax, kMax});
  const FairShareResult d = t.Run();
  EXPECT_EQ(Ent(d, t.input(), heavy) + Ent(d, t.input(), light), kMax);
}

// Regression: amounts are clamped at 2^50 per model, and an unset "*" limit was once clamped
// there too, so a queue wanting 2^50 on each of two models had its unset "*" limit split: 2^49
// each. Sums over models must use a higher clamp: 2^50 each.
TEST(FairShareTest, UnsetAnyLimitIsNotSplitWhenModelsTogetherExceedThePerModelClamp) {
  Tree t(2, {kFairShareMaxAmount, kFairShareMaxAmount});
  const int32_t q = t.Add();
  t.Demand(q, 0, kFairShareMaxAmount).Demand(q, 1, kFairShareMaxAmount);
  t.Guarantee(q, t.Any(), int64_t{3} << 49);
  const FairShareResult r = t.Run();
  EXPECT_EQ(Ent(r, t.input(), q, 0), kFairShareMaxAmount);
  EXPECT_EQ(Ent(r, t.input(), q, 1), kFairShareMaxAmount);
}

// Scale: 100,000 queues over 8 models, half of them a chain 50,000 deep and half the children of
// one root; the chain's leaf wants 2^39 per model, each wide child 2^30 (together far more than
// the 2^40 of capacity). Runs in one pass (no recursion, no quadratic work). Per model: the roots
// split 2^40 evenly, 2^39 each; the chain passes its 2^39 down unchanged to its leaf; the wide
// root's 49,999 children share 2^39 equally, so they differ by at most the one leftover milli.
TEST(FairShareTest, OneHundredThousandQueues) {
  constexpr int32_t kModels = 8, kHalf = 50000;
  std::vector<int64_t> capacity(kModels, int64_t{1} << 40);
  Tree t(kModels, capacity);
  const int32_t chain = t.Add(), wide = t.Add();
  int32_t last = chain;
  for (int32_t k = 1; k < kHalf; ++k) last = t.Add(last);
  for (int32_t m = 0; m < kModels; ++m) t.Demand(last, m, int64_t{1} << 39);
  for (int32_t k = 1; k < kHalf; ++k) {
    const int32_t q = t.Add(wide);
    for (int32_t m = 0; m < kModels; ++m) t.Demand(q, m, int64_t{1} << 30);
  }
  const FairShareResult r = t.Run();
  for (int32_t m = 0; m < kModels; ++m) {
    EXPECT_EQ(Ent(r, t.input(), chain, m), int64_t{1} << 39);
    EXPECT_EQ(Ent(r, t.input(), wide, m), int64_t{1} << 39);
    EXPECT_EQ(Ent(r, t.input(), last, m), int64_t{1} << 39);
  }
  int64_t lo = kNoLimit, hi = 0, sum = 0;
  for (int32_t q = last + 1; q < t.input().queue_count; ++q) {
    lo = std::min(lo, Ent(r, t.input(), q, 3));
    hi = std::max(hi, Ent(r, t.input(), q, 3));
    sum += Ent(r, t.input(), q, 3);
  }
  EXPECT_EQ(sum, Ent(r, t.input(), wide, 3));
  EXPECT_LE(hi - lo, 1);
}

TEST(FairShareTest, EmptyInputs) {
  FairShareInput in;
  EXPECT_TRUE(ComputeFairShare(in).entitlement_milli.empty());
  Tree t(0, {});
  t.Add();
  EXPECT_TRUE(t.Run().entitlement_milli.empty());
  Tree z(1, {0});
  const int32_t q = z.Add();
  z.Guarantee(q, 0, 1000).Demand(q, 0, 1000);
  EXPECT_EQ(Ent(z.Run(), z.input(), q), 0);
}

}  // namespace
}  // namespace gpupool::internal
