// The replay's GPU-hour budgets (docs/budgets.md, docs/accounting.md "Budgets in the replay"):
// what each queue with a budget has used of it in the current period, read from the replay's
// ledger as a host would (Ledger::SubtreeBusy now minus at the period's start), for the
// snapshots the engine sees, and period by period for ReplayResult::budgets.
//
// Periods start at midnight UTC of the first arrival's day and last ReplayOptions::
// budget_period_s. The driver tells the tracker about time passing (AdvanceTo, before the
// events of a second), which closes the periods that ended by then, reading the ledger at each
// period's end; and about each cycle (Used before it, CycleAt with what the engine saw).
// Without budgets nothing is read and nothing is kept.
//
// Not API: one of the parts RunReplay() (replay.cc) is built from.
#ifndef GPUPOOL_SRC_SIM_REPLAY_BUDGETS_H_
#define GPUPOOL_SRC_SIM_REPLAY_BUDGETS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpupool/sim/replay.h"
#include "sim/replay/ledger_recorder.h"
#include "sim/replay/tenants.h"

namespace gpupool::sim::internal {

class BudgetTracker {
 public:
  // `tenants` must outlive the tracker. `first_arrival`: the ledger's start. `enforced`: the
  // engine's queues are the tenants (ReplayBudgets::enforced).
  BudgetTracker(const Tenants& tenants, int64_t first_arrival, int64_t period_s, bool enforced);

  bool active() const { return active_; }
  // Closes every period that ends at or before `t` (> the previous call's), reading the ledger
  // at its end: the ledger's time moves to that end.
  absl::Status AdvanceTo(int64_t t, LedgerRecorder& ledger);
  // Per tenant, what it used of its budget in the current period up to `t` (the ledger's time
  // moves to `t`; 0 for tenants without a budget).
  absl::StatusOr<std::vector<int64_t>> Used(int64_t t, LedgerRecorder& ledger);
  // A cycle at `t` saw `used` (from Used): marks the queues over their budget.
  void CycleAt(int64_t t, const std::vector<int64_t>& used);
  // The budgets once the replay has ended at `end` (the last completion).
  absl::StatusOr<ReplayBudgets> Finish(int64_t end, LedgerRecorder& ledger) &&;

 private:
  void ClosePeriod(const LedgerRecorder& ledger);

  const Tenants& tenants_;
  const bool active_;
  ReplayBudgets result_;
  // Per tenant with a budget: its position in result_.queues, or -1.
  std::vector<int32_t> slot_;
  // Ledger busy time of each tenant when the current period began.
  std::vector<int64_t> baseline_;
  // Start of the current period.
  int64_t period_begin_;
};

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_REPLAY_BUDGETS_H_
