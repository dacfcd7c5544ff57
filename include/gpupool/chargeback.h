// Chargeback: what each cost center, queue and GPU model owes for the GPU time in a ledger.
//
// Prices are integers: micro-units of a currency (1 USD = 1,000,000 micros) per GPU-hour. Cost is
// computed once per chargeback row and figure, with one rounding rule, and every total is a sum
// of those row figures, so totals add up exactly (docs/accounting.md):
//
//   Price(milli_gpu_s, micros_per_gpu_hour) = milli_gpu_s x micros_per_gpu_hour / 3,600,000
//                                              rounded half away from zero (128-bit, exact).
//
// (3,600,000 = 1000 milli-GPU x 3600 s: one GPU-hour.) For a row (cost center, queue, model):
//
//   usage_cost_micros            = Price(busy, price of the model)
//   borrowed_adjustment_micros   = Price(borrowed, borrowed price - price)   (0 without a
//                                  borrowed price; negative when borrowing is cheaper)
//   lost_to_preemption_cost_micros, lost_to_failure_cost_micros, restore_cost_micros
//                                = Price(that time, price of the model): shown apart, already
//                                  inside usage_cost_micros (the GPUs were busy)
//   preemption_transfer_micros   = what moves for preemption losses when the victim does not pay
//                                  (see PreemptionPayer): minus on the victim's row, plus on the
//                                  payer's row, the same Price(lost, price) on both
//   cost_micros                  = usage_cost_micros + borrowed_adjustment_micros
//                                  + preemption_transfer_micros
//
// The transfers sum to zero, so the grand total is the sum of usage costs and borrowed
// adjustments however preemption is paid.
#ifndef GPUPOOL_CHARGEBACK_H_
#define GPUPOOL_CHARGEBACK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpupool/ledger.h"

namespace gpupool {

// Who pays for the work a preemption destroys.
enum class PreemptionPayer {
  // The victim's queue (the default): the GPUs were busy on its behalf, and a queue that borrows
  // above its guarantee accepts that the lender may reclaim them.
  kVictim,
  // The queue of the job the victim was preempted for (where the ledger knows it; the victim
  // otherwise).
  kPreemptor,
  // Nobody's queue: a row of the pool's own cost center (Prices::pool_cost_center, queue "").
  kPool,
};

// Price of one GPU model, in micro-units per GPU-hour (>= 0).
struct ModelPrice {
  std::string gpu_model;
  int64_t micros_per_gpu_hour = 0;
};

// What one queue sets; everything optional, and inherited by its descendants when unset.
struct QueuePricing {
  std::string queue;
  // The cost center its usage is billed to. Normally a queue's cost center is its
  // "cost_center" label (Queue::labels, kCostCenterLabel); this sets it where the queues carry
  // no labels (the replay's queues come from a trace) or overrides the label.
  std::optional<std::string> cost_center;
  // A different price for its borrowed time, per GPU model (e.g. a discount for time that may be
  // reclaimed). A model without one keeps the model's price.
  std::vector<ModelPrice> borrowed_micros_per_gpu_hour;
};

struct Prices {
  // Name of the currency, for reports only ("" allowed).
  std::string currency;
  // Price per GPU model. A model of the ledger without one takes default_micros_per_gpu_hour;
  // without that, ComputeChargeback() fails (FailedPrecondition naming the model).
  std::vector<ModelPrice> gpu_models;
  std::optional<int64_t> default_micros_per_gpu_hour;
  // Cost centers and borrowed prices per queue. A queue's own cost center is the one its
  // QueuePricing sets, else its "cost_center" label (LedgerReport's QueueLedger::labels); its
  // cost center is its own, else its nearest ancestor's own, else the id of its root queue.
  std::vector<QueuePricing> queues;
  PreemptionPayer preemption_paid_by = PreemptionPayer::kVictim;
  // The cost center of rows paid by the pool (kPool).
  std::string pool_cost_center = "pool";
};

// One row: the own jobs of one queue on one GPU model (or, with queue "", the pool's share of
// preemption losses). Times in milli-GPU-seconds, money in micros.
struct ChargebackRow {
  std::string cost_center;
  std::string queue;
  std::string gpu_model;
  QueueTime time;
  int64_t micros_per_gpu_hour = 0;
  int64_t usage_cost_micros = 0;
  int64_t borrowed_adjustment_micros = 0;
  int64_t lost_to_preemption_cost_micros = 0;
  int64_t lost_to_failure_cost_micros = 0;
  int64_t restore_cost_micros = 0;
  int64_t preemption_transfer_micros = 0;
  int64_t cost_micros = 0;
};

// A sum of rows: a cost center, a queue's subtree, or everything.
struct ChargebackTotal {
  std::string name;
  // For a queue's total: the queue's cost center. For a cost center: its name. Total: "".
  std::string cost_center;
  QueueTime time;
  int64_t usage_cost_micros = 0;
  int64_t borrowed_adjustment_micros = 0;
  int64_t lost_to_preemption_cost_micros = 0;
  int64_t lost_to_failure_cost_micros = 0;
  int64_t restore_cost_micros = 0;
  int64_t preemption_transfer_micros = 0;
  int64_t cost_micros = 0;
};

struct Chargeback {
  std::string currency;
  PreemptionPayer preemption_paid_by = PreemptionPayer::kVictim;
  // Sorted by (cost center, queue, model).
  std::vector<ChargebackRow> rows;
  // Per cost center (sorted by name); per queue of the tree, its subtree's rows (sorted by queue
  // id; every queue of the ledger); and the grand total (name "total"). Each is the exact sum of
  // its rows' figures.
  std::vector<ChargebackTotal> cost_centers;
  std::vector<ChargebackTotal> queues;
  ChargebackTotal total;
};

// Prices `report`. Errors: InvalidArgument for a negative price, a QueuePricing naming no queue
// of the ledger, a queue or model priced twice, an empty cost center; FailedPrecondition for a
// ledger model without a price and no default; OutOfRange if a cost does not fit in int64.
// Deterministic; cost linear in the report's rows.
absl::StatusOr<Chargeback> ComputeChargeback(const LedgerReport& report, const Prices& prices);

// The micros of `milli_gpu_s` at `micros_per_gpu_hour`, with the rounding rule above (either may
// be negative). OutOfRange when the result does not fit in int64.
absl::StatusOr<int64_t> PriceMilliGpuSeconds(int64_t milli_gpu_s, int64_t micros_per_gpu_hour);

// The cost center of every queue of `report` under `prices` (the rule of Prices::queues: own
// pricing, else own label, else the nearest ancestor's, else the root's id), in the order of
// report.queues.
std::vector<std::string> CostCenters(const LedgerReport& report, const Prices& prices);

// "victim", "preemptor", "pool".
const char* PreemptionPayerName(PreemptionPayer payer);

// The chargeback table as CSV (RFC 4180; docs/accounting.md names the columns, all but the first,
// `policy`, which `gpupool simulate` adds to tell its policies apart): a header line,
// then one line per row, then one per cost center (queue "*", model "*") and the total (cost
// center "*"). GPU-hours are printed with 6 decimals, rounded half up from the exact integers;
// every integer column is exact.
std::string ChargebackToCsv(const Chargeback& chargeback);

}  // namespace gpupool

#endif  // GPUPOOL_CHARGEBACK_H_
