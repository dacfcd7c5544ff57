// The replay's GPU-hour budgets (budgets.h).
#include "sim/replay/budgets.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gpupool::sim::internal {

BudgetTracker::BudgetTracker(const Tenants& tenants, int64_t first_arrival, int64_t period_s,
                             bool enforced)
    : tenants_(tenants),
      active_(tenants.AnyBudget()),
      slot_(tenants.size(), -1),
      baseline_(tenants.size(), 0) {
  constexpr int64_t kDay = 86400;
  // Midnight UTC of the first arrival's day, also for times before the epoch.
  period_begin_ = first_arrival - ((first_arrival % kDay) + kDay) % kDay;
  if (!active_) return;
  result_.period_start = period_begin_;
  result_.period_s = period_s;
  result_.enforced = enforced;
  for (size_t q = 0; q < tenants.size(); ++q) {
    if (!tenants.budget_milli_gpu_s[q].has_value()) continue;
    slot_[q] = static_cast<int32_t>(result_.queues.size());
    result_.queues.push_back(QueueBudgetUse{.queue = tenants.names[q],
                                            .budget_milli_gpu_s = *tenants.budget_milli_gpu_s[q],
                                            .used_milli_gpu_s = {},
                                            .over_budget_since = {-1}});
  }
}

void BudgetTracker::ClosePeriod(const LedgerRecorder& ledger) {
  for (size_t q = 0; q < tenants_.size(); ++q) {
    if (slot_[q] < 0) continue;
    const int64_t busy = ledger.Busy(static_cast<int32_t>(q));
    QueueBudgetUse& use = result_.queues[static_cast<size_t>(slot_[q])];
    use.used_milli_gpu_s.push_back(busy - baseline_[q]);
    baseline_[q] = busy;
  }
  ++result_.periods;
  period_begin_ += result_.period_s;
}

absl::Status BudgetTracker::AdvanceTo(int64_t t, LedgerRecorder& ledger) {
  if (!active_) return absl::OkStatus();
  while (period_begin_ + result_.period_s <= t) {
    if (absl::Status status = ledger.AdvanceTo(period_begin_ + result_.period_s); !status.ok()) {
      return status;
    }
    ClosePeriod(ledger);
    for (QueueBudgetUse& use : result_.queues) use.over_budget_since.push_back(-1);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> BudgetTracker::Used(int64_t t, LedgerRecorder& ledger) {
  std::vector<int64_t> used(tenants_.size(), 0);
  if (!active_) return used;
  if (absl::Status status = ledger.AdvanceTo(t); !status.ok()) return status;
  for (size_t q = 0; q < tenants_.size(); ++q) {
    if (slot_[q] >= 0) used[q] = ledger.Busy(static_cast<int32_t>(q)) - baseline_[q];
  }
  return used;
}

void BudgetTracker::CycleAt(int64_t t, const std::vector<int64_t>& used) {
  if (!active_) return;
  for (size_t q = 0; q < tenants_.size(); ++q) {
    if (slot_[q] < 0) continue;
    QueueBudgetUse& use = result_.queues[static_cast<size_t>(slot_[q])];
    if (used[q] >= use.budget_milli_gpu_s && use.over_budget_since.back() < 0) {
      use.over_budget_since.back() = t;
    }
  }
}

absl::StatusOr<ReplayBudgets> BudgetTracker::Finish(int64_t end, LedgerRecorder& ledger) && {
  if (!active_) return ReplayBudgets{};
  if (absl::Status status = AdvanceTo(end, ledger); !status.ok()) return status;
  // The last period, cut at the end; none left when the end falls on a period's start (but
  // always at least one).
  if (period_begin_ < end || result_.periods == 0) {
    if (absl::Status status = ledger.AdvanceTo(end); !status.ok()) return status;
    ClosePeriod(ledger);
  } else {
    for (QueueBudgetUse& use : result_.queues) use.over_budget_since.pop_back();
  }
  return std::move(result_);
}

}  // namespace gpupool::sim::internal
