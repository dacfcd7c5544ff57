// ComputeFairShare (stage 3): an oracle that recomputes the rules by progressive filling in exact
// rationals on tiny trees, and seeded property tests of the invariants on random forests,
// including re-indexing the queues. The worked examples are in fair_share_test.cc.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "fair_share.h"
#include "gtest/gtest.h"
#include "testing/generator.h"
#include "tests/core/fair_share_helpers.h"

namespace gpupool::internal {
namespace {

using ::gpupool::internal::fair_share_testing::Tree;
using ::gpupool::testing::Rng;

__extension__ typedef __int128 I128;

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
