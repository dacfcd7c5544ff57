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
  std::stable_sort(order.begin(), order.end(), [&index](int32_t a, int32_t b) {
    return index.queue_depth(a) > index.queue_depth(b);
  });
  std::vector<int32_t> position(queues, kNone);
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<int32_t>(i);
  for (int32_t q : order) {
    Lender lender{q, kNone, std::vector<int64_t>(static_cast<size_t>(any) + 1, 0)};
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
}

std::optional<LendingBlock> Lending::Check(int32_t j, int32_t model, int64_t milli) const {
  if (lenders_.empty() || model == kNone || milli <= 0) return std::nullopt;
  std::vector<int32_t> chain;  // the job's queue and its ancestors
  for (int32_t q = index_.job(j).queue; q != kNone; q = index_.queue_parent(q)) chain.push_back(q);
  if (auto block = CheckSlot(chain, model, milli)) return block;
  return CheckSlot(chain, index_.any_model_slot(), milli);
}

std::optional<LendingBlock> Lending::CheckSlot(const std::vector<int32_t>& chain, int32_t slot,
                                               int64_t milli) const {
  auto excludes_job = [&chain](int32_t q) {
    return std::find(chain.begin(), chain.end(), q) == chain.end();
  };
  LendingBlock block;
  block.slot = slot;
  int64_t largest = 0;
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
    if (lender.parent != kNone && excludes_job(lenders_[lender.parent].queue)) continue;
    block.held_milli = SaturatingAdd(block.held_milli, holds);
    ++block.holders;
    if (holds > largest || (holds == largest && lender.queue < block.queue)) {
      largest = holds;
      block.queue = lender.queue;
    }
  }
  if (block.held_milli == 0) return std::nullopt;
  if (slot == index_.any_model_slot()) {
    for (int32_t m = 0; m < index_.model_count(); ++m) {
      block.free_milli = SaturatingAdd(block.free_milli, state_.model_free_gpu(m));
    }
  } else {
    block.free_milli = state_.model_free_gpu(slot);
  }
  const int64_t needed = SaturatingAdd(block.held_milli, milli);
  if (block.free_milli >= needed) return std::nullopt;
  block.shortfall_milli = needed - block.free_milli;
  return block;
}

}  // namespace gpupool::internal
