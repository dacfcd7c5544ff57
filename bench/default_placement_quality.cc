// How well Schedule() packs with each placement, when a host drives it: the openb inflation
// protocol (docs/simulator.md) in batches of Schedule() calls (docs/policy-format.md, "Why these
// defaults", gives the numbers).
//
//   build/dev/bench/default_placement_quality NODES.csv PODS.csv [BATCH] [SEEDS] [all]
//
// Arrivals: InflateWorkload(pods, 130%, seed). Every Schedule() call sees the pods placed so
// far as running jobs and the next BATCH arrivals as pending jobs (one queue, submit time =
// arrival number, so priority-FIFO serves them in arrival order); a pod that does not start in
// its batch fails for good, as in the protocol. Printed per policy: the mean over the seeds of
// the allocation ratio once all arrivals are in (GPU milli in use / the cluster's, in percent)
// and of the GPUs left unallocated. Policies: best-fit and expected-waste (built-in strategies,
// the mix derived from each snapshot); with `all`, also two host scorers given the whole trace's
// mix, fgd and expected-waste, as the simulator runs them (slow: they score every node).
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gpupool/schedule.h"
#include "gpupool/scorers/scorers.h"
#include "gpupool/sim/inflation.h"
#include "gpupool/sim/workload.h"

namespace gpupool {
namespace {

struct Result {
  int64_t used_milli = 0;
  int64_t placed = 0;
  int64_t failed = 0;
};

Result Run(const sim::Cluster& cluster, const sim::Workload& workload,
           const std::vector<int32_t>& arrivals, const Policy& policy, size_t batch) {
  Snapshot base;
  std::map<std::string, int32_t> models;
  for (const sim::SimNode& sn : cluster.nodes) {
    Node n;
    n.id = sn.id;
    n.gpu_model = sn.gpu_model;
    n.cpu_milli = sn.cpu_milli;
    n.memory_mib = sn.memory_mib;
    for (int32_t g = 0; g < sn.gpu_count; ++g) n.gpus.push_back(Gpu{g, 0, true});
    base.nodes.push_back(std::move(n));
    if (!sn.gpu_model.empty()) models[sn.gpu_model] = 1;
  }
  for (const auto& [m, unused] : models) base.gpu_models.push_back(GpuModel{m, 1, {}});
  Queue q;
  q.id = "default";
  base.queues.push_back(q);

  Result result;
  std::vector<Job> running;
  for (size_t first = 0; first < arrivals.size(); first += batch) {
    Snapshot snapshot = base;
    snapshot.now = static_cast<int64_t>(first) + 1;
    snapshot.jobs = running;
    const size_t last = std::min(arrivals.size(), first + batch);
    std::map<std::string, Job> pending;
    for (size_t i = first; i < last; ++i) {
      const sim::SimPod& p = workload.pods[arrivals[i]];
      Job job;
      job.id = fmt::format("j{:07d}", i);
      job.queue = "default";
      job.submit_time = static_cast<int64_t>(i);
      TaskGroup g;
      g.request = p.request;
      g.gpu_models = p.gpu_models;
      job.groups.push_back(g);
      snapshot.jobs.push_back(job);
      pending[job.id] = job;
    }
    absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy);
    if (!decisions.ok()) {
      std::fprintf(stderr, "%s\n", std::string(decisions.status().message()).c_str());
      std::exit(1);
    }
    for (const StartDecision& start : decisions->starts) {
      Job job = pending.at(start.job);
      job.state = JobState::kRunning;
      job.start_time = snapshot.now;
      job.placements = start.placements;
      result.used_milli += job.groups[0].request.gpu_milli;
      ++result.placed;
      running.push_back(std::move(job));
    }
    result.failed += static_cast<int64_t>(decisions->pending.size());
  }
  return result;
}

}  // namespace
}  // namespace gpupool

int main(int argc, char** argv) {
  using namespace gpupool;
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s NODES.csv PODS.csv [BATCH] [SEEDS]\n", argv[0]);
    return 2;
  }
  absl::StatusOr<sim::Cluster> cluster = sim::ReadOpenbNodes(argv[1]);
  absl::StatusOr<sim::Workload> workload = sim::ReadOpenbPods(argv[2]);
  if (!cluster.ok() || !workload.ok()) {
    std::fprintf(stderr, "cannot read the openb lists\n");
    return 1;
  }
  const size_t batch = argc > 3 ? std::stoul(argv[3]) : 100;
  const int seeds = argc > 4 ? std::stoi(argv[4]) : 3;
  std::vector<ResourceRequest> requests;
  std::vector<std::vector<std::string>> pod_models;
  for (const sim::SimPod& p : workload->pods) {
    requests.push_back(p.request);
    pod_models.push_back(p.gpu_models);
  }
  ScorerContext context;
  context.requests = requests;
  context.models = pod_models;
  struct Named {
    std::string name;
    Policy policy;
  };
  const bool all = argc > 5 && std::string(argv[5]) == "all";
  std::vector<Named> policies(all ? 4 : 2);
  policies[0].name = "best-fit";
  policies[0].policy.placement = PlacementStrategy::kBestFit;
  policies[1].name = "expected-waste (snapshot mix)";
  policies[1].policy.placement = PlacementStrategy::kExpectedWaste;
  if (all) {
    policies[2].name = "scorer fgd (trace mix)";
    policies[2].policy.scorer = *MakeScorerByName("fgd", context);
    policies[3].name = "scorer expected-waste (trace mix)";
    policies[3].policy.scorer = *MakeScorerByName("expected-waste", context);
  }
  const int64_t capacity = cluster->TotalGpuMilli();
  std::printf("%s, batch %zu, seeds 42-%d\n", argv[2], batch, 41 + seeds);
  std::printf("%-36s %10s %12s\n", "policy", "alloc %", "unalloc GPUs");
  for (Named& named : policies) {
    named.policy.queue_order = QueueOrder::kNone;
    double alloc = 0, unalloc = 0;
    for (int s = 0; s < seeds; ++s) {
      const std::vector<int32_t> arrivals =
          sim::InflateWorkload(*workload, capacity, 1.3, 42 + static_cast<uint64_t>(s));
      const Result r = Run(*cluster, *workload, arrivals, named.policy, batch);
      alloc += 100.0 * static_cast<double>(r.used_milli) / static_cast<double>(capacity);
      unalloc += static_cast<double>(capacity - r.used_milli) / 1000.0;
    }
    std::printf("%-36s %10.2f %12.1f\n", named.name.c_str(), alloc / seeds, unalloc / seeds);
    std::fflush(stdout);
  }
  return 0;
}
