// The replay's budgets file (gpupool/sim/replay_budgets.h) and the budgets as JSON
// (ReplayBudgetsToJson, gpupool/sim/replay.h).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gpupool/resources.h"
#include "gpupool/sim/replay.h"
#include "gpupool/sim/replay_budgets.h"
#include "io/json_reader.h"
#include "sim/json_number.h"

namespace gpupool::sim {
namespace {

using io::internal::Field;
using io::internal::JsonObject;
using io::internal::JsonValue;
using io::internal::Path;
using io::internal::ReadArrayOf;
using io::internal::ReadFields;
using io::internal::ReadInt64;
using io::internal::ReadMember;
using io::internal::ReadObjectFields;
using io::internal::ReadString;

constexpr int64_t kMilliGpuSecondsPerGpuHour = kMilliPerGpu * 3600;
constexpr int64_t kMaxGpuHours = kMaxQuantity / kMilliGpuSecondsPerGpuHour;  // 305,419
constexpr int64_t kMaxPeriodDays = 366;

struct Entry {
  std::string queue;
  int64_t gpu_hours = 0;
};

struct File {
  int64_t period_days = 7;
  std::vector<Entry> queues;
};

absl::Status ReadEntry(JsonValue value, const Path& path, Entry& out) {
  static constexpr Field<Entry> kFields[] = {
      {"queue", ReadMember<&Entry::queue, ReadString>, true},
      {"gpu_hours", ReadMember<&Entry::gpu_hours, ReadInt64>, true},
  };
  return ReadFields(value, path, kFields, out);
}

absl::Status ReadFile(JsonObject& root, const Path& path, File& out) {
  static constexpr Field<File> kFields[] = {
      {"period_days", ReadMember<&File::period_days, ReadInt64>},
      {"queues", ReadMember<&File::queues, ReadArrayOf<ReadEntry>>},
  };
  return ReadObjectFields(root, path, kFields, out);
}

absl::StatusOr<ReplayBudgetFile> Check(const File& file) {
  if (file.period_days < 1 || file.period_days > kMaxPeriodDays) {
    return absl::InvalidArgumentError(
        fmt::format("period_days: must be in [1, {}], got {}", kMaxPeriodDays, file.period_days));
  }
  ReplayBudgetFile out;
  out.period_s = file.period_days * 86400;
  std::map<std::string, size_t, std::less<>> seen;
  for (size_t i = 0; i < file.queues.size(); ++i) {
    const Entry& e = file.queues[i];
    if (e.queue.empty()) {
      return absl::InvalidArgumentError(fmt::format("queues[{}].queue: must not be empty", i));
    }
    if (auto [it, fresh] = seen.emplace(e.queue, i); !fresh) {
      return absl::InvalidArgumentError(fmt::format(
          "queues[{}].queue: \"{}\" is given twice (also queues[{}])", i, e.queue, it->second));
    }
    if (e.gpu_hours < 0 || e.gpu_hours > kMaxGpuHours) {
      return absl::InvalidArgumentError(fmt::format(
          "queues[{}].gpu_hours: must be in [0, {}], got {}", i, kMaxGpuHours, e.gpu_hours));
    }
    out.queues.push_back(
        ReplayQueue{.queue = e.queue,
                    .labels = {},
                    .budget_milli_gpu_seconds = e.gpu_hours * kMilliGpuSecondsPerGpuHour});
  }
  return out;
}

}  // namespace

absl::StatusOr<ReplayBudgetFile> ParseReplayBudgets(std::string_view json) {
  absl::StatusOr<File> file = io::internal::ParseDocument<File>(json, ReadFile);
  if (!file.ok()) return file.status();
  return Check(*file);
}

absl::StatusOr<ReplayBudgetFile> ReadReplayBudgetsFile(const std::string& path) {
  absl::StatusOr<File> file = io::internal::ReadDocumentFile<File>(path, ReadFile);
  if (!file.ok()) return file.status();
  absl::StatusOr<ReplayBudgetFile> checked = Check(*file);
  if (!checked.ok()) {
    return absl::InvalidArgumentError(path + ": " + std::string(checked.status().message()));
  }
  return checked;
}

std::string ReplayBudgetsToJson(const ReplayBudgets& budgets) {
  internal::JsonWriter w;
  w.BeginObject();
  w.IntField("period_start", budgets.period_start);
  w.IntField("period_s", budgets.period_s);
  w.IntField("periods", budgets.periods);
  w.BoolField("enforced", budgets.enforced);
  w.Key("queues");
  w.BeginArray();
  for (const QueueBudgetUse& q : budgets.queues) {
    w.BeginOneLineObject();
    w.StringField("queue", q.queue);
    w.IntField("budget_milli_gpu_s", q.budget_milli_gpu_s);
    w.Key("used_milli_gpu_s");
    w.Int64Array(q.used_milli_gpu_s);
    w.Key("over_budget_since");
    w.Int64Array(q.over_budget_since);
    int64_t total = 0;
    for (int64_t used : q.used_milli_gpu_s) total += used;
    w.IntField("used_total_milli_gpu_s", total);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Finish();
}

}  // namespace gpupool::sim
