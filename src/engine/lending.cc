#include "lending.h"

#include <algorithm>

#include "internal/saturating.h"

namespace gpupool::internal {

Lending::Lending(const SnapshotIndex& index, const WorkingState& state, const Policy& policy)
    : index_(index), state_(state) {
  const int32_t queues = index.queue_count();
  const int32_t any = index.any_model_slot();
  const bool enforce = policy.fair_share.gpu_hour_budgets == BudgetEnforcement::kEnforce;
  std::vector<int32_t> order;
  for (int32_t q = 0; q < queues; ++q) {
    if (index.queue(q).can_lend) continue;
    bool over_budget = false;
    for (int32_t up = q; up != kNone && !over_budget; up = index.queue_parent(up)) {
      over_budget = index.queue(up).OverOwnBudget();
    }
    if (enforce && over_budget) continue;  // no guarantee this cycle: nothing to hold
    order.push_back(q);
  }
  if (order.empty()) return;
  std::stable_sort(order.begin(), order.end(), [&index](int32_t a, int32_t b) {
    return index.queue_depth(a) > index.queue_depth(b);
  });
  std::vector<int32_t> position(queues, kNone);
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<int32_t>(i);
  std::vector<int32_t> owned;
  for (int32_t n = 0; n < index.node_count(); ++n) {
    if (index.node_owned(n) && index.node_model(n) != kNone) owned.push_back(n);
  }
  for (int32_t q : order) {
    Lender lender{q, kNone, std::vector<int64_t>(static_cast<size_t>(any) + 1, 0), {}};
    for (int32_t up = index.queue_parent(q); up != kNone; up = index.queue_parent(up)) {
      if (position[up] != kNone) {
        lender.parent = position[up];
        break;
      }
    }
    for (const Quota& quota : index.queue(q).quotas) {
      const int32_t slot = quota.gpu_model == kAnyGpuModel ? any : index.FindModel(quota.gpu_model);
      if (slot == kNone) continue;
      if (slot != any) lender.guaranteed[slot] = quota.guaranteed_milli;
      lender.guaranteed[any] = SaturatingAdd(lender.guaranteed[any], quota.guaranteed_milli);
    }
    // An owned node counts for q if some queue of q's subtree may use it.
    if (!owned.empty()) {
      std::vector<int32_t> subtree;
      for (int32_t r = 0; r < queues; ++r) {
        for (int32_t up = r; up != kNone; up = index.queue_parent(up)) {
          if (up == q) {
            subtree.push_back(r);
            break;
          }
        }
      }
      for (int32_t n : owned) {
        const bool counts = std::any_of(subtree.begin(), subtree.end(),
                                        [&](int32_t r) { return index.QueueMayUseNode(r, n); });
        if (counts) continue;
        if (lender.counts.empty()) lender.counts.assign(index.node_count(), 1);
        lender.counts[n] = 0;
      }
      if (!lender.counts.empty()) by_node_ = true;
    }
    lenders_.push_back(std::move(lender));
  }
  below_.assign(lenders_.size(), 0);
  if (by_node_) avoid_.assign(index.node_count(), 0);
}

std::vector<int32_t> Lending::Chain(int32_t j) const {
  std::vector<int32_t> chain;  // the job's queue and its ancestors
  for (int32_t q = index_.job(j).queue; q != kNone; q = index_.queue_parent(q)) chain.push_back(q);
  return chain;
}

std::vector<Lending::Holder> Lending::Holders(const std::vector<int32_t>& chain, int32_t slot,
                                              std::vector<Holder>* inner) const {
  auto excludes_job = [&chain](int32_t q) {
    return std::find(chain.begin(), chain.end(), q) == chain.end();
  };
  std::vector<Holder> holders;
  std::fill(below_.begin(), below_.end(), 0);
  for (size_t i = 0; i < lenders_.size(); ++i) {  // deepest first: below_[i] is complete
    const Lender& lender = lenders_[i];
    const int64_t own =
        std::max<int64_t>(0, lender.guaranteed[slot] - state_.queue_usage(lender.queue, slot));
    const int64_t holds = std::max(own, below_[i]);
    if (lender.parent != kNone) {
      below_[lender.parent] = SaturatingAdd(below_[lender.parent], holds);
    }
    if (holds == 0 || !excludes_job(lender.queue)) continue;
    // Counted once: inside the hold of the nearest ancestor that does not lend, if that one
    // excludes the job too (if it contains the job, so do all the ancestors above it).
    if (lender.parent != kNone && excludes_job(lenders_[lender.parent].queue)) {
      if (inner != nullptr) inner->push_back(Holder{static_cast<int32_t>(i), holds});
      continue;
    }
    holders.push_back(Holder{static_cast<int32_t>(i), holds});
  }
  return holders;
}

Lending::Bound Lending::Together(const std::vector<Holder>& holders, int32_t slot) const {
  Bound all;
  all.slot = slot;
  int64_t largest = 0;
  for (const Holder& holder : holders) {
    const int32_t queue = lenders_[holder.lender].queue;
    all.members.push_back(holder.lender);
    all.held_milli = SaturatingAdd(all.held_milli, holder.holds);
    if (holder.holds > largest || (holder.holds == largest && queue < all.queue)) {
      largest = holder.holds;
      all.queue = queue;
    }
  }
  return all;
}

std::optional<LendingBlock> Lending::Check(int32_t j, int32_t model, int64_t milli) const {
  if (lenders_.empty() || by_node_ || model == kNone || milli <= 0) return std::nullopt;
  const std::vector<int32_t> chain = Chain(j);
  for (int32_t slot : {model, index_.any_model_slot()}) {
    const std::vector<Holder> holders = Holders(chain, slot);
    if (holders.empty()) continue;
    const Bound all = Together(holders, slot);
    LendingBlock block;
    block.queue = all.queue;
    block.slot = slot;
    block.held_milli = all.held_milli;
    block.holders = static_cast<int32_t>(holders.size());
    if (slot == index_.any_model_slot()) {
      for (int32_t m = 0; m < index_.model_count(); ++m) {
        block.free_milli = SaturatingAdd(block.free_milli, state_.model_free_gpu(m));
      }
    } else {
      block.free_milli = state_.model_free_gpu(slot);
    }
    const int64_t needed = SaturatingAdd(block.held_milli, milli);
    if (block.free_milli >= needed) continue;
    block.shortfall_milli = needed - block.free_milli;
    return block;
  }
  return std::nullopt;
}

template <typename Fn>
void Lending::ForSlotNodes(int32_t slot, Fn&& fn) const {
  if (slot != index_.any_model_slot()) {
    for (int32_t n : index_.nodes_of_model(slot)) fn(n);
    return;
  }
  for (int32_t m = 0; m < index_.model_count(); ++m) {
    for (int32_t n : index_.nodes_of_model(m)) fn(n);
  }
}

int64_t Lending::FreeFor(const std::vector<int32_t>& members, int32_t slot) const {
  int64_t free = 0;
  ForSlotNodes(slot, [&](int32_t n) {
    if (!state_.node_open(n)) return;
    const bool counts =
        std::any_of(members.begin(), members.end(), [&](int32_t l) { return Counts(l, n); });
    if (counts) free = SaturatingAdd(free, state_.node_free_gpu(n));
  });
  return free;
}

std::vector<Lending::Bound> Lending::Bounds(int32_t j, int32_t model) const {
  std::vector<Bound> bounds;
  if (!by_node_ || model == kNone) return bounds;
  const std::vector<int32_t> chain = Chain(j);
  for (int32_t slot : {model, index_.any_model_slot()}) {
    std::vector<Holder> inner;
    const std::vector<Holder> holders = Holders(chain, slot, &inner);
    if (holders.empty()) continue;
    Bound all = Together(holders, slot);
    all.free_before = FreeFor(all.members, slot);
    bounds.push_back(all);
    std::vector<Holder> alone = inner;
    if (holders.size() > 1) alone.insert(alone.begin(), holders.begin(), holders.end());
    for (const Holder& holder : alone) {
      Bound one;
      one.slot = slot;
      one.members = {holder.lender};
      one.held_milli = holder.holds;
      one.free_before = FreeFor(one.members, slot);
      one.queue = lenders_[holder.lender].queue;
      bounds.push_back(std::move(one));
    }
  }
  return bounds;
}

std::optional<LendingBlock> Lending::CheckPlaced(const std::vector<Bound>& bounds,
                                                 size_t* broken) const {
  // Per slot, the bounds start with all holders together (their holds summed: total). How much
  // of the holds the free GPUs can still serve is at most total, and for each bound at most
  // total - its held + its free (the rest of the holds, and what its own nodes have free): the
  // least of these is `served`. A start may not lower it. Without owner restrictions every
  // bound's free is the same and served is min(total, free): the rule of Check().
  for (size_t first = 0; first < bounds.size();) {
    const int32_t slot = bounds[first].slot;
    const int64_t total = bounds[first].held_milli;
    size_t end = first;
    while (end < bounds.size() && bounds[end].slot == slot) ++end;
    int64_t served_before = total, served_now = total;
    size_t least = end;
    std::vector<int64_t> free_now(end - first);
    for (size_t i = first; i < end; ++i) {
      const Bound& bound = bounds[i];
      free_now[i - first] = FreeFor(bound.members, slot);
      const int64_t rest = total - bound.held_milli;
      served_before = std::min(served_before, SaturatingAdd(rest, bound.free_before));
      const int64_t now = SaturatingAdd(rest, free_now[i - first]);
      if (now < served_now) {
        served_now = now;
        least = i;
      }
    }
    if (served_now < served_before) {
      const Bound& bound = bounds[least];
      LendingBlock block;
      block.queue = bound.queue;
      block.slot = slot;
      block.held_milli = bound.held_milli;
      block.free_milli = bound.free_before;
      block.shortfall_milli = bound.held_milli - free_now[least - first];
      block.holders = static_cast<int32_t>(bound.members.size());
      block.by_node = true;
      if (broken != nullptr) *broken = least;
      return block;
    }
    first = end;
  }
  return std::nullopt;
}

void Lending::Avoid(const Bound& bound) {
  avoiding_ = true;
  ForSlotNodes(bound.slot, [&](int32_t n) {
    for (int32_t l : bound.members) {
      if (Counts(l, n)) avoid_[n] = 1;
    }
  });
}

void Lending::StopAvoiding() {
  avoiding_ = false;
  std::fill(avoid_.begin(), avoid_.end(), 0);
}

}  // namespace gpupool::internal
