// The JSON of accounting (gpupool/io/accounting.h): the strict prices reader and the canonical
// writer of ledger, chargeback and pooling figures.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpupool/io/accounting.h"
#include "io/json_reader.h"
#include "io/json_writer.h"

namespace gpupool::io {
namespace {

using internal::JsonObject;
using internal::JsonValue;
using internal::JsonWriter;
using internal::Path;

// Walks the members of the object `value`, calling `read(key_index, member_value, member_path)`
// with the key's index in `keys`; refuses unknown and duplicate keys. At most 64 keys.
template <typename Read>
absl::Status ReadKeys(JsonValue value, const Path& path, const std::vector<std::string_view>& keys,
                      Read&& read) {
  JsonObject object;
  if (auto error = value.get_object().get(object); error != simdjson::SUCCESS) {
    return internal::ValueError(path, error, "an object");
  }
  uint64_t seen = 0;
  for (auto member_or : object) {
    simdjson::ondemand::field member;
    if (auto error = std::move(member_or).get(member); error != simdjson::SUCCESS) {
      return internal::ValueError(path, error, "an object");
    }
    std::string_view key;
    if (auto error = member.unescaped_key().get(key); error != simdjson::SUCCESS) {
      return internal::ValueError(path, error, "an object");
    }
    const Path key_path = path.Field(key);
    size_t i = 0;
    while (i < keys.size() && keys[i] != key) ++i;
    if (i == keys.size()) return internal::PathError(key_path, "unknown field");
    if (seen & (uint64_t{1} << i)) return internal::PathError(key_path, "duplicate field");
    seen |= uint64_t{1} << i;
    if (absl::Status status = read(i, member.value(), key_path); !status.ok()) return status;
  }
  return absl::OkStatus();
}

template <typename T, typename Read>
absl::Status ReadList(JsonValue value, const Path& path, std::vector<T>& out, Read&& read) {
  simdjson::ondemand::array array;
  if (auto error = value.get_array().get(array); error != simdjson::SUCCESS) {
    return internal::ValueError(path, error, "an array");
  }
  out.clear();
  size_t i = 0;
  for (auto item_or : array) {
    JsonValue item;
    if (auto error = std::move(item_or).get(item); error != simdjson::SUCCESS) {
      return internal::ValueError(path, error, "an array");
    }
    out.emplace_back();
    if (absl::Status status = read(item, path.Element(i), out.back()); !status.ok()) {
      return status;
    }
    ++i;
  }
  return absl::OkStatus();
}

absl::Status ReadModelPrice(JsonValue value, const Path& path, ModelPrice& out) {
  bool has_model = false;
  absl::Status status = ReadKeys(value, path, {"gpu_model", "micros_per_gpu_hour"},
                                 [&](size_t key, JsonValue v, const Path& p) {
                                   if (key == 0) {
                                     has_model = true;
                                     return internal::ReadString(v, p, out.gpu_model);
                                   }
                                   return internal::ReadInt64(v, p, out.micros_per_gpu_hour);
                                 });
  if (status.ok() && !has_model) {
    return internal::PathError(path, "missing required field \"gpu_model\"");
  }
  return status;
}

absl::Status ReadQueuePricing(JsonValue value, const Path& path, QueuePricing& out) {
  bool has_queue = false;
  absl::Status status =
      ReadKeys(value, path, {"queue", "cost_center", "borrowed_micros_per_gpu_hour"},
               [&](size_t key, JsonValue v, const Path& p) {
                 switch (key) {
                   case 0:
                     has_queue = true;
                     return internal::ReadString(v, p, out.queue);
                   case 1:
                     return internal::ReadOptionalString(v, p, out.cost_center);
                   default:
                     return ReadList(v, p, out.borrowed_micros_per_gpu_hour, ReadModelPrice);
                 }
               });
  if (status.ok() && !has_queue) {
    return internal::PathError(path, "missing required field \"queue\"");
  }
  return status;
}

absl::Status ReadPayer(JsonValue value, const Path& path, PreemptionPayer& out) {
  std::string name;
  if (absl::Status status = internal::ReadString(value, path, name); !status.ok()) return status;
  for (PreemptionPayer payer :
       {PreemptionPayer::kVictim, PreemptionPayer::kPreemptor, PreemptionPayer::kPool}) {
    if (name == PreemptionPayerName(payer)) {
      out = payer;
      return absl::OkStatus();
    }
  }
  return internal::PathError(
      path, "unknown value \"" + name.substr(0, 64) + "\" (expected victim, preemptor, pool)");
}

absl::Status ReadPrices(JsonObject& root, const Path& path, Prices& out) {
  // ReadKeys() takes a value; the root comes as an object, so walk it here with the same rules.
  static const std::vector<std::string_view> kKeys = {
      "currency", "gpu_models",         "default_micros_per_gpu_hour",
      "queues",   "preemption_paid_by", "pool_cost_center"};
  uint64_t seen = 0;
  for (auto member_or : root) {
    simdjson::ondemand::field member;
    if (auto error = std::move(member_or).get(member); error != simdjson::SUCCESS) {
      return internal::ValueError(path, error, "an object");
    }
    std::string_view key;
    if (auto error = member.unescaped_key().get(key); error != simdjson::SUCCESS) {
      return internal::ValueError(path, error, "an object");
    }
    const Path p = path.Field(key);
    size_t i = 0;
    while (i < kKeys.size() && kKeys[i] != key) ++i;
    if (i == kKeys.size()) return internal::PathError(p, "unknown field");
    if (seen & (uint64_t{1} << i)) return internal::PathError(p, "duplicate field");
    seen |= uint64_t{1} << i;
    JsonValue v = member.value();
    absl::Status status;
    switch (i) {
      case 0:
        status = internal::ReadString(v, p, out.currency);
        break;
      case 1:
        status = ReadList(v, p, out.gpu_models, ReadModelPrice);
        break;
      case 2:
        status = internal::ReadOptionalInt64(v, p, out.default_micros_per_gpu_hour);
        break;
      case 3:
        status = ReadList(v, p, out.queues, ReadQueuePricing);
        break;
      case 4:
        status = ReadPayer(v, p, out.preemption_paid_by);
        break;
      default:
        status = internal::ReadString(v, p, out.pool_cost_center);
        break;
    }
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

void WriteWork(JsonWriter& w, const WorkTime& t) {
  w.IntField("busy_milli_gpu_s", t.busy);
  w.IntField("productive_milli_gpu_s", t.productive);
  w.IntField("lost_to_preemption_milli_gpu_s", t.lost_to_preemption);
  w.IntField("lost_to_failure_milli_gpu_s", t.lost_to_failure);
  w.IntField("restore_milli_gpu_s", t.restore);
}

void WriteQueueTime(JsonWriter& w, const QueueTime& t) {
  WriteWork(w, t.work);
  w.IntField("within_guarantee_milli_gpu_s", t.within_guarantee);
  w.IntField("borrowed_milli_gpu_s", t.borrowed);
}

void WriteMoney(JsonWriter& w, const ChargebackTotal& t) {
  w.IntField("usage_cost_micros", t.usage_cost_micros);
  w.IntField("borrowed_adjustment_micros", t.borrowed_adjustment_micros);
  w.IntField("lost_to_preemption_cost_micros", t.lost_to_preemption_cost_micros);
  w.IntField("lost_to_failure_cost_micros", t.lost_to_failure_cost_micros);
  w.IntField("restore_cost_micros", t.restore_cost_micros);
  w.IntField("preemption_transfer_micros", t.preemption_transfer_micros);
  w.IntField("cost_micros", t.cost_micros);
}

void Utilization(JsonWriter& w, std::string_view key, int64_t ppm) {
  w.Key(key);
  w.Fixed(ppm, 6);
}

}  // namespace

absl::StatusOr<Prices> ParsePrices(std::string_view json) {
  return internal::ParseDocument<Prices>(json, ReadPrices);
}

absl::StatusOr<Prices> ReadPricesFile(const std::string& path) {
  return internal::ReadDocumentFile<Prices>(path, ReadPrices);
}

std::string AccountingToJson(const LedgerReport& report, const Chargeback& chargeback,
                             const PoolingReport& pooling) {
  JsonWriter w;
  w.BeginObject();
  w.Key("ledger");
  w.BeginObject();
  w.IntField("start_time", report.start_time);
  w.IntField("end_time", report.end_time);
  w.IntField("gpus", report.pool.gpus);
  w.IntField("capacity_milli_gpu_s", report.pool.capacity);
  w.IntField("idle_milli_gpu_s", report.pool.idle);
  WriteQueueTime(w, report.pool.time);
  w.StringField("currency", chargeback.currency);
  w.StringField("preemption_paid_by", PreemptionPayerName(chargeback.preemption_paid_by));
  WriteMoney(w, chargeback.total);

  std::map<std::string, int64_t, std::less<>> model_cost;
  for (const ChargebackRow& row : chargeback.rows) model_cost[row.gpu_model] += row.cost_micros;
  w.Key("models");
  w.BeginArray();
  for (const ModelLedger& m : report.models) {
    w.BeginObject();
    w.StringField("gpu_model", m.gpu_model);
    w.IntField("gpus", m.usage.gpus);
    w.IntField("capacity_milli_gpu_s", m.usage.capacity);
    w.IntField("idle_milli_gpu_s", m.usage.idle);
    WriteQueueTime(w, m.usage.time);
    auto cost = model_cost.find(m.gpu_model);
    w.IntField("cost_micros", cost == model_cost.end() ? 0 : cost->second);
    w.EndObject();
  }
  w.EndArray();

  w.Key("queues");
  w.BeginArray();
  for (size_t q = 0; q < report.queues.size(); ++q) {
    const QueueLedger& queue = report.queues[q];
    w.BeginObject();
    w.StringField("queue", queue.queue);
    w.StringField("parent", queue.parent);
    w.IntField("depth", queue.depth);
    w.StringField("cost_center", chargeback.queues[q].cost_center);
    WriteQueueTime(w, queue.subtree);
    w.IntField("own_busy_milli_gpu_s", queue.own.work.busy);
    const ChargebackTotal& money = chargeback.queues[q];
    WriteMoney(w, money);
    w.EndObject();
  }
  w.EndArray();

  w.Key("cost_centers");
  w.BeginArray();
  for (const ChargebackTotal& center : chargeback.cost_centers) {
    w.BeginObject();
    w.StringField("cost_center", center.name);
    WriteQueueTime(w, center.time);
    WriteMoney(w, center);
    w.EndObject();
  }
  w.EndArray();

  w.Key("preemption_losses");
  w.BeginArray();
  for (const PreemptionLoss& loss : report.preemption_losses) {
    w.BeginOneLineObject();
    w.StringField("victim_queue", loss.victim_queue);
    w.StringField("gpu_model", loss.gpu_model);
    w.StringField("by_queue", loss.by_queue);
    w.IntField("lost_milli_gpu_s", loss.lost);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();

  w.Key("pooling");
  w.BeginObject();
  w.IntField("duration_s", pooling.duration_s);
  w.IntField("pool_gpus", pooling.pool_gpus);
  w.IntField("dedicated_gpus", pooling.dedicated_gpus);
  Utilization(w, "pooled_utilization", pooling.pooled_utilization_ppm);
  Utilization(w, "dedicated_utilization", pooling.dedicated_utilization_ppm);
  w.IntField("pooled_utilization_ppm", pooling.pooled_utilization_ppm);
  w.IntField("dedicated_utilization_ppm", pooling.dedicated_utilization_ppm);
  w.IntField("busy_milli_gpu_s", pooling.busy_milli_gpu_s);
  w.IntField("pool_capacity_milli_gpu_s", pooling.pool_capacity_milli_gpu_s);
  w.IntField("dedicated_capacity_milli_gpu_s", pooling.dedicated_capacity_milli_gpu_s);
  w.IntField("pooled_cost_micros", pooling.pooled_cost_micros);
  w.IntField("dedicated_cost_micros", pooling.dedicated_cost_micros);
  w.IntField("savings_micros", pooling.savings_micros);
  w.Key("models");
  w.BeginArray();
  for (const ModelPooling& m : pooling.models) {
    w.BeginOneLineObject();
    w.StringField("gpu_model", m.gpu_model);
    w.IntField("pool_gpus", m.pool_gpus);
    w.IntField("dedicated_gpus", m.dedicated_gpus);
    w.IntField("busy_milli_gpu_s", m.busy_milli_gpu_s);
    w.IntField("pooled_cost_micros", m.pooled_cost_micros);
    w.IntField("dedicated_cost_micros", m.dedicated_cost_micros);
    w.EndObject();
  }
  w.EndArray();
  w.Key("queues");
  w.BeginArray();
  for (const DedicatedPool& d : pooling.dedicated) {
    w.BeginOneLineObject();
    w.StringField("queue", d.queue);
    w.StringField("gpu_model", d.gpu_model);
    w.IntField("peak_milli", d.peak_milli);
    w.IntField("gpus", d.gpus);
    w.IntField("busy_milli_gpu_s", d.busy_milli_gpu_s);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return w.Finish();
}

}  // namespace gpupool::io
