// The tenants of a replay: the trace's virtual clusters, what each asks for, and the guarantee
// each is given (its share of the total demand, docs/replay.md "Queues and guarantees").
//
// Not API: one of the parts RunReplay() (replay.cc) is built from.
#ifndef GPUPOOL_SRC_SIM_REPLAY_TENANTS_H_
#define GPUPOOL_SRC_SIM_REPLAY_TENANTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpupool/sim/replay.h"

namespace gpupool::sim::internal {

struct Tenants {
  // Virtual cluster names in name order; a tenant's index is its position here.
  std::vector<std::string> names;
  // Per job of the trace (input order): the index of its tenant.
  std::vector<int32_t> of_job;
  // Per tenant: jobs, and GPU-seconds of work asked for (duration x GPUs).
  std::vector<int64_t> jobs;
  std::vector<int64_t> demand_gpu_s;
  int64_t total_demand_gpu_s = 0;
  // Per tenant, in milli-GPUs: demand_gpu_s / total_demand_gpu_s of the pool, rounded down (0
  // for every tenant when nothing is asked for).
  std::vector<int64_t> guarantee_milli;
  // Per tenant, from ReplayOptions::queues (SetQueueSettings): its queue's labels and budget.
  std::vector<std::vector<TopologyLabel>> labels;
  std::vector<std::optional<int64_t>> budget_milli_gpu_s;

  size_t size() const { return names.size(); }
  // Whether some tenant has a budget.
  bool AnyBudget() const;
};

// The tenants of `jobs` on a pool of `total_gpus` GPUs. InvalidArgument naming the job
// ("jobs[7].num_gpus: must be positive", "jobs[7].duration_s: negative") for the first job, in
// input order, with no GPUs or a negative duration.
absl::StatusOr<Tenants> MakeTenants(const std::vector<TraceJob>& jobs, int64_t total_gpus);

// Gives the tenants the labels and budgets of `queues` (ReplayOptions::queues). InvalidArgument
// naming the entry for a cluster the jobs do not contain ("queues[2].queue: no virtual cluster
// \"x\" among the replayed jobs"), a cluster given twice, labels a snapshot would refuse
// ("queues[6214e9].labels[]: key must not be empty") and a budget outside [0, 2^40]
// ("queues[6214e9].budget_milli_gpu_seconds: must be >= 0").
absl::Status SetQueueSettings(const std::vector<ReplayQueue>& queues, Tenants& tenants);

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_REPLAY_TENANTS_H_
