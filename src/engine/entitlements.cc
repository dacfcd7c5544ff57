#include "entitlements.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "fair_share.h"
#include "fmt/format.h"
#include "internal/saturating.h"

namespace gpupool::internal {
namespace {

__extension__ typedef __int128 I128;

// Queues that do not lend (Queue::can_lend false, lending.h) keep their unused guarantee: what
// their subtree's demand falls short of it is added to their own demand, so that the division
// does not hand it to other queues. Per model, its guarantee for the model; then its guarantees
// summed (the "*" one on top of the per-model ones) against its demand summed over the models,
// the rest spread over the models in proportion to their capacity (largest remainders, ties to
// the lower model). Queues are taken deepest first, so that a queue's subtree demand already
// holds what the queues below it hold. Returns what was added, per queue x model, each queue
// with its whole subtree (to be taken out of the demand reported).
std::vector<int64_t> HoldUnlentGuarantees(const SnapshotIndex& index, FairShareInput& input) {
  const int32_t queues = input.queue_count;
  const int32_t models = input.model_count;
  const size_t slots = static_cast<size_t>(models) + 1;
  std::vector<int64_t> held(static_cast<size_t>(queues) * models, 0);
  bool any_lender = false;
  for (int32_t q = 0; q < queues; ++q) any_lender = any_lender || !index.queue(q).can_lend;
  if (!any_lender || models == 0) return held;
  std::vector<int32_t> order(queues);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&index](int32_t a, int32_t b) {
    return index.queue_depth(a) > index.queue_depth(b);
  });
  int64_t capacity = 0;
  for (int64_t c : input.capacity_milli) capacity = SaturatingAdd(capacity, c);
  std::vector<int64_t> subtree = input.demand_milli;  // own demand, then with descendants'
  for (int32_t q : order) {
    int64_t* row = &subtree[static_cast<size_t>(q) * models];
    int64_t* held_row = &held[static_cast<size_t>(q) * models];
    int64_t* own = &input.demand_milli[static_cast<size_t>(q) * models];
    if (!index.queue(q).can_lend) {
      int64_t total_guarantee = input.guaranteed_milli[q * slots + models];
      int64_t total_demand = 0;
      for (int32_t m = 0; m < models; ++m) {
        const int64_t guaranteed = input.guaranteed_milli[q * slots + m];
        total_guarantee = SaturatingAdd(total_guarantee, guaranteed);
        const int64_t add = std::max<int64_t>(0, guaranteed - row[m]);
        row[m] = SaturatingAdd(row[m], add);
        own[m] = SaturatingAdd(own[m], add);
        held_row[m] = SaturatingAdd(held_row[m], add);
        total_demand = SaturatingAdd(total_demand, row[m]);
      }
      const int64_t extra = std::max<int64_t>(0, total_guarantee - total_demand);
      if (extra > 0 && capacity > 0) {
        std::vector<std::pair<int64_t, int32_t>> remainders;  // (-remainder, model)
        int64_t given = 0;
        std::vector<int64_t> part(models, 0);
        for (int32_t m = 0; m < models; ++m) {
          const I128 product = static_cast<I128>(extra) * input.capacity_milli[m];
          part[m] = static_cast<int64_t>(product / capacity);
          given += part[m];
          remainders.emplace_back(-static_cast<int64_t>(product % capacity), m);
        }
        std::sort(remainders.begin(), remainders.end());
        for (size_t i = 0; given < extra && i < remainders.size(); ++i, ++given) {
          ++part[remainders[i].second];
        }
        for (int32_t m = 0; m < models; ++m) {
          row[m] = SaturatingAdd(row[m], part[m]);
          own[m] = SaturatingAdd(own[m], part[m]);
          held_row[m] = SaturatingAdd(held_row[m], part[m]);
        }
      }
    }
    const int32_t parent = input.parent[q];
    if (parent == kNone) continue;
    for (int32_t m = 0; m < models; ++m) {
      int64_t& up = subtree[static_cast<size_t>(parent) * models + m];
      up = SaturatingAdd(up, row[m]);
      int64_t& held_up = held[static_cast<size_t>(parent) * models + m];
      held_up = SaturatingAdd(held_up, held_row[m]);
    }
  }
  return held;
}

}  // namespace

Entitlements::Entitlements(const SnapshotIndex& index, const WorkingState& state,
                           const Policy& policy)
    : index_(index),
      slots_(static_cast<size_t>(index.model_count()) + 1),
      enforce_budgets_(policy.fair_share.gpu_hour_budgets == BudgetEnforcement::kEnforce) {
  const int32_t queues = index.queue_count();
  const int32_t models = index.model_count();
  const int32_t any = index.any_model_slot();
  entitlement_.assign(queues * slots_, 0);
  usage_.assign(queues * slots_, 0);
  demand_.assign(queues * slots_, 0);
  guaranteed_.assign(queues * slots_, 0);

  FairShareInput input;
  input.queue_count = queues;
  input.model_count = models;
  input.parent.resize(queues);
  input.guaranteed_milli.assign(queues * slots_, 0);
  input.limit_milli.assign(queues * slots_, kNoLimit);
  input.weight.assign(queues * slots_, 1);
  input.can_borrow.assign(queues, 1);
  input.demand_milli.assign(static_cast<size_t>(queues) * models, 0);
  input.capacity_milli.assign(models, 0);
  input.decayed_usage.assign(queues, 0);
  input.half_life_s = policy.fair_share.usage_half_life_s;

  // The nearest queue at or above each queue whose GPU-hour budget is spent (the parents form a
  // forest, checked by validation, so every walk ends).
  budget_queue_.assign(queues, kNone);
  for (int32_t q = 0; q < queues; ++q) {
    for (int32_t up = q; up != kNone; up = index.queue_parent(up)) {
      if (index.queue(up).OverOwnBudget()) {
        budget_queue_[q] = up;
        break;
      }
    }
  }

  for (int32_t q = 0; q < queues; ++q) {
    const Queue& queue = index.queue(q);
    input.parent[q] = index.queue_parent(q);
    input.can_borrow[q] = queue.can_borrow ? 1 : 0;
    input.decayed_usage[q] = queue.decayed_usage_milli_gpu_seconds;
    // The "*" quota's weight applies to every model without a quota of its own.
    int64_t any_weight = 1;
    for (const Quota& quota : queue.quotas) {
      if (quota.gpu_model == kAnyGpuModel) any_weight = quota.over_quota_weight;
    }
    for (int32_t m = 0; m < models; ++m) input.weight[At(q, m)] = any_weight;
    for (const Quota& quota : queue.quotas) {
      const int32_t slot = quota.gpu_model == kAnyGpuModel ? any : index.FindModel(quota.gpu_model);
      if (slot == kNone) continue;
      const int64_t guaranteed = budget_enforced(q) ? 0 : quota.guaranteed_milli;
      input.guaranteed_milli[At(q, slot)] = guaranteed;
      guaranteed_[At(q, slot)] = guaranteed;
      if (quota.limit_milli) input.limit_milli[At(q, slot)] = *quota.limit_milli;
      if (slot != any) input.weight[At(q, slot)] = quota.over_quota_weight;
    }
    for (int32_t slot = 0; slot <= models; ++slot) usage_[At(q, slot)] = state.queue_usage(q, slot);
  }
  for (int32_t n = 0; n < index.node_count(); ++n) {
    const int32_t m = index.node_model(n);
    if (m != kNone && state.node_open(n)) {
      input.capacity_milli[m] += static_cast<int64_t>(index.healthy_gpus(n)) * kMilliPerGpu;
    }
  }

  // Own demand: running placements on their node's model; pending jobs on their first model.
  // A running job that accepts several models counts like a pending one, on its first model,
  // so that evicting or restarting it does not move demand between models (which would move
  // entitlements, and could let the victim's queue reclaim right back: a loop).
  for (int32_t j = 0; j < index.job_count(); ++j) {
    const JobInfo& info = index.job(j);
    if (info.queue == kNone) continue;
    const size_t row = static_cast<size_t>(info.queue) * models;
    if (info.job->state == JobState::kRunning && info.models.size() <= 1) {
      for (const RunningPlacement& p : info.placements) {
        const int32_t model = index.node_model(p.node);
        if (model == kNone) continue;
        const int64_t milli = info.job->groups[p.group].request.gpu_milli;
        int64_t& cell = input.demand_milli[row + model];
        cell = SaturatingAdd(cell, milli);
      }
      continue;
    }
    if (!info.needs_gpu) continue;
    auto first = std::find_if(info.models.begin(), info.models.end(),
                              [&index](int32_t m) { return !index.nodes_of_model(m).empty(); });
    if (first == info.models.end()) continue;
    int64_t want = 0;
    for (const TaskGroup& group : info.job->groups) {
      want = SaturatingAdd(want, group.request.gpu_milli * group.replicas);
    }
    int64_t& cell = input.demand_milli[row + *first];
    cell = SaturatingAdd(cell, want);
  }

  const std::vector<int64_t> held = HoldUnlentGuarantees(index, input);
  const FairShareResult result = ComputeFairShare(input);
  for (int32_t q = 0; q < queues; ++q) {
    int64_t total_entitlement = 0, total_demand = 0;
    for (int32_t m = 0; m < models; ++m) {
      const size_t cell = static_cast<size_t>(q) * models + m;
      entitlement_[At(q, m)] = result.entitlement_milli[cell];
      demand_[At(q, m)] = result.demand_milli[cell] - held[cell];
      total_entitlement = SaturatingAdd(total_entitlement, result.entitlement_milli[cell]);
      total_demand = SaturatingAdd(total_demand, demand_[At(q, m)]);
    }
    entitlement_[At(q, any)] = total_entitlement;
    demand_[At(q, any)] = total_demand;
  }
}

namespace {

// Milli-GPU-seconds as GPU-hours with two decimals, rounded down ("12.50").
std::string GpuHours(int64_t milli_gpu_seconds) {
  const int64_t centi = milli_gpu_seconds / 36'000;  // 3,600,000 milli-GPU-s = 1 GPU-hour
  return fmt::format("{}.{:02}", centi / 100, centi % 100);
}

}  // namespace

void Entitlements::ExplainBudgets(std::vector<PendingDecision>& pending) const {
  for (PendingDecision& decision : pending) {
    const int32_t j = index_.FindJob(decision.job);
    if (j == kNone || index_.job(j).queue == kNone) continue;
    const int32_t q = index_.job(j).queue;
    const int32_t spent = budget_queue_[q];
    if (spent == kNone) continue;
    const Queue& queue = index_.queue(spent);
    if (!enforce_budgets_) {
      decision.detail += fmt::format(
          "; queue {} is over its GPU-hour budget ({} of {} GPU-hours used this period), which "
          "the policy only reports (fair_share.gpu_hour_budgets: report-only)",
          queue.id, GpuHours(queue.budget_used_milli_gpu_seconds),
          GpuHours(*queue.budget_milli_gpu_seconds));
      continue;
    }
    decision.detail += fmt::format(
        "; queue {} is over its GPU-hour budget ({} of {} GPU-hours used this period), so {} no "
        "guarantee: its jobs run only on idle GPUs and are the first reclaimed",
        queue.id, GpuHours(queue.budget_used_milli_gpu_seconds),
        GpuHours(*queue.budget_milli_gpu_seconds),
        spent == q ? "it has" : fmt::format("queue {} has", index_.queue(q).id));
  }
}

std::vector<QueueShare> Entitlements::Report() const {
  std::vector<QueueShare> rows;
  const int32_t any = index_.any_model_slot();
  for (int32_t q = 0; q < index_.queue_count(); ++q) {
    // "*" first, then models in name order.
    std::vector<int32_t> order = {any};
    for (int32_t m = 0; m < index_.model_count(); ++m) order.push_back(m);
    for (int32_t slot : order) {
      const size_t at = At(q, slot);
      if (guaranteed_[at] == 0 && usage_[at] == 0 && demand_[at] == 0 && entitlement_[at] == 0) {
        continue;
      }
      QueueShare row;
      row.queue = index_.queue(q).id;
      row.gpu_model = slot == any ? std::string(kAnyGpuModel) : index_.model(slot).name;
      row.entitlement_milli = entitlement_[at];
      row.usage_milli = usage_[at];
      row.demand_milli = demand_[at];
      row.guaranteed_milli = guaranteed_[at];
      row.over_budget = over_budget(q);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace gpupool::internal
