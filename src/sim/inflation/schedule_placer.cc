// The reference engine: one gpupool::Schedule() call per pod on a full Snapshot.
//
// Every placed pod is a running job in the snapshot; the arriving pod is the only pending job.
// This is how a host would drive the library, and what the incremental engine must match.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "gpupool/schedule.h"
#include "gpupool/sim/placer.h"
#include "sim/inflation/internal.h"

namespace gpupool::sim {

namespace {

class SchedulePlacer final : public PodPlacer {
 public:
  SchedulePlacer(const Cluster& cluster, const Workload& workload, const SimPolicy& policy)
      : cluster_(cluster), workload_(workload), measure_(internal::MeasureTable(workload)) {
    policy_.name = policy.name;
    policy_.scorer = policy.scorer;
    std::set<std::string> models;
    for (size_t i = 0; i < cluster.nodes.size(); ++i) {
      const SimNode& sn = cluster.nodes[i];
      node_index_[sn.id] = static_cast<int32_t>(i);
      if (!sn.gpu_model.empty()) models.insert(sn.gpu_model);
      Node n;
      n.id = sn.id;
      n.gpu_model = sn.gpu_model;
      n.cpu_milli = sn.cpu_milli;
      n.memory_mib = sn.memory_mib;
      for (int32_t g = 0; g < sn.gpu_count; ++g) n.gpus.push_back(Gpu{g, 0, true});
      base_.nodes.push_back(std::move(n));
    }
    for (const std::string& m : models) base_.gpu_models.push_back(GpuModel{m, 1, {}});
    Queue q;
    q.id = "default";
    base_.queues.push_back(q);
    free_.resize(cluster.nodes.size());
    for (size_t i = 0; i < cluster.nodes.size(); ++i) {
      free_[i].cpu = cluster.nodes[i].cpu_milli;
      free_[i].gpu.assign(cluster.nodes[i].gpu_count, kMilliPerGpu);
    }
  }

  absl::StatusOr<PodPlacement> Place(int32_t pod) override {
    const SimPod& p = workload_.pods[pod];
    Snapshot snapshot = base_;
    snapshot.now = static_cast<int64_t>(running_.size()) + 1;
    for (const auto& [id, job] : running_) snapshot.jobs.push_back(job);
    Job job = MakeJob(fmt::format("j{:07d}", next_job_++), p);
    snapshot.jobs.push_back(job);
    absl::StatusOr<Decisions> decisions = Schedule(snapshot, policy_);
    if (!decisions.ok()) return decisions.status();
    PodPlacement placement;
    for (const StartDecision& start : decisions->starts) {
      if (start.job != job.id || start.placements.empty()) continue;
      const ReplicaPlacement& rp = start.placements[0];
      placement.node = node_index_.at(rp.node);
      placement.gpus = rp.gpus;
      job.state = JobState::kRunning;
      job.start_time = snapshot.now;
      job.placements = start.placements;
      running_[job.id] = job;
      by_pod_.emplace(pod, job.id);
      Account(placement, p, +1);
    }
    return placement;
  }

  void Release(int32_t pod, const PodPlacement& placement) override {
    auto it = by_pod_.find(pod);
    if (it == by_pod_.end()) return;
    running_.erase(it->second);
    by_pod_.erase(it);
    Account(placement, workload_.pods[pod], -1);
  }

  int64_t IdleGpuMilli() const override {
    int64_t idle = 0;
    for (const NodeFree& f : free_) {
      for (int64_t g : f.gpu) idle += g;
    }
    return idle;
  }

  int64_t WeightedFragmentation() const override {
    int64_t sum = 0;
    for (size_t i = 0; i < free_.size(); ++i) {
      sum += gpupool::WeightedFragmentation(measure_, cluster_.nodes[i].gpu_model, free_[i].cpu,
                                            free_[i].gpu, CpuClassRule::kFitsIsNotFragmented);
    }
    return sum;
  }

 private:
  struct NodeFree {
    int64_t cpu = 0;
    std::vector<int64_t> gpu;
  };

  static Job MakeJob(std::string id, const SimPod& p) {
    Job job;
    job.id = std::move(id);
    job.queue = "default";
    TaskGroup g;
    g.name = "main";
    g.replicas = 1;
    g.request = p.request;
    g.gpu_models = p.gpu_models;
    job.groups.push_back(g);
    return job;
  }

  void Account(const PodPlacement& placement, const SimPod& p, int sign) {
    NodeFree& f = free_[placement.node];
    f.cpu -= sign * p.request.cpu_milli;
    for (int32_t g : placement.gpus) f.gpu[g] -= sign * p.request.MilliPerGpu();
  }

  const Cluster& cluster_;
  const Workload& workload_;
  TaskClassTable measure_;
  Policy policy_;
  Snapshot base_;
  std::map<std::string, int32_t> node_index_;
  std::map<std::string, Job> running_;
  std::multimap<int32_t, std::string> by_pod_;
  std::vector<NodeFree> free_;
  int64_t next_job_ = 0;
};

}  // namespace

std::unique_ptr<PodPlacer> MakeSchedulePlacer(const Cluster& cluster, const Workload& workload,
                                              const SimPolicy& policy) {
  return std::make_unique<SchedulePlacer>(cluster, workload, policy);
}

}  // namespace gpupool::sim
