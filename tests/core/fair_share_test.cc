// ComputeFairShare (stage 3): worked examples with exact expected entitlements, an oracle that
// recomputes the rules by progressive filling in exact rationals on tiny trees, and seeded
// property tests of the invariants on random forests, including re-indexing the queues.
#include "fair_share.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "snapshot_index.h"
#include "testing/generator.h"

namespace gpupool::internal {
namespace {

using ::gpupool::testing::Rng;

__extension__ typedef __int128 I128;

// ---------------------------------------------------------------------------------------------
// A small builder over FairShareInput so that each case reads like its comment.

class Tree {
 public:
  Tree(int32_t model_count, std::vector<int64_t> capacity) {
    in_.model_count = model_count;
    in_.capacity_milli = std::move(capacity);
  }
  // Adds a queue under `parent` (kNone: a root) and returns its index.
  int32_t Add(int32_t parent = kNone) {
    const int32_t q = in_.queue_count++;
    const int32_t slots = in_.model_count + 1;
    in_.parent.push_back(parent);
    in_.guaranteed_milli.insert(in_.guaranteed_milli.end(), slots, 0);
    in_.limit_milli.insert(in_.limit_milli.end(), slots, kNoLimit);
    in_.weight.insert(in_.weight.end(), slots, 1);
    in_.can_borrow.push_back(1);
    in_.demand_milli.insert(in_.demand_milli.end(), in_.model_count, 0);
    return q;
  }
  // `slot` is a model index, or Any() for "*".
  int32_t Any() const { return in_.model_count; }
  Tree& Guarantee(int32_t q, int32_t slot, int64_t v) {
    in_.guaranteed_milli[Slot(q, slot)] = v;
    return *this;
  }
  Tree& Limit(int32_t q, int32_t slot, int64_t v) {
    in_.limit_milli[Slot(q, slot)] = v;
    return *this;
  }
  Tree& Weight(int32_t q, int32_t slot, int64_t v) {
    in_.weight[Slot(q, slot)] = v;
    return *this;
  }
  Tree& NoBorrow(int32_t q) {
    in_.can_borrow[q] = 0;
    return *this;
  }
  Tree& Demand(int32_t q, int32_t model, int64_t v) {
    in_.demand_milli[static_cast<size_t>(q) * in_.model_count + model] = v;
    return *this;
  }
  Tree& Decay(int64_t half_life_s, std::vector<int64_t> usage) {
    in_.half_life_s = half_life_s;
    in_.decayed_usage = std::move(usage);
    return *this;
  }
  const FairShareInput& input() const { return in_; }
  FairShareResult Run() const { return ComputeFairShare(in_); }

 private:
  size_t Slot(int32_t q, int32_t slot) const {
    return static_cast<size_t>(q) * (in_.model_count + 1) + slot;
  }
  FairShareInput in_;
};

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

// ---------------------------------------------------------------------------------------------
// Oracle: the rules recomputed by progressive filling (every unsatisfied claimant grows at the
// rate of its weight until one is full or the amount runs out, event by event) in exact
// rationals, then rounded by the stated rule. A different algorithm from the stage's sort and
// single pass; tiny numbers keep the rationals in int64.

struct Fraction {
  int64_t num = 0;
  int64_t den = 1;
  static Fraction Make(int64_t n, int64_t d) {
    const int64_t g = std::gcd(n, d);
    return {n / g, d / g};
  }
  friend Fraction operator+(Fraction a, Fraction b) {
    return Make(a.num * b.den + b.num * a.den, a.den * b.den);
  }
  friend Fraction operator-(Fraction a, Fraction b) {
    return Make(a.num * b.den - b.num * a.den, a.den * b.den);
  }
  friend Fraction operator*(Fraction a, int64_t k) { return Make(a.num * k, a.den); }
  friend Fraction operator/(Fraction a, int64_t k) { return Make(a.num, a.den * k); }
  friend bool operator<(Fraction a, Fraction b) { return a.num * b.den < b.num * a.den; }
  friend bool operator==(Fraction a, Fraction b) { return a.num == b.num && a.den == b.den; }
};

struct OraclePart {
  int64_t base, cap, weight, tie;
};

std::vector<int64_t> OracleDivide(int64_t amount, const std::vector<OraclePart>& parts) {
  const size_t n = parts.size();
  std::vector<Fraction> x(n);
  int64_t base_sum = 0;
  for (const OraclePart& p : parts) base_sum += p.base;
  if (base_sum >= amount) {
    for (size_t i = 0; i < n; ++i) {
      x[i] = base_sum == 0 ? Fraction{} : Fraction::Make(amount * parts[i].base, base_sum);
    }
  } else {
    Fraction left{amount - base_sum, 1};
    for (size_t i = 0; i < n; ++i) x[i] = {parts[i].base, 1};
    for (const bool zero_tier : {false, true}) {
      while (Fraction{} < left) {
        std::vector<size_t> active;
        int64_t rate = 0;
        for (size_t i = 0; i < n; ++i) {
          if ((parts[i].weight == 0) != zero_tier) continue;
          if (!(x[i] < Fraction{parts[i].cap, 1})) continue;
          active.push_back(i);
          rate += zero_tier ? 1 : parts[i].weight;
        }
        if (active.empty()) break;
        // Time until the amount runs out, or the first claimant is full.
        Fraction t = left / rate;
        for (size_t i : active) {
          const int64_t w = zero_tier ? 1 : parts[i].weight;
          const Fraction full = (Fraction{parts[i].cap, 1} - x[i]) / w;
          if (full < t) t = full;
        }
        for (size_t i : active) x[i] = x[i] + t * (zero_tier ? 1 : parts[i].weight);
        left = left - t * rate;
      }
    }
  }
  // Round: floors, then one unit each to the largest fractional parts, ties by tie key.
  std::vector<int64_t> y(n);
  std::vector<size_t> order(n);
  Fraction total{};
  int64_t floors = 0;
  for (size_t i = 0; i < n; ++i) {
    y[i] = x[i].num / x[i].den;
    floors += y[i];
    total = total + x[i];
    order[i] = i;
  }
  EXPECT_EQ(total.den, 1);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Fraction fa = x[a] - Fraction{y[a], 1}, fb = x[b] - Fraction{y[b], 1};
    if (!(fa == fb)) return fb < fa;
    return parts[a].tie < parts[b].tie;
  });
  for (int64_t k = 0; k < total.num - floors; ++k) ++y[order[k]];
  return y;
}

// Whole-tree oracle, no decay: caps bottom-up with the "*" quotas split over the models by the
// same division rule (equal weights, ties to the lower model), then every model divided
// top-down.
std::vector<int64_t> OracleTree(const FairShareInput& in) {
  const int32_t n = in.queue_count, mn = in.model_count;
  const int32_t slots = mn + 1;
  std::vector<int64_t> cap(n * mn), guar(n * mn), ent(n * mn, 0);
  // Parents have lower indices in the oracle's trees, so descending index is bottom-up.
  for (int32_t q = n - 1; q >= 0; --q) {
    int64_t cap_sum = 0;
    for (int32_t m = 0; m < mn; ++m) {
      int64_t want = in.demand_milli[q * mn + m];
      for (int32_t c = q + 1; c < n; ++c) {
        if (in.parent[c] == q) want += cap[c * mn + m];
      }
      cap[q * mn + m] = std::min(want, in.limit_milli[q * slots + m]);
      guar[q * mn + m] = std::min(in.guaranteed_milli[q * slots + m], cap[q * mn + m]);
      cap_sum += cap[q * mn + m];
    }
    if (cap_sum > in.limit_milli[q * slots + mn]) {
      std::vector<OraclePart> models;
      for (int32_t m = 0; m < mn; ++m) models.push_back({guar[q * mn + m], cap[q * mn + m], 1, m});
      const std::vector<int64_t> split = OracleDivide(in.limit_milli[q * slots + mn], models);
      for (int32_t m = 0; m < mn; ++m) {
        cap[q * mn + m] = split[m];
        guar[q * mn + m] = std::min(guar[q * mn + m], split[m]);
      }
    }
    if (in.guaranteed_milli[q * slots + mn] > 0) {
      std::vector<OraclePart> models;
      int64_t room = 0;
      for (int32_t m = 0; m < mn; ++m) {
        models.push_back({0, cap[q * mn + m] - guar[q * mn + m], 1, m});
        room += cap[q * mn + m] - guar[q * mn + m];
      }
      const std::vector<int64_t> split =
          OracleDivide(std::min(in.guaranteed_milli[q * slots + mn], room), models);
      for (int32_t m = 0; m < mn; ++m) guar[q * mn + m] += split[m];
    }
    if (!in.can_borrow[q]) {
      for (int32_t m = 0; m < mn; ++m) cap[q * mn + m] = guar[q * mn + m];
    }
  }
  for (int32_t m = 0; m < mn; ++m) {
    for (int32_t p = -1; p < n; ++p) {
      std::vector<OraclePart> parts;
      std::vector<int32_t> who;
      for (int32_t c = 0; c < n; ++c) {
        if (in.parent[c] != p) continue;
        parts.push_back({guar[c * mn + m], cap[c * mn + m], in.weight[c * slots + m], c});
        who.push_back(c);
      }
      if (who.empty()) continue;
      int64_t amount = in.capacity_milli[m];
      if (p != kNone) {
        parts.push_back({0, in.demand_milli[p * mn + m], 1, n});
        amount = ent[p * mn + m];
      }
      const std::vector<int64_t> y = OracleDivide(amount, parts);
      for (size_t k = 0; k < who.size(); ++k) ent[who[k] * mn + m] = y[k];
    }
  }
  return ent;
}

TEST(FairShareOracleTest, MatchesProgressiveFillingOnTinyTrees) {
  constexpr int kCases = 3000;
  for (int i = 0; i < kCases; ++i) {
    const uint64_t seed = 0xFA1E'0000 + static_cast<uint64_t>(i);
    SCOPED_TRACE("seed " + std::to_string(seed));
    Rng rng(seed);
    const int32_t models = static_cast<int32_t>(rng.UniformInt(1, 2));
    std::vector<int64_t> capacity(models);
    for (int64_t& c : capacity) c = rng.UniformInt(0, 60);
    Tree t(models, capacity);
    const int32_t n = static_cast<int32_t>(rng.UniformInt(1, 6));
    for (int32_t q = 0; q < n; ++q) {
      const int32_t parent =
          q == 0 || rng.Percent(30) ? kNone : static_cast<int32_t>(rng.UniformInt(0, q - 1));
      t.Add(parent);
      for (int32_t m = 0; m < models; ++m) {
        t.Demand(q, m, rng.Percent(20) ? 0 : rng.UniformInt(0, 40));
        if (rng.Percent(50)) t.Guarantee(q, m, rng.UniformInt(0, 30));
        if (rng.Percent(30)) t.Limit(q, m, rng.UniformInt(0, 40));
        t.Weight(q, m, rng.UniformInt(0, 3));
      }
      if (rng.Percent(20)) t.Guarantee(q, t.Any(), rng.UniformInt(0, 40));
      if (rng.Percent(20)) t.Limit(q, t.Any(), rng.UniformInt(0, 60));
      if (rng.Percent(20)) t.NoBorrow(q);
    }
    const FairShareResult r = t.Run();
    const std::vector<int64_t> expected = OracleTree(t.input());
    ASSERT_EQ(r.entitlement_milli, expected);
  }
}

// ---------------------------------------------------------------------------------------------
// Property tests on random forests.

FairShareInput RandomInput(Rng& rng) {
  const int32_t models = static_cast<int32_t>(rng.UniformInt(1, 3));
  const bool huge = rng.Percent(10);
  const int64_t scale = huge ? (int64_t{1} << 40) : 20000;
  std::vector<int64_t> capacity(models);
  for (int64_t& c : capacity) c = rng.Percent(10) ? 0 : rng.UniformInt(0, scale);
  Tree t(models, capacity);
  const int32_t n = static_cast<int32_t>(rng.UniformInt(1, 14));
  // Half the cases have no "*" quotas, so that the checks that recompute caps apply to them.
  const bool any_quotas = rng.Percent(50);
  // Build in creation order (parents first), then re-index at random below.
  for (int32_t q = 0; q < n; ++q) {
    const int32_t parent =
        q == 0 || rng.Percent(25) ? kNone : static_cast<int32_t>(rng.UniformInt(0, q - 1));
    t.Add(parent);
    for (int32_t m = 0; m < models; ++m) {
      t.Demand(q, m, rng.Percent(30) ? 0 : rng.UniformInt(0, scale / 2));
      if (rng.Percent(40)) t.Guarantee(q, m, rng.UniformInt(0, scale / 3));
      if (rng.Percent(25)) t.Limit(q, m, rng.UniformInt(0, scale / 2));
      t.Weight(q, m, rng.Percent(5) ? (int64_t{1} << 40) : rng.UniformInt(0, 5));
    }
    if (any_quotas && rng.Percent(30)) t.Guarantee(q, t.Any(), rng.UniformInt(0, scale / 2));
    if (any_quotas && rng.Percent(30)) t.Limit(q, t.Any(), rng.UniformInt(0, scale));
    if (rng.Percent(15)) t.NoBorrow(q);
  }
  if (rng.Percent(30)) {
    std::vector<int64_t> usage(n);
    for (int64_t& u : usage) u = rng.Percent(50) ? 0 : rng.UniformInt(0, int64_t{1} << 40);
    t.Decay(rng.UniformInt(1, 100000), usage);
  }
  return t.input();
}

// Re-indexes queues: queue q becomes new_index[q]. Returns the permuted input.
FairShareInput Reindex(const FairShareInput& in, const std::vector<int32_t>& new_index) {
  FairShareInput out = in;
  const size_t slots = in.model_count + 1, mn = in.model_count;
  for (int32_t q = 0; q < in.queue_count; ++q) {
    const size_t to = new_index[q];
    out.parent[to] = in.parent[q] == kNone ? kNone : new_index[in.parent[q]];
    out.can_borrow[to] = in.can_borrow[q];
    if (!in.decayed_usage.empty()) out.decayed_usage[to] = in.decayed_usage[q];
    for (size_t s = 0; s < slots; ++s) {
      out.guaranteed_milli[to * slots + s] = in.guaranteed_milli[q * slots + s];
      out.limit_milli[to * slots + s] = in.limit_milli[q * slots + s];
      out.weight[to * slots + s] = in.weight[q * slots + s];
    }
    for (size_t m = 0; m < mn; ++m) out.demand_milli[to * mn + m] = in.demand_milli[q * mn + m];
  }
  return out;
}

int32_t Depth(const FairShareInput& in, int32_t q) {
  int32_t d = 0;
  while (in.parent[q] != kNone) {
    q = in.parent[q];
    ++d;
  }
  return d;
}

// Checks every invariant the stage promises on one input and its result.
void CheckInvariants(const FairShareInput& in, const FairShareResult& r) {
  const int32_t n = in.queue_count, mn = in.model_count;
  const size_t slots = mn + 1;
  ASSERT_EQ(r.entitlement_milli.size(), static_cast<size_t>(n) * mn);
  // Whether the simple per-model rules apply (no "*" quotas): then caps can be recomputed here.
  bool plain = true;
  for (int32_t q = 0; q < n; ++q) {
    if (in.guaranteed_milli[q * slots + mn] != 0 || in.limit_milli[q * slots + mn] != kNoLimit) {
      plain = false;
    }
  }
  for (int32_t m = 0; m < mn; ++m) {
    SCOPED_TRACE("model " + std::to_string(m));
    std::vector<int64_t> child_sum(n, 0), cap(n, 0), guar(n, 0);
    int64_t root_sum = 0, root_cap_sum = 0;
    // Bottom-up demand and (for the plain case) caps. Indices are shuffled, so children are
    // visited before their parents by going deepest first.
    std::vector<int32_t> by_depth(n);
    std::iota(by_depth.begin(), by_depth.end(), 0);
    std::sort(by_depth.begin(), by_depth.end(),
              [&](int32_t a, int32_t b) { return Depth(in, a) > Depth(in, b); });
    std::vector<int64_t> want(n, 0), demand(n, 0);
    for (int32_t q : by_depth) {
      want[q] += in.demand_milli[q * mn + m];
      demand[q] += in.demand_milli[q * mn + m];
      cap[q] = std::min(want[q], in.limit_milli[q * slots + m]);
      guar[q] = std::min(in.guaranteed_milli[q * slots + m], cap[q]);
      if (!in.can_borrow[q]) cap[q] = guar[q];
      if (in.parent[q] != kNone) {
        want[in.parent[q]] += cap[q];
        demand[in.parent[q]] += demand[q];
      }
    }
    for (int32_t q = 0; q < n; ++q) {
      const int64_t e = r.entitlement_milli[q * mn + m];
      EXPECT_EQ(r.demand_milli[q * mn + m], demand[q]) << "queue " << q;
      EXPECT_GE(e, 0) << "queue " << q;
      EXPECT_LE(e, demand[q]) << "queue " << q;
      EXPECT_LE(e, in.limit_milli[q * slots + m]) << "queue " << q;
      if (!in.can_borrow[q]) {
        EXPECT_LE(e, in.guaranteed_milli[q * slots + m] + in.guaranteed_milli[q * slots + mn])
            << "queue " << q;
      }
      if (in.parent[q] == kNone) {
        root_sum += e;
        root_cap_sum += cap[q];
      } else {
        child_sum[in.parent[q]] += e;
      }
    }
    const int64_t capacity = in.capacity_milli[m];
    EXPECT_LE(root_sum, capacity);
    for (int32_t q = 0; q < n; ++q) {
      const int64_t e = r.entitlement_milli[q * mn + m];
      EXPECT_LE(child_sum[q], e) << "queue " << q;
      // What the children do not take, the queue's own jobs must be able to use.
      EXPECT_LE(e - child_sum[q], in.demand_milli[q * mn + m]) << "queue " << q;
    }
    if (!plain) continue;
    // Work-conserving: the roots take all the capacity they can use.
    EXPECT_EQ(root_sum, std::min(capacity, root_cap_sum));
    // Guarantees: when a sibling group's guarantees (bounded by caps) fit in what the parent
    // has, each gets at least its own; otherwise at least its proportional floor.
    for (int32_t p = -1; p < n; ++p) {
      const int64_t amount = p == kNone ? capacity : r.entitlement_milli[p * mn + m];
      I128 base_sum = 0;
      for (int32_t c = 0; c < n; ++c) {
        if (in.parent[c] == p) base_sum += guar[c];
      }
      for (int32_t c = 0; c < n; ++c) {
        if (in.parent[c] != p) continue;
        const int64_t e = r.entitlement_milli[c * mn + m];
        if (base_sum <= amount) {
          EXPECT_GE(e, guar[c]) << "queue " << c;
        } else {
          EXPECT_GE(e, static_cast<int64_t>(I128{amount} * guar[c] / base_sum)) << "queue " << c;
        }
      }
    }
  }
  // "*" limit bounds the sum over models.
  for (int32_t q = 0; q < n; ++q) {
    int64_t total = 0;
    for (int32_t m = 0; m < mn; ++m) total += r.entitlement_milli[q * mn + m];
    EXPECT_LE(total, in.limit_milli[q * slots + mn]) << "queue " << q;
    if (!in.can_borrow[q]) {
      int64_t guaranteed = in.guaranteed_milli[q * slots + mn];
      for (int32_t m = 0; m < mn; ++m) guaranteed += in.guaranteed_milli[q * slots + m];
      EXPECT_LE(total, guaranteed) << "queue " << q;
    }
  }
}

TEST(FairSharePropertyTest, InvariantsHoldOnRandomForests) {
  constexpr int kCases = 2000;
  for (int i = 0; i < kCases; ++i) {
    const uint64_t seed = 0x5EED'0000 + static_cast<uint64_t>(i);
    SCOPED_TRACE("seed " + std::to_string(seed));
    Rng rng(seed);
    FairShareInput in = RandomInput(rng);
    // Random indices: parents are no longer before their children.
    std::vector<int32_t> perm(in.queue_count);
    std::iota(perm.begin(), perm.end(), 0);
    rng.Shuffle(perm);
    in = Reindex(in, perm);
    const FairShareResult r = ComputeFairShare(in);
    CheckInvariants(in, r);
    ASSERT_FALSE(::testing::Test::HasFailure());
    // Deterministic.
    ASSERT_EQ(ComputeFairShare(in).entitlement_milli, r.entitlement_milli);
  }
}

// Re-indexing the queues so that siblings keep their relative order (parents, children and
// other subtrees move freely) permutes the result exactly. An arbitrary re-indexing can change
// only who wins an exact tie (at most one milli-GPU per sibling group); the difference it makes
// grows by at most one per level, and the roots' total does not change.
TEST(FairSharePropertyTest, ReindexingPermutesTheResult) {
  constexpr int kCases = 2000;
  for (int i = 0; i < kCases; ++i) {
    const uint64_t seed = 0xB0B0'0000 + static_cast<uint64_t>(i);
    SCOPED_TRACE("seed " + std::to_string(seed));
    Rng rng(seed);
    const FairShareInput in = RandomInput(rng);
    const FairShareResult r = ComputeFairShare(in);
    const int32_t n = in.queue_count, mn = in.model_count;

    // Sibling-order-preserving: shuffle, then within each sibling group hand the group's new
    // indices back out in the old order.
    std::vector<int32_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    rng.Shuffle(perm);
    for (int32_t p = -1; p < n; ++p) {
      std::vector<int32_t> group, slots_of_group;
      for (int32_t q = 0; q < n; ++q) {
        if (in.parent[q] == p) {
          group.push_back(q);
          slots_of_group.push_back(perm[q]);
        }
      }
      std::sort(slots_of_group.begin(), slots_of_group.end());
      for (size_t k = 0; k < group.size(); ++k) perm[group[k]] = slots_of_group[k];
    }
    const FairShareResult kept = ComputeFairShare(Reindex(in, perm));
    for (int32_t q = 0; q < n; ++q) {
      for (int32_t m = 0; m < mn; ++m) {
        ASSERT_EQ(kept.entitlement_milli[perm[q] * mn + m], r.entitlement_milli[q * mn + m])
            << "queue " << q << " model " << m;
        ASSERT_EQ(kept.demand_milli[perm[q] * mn + m], r.demand_milli[q * mn + m]);
      }
    }

    // Arbitrary.
    std::iota(perm.begin(), perm.end(), 0);
    rng.Shuffle(perm);
    const FairShareInput shuffled = Reindex(in, perm);
    const FairShareResult any = ComputeFairShare(shuffled);
    CheckInvariants(shuffled, any);
    for (int32_t m = 0; m < mn; ++m) {
      int64_t before = 0, after = 0;
      for (int32_t q = 0; q < n; ++q) {
        const int64_t e = r.entitlement_milli[q * mn + m];
        const int64_t f = any.entitlement_milli[perm[q] * mn + m];
        ASSERT_LE(std::abs(e - f), Depth(in, q) + 1) << "queue " << q << " model " << m;
        if (in.parent[q] == kNone) {
          before += e;
          after += f;
        }
      }
      ASSERT_EQ(before, after) << "model " << m;
    }
  }
}

}  // namespace
}  // namespace gpupool::internal
