// Pooled versus dedicated (pooling.h, docs/accounting.md).
//
// A queue's peak is taken over its own jobs per model, so that the dedicated pools partition
// the busy time exactly: every busy milli-GPU-second of the pool belongs to one queue and model,
// and each dedicated pool was at least as large as what it carried at every instant.
#include "gpupool/pooling.h"

#include <cstdint>
#include <limits>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gpupool/resources.h"

namespace gpupool {
namespace {

// 128-bit products of milli-GPU-seconds and prices, which may pass int64 before a division.
__extension__ typedef __int128 Int128;

int64_t Ppm(int64_t part, int64_t whole) {
  if (whole <= 0) return 0;
  return static_cast<int64_t>((static_cast<Int128>(part) * 1'000'000 + whole / 2) / whole);
}

}  // namespace

absl::StatusOr<PoolingReport> ComparePooling(const LedgerReport& report, const Prices& prices) {
  // The model prices, validated as the chargeback validates them.
  absl::StatusOr<Chargeback> priced = ComputeChargeback(report, prices);
  if (!priced.ok()) return priced.status();
  std::map<std::string, int64_t, std::less<>> model_price;
  for (const ModelLedger& model : report.models) {
    int64_t price = prices.default_micros_per_gpu_hour.value_or(0);
    for (const ModelPrice& p : prices.gpu_models) {
      if (p.gpu_model == model.gpu_model) price = p.micros_per_gpu_hour;
    }
    model_price[model.gpu_model] = price;
  }

  PoolingReport out;
  out.duration_s = report.end_time - report.start_time;
  std::map<std::string, ModelPooling, std::less<>> models;
  for (const ModelLedger& model : report.models) {
    ModelPooling& row = models[model.gpu_model];
    row.gpu_model = model.gpu_model;
    row.pool_gpus = model.usage.gpus;
    row.busy_milli_gpu_s = model.usage.time.work.busy;
    absl::StatusOr<int64_t> cost =
        PriceMilliGpuSeconds(model.usage.capacity, model_price.at(model.gpu_model));
    if (!cost.ok()) return cost.status();
    row.pooled_cost_micros = *cost;
  }
  for (const QueueModelLedger& qm : report.queue_models) {
    DedicatedPool pool;
    pool.queue = qm.queue;
    pool.gpu_model = qm.gpu_model;
    pool.peak_milli = qm.peak_milli;
    pool.gpus = (qm.peak_milli + kMilliPerGpu - 1) / kMilliPerGpu;
    pool.busy_milli_gpu_s = qm.own.work.busy;
    models.at(qm.gpu_model).dedicated_gpus += pool.gpus;
    out.dedicated.push_back(std::move(pool));
  }
  for (auto& [name, row] : models) {
    const Int128 capacity = static_cast<Int128>(row.dedicated_gpus) * kMilliPerGpu * out.duration_s;
    if (capacity > std::numeric_limits<int64_t>::max()) {
      return absl::OutOfRangeError(fmt::format(
          "pooling: the dedicated capacity of model \"{}\" does not fit in int64", name));
    }
    absl::StatusOr<int64_t> cost =
        PriceMilliGpuSeconds(static_cast<int64_t>(capacity), model_price.at(name));
    if (!cost.ok()) return cost.status();
    row.dedicated_cost_micros = *cost;
    bool overflow = false;
    overflow |= __builtin_add_overflow(out.pool_gpus, row.pool_gpus, &out.pool_gpus);
    overflow |= __builtin_add_overflow(out.dedicated_gpus, row.dedicated_gpus, &out.dedicated_gpus);
    overflow |=
        __builtin_add_overflow(out.dedicated_capacity_milli_gpu_s, static_cast<int64_t>(capacity),
                               &out.dedicated_capacity_milli_gpu_s);
    overflow |= __builtin_add_overflow(out.pooled_cost_micros, row.pooled_cost_micros,
                                       &out.pooled_cost_micros);
    overflow |= __builtin_add_overflow(out.dedicated_cost_micros, row.dedicated_cost_micros,
                                       &out.dedicated_cost_micros);
    if (overflow) return absl::OutOfRangeError("pooling: a total does not fit in int64");
    out.models.push_back(std::move(row));
  }
  out.busy_milli_gpu_s = report.pool.time.work.busy;
  out.pool_capacity_milli_gpu_s = report.pool.capacity;
  out.pooled_utilization_ppm = Ppm(out.busy_milli_gpu_s, out.pool_capacity_milli_gpu_s);
  out.dedicated_utilization_ppm = Ppm(out.busy_milli_gpu_s, out.dedicated_capacity_milli_gpu_s);
  if (__builtin_sub_overflow(out.dedicated_cost_micros, out.pooled_cost_micros,
                             &out.savings_micros)) {
    return absl::OutOfRangeError("pooling: savings do not fit in int64");
  }
  return out;
}

}  // namespace gpupool
