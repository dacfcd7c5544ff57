// Chargeback (chargeback.h, docs/accounting.md).
//
// Money is rounded in exactly one place, PriceMilliGpuSeconds(), once per row and figure; every
// total is then a plain integer sum of row figures. That is what makes the totals add up: a
// cost center's cost is the sum of its rows' costs by construction, never a product rounded
// again.
#include "gpupool/chargeback.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gpupool/resources.h"

namespace gpupool {
namespace {

// 128-bit products of milli-GPU-seconds and prices, which may pass int64 before a division.
__extension__ typedef __int128 Int128;

constexpr int64_t kMilliGpuSecondsPerGpuHour = kMilliPerGpu * 3600;

// Sums that must not wrap: the first overflow is remembered and reported once.
struct CheckedSum {
  bool overflow = false;
  void Add(int64_t& into, int64_t value) {
    if (__builtin_add_overflow(into, value, &into)) overflow = true;
  }
};

void AddRow(CheckedSum& sum, ChargebackTotal& total, const ChargebackRow& row) {
  sum.Add(total.time.work.busy, row.time.work.busy);
  sum.Add(total.time.work.productive, row.time.work.productive);
  sum.Add(total.time.work.lost_to_preemption, row.time.work.lost_to_preemption);
  sum.Add(total.time.work.lost_to_failure, row.time.work.lost_to_failure);
  sum.Add(total.time.work.restore, row.time.work.restore);
  sum.Add(total.time.within_guarantee, row.time.within_guarantee);
  sum.Add(total.time.borrowed, row.time.borrowed);
  sum.Add(total.usage_cost_micros, row.usage_cost_micros);
  sum.Add(total.borrowed_adjustment_micros, row.borrowed_adjustment_micros);
  sum.Add(total.lost_to_preemption_cost_micros, row.lost_to_preemption_cost_micros);
  sum.Add(total.lost_to_failure_cost_micros, row.lost_to_failure_cost_micros);
  sum.Add(total.restore_cost_micros, row.restore_cost_micros);
  sum.Add(total.preemption_transfer_micros, row.preemption_transfer_micros);
  sum.Add(total.cost_micros, row.cost_micros);
}

absl::Status CheckPrices(const std::vector<ModelPrice>& prices, std::string_view field) {
  std::map<std::string, bool, std::less<>> seen;
  for (size_t i = 0; i < prices.size(); ++i) {
    const ModelPrice& price = prices[i];
    if (price.gpu_model.empty()) {
      return absl::InvalidArgumentError(fmt::format("{}[{}].gpu_model: empty", field, i));
    }
    if (!seen.emplace(price.gpu_model, true).second) {
      return absl::InvalidArgumentError(
          fmt::format("{}[{}] ({}): a second price for the model", field, i, price.gpu_model));
    }
    if (price.micros_per_gpu_hour < 0) {
      return absl::InvalidArgumentError(
          fmt::format("{}[{}] ({}).micros_per_gpu_hour: negative ({})", field, i, price.gpu_model,
                      price.micros_per_gpu_hour));
    }
  }
  return absl::OkStatus();
}

const ModelPrice* FindPrice(const std::vector<ModelPrice>& prices, std::string_view model) {
  for (const ModelPrice& price : prices) {
    if (price.gpu_model == model) return &price;
  }
  return nullptr;
}

// Money as "-12.345678" from micros (exact).
std::string Money(int64_t micros) {
  const bool negative = micros < 0;
  const auto magnitude = static_cast<uint64_t>(negative ? -(static_cast<Int128>(micros))
                                                        : static_cast<Int128>(micros));
  return fmt::format("{}{}.{:06}", negative ? "-" : "", magnitude / 1'000'000,
                     magnitude % 1'000'000);
}

// GPU-hours with 6 decimals, rounded half up from non-negative milli-GPU-seconds.
std::string GpuHours(int64_t milli_gpu_s) {
  const Int128 millionths = (static_cast<Int128>(milli_gpu_s) * 10 + 18) / 36;
  return fmt::format("{}.{:06}", static_cast<int64_t>(millionths / 1'000'000),
                     static_cast<int64_t>(millionths % 1'000'000));
}

std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace

const char* PreemptionPayerName(PreemptionPayer payer) {
  switch (payer) {
    case PreemptionPayer::kVictim:
      return "victim";
    case PreemptionPayer::kPreemptor:
      return "preemptor";
    case PreemptionPayer::kPool:
      return "pool";
  }
  return "victim";
}

absl::StatusOr<int64_t> PriceMilliGpuSeconds(int64_t milli_gpu_s, int64_t micros_per_gpu_hour) {
  const Int128 product = static_cast<Int128>(milli_gpu_s) * micros_per_gpu_hour;
  const Int128 magnitude = product < 0 ? -product : product;
  Int128 rounded = (magnitude + kMilliGpuSecondsPerGpuHour / 2) / kMilliGpuSecondsPerGpuHour;
  if (product < 0) rounded = -rounded;
  if (rounded > std::numeric_limits<int64_t>::max() ||
      rounded < std::numeric_limits<int64_t>::min()) {
    return absl::OutOfRangeError(
        fmt::format("cost of {} milli-GPU-seconds at {} micros per GPU-hour does not fit in int64",
                    milli_gpu_s, micros_per_gpu_hour));
  }
  return static_cast<int64_t>(rounded);
}

std::vector<std::string> CostCenters(const LedgerReport& report, const Prices& prices) {
  std::map<std::string, size_t, std::less<>> index;
  for (size_t q = 0; q < report.queues.size(); ++q) index.emplace(report.queues[q].queue, q);
  // A queue's own cost center: its prices entry's, else its label's.
  std::map<std::string, std::string, std::less<>> own;
  for (const QueuePricing& pricing : prices.queues) {
    if (pricing.cost_center.has_value()) own.emplace(pricing.queue, *pricing.cost_center);
  }
  for (const QueueLedger& queue : report.queues) {
    for (const TopologyLabel& label : queue.labels) {
      if (label.level == kCostCenterLabel) own.emplace(queue.queue, label.value);
    }
  }
  std::vector<std::string> out;
  for (const QueueLedger& queue : report.queues) {
    // Walk up to the first queue that names a cost center; the root's id otherwise. The depth
    // bounds the walk (the ledger refused cycles).
    const QueueLedger* at = &queue;
    std::string center;
    for (int32_t steps = 0; steps <= queue.depth; ++steps) {
      if (auto it = own.find(at->queue); it != own.end()) {
        center = it->second;
        break;
      }
      auto parent = index.find(at->parent);
      if (parent == index.end()) {
        center = at->queue;
        break;
      }
      at = &report.queues[parent->second];
    }
    out.push_back(center);
  }
  return out;
}

absl::StatusOr<Chargeback> ComputeChargeback(const LedgerReport& report, const Prices& prices) {
  if (absl::Status status = CheckPrices(prices.gpu_models, "gpu_models"); !status.ok()) {
    return status;
  }
  if (prices.default_micros_per_gpu_hour.has_value() && *prices.default_micros_per_gpu_hour < 0) {
    return absl::InvalidArgumentError(fmt::format("default_micros_per_gpu_hour: negative ({})",
                                                  *prices.default_micros_per_gpu_hour));
  }
  if (prices.pool_cost_center.empty()) {
    return absl::InvalidArgumentError("pool_cost_center: empty");
  }
  switch (prices.preemption_paid_by) {
    case PreemptionPayer::kVictim:
    case PreemptionPayer::kPreemptor:
    case PreemptionPayer::kPool:
      break;
    default:
      return absl::InvalidArgumentError(fmt::format("preemption_paid_by: unknown value {}",
                                                    static_cast<int>(prices.preemption_paid_by)));
  }
  std::map<std::string, size_t, std::less<>> queue_index;
  for (size_t q = 0; q < report.queues.size(); ++q) queue_index.emplace(report.queues[q].queue, q);
  std::map<std::string, const QueuePricing*, std::less<>> pricing;
  for (size_t i = 0; i < prices.queues.size(); ++i) {
    const QueuePricing& p = prices.queues[i];
    if (!queue_index.contains(p.queue)) {
      return absl::InvalidArgumentError(
          fmt::format("queues[{}].queue: unknown queue \"{}\"", i, p.queue));
    }
    if (!pricing.emplace(p.queue, &p).second) {
      return absl::InvalidArgumentError(
          fmt::format("queues[{}] ({}): the queue is priced twice", i, p.queue));
    }
    if (p.cost_center.has_value() && p.cost_center->empty()) {
      return absl::InvalidArgumentError(
          fmt::format("queues[{}] ({}).cost_center: empty", i, p.queue));
    }
    if (absl::Status status =
            CheckPrices(p.borrowed_micros_per_gpu_hour,
                        fmt::format("queues[{}] ({}).borrowed_micros_per_gpu_hour", i, p.queue));
        !status.ok()) {
      return status;
    }
  }
  std::map<std::string, int64_t, std::less<>> model_price;
  for (const ModelLedger& model : report.models) {
    const ModelPrice* price = FindPrice(prices.gpu_models, model.gpu_model);
    if (price == nullptr && !prices.default_micros_per_gpu_hour.has_value()) {
      return absl::FailedPreconditionError(
          fmt::format("gpu_models: no price for GPU model \"{}\" and no default", model.gpu_model));
    }
    model_price[model.gpu_model] =
        price != nullptr ? price->micros_per_gpu_hour : *prices.default_micros_per_gpu_hour;
  }
  // The borrowed price of a queue for a model: its own, else its nearest ancestor's.
  auto borrowed_price = [&](const std::string& queue, const std::string& model) -> int64_t {
    const QueueLedger* at = &report.queues[queue_index.at(queue)];
    for (int32_t steps = 0; steps <= report.queues[queue_index.at(queue)].depth; ++steps) {
      if (auto it = pricing.find(at->queue); it != pricing.end()) {
        if (const ModelPrice* p = FindPrice(it->second->borrowed_micros_per_gpu_hour, model)) {
          return p->micros_per_gpu_hour;
        }
      }
      auto parent = queue_index.find(at->parent);
      if (parent == queue_index.end()) break;
      at = &report.queues[parent->second];
    }
    return model_price.at(model);
  };
  const std::vector<std::string> centers = CostCenters(report, prices);

  Chargeback out;
  out.currency = prices.currency;
  out.preemption_paid_by = prices.preemption_paid_by;
  // Rows keyed by (queue, model); queue "" is the pool's row.
  std::map<std::pair<std::string, std::string>, ChargebackRow> rows;
  absl::Status error = absl::OkStatus();
  auto price = [&](int64_t milli, int64_t micros) -> int64_t {
    absl::StatusOr<int64_t> cost = PriceMilliGpuSeconds(milli, micros);
    if (!cost.ok()) {
      if (error.ok()) error = cost.status();
      return 0;
    }
    return *cost;
  };
  auto row_for = [&](const std::string& queue, const std::string& model) -> ChargebackRow& {
    ChargebackRow& row = rows[{queue, model}];
    if (row.gpu_model.empty()) {
      row.queue = queue;
      row.gpu_model = model;
      row.cost_center = queue.empty() ? prices.pool_cost_center : centers[queue_index.at(queue)];
      row.micros_per_gpu_hour = model_price.at(model);
    }
    return row;
  };
  for (const QueueModelLedger& qm : report.queue_models) {
    ChargebackRow& row = row_for(qm.queue, qm.gpu_model);
    const int64_t p = row.micros_per_gpu_hour;
    row.time = qm.own;
    row.usage_cost_micros = price(qm.own.work.busy, p);
    row.borrowed_adjustment_micros =
        price(qm.own.borrowed, borrowed_price(qm.queue, qm.gpu_model) - p);
    row.lost_to_preemption_cost_micros = price(qm.own.work.lost_to_preemption, p);
    row.lost_to_failure_cost_micros = price(qm.own.work.lost_to_failure, p);
    row.restore_cost_micros = price(qm.own.work.restore, p);
  }
  if (prices.preemption_paid_by != PreemptionPayer::kVictim) {
    for (const PreemptionLoss& loss : report.preemption_losses) {
      std::string payer;
      if (prices.preemption_paid_by == PreemptionPayer::kPreemptor) {
        if (loss.by_queue.empty() || loss.by_queue == loss.victim_queue) continue;
        payer = loss.by_queue;
      }
      const int64_t transfer = price(loss.lost, model_price.at(loss.gpu_model));
      row_for(loss.victim_queue, loss.gpu_model).preemption_transfer_micros -= transfer;
      row_for(payer, loss.gpu_model).preemption_transfer_micros += transfer;
    }
  }
  if (!error.ok()) return error;

  CheckedSum sum;
  for (auto& [key, row] : rows) {
    sum.Add(row.cost_micros, row.usage_cost_micros);
    sum.Add(row.cost_micros, row.borrowed_adjustment_micros);
    sum.Add(row.cost_micros, row.preemption_transfer_micros);
    out.rows.push_back(std::move(row));
  }
  std::sort(out.rows.begin(), out.rows.end(), [](const ChargebackRow& a, const ChargebackRow& b) {
    return std::tie(a.cost_center, a.queue, a.gpu_model) <
           std::tie(b.cost_center, b.queue, b.gpu_model);
  });

  std::map<std::string, ChargebackTotal> by_center;
  std::vector<ChargebackTotal> by_queue(report.queues.size());
  for (size_t q = 0; q < report.queues.size(); ++q) {
    by_queue[q].name = report.queues[q].queue;
    by_queue[q].cost_center = centers[q];
  }
  out.total.name = "total";
  for (const ChargebackRow& row : out.rows) {
    ChargebackTotal& center = by_center[row.cost_center];
    center.name = row.cost_center;
    center.cost_center = row.cost_center;
    AddRow(sum, center, row);
    AddRow(sum, out.total, row);
    if (row.queue.empty()) continue;
    // The row counts for its queue and every ancestor.
    for (auto it = queue_index.find(row.queue); it != queue_index.end();
         it = queue_index.find(report.queues[it->second].parent)) {
      AddRow(sum, by_queue[it->second], row);
    }
  }
  if (sum.overflow) return absl::OutOfRangeError("chargeback: a total does not fit in int64");
  for (auto& [name, total] : by_center) out.cost_centers.push_back(std::move(total));
  out.queues = std::move(by_queue);
  return out;
}

std::string ChargebackToCsv(const Chargeback& chargeback) {
  std::string out =
      "cost_center,queue,gpu_model,gpu_hours,lost_to_preemption_gpu_hours,"
      "lost_to_failure_gpu_hours,busy_milli_gpu_s,productive_milli_gpu_s,"
      "lost_to_preemption_milli_gpu_s,lost_to_failure_milli_gpu_s,restore_milli_gpu_s,"
      "within_guarantee_milli_gpu_s,borrowed_milli_gpu_s,micros_per_gpu_hour,usage_cost_micros,"
      "borrowed_adjustment_micros,lost_to_preemption_cost_micros,lost_to_failure_cost_micros,"
      "restore_cost_micros,preemption_transfer_micros,cost_micros,cost\n";
  auto line = [&](std::string_view center, std::string_view queue, std::string_view model,
                  const QueueTime& t, std::string_view price, int64_t usage, int64_t adjustment,
                  int64_t lost_preemption, int64_t lost_failure, int64_t restore, int64_t transfer,
                  int64_t cost) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                       CsvField(center), CsvField(queue), CsvField(model), GpuHours(t.work.busy),
                       GpuHours(t.work.lost_to_preemption), GpuHours(t.work.lost_to_failure),
                       t.work.busy, t.work.productive, t.work.lost_to_preemption,
                       t.work.lost_to_failure, t.work.restore, t.within_guarantee, t.borrowed,
                       price, usage, adjustment, lost_preemption, lost_failure, restore, transfer,
                       cost, Money(cost));
  };
  for (const ChargebackRow& r : chargeback.rows) {
    line(r.cost_center, r.queue, r.gpu_model, r.time, fmt::format("{}", r.micros_per_gpu_hour),
         r.usage_cost_micros, r.borrowed_adjustment_micros, r.lost_to_preemption_cost_micros,
         r.lost_to_failure_cost_micros, r.restore_cost_micros, r.preemption_transfer_micros,
         r.cost_micros);
  }
  auto total_line = [&](std::string_view center, const ChargebackTotal& t) {
    line(center, "*", "*", t.time, "", t.usage_cost_micros, t.borrowed_adjustment_micros,
         t.lost_to_preemption_cost_micros, t.lost_to_failure_cost_micros, t.restore_cost_micros,
         t.preemption_transfer_micros, t.cost_micros);
  };
  for (const ChargebackTotal& t : chargeback.cost_centers) total_line(t.name, t);
  total_line("*", chargeback.total);
  return out;
}

}  // namespace gpupool
