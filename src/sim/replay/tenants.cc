// The replay's tenants (tenants.h).
#include "sim/replay/tenants.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gpupool/resources.h"
#include "gpupool/snapshot.h"
#include "gpupool/validate.h"

namespace gpupool::sim::internal {

absl::StatusOr<Tenants> MakeTenants(const std::vector<TraceJob>& jobs, int64_t total_gpus) {
  // Names in name order (std::map), then each job's index and the demand per tenant.
  std::map<std::string, int32_t> index;
  for (const TraceJob& j : jobs) index.emplace(j.cluster, 0);
  Tenants t;
  for (auto& [name, i] : index) {
    i = static_cast<int32_t>(t.names.size());
    t.names.push_back(name);
  }
  const size_t n = t.names.size();
  t.jobs.assign(n, 0);
  t.demand_gpu_s.assign(n, 0);
  t.of_job.reserve(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const TraceJob& j = jobs[i];
    if (j.num_gpus <= 0) {
      return absl::InvalidArgumentError(fmt::format("jobs[{}].num_gpus: must be positive", i));
    }
    if (j.duration_s < 0) {
      return absl::InvalidArgumentError(fmt::format("jobs[{}].duration_s: negative", i));
    }
    const int32_t q = index[j.cluster];
    const int64_t d = j.duration_s * j.num_gpus;
    t.of_job.push_back(q);
    t.demand_gpu_s[q] += d;
    t.total_demand_gpu_s += d;
    ++t.jobs[q];
  }
  t.labels.assign(n, {});
  t.budget_milli_gpu_s.assign(n, std::nullopt);
  t.guarantee_milli.assign(n, 0);
  for (size_t q = 0; q < n; ++q) {
    t.guarantee_milli[q] = t.total_demand_gpu_s == 0
                               ? 0
                               : static_cast<int64_t>(t.demand_gpu_s[q] * total_gpus *
                                                      kMilliPerGpu / t.total_demand_gpu_s);
  }
  return t;
}

bool Tenants::AnyBudget() const {
  for (const std::optional<int64_t>& budget : budget_milli_gpu_s) {
    if (budget.has_value()) return true;
  }
  return false;
}

absl::Status SetQueueSettings(const std::vector<ReplayQueue>& queues, Tenants& tenants) {
  std::map<std::string, size_t, std::less<>> index;
  for (size_t q = 0; q < tenants.size(); ++q) index.emplace(tenants.names[q], q);
  std::vector<bool> seen(tenants.size(), false);
  // The labels and budgets are checked by the snapshot's own rules, on a snapshot of the
  // settings' queues alone, so that the messages are the snapshot's.
  Snapshot check;
  for (size_t i = 0; i < queues.size(); ++i) {
    const ReplayQueue& settings = queues[i];
    auto it = index.find(settings.queue);
    if (it == index.end()) {
      return absl::InvalidArgumentError(
          fmt::format("queues[{}].queue: no virtual cluster \"{}\" among the replayed jobs", i,
                      settings.queue));
    }
    if (seen[it->second]) {
      return absl::InvalidArgumentError(
          fmt::format("queues[{}].queue: \"{}\" is given twice", i, settings.queue));
    }
    seen[it->second] = true;
    check.queues.push_back(Queue{.id = settings.queue,
                                 .labels = settings.labels,
                                 .budget_milli_gpu_seconds = settings.budget_milli_gpu_seconds});
  }
  if (absl::Status status = ValidateSnapshot(check); !status.ok()) {
    return absl::InvalidArgumentError(status.message());
  }
  for (const ReplayQueue& settings : queues) {
    const size_t q = index.at(settings.queue);
    tenants.labels[q] = settings.labels;
    tenants.budget_milli_gpu_s[q] = settings.budget_milli_gpu_seconds;
  }
  return absl::OkStatus();
}

}  // namespace gpupool::sim::internal
