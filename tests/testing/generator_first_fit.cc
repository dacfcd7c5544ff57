// generator_internal.h's FirstFit: the first-fit placement of the running jobs of
// GenerateRandomSnapshot and GenerateMultiQueueScenario, never over-committing anything and
// honouring node state, owner restrictions, isolation, models and island scope.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "testing/generator_internal.h"

namespace gpupool::testing::generator_internal {

namespace {

// Tenants for isolation: -1 for jobs of queues without isolation, otherwise the index of the
// nearest queue (the job's own or an ancestor) that sets an isolation mode.
constexpr int kNoTenant = -1;

}  // namespace

FirstFit::FirstFit(const Snapshot& snapshot) : snapshot_(snapshot) {
  for (const Node& node : snapshot.nodes) {
    NodeUse use;
    use.free_cpu = node.cpu_milli;
    use.free_memory = node.memory_mib;
    use.gpus.resize(node.gpus.size());
    use.model_memory = 0;
    for (const GpuModel& model : snapshot.gpu_models) {
      if (model.name == node.gpu_model) use.model_memory = model.memory_mib;
    }
    nodes_.push_back(std::move(use));
  }
  for (size_t q = 0; q < snapshot.queues.size(); ++q) {
    parent_.push_back(-1);
    for (size_t p = 0; p < snapshot.queues.size(); ++p) {
      if (snapshot.queues[p].id == snapshot.queues[q].parent) parent_[q] = static_cast<int>(p);
    }
  }
}

std::optional<std::vector<ReplicaPlacement>> FirstFit::Place(const Job& job,
                                                             const std::vector<int32_t>& counts) {
  const int queue = QueueIndex(job.queue);
  const int tenant = TenantOf(queue);
  bool needs_gpus = false;
  for (const TaskGroup& group : job.groups) needs_gpus |= group.request.gpu_milli > 0;
  // Candidate models: the job's list in order, or every model in the order of the snapshot.
  std::vector<std::string> models = job.groups.front().gpu_models;
  if (models.empty()) {
    for (const GpuModel& model : snapshot_.gpu_models) models.push_back(model.name);
  }
  if (!needs_gpus) models = {""};  // a CPU-only job may go anywhere
  for (const std::string& model : models) {
    std::vector<NodeUse> saved = nodes_;
    std::vector<ReplicaPlacement> placements;
    bool ok = true;
    for (size_t g = 0; g < job.groups.size() && ok; ++g) {
      for (int32_t r = 0; r < counts[g] && ok; ++r) {
        std::optional<ReplicaPlacement> placement =
            PlaceReplica(job.groups[g], model, queue, tenant);
        if (!placement) {
          ok = false;
          break;
        }
        placement->group = job.groups[g].name;
        placement->replica = r;
        placements.push_back(std::move(*placement));
      }
    }
    if (ok) return placements;
    nodes_ = std::move(saved);
  }
  return std::nullopt;
}

int FirstFit::QueueIndex(const std::string& id) const {
  for (size_t q = 0; q < snapshot_.queues.size(); ++q) {
    if (snapshot_.queues[q].id == id) return static_cast<int>(q);
  }
  return -1;
}

int FirstFit::TenantOf(int queue) const {
  for (int q = queue; q >= 0; q = parent_[q]) {
    if (snapshot_.queues[q].isolation != Isolation::kNone) return q;
  }
  return kNoTenant;
}

Isolation FirstFit::ModeOf(int tenant) const {
  return tenant == kNoTenant ? Isolation::kNone : snapshot_.queues[tenant].isolation;
}

bool FirstFit::OwnerAllows(const std::vector<std::string>& owners, int queue) const {
  if (owners.empty()) return true;
  for (int q = queue; q >= 0; q = parent_[q]) {
    for (const std::string& owner : owners) {
      if (owner == snapshot_.queues[q].id) return true;
    }
  }
  return false;
}

bool FirstFit::NodeSharable(const NodeUse& use, int tenant) const {
  for (int other : use.tenants) {
    if (other != tenant && (ModeOf(tenant) == Isolation::kExclusiveNode ||
                            ModeOf(other) == Isolation::kExclusiveNode)) {
      return false;
    }
  }
  return true;
}

bool FirstFit::GpuSharable(const GpuUse& use, int tenant) {
  for (int other : use.tenants) {
    if (other != tenant && (tenant != kNoTenant || other != kNoTenant)) return false;
  }
  return true;
}

void FirstFit::AddTenant(std::vector<int>& tenants, int tenant) {
  if (std::find(tenants.begin(), tenants.end(), tenant) == tenants.end()) {
    tenants.push_back(tenant);
  }
}

std::optional<ReplicaPlacement> FirstFit::PlaceReplica(const TaskGroup& group,
                                                       const std::string& model, int queue,
                                                       int tenant) {
  const ResourceRequest& request = group.request;
  for (size_t n = 0; n < snapshot_.nodes.size(); ++n) {
    const Node& node = snapshot_.nodes[n];
    NodeUse& use = nodes_[n];
    if (node.state == NodeState::kDown) continue;
    if (!model.empty() && node.gpu_model != model) continue;
    if (!OwnerAllows(node.owner_queues, queue)) continue;
    if (!NodeSharable(use, tenant)) continue;
    if (use.free_cpu < request.cpu_milli || use.free_memory < request.memory_mib) continue;
    std::vector<int> chosen;  // positions in node.gpus
    if (request.gpu_milli > 0) {
      if (request.gpu_memory_mib > use.model_memory) continue;
      chosen = ChooseGpus(node, use, group, tenant);
      if (chosen.empty()) continue;
    }
    ReplicaPlacement placement;
    placement.node = node.id;
    placement.gpu_milli = request.MilliPerGpu();
    for (int position : chosen) {
      GpuUse& gpu = use.gpus[position];
      gpu.milli += request.MilliPerGpu();
      gpu.memory += request.gpu_milli >= kMilliPerGpu ? use.model_memory : request.gpu_memory_mib;
      AddTenant(gpu.tenants, tenant);
      placement.gpus.push_back(node.gpus[position].index);
    }
    std::sort(placement.gpus.begin(), placement.gpus.end());
    use.free_cpu -= request.cpu_milli;
    use.free_memory -= request.memory_mib;
    AddTenant(use.tenants, tenant);
    return placement;
  }
  return std::nullopt;
}

std::vector<int> FirstFit::ChooseGpus(const Node& node, const NodeUse& use, const TaskGroup& group,
                                      int tenant) const {
  const ResourceRequest& request = group.request;
  if (request.gpu_milli < kMilliPerGpu) {
    for (size_t i = 0; i < node.gpus.size(); ++i) {
      const GpuUse& gpu = use.gpus[i];
      if (!node.gpus[i].healthy) continue;
      if (gpu.milli + request.gpu_milli > kMilliPerGpu) continue;
      if (gpu.memory + request.gpu_memory_mib > use.model_memory) continue;
      if (!GpuSharable(gpu, tenant)) continue;
      return {static_cast<int>(i)};
    }
    return {};
  }
  const size_t wanted = static_cast<size_t>(request.GpuCount());
  const bool one_island = group.topology.replica_scope == ReplicaScope::kIsland;
  // Islands in order of first appearance; with no island scope, all GPUs form one pool.
  std::vector<int32_t> islands;
  for (const Gpu& gpu : node.gpus) {
    if (std::find(islands.begin(), islands.end(), gpu.island) == islands.end()) {
      islands.push_back(gpu.island);
    }
  }
  if (!one_island) islands = {0};
  for (int32_t island : islands) {
    std::vector<int> chosen;
    for (size_t i = 0; i < node.gpus.size() && chosen.size() < wanted; ++i) {
      if (one_island && node.gpus[i].island != island) continue;
      if (node.gpus[i].healthy && use.gpus[i].milli == 0) chosen.push_back(static_cast<int>(i));
    }
    if (chosen.size() == wanted) return chosen;
  }
  return {};
}
}  // namespace gpupool::testing::generator_internal
