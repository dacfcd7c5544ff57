// Pooled versus dedicated: what pooling the GPUs saved, from a ledger of what ran.
//
// A dedicated pool for a queue would need, of each GPU model, the most GPUs its own jobs held at
// once in the ledger (QueueModelLedger::peak_milli, rounded up to whole GPUs): with that many, each
// job could have started when it did. Summed over queues and models, that is what dedicated pools
// would have cost to own for the same period; the shared pool owned report.pool.gpus. Both
// carried the same busy time, so (docs/accounting.md):
//
//   dedicated_gpus        = sum over queues and models of ceil(peak_milli / 1000)
//   pooled_utilization    = pool busy / pool capacity
//   dedicated_utilization = pool busy / (dedicated_gpus x 1000 x duration)
//   pooled_cost_micros    = sum over models of Price(model capacity, model price)
//   dedicated_cost_micros = sum over models of Price(dedicated GPUs of the model x 1000 x
//                           duration, model price)
//   savings_micros        = dedicated_cost_micros - pooled_cost_micros (negative: pooling cost
//                           more, e.g. a pool larger than the peaks needed)
//
// with Price() the rounding rule of chargeback.h, and duration = end_time - start_time. Costs are
// of owning the GPUs for the period (busy or idle), not of the busy time charged back.
#ifndef GPUPOOL_POOLING_H_
#define GPUPOOL_POOLING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpupool/chargeback.h"
#include "gpupool/ledger.h"

namespace gpupool {

// One queue's dedicated pool of one model.
struct DedicatedPool {
  std::string queue;
  std::string gpu_model;
  int64_t peak_milli = 0;
  int64_t gpus = 0;  // ceil(peak_milli / 1000)
  int64_t busy_milli_gpu_s = 0;
};

// One GPU model: the shared pool's GPUs against the dedicated pools' sum.
struct ModelPooling {
  std::string gpu_model;
  int64_t pool_gpus = 0;
  int64_t dedicated_gpus = 0;
  int64_t busy_milli_gpu_s = 0;
  int64_t pooled_cost_micros = 0;
  int64_t dedicated_cost_micros = 0;
};

struct PoolingReport {
  int64_t duration_s = 0;
  // Every queue x model with use, sorted by (queue, model); and per model, sorted by name.
  std::vector<DedicatedPool> dedicated;
  std::vector<ModelPooling> models;
  int64_t pool_gpus = 0;
  int64_t dedicated_gpus = 0;
  // The exact fractions behind the utilizations (milli-GPU-seconds), and the utilizations in
  // parts per million, rounded half up (0 when the capacity is 0).
  int64_t busy_milli_gpu_s = 0;
  int64_t pool_capacity_milli_gpu_s = 0;
  int64_t dedicated_capacity_milli_gpu_s = 0;
  int64_t pooled_utilization_ppm = 0;
  int64_t dedicated_utilization_ppm = 0;
  int64_t pooled_cost_micros = 0;
  int64_t dedicated_cost_micros = 0;
  int64_t savings_micros = 0;
};

// Compares the pool of `report` with dedicated pools per queue, at `prices` (only the model
// prices are used). Errors: those of ComputeChargeback() for the prices; OutOfRange when a
// dedicated capacity or a cost does not fit in int64.
absl::StatusOr<PoolingReport> ComparePooling(const LedgerReport& report, const Prices& prices);

}  // namespace gpupool

#endif  // GPUPOOL_POOLING_H_
