/*
 * Stage 3: fair share.
 *
 * Why this shape. A shared pool is only acceptable to its tenants if each keeps what it was
 * promised (its guarantee, when it has work for it), nothing sits idle while someone waits
 * (work conservation), and what is left over is shared in proportions the operators chose
 * (weights), never beyond what a tenant may use (limits). Hierarchy lets an org split its share
 * between its teams without the rest of the pool caring how. So the stage works top-down: the
 * roots divide each model's capacity, then every queue divides its own entitlement between its
 * children and its own jobs, with the same rule at every level.
 *
 * Why per model. GPU models are not interchangeable (a job asks for H100s, not "GPUs"), so each
 * model's capacity is divided on its own. A "*" quota (all models together) is first turned into
 * per-model amounts by a rule local to the queue (its guarantees first, then evenly over the
 * models it wants, max-min), so that the models stay independent afterwards and the whole stage
 * remains one pass. The price: a "*" limit split towards a model where the queue then gets less
 * than its split is not moved to another model. The rule is exact and predictable, which a
 * tenant reading its entitlement needs more than the last GPU of optimality.
 *
 * Why demand first, bottom-up. A queue that wants nothing must not hold a share: capacity it
 * cannot use would be lost to everyone. So before dividing, a bottom-up pass computes what each
 * queue can usefully take ("cap"): its own demand plus what its children can take, bounded by
 * its limits (and by its guarantee when it may not borrow). Dividing only up to caps is what
 * makes the result work-conserving at every level.
 *
 * Why integers. Entitlements decide the order of queues and, later, preemption; a floating-point
 * share that differs in the last bit between two machines would change decisions. Every division
 * here is an integer floor with the remainder handed out one milli-GPU at a time in a stated
 * order (largest remainder, then index), so the result is exact and identical everywhere.
 * Quantities are clamped at 2^50 and weights at 2^40 x 2^20, which keeps every product inside
 * 128 bits; comparisons of ratios that could exceed that are done by continued fractions.
 */
#include "fair_share.h"

#include <algorithm>
#include <cstddef>
#include <span>

#include "internal/check.h"
#include "internal/saturating.h"

namespace gpupool::internal {
namespace {

__extension__ typedef unsigned __int128 U128;

// One claimant in a division: a child queue, a queue's own jobs, or a GPU model (when a "*"
// quota is split).
struct Part {
  int64_t base = 0;    // served first (a guarantee); base <= cap
  int64_t cap = 0;     // never exceeded
  int64_t weight = 0;  // share of the surplus; 0 = only after every positive weight is met
  int64_t tie = 0;     // exact ties go to the lowest tie key
};

// Compares a/b with c/d (b, d > 0) exactly. Cross products when they fit in 128 bits; otherwise
// the continued-fraction expansions of the two are compared term by term, which never overflows.
// Returns -1, 0 or 1.
int CompareFractions(U128 a, U128 b, U128 c, U128 d) {
  // Fast path: with every term below 2^64 the cross products fit in 128 bits.
  if (((a | b | c | d) >> 64) == 0) {
    const U128 ad = a * d, cb = c * b;
    return ad < cb ? -1 : (ad > cb ? 1 : 0);
  }
  int sign = 1;
  while (true) {
    const U128 qa = a / b;
    const U128 qc = c / d;
    if (qa != qc) return qa < qc ? -sign : sign;
    a %= b;
    c %= d;
    if (a == 0 || c == 0) {
      if (a == c) return 0;
      return a == 0 ? -sign : sign;
    }
    // Both fractional parts lie in (0, 1), and a/b < c/d <=> b/a > d/c: compare the
    // reciprocals with the answer reversed.
    const U128 next_a = b, next_b = a, next_c = d, next_d = c;
    a = next_a;
    b = next_b;
    c = next_c;
    d = next_d;
    sign = -sign;
  }
}

// Hands out `units` extra milli-GPUs, one each, to the entries with the largest remainder (ties:
// lowest tie key). `order` holds indices into `parts`; each gets at most one unit.
void HandOutLeftovers(int64_t units, std::span<int32_t> order, const std::vector<U128>& rem,
                      std::span<const Part> parts, std::span<int64_t> out) {
  if (units <= 0) return;
  GPUPOOL_CHECK(units <= static_cast<int64_t>(order.size()));
  // Only which entries come first matters, not their order among themselves: a selection.
  std::nth_element(order.begin(), order.begin() + (units - 1), order.end(),
                   [&](int32_t x, int32_t y) {
                     if (rem[x] != rem[y]) return rem[x] > rem[y];
                     return parts[x].tie < parts[y].tie;
                   });
  for (int64_t k = 0; k < units; ++k) ++out[order[k]];
}

// Weighted water-filling: gives `surplus` to the parts in `active` (indices into `parts`, each
// with room = cap - out > 0 and the weight `weight_of`), each at most its room, in proportion to
// the weights. Returns what it gave.
template <typename WeightOf>
int64_t WaterFill(int64_t surplus, std::vector<int32_t>& active, std::span<const Part> parts,
                  std::span<int64_t> out, WeightOf weight_of, std::vector<U128>& rem) {
  if (surplus <= 0 || active.empty()) return 0;
  U128 total_room = 0;
  for (int32_t i : active) total_room += static_cast<U128>(parts[i].cap - out[i]);
  if (total_room <= static_cast<U128>(surplus)) {
    for (int32_t i : active) out[i] = parts[i].cap;
    return static_cast<int64_t>(total_room);
  }
  // The level L at which sum(min(room, w * L)) = surplus: parts whose room/w is below L are
  // filled; the others get w * L. Sorting by room/w lets one pass find it.
  std::sort(active.begin(), active.end(), [&](int32_t x, int32_t y) {
    const int c = CompareFractions(static_cast<U128>(parts[x].cap - out[x]), weight_of(x),
                                   static_cast<U128>(parts[y].cap - out[y]), weight_of(y));
    if (c != 0) return c < 0;
    return parts[x].tie < parts[y].tie;
  });
  U128 weight_sum = 0;
  for (int32_t i : active) weight_sum += weight_of(i);
  int64_t left = surplus;
  size_t k = 0;
  for (; k < active.size(); ++k) {
    const int32_t i = active[k];
    const int64_t room = parts[i].cap - out[i];
    // Filled when room / w <= left / weight_sum: its weighted share reaches its room.
    if (CompareFractions(static_cast<U128>(room), weight_of(i), static_cast<U128>(left),
                         weight_sum) > 0) {
      break;
    }
    out[i] += room;
    left -= room;
    weight_sum -= weight_of(i);
  }
  // The rest stay below their room: each gets floor(left * w / weight_sum), and the units lost
  // to flooring go to the largest remainders. floor + 1 <= room because room > left*w/sum.
  const std::span<int32_t> rest(active.data() + k, active.size() - k);
  GPUPOOL_CHECK(!rest.empty());
  int64_t given = 0;
  for (int32_t i : rest) {
    const U128 product = static_cast<U128>(left) * weight_of(i);
    const int64_t share = static_cast<int64_t>(product / weight_sum);
    rem[i] = product % weight_sum;
    out[i] += share;
    given += share;
  }
  HandOutLeftovers(left - given, rest, rem, parts, out);
  return surplus;
}

// Divides `amount` among `parts` (out[i] starts at anything; it is overwritten):
//  1. each part gets its base; if the bases exceed the amount they are scaled down in proportion
//     to themselves (floor, then largest remainder, then tie key) and nothing else happens;
//  2. the surplus is water-filled among parts with positive weight, capped at cap;
//  3. what is still left is water-filled among the weight-0 parts with equal weights.
// When amount <= sum(cap) it is all given out.
// Scratch space reused across divisions, so that a pass over 10^5 queues does not allocate per
// sibling group.
struct Scratch {
  std::vector<U128> rem;
  std::vector<int32_t> all, positive, zero;
};

void Divide(int64_t amount, std::span<const Part> parts, std::span<int64_t> out, Scratch& scratch) {
  const size_t n = parts.size();
  std::vector<U128>& rem = scratch.rem;
  rem.assign(n, 0);
  U128 base_sum = 0;
  for (size_t i = 0; i < n; ++i) base_sum += static_cast<U128>(parts[i].base);
  if (base_sum >= static_cast<U128>(amount)) {
    std::vector<int32_t>& all = scratch.all;
    all.resize(n);
    int64_t given = 0;
    for (size_t i = 0; i < n; ++i) {
      all[i] = static_cast<int32_t>(i);
      if (base_sum == 0) {
        out[i] = 0;
        continue;
      }
      const U128 product = static_cast<U128>(amount) * static_cast<U128>(parts[i].base);
      out[i] = static_cast<int64_t>(product / base_sum);
      rem[i] = product % base_sum;
      given += out[i];
    }
    HandOutLeftovers(amount - given, all, rem, parts, out);
    return;
  }
  int64_t left = amount - static_cast<int64_t>(base_sum);
  std::vector<int32_t>& positive = scratch.positive;
  std::vector<int32_t>& zero = scratch.zero;
  positive.clear();
  zero.clear();
  for (size_t i = 0; i < n; ++i) {
    out[i] = parts[i].base;
    if (parts[i].cap <= parts[i].base) continue;
    (parts[i].weight > 0 ? positive : zero).push_back(static_cast<int32_t>(i));
  }
  left -= WaterFill(
      left, positive, parts, out, [&](int32_t i) { return static_cast<U128>(parts[i].weight); },
      rem);
  WaterFill(
      left, zero, parts, out, [](int32_t) { return U128{1}; }, rem);
}

int64_t Clamp(int64_t value, int64_t hi) { return std::clamp<int64_t>(value, 0, hi); }

}  // namespace

FairShareResult ComputeFairShare(const FairShareInput& input) {
  const int32_t queues = input.queue_count;
  const int32_t models = input.model_count;
  GPUPOOL_CHECK(queues >= 0 && models >= 0);
  const size_t slots = static_cast<size_t>(models) + 1;  // stride of per-slot arrays
  const size_t qn = static_cast<size_t>(queues);
  const size_t mn = static_cast<size_t>(models);
  GPUPOOL_CHECK(input.parent.size() == qn);
  GPUPOOL_CHECK(input.guaranteed_milli.size() == qn * slots);
  GPUPOOL_CHECK(input.limit_milli.size() == qn * slots);
  GPUPOOL_CHECK(input.weight.size() == qn * slots);
  GPUPOOL_CHECK(input.can_borrow.size() == qn);
  GPUPOOL_CHECK(input.demand_milli.size() == qn * mn);
  GPUPOOL_CHECK(input.capacity_milli.size() == mn);
  GPUPOOL_CHECK(input.decayed_usage.empty() || input.decayed_usage.size() == qn);

  FairShareResult result;
  result.entitlement_milli.assign(qn * mn, 0);
  result.demand_milli.assign(qn * mn, 0);
  if (queues == 0 || models == 0) return result;

  // Children lists (in index order) and a top-down order: roots in index order, then
  // breadth-first. Its reverse visits every child before its parent.
  std::vector<int32_t> child_begin(qn + 1, 0), children(qn), roots;
  for (int32_t q = 0; q < queues; ++q) {
    const int32_t p = input.parent[q];
    GPUPOOL_CHECK(p == kNone || (p >= 0 && p < queues && p != q));
    if (p == kNone) {
      roots.push_back(q);
    } else {
      ++child_begin[p + 1];
    }
  }
  for (size_t q = 0; q < qn; ++q) child_begin[q + 1] += child_begin[q];
  {
    std::vector<int32_t> fill(child_begin.begin(), child_begin.end() - 1);
    for (int32_t q = 0; q < queues; ++q) {
      if (input.parent[q] != kNone) children[fill[input.parent[q]]++] = q;
    }
  }
  std::vector<int32_t> top_down(roots);
  top_down.reserve(qn);
  for (size_t k = 0; k < top_down.size(); ++k) {
    const int32_t q = top_down[k];
    for (int32_t c = child_begin[q]; c < child_begin[q + 1]; ++c) top_down.push_back(children[c]);
  }
  // A queue unreachable from a root sits on a cycle: validation should have rejected it.
  GPUPOOL_CHECK(top_down.size() == qn);

  // Bottom-up: what each queue can usefully take per model (cap) and what it is guaranteed
  // (guar <= cap), both with the "*" quotas already split over the models.
  std::vector<int64_t> cap(qn * mn, 0), guar(qn * mn, 0);
  Scratch scratch;
  std::vector<Part> model_parts(mn);
  std::vector<int64_t> split(mn);
  for (auto it = top_down.rbegin(); it != top_down.rend(); ++it) {
    const int32_t q = *it;
    const size_t row = static_cast<size_t>(q) * mn;
    const size_t qrow = static_cast<size_t>(q) * slots;
    for (size_t m = 0; m < mn; ++m) {
      int64_t raw = Clamp(input.demand_milli[row + m], kNoLimit);
      int64_t want = std::min(raw, kFairShareMaxAmount);
      for (int32_t c = child_begin[q]; c < child_begin[q + 1]; ++c) {
        const size_t crow = static_cast<size_t>(children[c]) * mn;
        raw = SaturatingAdd(raw, result.demand_milli[crow + m]);
        want = std::min(want + cap[crow + m], kFairShareMaxAmount);
      }
      result.demand_milli[row + m] = raw;
      const int64_t limit = Clamp(input.limit_milli[qrow + m], kFairShareMaxAmount);
      cap[row + m] = std::min(want, limit);
      guar[row + m] =
          std::min(Clamp(input.guaranteed_milli[qrow + m], kFairShareMaxAmount), cap[row + m]);
    }
    // "*" limit: when the models together could take more, the limit is divided over the models
    // like any amount: the models' guarantees first, then evenly (max-min), each at most its cap.
    // (Sums over models may exceed the per-model clamp, so "*" amounts are clamped higher.)
    const int64_t any_limit = Clamp(input.limit_milli[qrow + mn], kNoLimit / 2);
    int64_t cap_sum = 0;
    for (size_t m = 0; m < mn; ++m) cap_sum = std::min(cap_sum + cap[row + m], kNoLimit / 2);
    if (cap_sum > any_limit) {
      for (size_t m = 0; m < mn; ++m) {
        model_parts[m] = {guar[row + m], cap[row + m], 1, static_cast<int64_t>(m)};
      }
      Divide(any_limit, model_parts, split, scratch);
      for (size_t m = 0; m < mn; ++m) {
        cap[row + m] = split[m];
        guar[row + m] = std::min(guar[row + m], split[m]);
      }
    }
    // "*" guarantee: extra guarantee on top of the models' own, divided evenly (max-min) over
    // the room between each model's guarantee and its cap.
    const int64_t any_guarantee = Clamp(input.guaranteed_milli[qrow + mn], kNoLimit / 2);
    if (any_guarantee > 0) {
      int64_t room_sum = 0;
      for (size_t m = 0; m < mn; ++m) {
        room_sum = std::min(room_sum + (cap[row + m] - guar[row + m]), kNoLimit / 2);
        model_parts[m] = {0, cap[row + m] - guar[row + m], 1, static_cast<int64_t>(m)};
      }
      Divide(std::min(any_guarantee, room_sum), model_parts, split, scratch);
      for (size_t m = 0; m < mn; ++m) guar[row + m] += split[m];
    }
    if (!input.can_borrow[q]) {
      for (size_t m = 0; m < mn; ++m) cap[row + m] = guar[row + m];
    }
  }

  // Effective weights: the over-quota weight in fixed point, lowered by decayed usage.
  int64_t capacity_total = 0;
  for (size_t m = 0; m < mn; ++m) {
    capacity_total = std::min(capacity_total + Clamp(input.capacity_milli[m], kFairShareMaxAmount),
                              kFairShareMaxAmount * 1024);
  }
  const U128 decay_scale =
      static_cast<U128>(capacity_total) * Clamp(input.half_life_s, kFairShareMaxHalfLife);
  std::vector<int64_t> factor(qn, kFairShareWeightScale);
  if (input.half_life_s > 0 && !input.decayed_usage.empty()) {
    for (size_t q = 0; q < qn; ++q) {
      const U128 usage = static_cast<U128>(Clamp(input.decayed_usage[q], kNoLimit));
      if (usage == 0) continue;
      factor[q] = static_cast<int64_t>(static_cast<U128>(kFairShareWeightScale) * decay_scale /
                                       (decay_scale + usage));
    }
  }
  auto effective_weight = [&](int32_t q, size_t m) -> int64_t {
    const int64_t w = Clamp(input.weight[static_cast<size_t>(q) * slots + m], kFairShareMaxWeight);
    if (w == 0) return 0;
    return std::max<int64_t>(1, w * factor[q]);
  };

  // Top-down: the roots divide each model's capacity; every queue then divides its entitlement
  // between its children and its own jobs. Its own jobs act as one more child with no guarantee,
  // weight 1 and cap = their demand, losing exact ties to the real children.
  std::vector<Part> parts;
  std::vector<int64_t> out;
  for (size_t m = 0; m < mn; ++m) {
    parts.clear();
    for (int32_t r : roots) {
      const size_t i = static_cast<size_t>(r) * mn + m;
      parts.push_back({guar[i], cap[i], effective_weight(r, m), r});
    }
    out.assign(parts.size(), 0);
    Divide(Clamp(input.capacity_milli[m], kFairShareMaxAmount), parts, out, scratch);
    for (size_t k = 0; k < roots.size(); ++k) {
      result.entitlement_milli[static_cast<size_t>(roots[k]) * mn + m] = out[k];
    }
  }
  for (int32_t q : top_down) {
    const int32_t first = child_begin[q], last = child_begin[q + 1];
    if (first == last) continue;
    for (size_t m = 0; m < mn; ++m) {
      parts.clear();
      for (int32_t c = first; c < last; ++c) {
        const int32_t child = children[c];
        const size_t i = static_cast<size_t>(child) * mn + m;
        parts.push_back({guar[i], cap[i], effective_weight(child, m), child});
      }
      const size_t row = static_cast<size_t>(q) * mn + m;
      parts.push_back({0, std::min(Clamp(input.demand_milli[row], kNoLimit), kFairShareMaxAmount),
                       kFairShareWeightScale, queues});
      out.assign(parts.size(), 0);
      Divide(result.entitlement_milli[row], parts, out, scratch);
      for (int32_t c = first; c < last; ++c) {
        result.entitlement_milli[static_cast<size_t>(children[c]) * mn + m] = out[c - first];
      }
    }
  }
  return result;
}

}  // namespace gpupool::internal
