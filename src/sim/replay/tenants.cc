// The replay's tenants (tenants.h).
#include "sim/replay/tenants.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gpupool/resources.h"

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
  t.guarantee_milli.assign(n, 0);
  for (size_t q = 0; q < n; ++q) {
    t.guarantee_milli[q] = t.total_demand_gpu_s == 0
                               ? 0
                               : static_cast<int64_t>(t.demand_gpu_s[q] * total_gpus *
                                                      kMilliPerGpu / t.total_demand_gpu_s);
  }
  return t;
}

}  // namespace gpupool::sim::internal
