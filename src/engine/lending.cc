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
    lenders_.push_back(std::move(lender));
  }
  below_.assign(lenders_.size(), 0);
  IndexNodeClasses();
}

void Lending::IndexNodeClasses() {
  const SnapshotIndex& index = index_;
  const int32_t queues = index.queue_count();
  // An owned node counts for a lender if some queue of the lender's subtree may use it.
  std::vector<int32_t> owned;
  for (int32_t n = 0; n < index.node_count(); ++n) {
    if (index.node_owned(n) && index.node_model(n) != kNone) owned.push_back(n);
  }
  std::vector<std::vector<int32_t>> subtrees(owned.empty() ? 0 : lenders_.size());
  for (size_t l = 0; l < subtrees.size(); ++l) {
    for (int32_t r = 0; r < queues; ++r) {
      int32_t up = r;
      while (up != kNone && up != lenders_[l].queue) up = index.queue_parent(up);
      if (up != kNone) subtrees[l].push_back(r);
    }
  }
  std::vector<std::vector<uint8_t>> signatures(1, std::vector<uint8_t>(lenders_.size(), 1));
  node_class_.assign(index.node_count(), 0);
  for (int32_t n : owned) {
    std::vector<uint8_t> signature(lenders_.size(), 0);
    for (size_t l = 0; l < lenders_.size(); ++l) {
      signature[l] = std::any_of(subtrees[l].begin(), subtrees[l].end(),
                                 [&](int32_t r) { return index.QueueMayUseNode(r, n); });
    }
    const auto found = std::find(signatures.begin(), signatures.end(), signature);
    node_class_[n] = static_cast<int32_t>(found - signatures.begin());
    if (found == signatures.end()) signatures.push_back(std::move(signature));
  }
  class_count_ = static_cast<int32_t>(signatures.size());
  by_node_ = class_count_ > 1;
  for (size_t l = 0; l < lenders_.size(); ++l) {
    lenders_[l].classes.resize(class_count_);
    for (int32_t c = 0; c < class_count_; ++c) lenders_[l].classes[c] = signatures[c][l];
  }
  if (!by_node_) return;
  owned_nodes_.assign(index.any_model_slot() + 1, {});
  for (int32_t n = 0; n < index.node_count(); ++n) {
    if (node_class_[n] == 0) continue;
    owned_nodes_[index.node_model(n)].push_back(n);
    owned_nodes_[index.any_model_slot()].push_back(n);
  }
  avoid_class_.assign(class_count_, 0);
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

Lending::Bound Lending::Line(const std::vector<Holder>& holders, int32_t slot) const {
  Bound line;
  line.slot = slot;
  line.classes.assign(class_count_, 0);
  int64_t largest = 0;
  for (const Holder& holder : holders) {
    const Lender& lender = lenders_[holder.lender];
    line.members.push_back(holder.lender);
    line.held_milli = SaturatingAdd(line.held_milli, holder.holds);
    for (int32_t c = 0; c < class_count_; ++c) line.classes[c] |= lender.classes[c];
    if (holder.holds > largest || (holder.holds == largest && lender.queue < line.queue)) {
      largest = holder.holds;
      line.queue = lender.queue;
    }
  }
  return line;
}

std::optional<LendingBlock> Lending::Check(int32_t j, int32_t model, int64_t milli) const {
  if (lenders_.empty() || by_node_ || model == kNone || milli <= 0) return std::nullopt;
  const std::vector<int32_t> chain = Chain(j);
  for (int32_t slot : {model, index_.any_model_slot()}) {
    const std::vector<Holder> holders = Holders(chain, slot);
    if (holders.empty()) continue;
    const Bound all = Line(holders, slot);
    LendingBlock block;
    block.queue = all.queue;
    block.slot = slot;
    block.held_milli = all.held_milli;
    block.holders = static_cast<int32_t>(holders.size());
    block.free_milli = SlotFree(slot);
    const int64_t needed = SaturatingAdd(block.held_milli, milli);
    if (block.free_milli >= needed) continue;
    block.shortfall_milli = needed - block.free_milli;
    return block;
  }
  return std::nullopt;
}

int64_t Lending::SlotFree(int32_t slot) const {
  if (slot != index_.any_model_slot()) return state_.model_free_gpu(slot);
  int64_t free = 0;
  for (int32_t m = 0; m < index_.model_count(); ++m) {
    free = SaturatingAdd(free, state_.model_free_gpu(m));
  }
  return free;
}

std::vector<int64_t> Lending::ClassFree(int32_t slot) const {
  std::vector<int64_t> free(class_count_, 0);
  int64_t owned = 0;
  for (int32_t n : owned_nodes_[slot]) {
    if (!state_.node_open(n)) continue;
    free[node_class_[n]] += state_.node_free_gpu(n);
    owned += state_.node_free_gpu(n);
  }
  free[0] = SlotFree(slot) - owned;  // the open nodes without owners
  return free;
}

int64_t Lending::LineFree(const Bound& line, const std::vector<int64_t>& class_free) {
  int64_t free = 0;
  for (size_t c = 0; c < class_free.size(); ++c) {
    if (line.classes[c] != 0) free = SaturatingAdd(free, class_free[c]);
  }
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
    const size_t first = bounds.size();
    bounds.push_back(Line(holders, slot));
    const std::vector<uint8_t> all = bounds[first].classes;  // a copy: bounds grows below
    // Holders that may use the same nodes, together (in order of their first member).
    std::vector<std::vector<Holder>> groups;
    for (const Holder& holder : holders) {
      const std::vector<uint8_t>& classes = lenders_[holder.lender].classes;
      auto same = std::find_if(groups.begin(), groups.end(), [&](const std::vector<Holder>& g) {
        return lenders_[g.front().lender].classes == classes;
      });
      if (same == groups.end()) {
        groups.push_back({holder});
      } else {
        same->push_back(holder);
      }
    }
    for (const std::vector<Holder>& group : groups) {
      if (lenders_[group.front().lender].classes != all) bounds.push_back(Line(group, slot));
    }
    for (const Holder& holder : inner) {
      if (lenders_[holder.lender].classes != all) bounds.push_back(Line({holder}, slot));
    }
    const std::vector<int64_t> class_free = ClassFree(slot);
    const int64_t total = bounds[first].held_milli;
    int64_t served = total;
    for (size_t i = first; i < bounds.size(); ++i) {
      Bound& line = bounds[i];
      line.free_before = LineFree(line, class_free);
      line.slack = SaturatingAdd(total - line.held_milli, line.free_before);
      served = std::min(served, line.slack);
    }
    for (size_t i = first; i < bounds.size(); ++i) bounds[i].slack -= served;
  }
  return bounds;
}

bool Lending::Slack(const std::vector<Bound>& bounds, int64_t milli) {
  return std::all_of(bounds.begin(), bounds.end(),
                     [milli](const Bound& line) { return line.slack >= milli; });
}

std::optional<LendingBlock> Lending::CheckPlaced(const std::vector<Bound>& bounds) const {
  // Per slot, the lines start with all holders together (their holds summed: total).
  for (size_t first = 0; first < bounds.size();) {
    const int32_t slot = bounds[first].slot;
    const int64_t total = bounds[first].held_milli;
    size_t end = first;
    while (end < bounds.size() && bounds[end].slot == slot) ++end;
    const std::vector<int64_t> class_free = ClassFree(slot);
    int64_t served_before = total, served_now = total;
    size_t least = end;
    int64_t least_free = 0;
    for (size_t i = first; i < end; ++i) {
      const Bound& line = bounds[i];
      const int64_t rest = total - line.held_milli;
      served_before = std::min(served_before, SaturatingAdd(rest, line.free_before));
      const int64_t free_now = LineFree(line, class_free);
      const int64_t now = SaturatingAdd(rest, free_now);
      if (now < served_now) {
        served_now = now;
        least = i;
        least_free = free_now;
      }
    }
    if (served_now < served_before) {
      const Bound& line = bounds[least];
      LendingBlock block;
      block.queue = line.queue;
      block.slot = slot;
      block.held_milli = line.held_milli;
      block.free_milli = line.free_before;
      block.shortfall_milli = line.held_milli - least_free;
      block.holders = static_cast<int32_t>(line.members.size());
      block.by_node = true;
      for (int32_t l : line.members) block.queues.push_back(lenders_[l].queue);
      std::sort(block.queues.begin(), block.queues.end());
      return block;
    }
    first = end;
  }
  return std::nullopt;
}

void Lending::AvoidTight(const std::vector<Bound>& bounds, int64_t milli) {
  std::fill(avoid_class_.begin(), avoid_class_.end(), 0);
  for (const Bound& line : bounds) {
    if (line.slack >= milli) continue;
    for (int32_t c = 0; c < class_count_; ++c) avoid_class_[c] |= line.classes[c];
  }
  avoiding_ = true;
}

}  // namespace gpupool::internal
