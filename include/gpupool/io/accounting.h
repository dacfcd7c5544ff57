// The JSON of accounting (target gpupool::io): the prices file, and the ledger, chargeback and
// pooling figures as JSON. docs/accounting.md documents both formats key by key.
//
// A prices file:
//
//   {
//     "currency": "USD",
//     "gpu_models": [{"gpu_model": "V100", "micros_per_gpu_hour": 2480000}],
//     "default_micros_per_gpu_hour": 0,
//     "queues": [{"queue": "vc1", "cost_center": "research",
//                 "borrowed_micros_per_gpu_hour": [{"gpu_model": "V100",
//                                                   "micros_per_gpu_hour": 1000000}]}],
//     "preemption_paid_by": "victim",
//     "pool_cost_center": "pool"
//   }
//
// Every key is optional (the defaults of Prices in chargeback.h); reading is strict like the
// other readers of gpupool::io (unknown or duplicate keys, wrong types and unknown payer names are
// InvalidArgument naming the JSON path). Whether the prices make sense (negative prices, unknown
// queues) is ComputeChargeback()'s check.
#ifndef GPUPOOL_IO_ACCOUNTING_H_
#define GPUPOOL_IO_ACCOUNTING_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gpupool/chargeback.h"
#include "gpupool/ledger.h"
#include "gpupool/pooling.h"

namespace gpupool::io {

// Parses a prices document. InvalidArgument naming the JSON path on any error.
absl::StatusOr<Prices> ParsePrices(std::string_view json);

// Reads and parses the prices file at `path` (NotFound when it cannot be read; other errors with
// the file name in front).
absl::StatusOr<Prices> ReadPricesFile(const std::string& path);

// A canonical JSON document with two members, "ledger" (the pool's figures, per model, per
// queue of the tree with its cost center and cost, per cost center, and the preemption losses by
// payer) and "pooling" (pooled versus dedicated). Integers only, except the two utilizations,
// written as exact 6-digit decimals of their parts per million. `chargeback` and `pooling` must
// come from `report`.
std::string AccountingToJson(const LedgerReport& report, const Chargeback& chargeback,
                             const PoolingReport& pooling);

}  // namespace gpupool::io

#endif  // GPUPOOL_IO_ACCOUNTING_H_
