#include "testing/generator.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "internal/hash.h"

namespace gpupool::testing {

// ---------------------------------------------------------------------------------------------
// Random numbers.

uint64_t SplitMix64(uint64_t& state) { return internal::SplitMix64Next(state); }

Rng::Rng(uint64_t seed) {
  uint64_t state = seed;
  for (uint64_t& word : s_) word = SplitMix64(state);
}

namespace {
uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

uint64_t Rng::Next() {
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

int64_t Rng::UniformInt(int64_t lo, int64_t hi) {
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  if (range == 0) return static_cast<int64_t>(Next());  // the whole int64 range
  // Rejection sampling: only draws below the largest multiple of `range` are used, so every
  // value is equally likely.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  uint64_t draw;
  do {
    draw = Next();
  } while (draw >= limit);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + draw % range);
}

bool Rng::Percent(int64_t percent) { return UniformInt(0, 99) < percent; }

size_t Rng::PickWeighted(std::span<const int64_t> weights) {
  int64_t total = 0;
  for (int64_t w : weights) total += w;
  int64_t draw = UniformInt(0, total - 1);
  for (size_t i = 0; i < weights.size(); ++i) {
    if (draw < weights[i]) return i;
    draw -= weights[i];
  }
  return weights.size() - 1;  // unreachable with a positive sum
}

WeightedPicker::WeightedPicker(std::span<const int64_t> weights) {
  prefix_.reserve(weights.size());
  int64_t total = 0;
  for (int64_t w : weights) {
    total += w;
    prefix_.push_back(total);
  }
}

size_t WeightedPicker::Pick(Rng& rng) const {
  const int64_t draw = rng.UniformInt(0, prefix_.back() - 1);
  return static_cast<size_t>(std::upper_bound(prefix_.begin(), prefix_.end(), draw) -
                             prefix_.begin());
}

namespace {

// Picks a value from a table of (value, weight) pairs.
template <typename T>
T PickFrom(Rng& rng, std::span<const std::pair<T, int64_t>> table) {
  std::vector<int64_t> weights;
  weights.reserve(table.size());
  for (const auto& [value, weight] : table) weights.push_back(weight);
  return table[rng.PickWeighted(weights)].first;
}

int64_t RoundDown(int64_t value, int64_t unit) { return value / unit * unit; }

// ---------------------------------------------------------------------------------------------
// GenerateRandomSnapshot.

struct ModelSpec {
  const char* name;
  int64_t memory_mib;
};
constexpr ModelSpec kCatalog[] = {
    {"A100-40GB", 40960}, {"A100-80GB", 81920}, {"H100-80GB", 81920},
    {"L4", 24576},        {"V100-16GB", 16384}, {"B200", 184320},
};

// Tenants for isolation: -1 for jobs of queues without isolation, otherwise the index of the
// nearest queue (the job's own or an ancestor) that sets an isolation mode.
constexpr int kNoTenant = -1;

// First-fit placement of running jobs into a small snapshot, keeping track of what is used so
// that nothing is over-committed: milli-GPUs and GPU memory per GPU, CPU and memory per node,
// and who shares a GPU or a node (isolation).
class FirstFit {
 public:
  explicit FirstFit(const Snapshot& snapshot) : snapshot_(snapshot) {
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

  // Places replica counts[g] of each group g of `job`, all on nodes of one GPU model, or returns
  // nullopt and changes nothing.
  std::optional<std::vector<ReplicaPlacement>> Place(const Job& job,
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

 private:
  struct GpuUse {
    int64_t milli = 0;
    int64_t memory = 0;
    std::vector<int> tenants;
  };
  struct NodeUse {
    int64_t free_cpu = 0;
    int64_t free_memory = 0;
    int64_t model_memory = 0;
    std::vector<int> tenants;
    std::vector<GpuUse> gpus;
  };

  int QueueIndex(const std::string& id) const {
    for (size_t q = 0; q < snapshot_.queues.size(); ++q) {
      if (snapshot_.queues[q].id == id) return static_cast<int>(q);
    }
    return -1;
  }
  int TenantOf(int queue) const {
    for (int q = queue; q >= 0; q = parent_[q]) {
      if (snapshot_.queues[q].isolation != Isolation::kNone) return q;
    }
    return kNoTenant;
  }
  Isolation ModeOf(int tenant) const {
    return tenant == kNoTenant ? Isolation::kNone : snapshot_.queues[tenant].isolation;
  }
  // May a job of `queue` use a node reserved to `owners`?
  bool OwnerAllows(const std::vector<std::string>& owners, int queue) const {
    if (owners.empty()) return true;
    for (int q = queue; q >= 0; q = parent_[q]) {
      for (const std::string& owner : owners) {
        if (owner == snapshot_.queues[q].id) return true;
      }
    }
    return false;
  }
  bool NodeSharable(const NodeUse& use, int tenant) const {
    for (int other : use.tenants) {
      if (other != tenant && (ModeOf(tenant) == Isolation::kExclusiveNode ||
                              ModeOf(other) == Isolation::kExclusiveNode)) {
        return false;
      }
    }
    return true;
  }
  static bool GpuSharable(const GpuUse& use, int tenant) {
    for (int other : use.tenants) {
      if (other != tenant && (tenant != kNoTenant || other != kNoTenant)) return false;
    }
    return true;
  }
  static void AddTenant(std::vector<int>& tenants, int tenant) {
    if (std::find(tenants.begin(), tenants.end(), tenant) == tenants.end()) {
      tenants.push_back(tenant);
    }
  }

  std::optional<ReplicaPlacement> PlaceReplica(const TaskGroup& group, const std::string& model,
                                               int queue, int tenant) {
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

  // Positions of the GPUs the replica takes on `node`, or none if it does not fit. Honours
  // island scope whether required or preferred, so running jobs always look well placed.
  std::vector<int> ChooseGpus(const Node& node, const NodeUse& use, const TaskGroup& group,
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

  const Snapshot& snapshot_;
  std::vector<NodeUse> nodes_;
  std::vector<int> parent_;  // queue index -> parent index, -1 for roots
};

std::vector<Gpu> MakeGpus(Rng& rng, int32_t count, int32_t unhealthy_per_mille) {
  // Island layouts: one island, pairs, quads, or one island per GPU.
  int32_t island_size = count;
  const int64_t layout = rng.UniformInt(0, 9);
  if (layout < 2 && count % 2 == 0) {
    island_size = 2;
  } else if (layout < 4 && count % 4 == 0 && count > 4) {
    island_size = 4;
  } else if (layout < 5) {
    island_size = 1;
  }
  std::vector<Gpu> gpus(static_cast<size_t>(count));
  for (int32_t i = 0; i < count; ++i) {
    gpus[i].index = i;
    gpus[i].island = i / island_size;
    gpus[i].healthy = rng.UniformInt(0, 999) >= unhealthy_per_mille;
  }
  return gpus;
}

}  // namespace

void AddOperationsFacts(Snapshot& snapshot, uint64_t seed) {
  Rng rng(seed ^ 0x6f70732d66616374ULL);  // "ops-fact"
  const int64_t now = snapshot.now;
  for (Node& node : snapshot.nodes) {
    if (!node.gpus.empty() && rng.Percent(25)) {
      Gpu& gpu = node.gpus[rng.UniformInt(0, static_cast<int64_t>(node.gpus.size()) - 1)];
      gpu.xid_errors = rng.UniformInt(0, 8);
      gpu.ecc_errors = rng.UniformInt(0, 1);
      if (rng.Percent(50)) gpu.errors_since = rng.UniformInt(0, now);
    }
    if (rng.Percent(35))
      node.last_diagnostic = DiagnosticRun{rng.UniformInt(0, now), rng.Percent(85)};
    if (rng.Percent(35)) {
      int64_t start = std::max<int64_t>(0, now + rng.UniformInt(-6'000, 20'000));
      const int windows = static_cast<int>(rng.UniformInt(1, 2));
      for (int w = 0; w < windows; ++w) {
        const int64_t end = start + rng.UniformInt(1, 10'000);
        node.maintenance.push_back(MaintenanceWindow{start, end});
        start = end + rng.UniformInt(0, 5'000);
      }
    }
    if (node.state != NodeState::kReady && rng.Percent(40)) {
      node.state_cause = static_cast<NodeStateCause>(rng.UniformInt(1, 3));
    }
  }
}

Snapshot GenerateRandomSnapshot(uint64_t seed) {
  Rng rng(seed);
  Snapshot snapshot;
  snapshot.now = 1'000'000 + rng.UniformInt(0, 1'000'000);

  // GPU models: 1-3 used by nodes, and sometimes one more that no node has.
  std::vector<size_t> catalog(std::size(kCatalog));
  for (size_t i = 0; i < catalog.size(); ++i) catalog[i] = i;
  rng.Shuffle(catalog);
  const int used_models = static_cast<int>(rng.UniformInt(1, 3));
  const int declared_models = used_models + (rng.Percent(50) ? 1 : 0);
  for (int m = 0; m < declared_models; ++m) {
    GpuModel model;
    model.name = kCatalog[catalog[m]].name;
    model.memory_mib = kCatalog[catalog[m]].memory_mib;
    if (rng.Percent(30)) {
      model.speeds.push_back({"training", rng.UniformInt(500, 3000)});
      model.speeds.push_back({"inference", rng.UniformInt(500, 3000)});
    }
    snapshot.gpu_models.push_back(std::move(model));
  }

  const bool has_topology = rng.Percent(85);
  if (has_topology) snapshot.topology.levels = {"block", "rack"};

  // Nodes.
  const int node_count = static_cast<int>(rng.UniformInt(1, 12));
  static constexpr std::pair<int32_t, int64_t> kGpuCounts[] = {{1, 10}, {2, 15}, {3, 5},
                                                               {4, 20}, {6, 5},  {8, 45}};
  for (int n = 0; n < node_count; ++n) {
    Node node;
    node.id = fmt::format("n{:02d}", n);
    const bool cpu_only = rng.Percent(5);
    if (!cpu_only) {
      node.gpu_model = snapshot.gpu_models[rng.UniformInt(0, used_models - 1)].name;
      node.gpus = MakeGpus(rng, PickFrom<int32_t>(rng, kGpuCounts), rng.Percent(30) ? 100 : 0);
    }
    const int64_t slots = std::max<int64_t>(1, static_cast<int64_t>(node.gpus.size()));
    node.cpu_milli = slots * 1000 * rng.UniformInt(4, 32);
    node.memory_mib = slots * 1024 * rng.UniformInt(16, 256);
    if (has_topology) {
      const int64_t block = rng.UniformInt(0, 1);
      const int64_t rack = rng.UniformInt(0, 2);
      if (!rng.Percent(10)) node.path.push_back({"block", fmt::format("b{}", block)});
      if (!rng.Percent(10)) node.path.push_back({"rack", fmt::format("r{}", rack)});
    }
    if (rng.Percent(30)) node.labels.push_back({"zone", fmt::format("z{}", rng.UniformInt(0, 1))});
    static constexpr std::pair<NodeState, int64_t> kStates[] = {{NodeState::kReady, 80},
                                                                {NodeState::kCordoned, 7},
                                                                {NodeState::kDraining, 7},
                                                                {NodeState::kDown, 6}};
    node.state = PickFrom<NodeState>(rng, kStates);
    snapshot.nodes.push_back(std::move(node));
  }

  // Queues: a forest of 1-6 queues, 2 levels. Children are generated before their parent's
  // guarantees are fixed, so that a parent guarantees at least what its children do.
  const int queue_count = static_cast<int>(rng.UniformInt(1, 6));
  std::vector<int> roots;
  for (int q = 0; q < queue_count; ++q) {
    Queue queue;
    queue.id = fmt::format("q{}", q);
    if (q > 0 && rng.Percent(75)) {
      queue.parent = snapshot.queues[roots[rng.UniformInt(0, roots.size() - 1)]].id;
    } else {
      roots.push_back(q);
    }
    queue.priority = static_cast<int32_t>(rng.UniformInt(0, 3));
    queue.can_borrow = rng.Percent(80);
    queue.can_lend = rng.Percent(80);
    static constexpr std::pair<Isolation, int64_t> kIsolation[] = {
        {Isolation::kNone, 75}, {Isolation::kExclusiveGpu, 15}, {Isolation::kExclusiveNode, 10}};
    queue.isolation = PickFrom<Isolation>(rng, kIsolation);
    if (rng.Percent(20)) {
      queue.budget_milli_gpu_seconds = 1000 * 3600 * rng.UniformInt(1, 1000);
      queue.decayed_usage_milli_gpu_seconds = 1000 * rng.UniformInt(0, 3'600'000);
    }
    snapshot.queues.push_back(std::move(queue));
  }
  // Quotas: leaves first, then roots (which are at index < their children's, so go backwards).
  for (int q = queue_count - 1; q >= 0; --q) {
    Queue& queue = snapshot.queues[q];
    std::vector<std::string> keys;
    for (const GpuModel& model : snapshot.gpu_models) {
      if (rng.Percent(35)) keys.push_back(model.name);
    }
    if (rng.Percent(30)) keys.push_back(kAnyGpuModel);
    for (const std::string& key : keys) {
      Quota quota;
      quota.gpu_model = key;
      quota.guaranteed_milli = 250 * rng.UniformInt(0, 32);
      quota.over_quota_weight = rng.UniformInt(0, 4);
      queue.quotas.push_back(std::move(quota));
    }
    if (queue.parent.empty()) {
      // Raise the root's guarantees to cover its children's, adding quotas where needed.
      for (const Queue& child : snapshot.queues) {
        if (child.parent != queue.id) continue;
        for (const Quota& child_quota : child.quotas) {
          auto it = std::find_if(
              queue.quotas.begin(), queue.quotas.end(),
              [&](const Quota& existing) { return existing.gpu_model == child_quota.gpu_model; });
          if (it == queue.quotas.end()) {
            queue.quotas.push_back({child_quota.gpu_model, 0, std::nullopt, 1});
            it = queue.quotas.end() - 1;
          }
          it->guaranteed_milli += child_quota.guaranteed_milli;
        }
      }
    }
    for (Quota& quota : queue.quotas) {
      if (rng.Percent(40)) quota.limit_milli = quota.guaranteed_milli + 500 * rng.UniformInt(0, 32);
    }
  }
  // Reserve some nodes to queues.
  for (Node& node : snapshot.nodes) {
    if (rng.Percent(15)) {
      node.owner_queues.push_back(snapshot.queues[rng.UniformInt(0, queue_count - 1)].id);
    }
  }

  // Jobs.
  FirstFit first_fit(snapshot);
  const int job_count = static_cast<int>(rng.UniformInt(0, 25));
  static constexpr std::pair<int64_t, int64_t> kMilli[] = {
      {0, 5}, {250, 15}, {500, 15}, {1000, 25}, {2000, 15}, {4000, 13}, {8000, 12}};
  static constexpr std::pair<int32_t, int64_t> kReplicas[] = {{1, 60}, {2, 20}, {3, 8}, {4, 12}};
  static constexpr const char* kGroupNames[] = {"main", "worker", "ps"};
  for (int j = 0; j < job_count; ++j) {
    Job job;
    job.id = fmt::format("j{:02d}", j);
    job.queue = snapshot.queues[rng.UniformInt(0, queue_count - 1)].id;
    job.priority = static_cast<int32_t>(rng.UniformInt(0, 10));
    job.submit_time = snapshot.now - rng.UniformInt(0, 100'000);
    job.preemptible = rng.Percent(70);
    job.min_runtime_s = rng.Percent(30) ? rng.UniformInt(1, 600) : 0;
    if (rng.Percent(50)) job.runtime_estimate_s = rng.UniformInt(60, 86'400);

    // One preference list for the whole job (its groups are placed on one model).
    std::vector<std::string> models;
    if (rng.Percent(50)) {
      for (const GpuModel& model : snapshot.gpu_models) {
        if (rng.Percent(50)) models.push_back(model.name);
      }
      // Sometimes a model the snapshot does not declare at all (allowed: the job waits).
      if (rng.Percent(15)) models.push_back("MI300X");
      rng.Shuffle(models);
    }
    static constexpr std::pair<int32_t, int64_t> kGroupCounts[] = {{1, 70}, {2, 20}, {3, 10}};
    const int group_count = PickFrom<int32_t>(rng, kGroupCounts);
    for (int g = 0; g < group_count; ++g) {
      TaskGroup group;
      group.name = kGroupNames[g];
      group.replicas = PickFrom<int32_t>(rng, kReplicas);
      if (rng.Percent(15)) {
        group.min_replicas = static_cast<int32_t>(rng.UniformInt(1, group.replicas));
      }
      ResourceRequest& request = group.request;
      request.gpu_milli = PickFrom<int64_t>(rng, kMilli);
      if (request.gpu_milli > 0 && request.gpu_milli < kMilliPerGpu && rng.Percent(50)) {
        request.gpu_memory_mib = 1024 * rng.UniformInt(1, 16);
      } else if (request.gpu_milli >= kMilliPerGpu && rng.Percent(20)) {
        request.gpu_memory_mib = 1024 * rng.UniformInt(8, 80);
      }
      request.cpu_milli = 500 * rng.UniformInt(0, 32);
      request.memory_mib = 1024 * rng.UniformInt(0, 64);
      group.gpu_models = models;
      if (request.gpu_milli >= 2 * kMilliPerGpu && rng.Percent(40)) {
        group.topology.replica_scope = ReplicaScope::kIsland;
        group.topology.replica_strictness =
            rng.Percent(70) ? Strictness::kRequired : Strictness::kPreferred;
      }
      job.groups.push_back(std::move(group));
    }
    if (rng.Percent(30)) {
      std::vector<std::string> levels = {"node"};
      if (has_topology) levels = {"node", "rack", "block"};
      const std::string level = levels[rng.UniformInt(0, levels.size() - 1)];
      const Strictness strictness =
          rng.Percent(60) ? Strictness::kRequired : Strictness::kPreferred;
      for (TaskGroup& group : job.groups) {
        group.topology.gang_level = level;
        group.topology.gang_strictness = strictness;
      }
    }

    if (rng.Percent(40)) {
      // Try to make it running. An elastic group runs any count in [min, replicas].
      std::vector<int32_t> counts;
      for (const TaskGroup& group : job.groups) {
        counts.push_back(static_cast<int32_t>(rng.UniformInt(group.MinReplicas(), group.replicas)));
      }
      Job running = job;
      for (TaskGroup& group : running.groups) {
        if (group.topology.gang_level) group.topology.gang_strictness = Strictness::kPreferred;
      }
      if (std::optional<std::vector<ReplicaPlacement>> placements =
              first_fit.Place(running, counts)) {
        job = std::move(running);
        job.state = JobState::kRunning;
        job.placements = std::move(*placements);
        if (rng.Percent(50)) {
          for (ReplicaPlacement& placement : job.placements) placement.gpu_milli = 0;
        }
        job.start_time = job.submit_time + rng.UniformInt(0, snapshot.now - job.submit_time);
        job.attained_service_s = snapshot.now - *job.start_time;
        if (rng.Percent(50)) {
          job.checkpointing.interval_s = rng.UniformInt(300, 3600);
          job.checkpointing.checkpoint_cost_s = rng.UniformInt(0, 120);
          job.checkpointing.restore_time_s = rng.UniformInt(0, 300);
          if (rng.Percent(70)) {
            job.checkpointing.last_checkpoint_time =
                *job.start_time + rng.UniformInt(0, snapshot.now - *job.start_time);
          }
        }
      }
    }
    if (job.state == JobState::kPending && rng.Percent(20)) {
      job.attained_service_s = rng.UniformInt(0, 10'000);
    }
    snapshot.jobs.push_back(std::move(job));
  }
  return snapshot;
}

// ---------------------------------------------------------------------------------------------
// GenerateMultiQueueScenario.

namespace {

// A guarantee drawn out of `remaining` milli-GPUs, in half GPUs; sometimes none.
int64_t DrawGuarantee(Rng& rng, int64_t remaining) {
  if (remaining < 500 || rng.Percent(30)) return 0;
  return 500 * rng.UniformInt(1, remaining / 500);
}

}  // namespace

Job GenerateMultiQueueJob(Rng& rng, const Snapshot& snapshot, std::string id) {
  // Leaf queues take most jobs; now and then an inner queue does (a job may name any queue).
  std::vector<std::string> leaves, all;
  for (const Queue& queue : snapshot.queues) {
    all.push_back(queue.id);
    const bool leaf = std::none_of(snapshot.queues.begin(), snapshot.queues.end(),
                                   [&queue](const Queue& q) { return q.parent == queue.id; });
    if (leaf) leaves.push_back(queue.id);
  }
  Job job;
  job.id = std::move(id);
  const std::vector<std::string>& queues = rng.Percent(90) ? leaves : all;
  job.queue = queues[rng.UniformInt(0, static_cast<int64_t>(queues.size()) - 1)];
  job.priority = static_cast<int32_t>(rng.UniformInt(0, 4));
  job.submit_time = snapshot.now;
  job.preemptible = rng.Percent(75);
  job.min_runtime_s = rng.Percent(30) ? 300 * rng.UniformInt(1, 4) : 0;
  if (rng.Percent(50)) job.runtime_estimate_s = rng.UniformInt(600, 86'400);
  if (rng.Percent(50)) {
    job.checkpointing.interval_s = rng.UniformInt(300, 3600);
    job.checkpointing.checkpoint_cost_s = rng.UniformInt(0, 120);
    job.checkpointing.restore_time_s = rng.UniformInt(0, 300);
  }
  std::vector<std::string> models;
  if (snapshot.gpu_models.size() > 1) {
    const int64_t draw = rng.UniformInt(0, 99);
    if (draw < 25) {
      models = {snapshot.gpu_models[rng.UniformInt(0, 1)].name};
    } else if (draw < 35) {
      models = {snapshot.gpu_models[0].name, snapshot.gpu_models[1].name};
      rng.Shuffle(models);
    }
  }
  static constexpr std::pair<int64_t, int64_t> kMilli[] = {
      {500, 20}, {1000, 45}, {2000, 25}, {4000, 10}};
  static constexpr std::pair<int32_t, int64_t> kReplicas[] = {{1, 55}, {2, 30}, {3, 15}};
  TaskGroup main;
  main.name = "main";
  main.replicas = PickFrom<int32_t>(rng, kReplicas);
  main.request.gpu_milli = PickFrom<int64_t>(rng, kMilli);
  main.request.cpu_milli = 1000 * rng.UniformInt(1, 4);
  main.request.memory_mib = 1024 * rng.UniformInt(1, 16);
  main.gpu_models = models;
  job.groups.push_back(std::move(main));
  if (rng.Percent(15)) {
    TaskGroup worker;
    worker.name = "worker";
    worker.replicas = static_cast<int32_t>(rng.UniformInt(1, 2));
    worker.request.gpu_milli = rng.Percent(50) ? 500 : 1000;
    worker.request.cpu_milli = 1000 * rng.UniformInt(1, 4);
    worker.request.memory_mib = 1024 * rng.UniformInt(1, 16);
    worker.gpu_models = models;
    job.groups.push_back(std::move(worker));
  }
  return job;
}

Snapshot GenerateMultiQueueScenario(uint64_t seed) {
  Rng rng(seed);
  Snapshot snapshot;
  snapshot.now = 1'000'000;

  // GPU models and nodes; every model has at least one node.
  const int model_count = rng.Percent(60) ? 1 : 2;
  static constexpr const char* kModels[] = {"A100-80GB", "H100-80GB"};
  for (int m = 0; m < model_count; ++m) snapshot.gpu_models.push_back({kModels[m], 81920, {}});
  const int node_count = static_cast<int>(rng.UniformInt(2, 6));
  std::vector<int64_t> capacity(model_count, 0);
  for (int n = 0; n < node_count; ++n) {
    Node node;
    node.id = fmt::format("n{}", n);
    const int m = n < model_count ? n : static_cast<int>(rng.UniformInt(0, model_count - 1));
    node.gpu_model = kModels[m];
    const int32_t gpus = static_cast<int32_t>(rng.UniformInt(2, 4));
    for (int32_t g = 0; g < gpus; ++g) node.gpus.push_back({g, 0, true});
    node.cpu_milli = gpus * 16'000;
    node.memory_mib = gpus * 131'072;
    capacity[m] += gpus * kMilliPerGpu;
    snapshot.nodes.push_back(std::move(node));
  }

  // The queue tree: flat, or children under one or two parents; at least two leaves.
  const int queue_count = static_cast<int>(rng.UniformInt(2, 5));
  const bool flat = rng.Percent(35);
  std::vector<int> roots;
  for (int q = 0; q < queue_count; ++q) {
    Queue queue;
    queue.id = fmt::format("q{}", q);
    if (q > 0 && !flat && (roots.size() == 2 || rng.Percent(70))) {
      queue.parent = snapshot.queues[roots[rng.UniformInt(0, roots.size() - 1)]].id;
    } else {
      roots.push_back(q);
    }
    queue.priority = static_cast<int32_t>(rng.UniformInt(0, 2));
    queue.can_borrow = rng.Percent(90);
    snapshot.queues.push_back(std::move(queue));
  }
  auto children_of = [&snapshot](const std::string& id) {
    std::vector<size_t> out;
    for (size_t c = 0; c < snapshot.queues.size(); ++c) {
      if (snapshot.queues[c].parent == id) out.push_back(c);
    }
    return out;
  };
  size_t leaf_count = 0;
  for (const Queue& queue : snapshot.queues) leaf_count += children_of(queue.id).empty() ? 1 : 0;
  if (leaf_count < 2) snapshot.queues.back().parent.clear();  // a second root, a leaf

  // Guarantees, per GPU model or as one "*" guarantee: the roots share at most the capacity, a
  // parent's children at most the parent's guarantee.
  const bool per_model = rng.Percent(50);
  std::vector<std::string> keys;
  std::vector<int64_t> key_capacity;
  if (per_model) {
    for (int m = 0; m < model_count; ++m) {
      keys.push_back(kModels[m]);
      key_capacity.push_back(capacity[m]);
    }
  } else {
    keys.push_back(kAnyGpuModel);
    int64_t total = 0;
    for (int64_t c : capacity) total += c;
    key_capacity.push_back(total);
  }
  std::vector<std::vector<int64_t>> guarantee(snapshot.queues.size(),
                                              std::vector<int64_t>(keys.size(), 0));
  for (size_t k = 0; k < keys.size(); ++k) {
    int64_t remaining = key_capacity[k] * rng.UniformInt(50, 100) / 100;
    std::vector<size_t> order;
    for (size_t q = 0; q < snapshot.queues.size(); ++q) {
      if (snapshot.queues[q].parent.empty()) order.push_back(q);
    }
    rng.Shuffle(order);
    for (size_t root : order) {
      guarantee[root][k] = DrawGuarantee(rng, remaining);
      remaining -= guarantee[root][k];
      int64_t left = guarantee[root][k];
      for (size_t child : children_of(snapshot.queues[root].id)) {
        guarantee[child][k] = DrawGuarantee(rng, left);
        left -= guarantee[child][k];
      }
    }
  }
  static constexpr std::pair<int64_t, int64_t> kWeights[] = {
      {0, 10}, {1, 40}, {2, 25}, {3, 15}, {4, 10}};
  for (size_t q = 0; q < snapshot.queues.size(); ++q) {
    Queue& queue = snapshot.queues[q];
    const int64_t weight = PickFrom<int64_t>(rng, kWeights);
    int64_t total = 0;
    for (size_t k = 0; k < keys.size(); ++k) {
      queue.quotas.push_back({keys[k], guarantee[q][k], std::nullopt, weight});
      total += guarantee[q][k];
    }
    if (rng.Percent(20)) {
      const int64_t limit = total + kMilliPerGpu * rng.UniformInt(1, 4);
      if (per_model) {
        queue.quotas.push_back({kAnyGpuModel, 0, limit, weight});
      } else {
        queue.quotas.front().limit_milli = limit;
      }
    }
  }

  // Jobs: about half of them running, placed first-fit.
  FirstFit first_fit(snapshot);
  const int job_count = static_cast<int>(rng.UniformInt(6, 16));
  for (int j = 0; j < job_count; ++j) {
    Job job = GenerateMultiQueueJob(rng, snapshot, fmt::format("j{:02d}", j));
    job.submit_time = snapshot.now - rng.UniformInt(0, 20'000);
    if (rng.Percent(50)) {
      std::vector<int32_t> counts;
      for (const TaskGroup& group : job.groups) counts.push_back(group.replicas);
      if (std::optional<std::vector<ReplicaPlacement>> placements = first_fit.Place(job, counts)) {
        job.state = JobState::kRunning;
        job.placements = std::move(*placements);
        job.start_time = snapshot.now - rng.UniformInt(0, 3000);
        job.submit_time = std::min(job.submit_time, *job.start_time);
        job.attained_service_s = snapshot.now - *job.start_time;
        if (job.checkpointing.interval_s > 0 && rng.Percent(70)) {
          job.checkpointing.last_checkpoint_time =
              *job.start_time + rng.UniformInt(0, snapshot.now - *job.start_time);
        }
      }
    }
    snapshot.jobs.push_back(std::move(job));
  }
  return snapshot;
}

// ---------------------------------------------------------------------------------------------
// Scenarios.

namespace {

constexpr char kH100[] = "H100-80GB";
constexpr char kA100[] = "A100-80GB";
constexpr char kGb200[] = "GB200";

int64_t Scaled(int64_t value, double scale, int64_t minimum) {
  return std::max<int64_t>(minimum, std::llround(static_cast<double>(value) * scale));
}

// The queue tree of a scenario: the leaves that receive jobs, by index into snapshot.queues.
struct QueueTree {
  std::vector<size_t> leaves;
  std::vector<int64_t> leaf_weights;
  // Leaves (indices into `leaves`) that may share a GPU with others / a node with others.
  std::vector<size_t> shareable_gpu;               // isolation kNone
  std::vector<size_t> shareable_node;              // isolation kNone or kExclusiveGpu
  std::vector<std::vector<size_t>> org_shareable;  // per org: its kNone leaves
  std::vector<std::string> orgs;
};

// Splits `total` milli-GPUs among `weights`, rounded down to whole GPUs.
std::vector<int64_t> SplitGuarantee(int64_t total, const std::vector<int64_t>& weights) {
  int64_t sum = 0;
  for (int64_t w : weights) sum += w;
  std::vector<int64_t> shares;
  for (int64_t w : weights) shares.push_back(sum == 0 ? 0 : RoundDown(total / sum * w, 1000));
  return shares;
}

QueueTree MakeQueues(Rng& rng, const ScenarioOptions& options,
                     const std::vector<std::pair<std::string, int64_t>>& pool_milli,
                     Snapshot& snapshot) {
  int64_t orgs = 1, teams = std::max<int64_t>(1, options.queues - 1), projects = 0;
  if (options.queue_levels >= 3) {
    orgs = std::max<int64_t>(1, options.queues / 100);
    teams = std::max<int64_t>(orgs, options.queues / 10);
    projects = std::max<int64_t>(teams, options.queues - orgs - teams);
  }
  QueueTree tree;
  // Weights decide guarantees (at every level) and how many jobs each leaf receives; squared
  // uniform draws give a skew like real tenants (a few heavy, many light).
  auto draw_weight = [&rng] {
    const int64_t w = rng.UniformInt(1, 10);
    return w * w;
  };
  std::vector<int64_t> org_weight, team_weight, project_weight;
  for (int64_t o = 0; o < orgs; ++o) org_weight.push_back(draw_weight());
  for (int64_t t = 0; t < teams; ++t) team_weight.push_back(draw_weight());
  for (int64_t p = 0; p < projects; ++p) project_weight.push_back(draw_weight());

  // Guarantees: 80% of each model's capacity goes to the orgs, each org passes 90% of its own
  // to its teams, and each team 90% of its own to the half of its projects that have one.
  auto children_weights = [](const std::vector<int64_t>& weights, int64_t parents, int64_t parent,
                             const std::vector<bool>* mask) {
    std::vector<int64_t> out(weights.size(), 0);
    for (size_t i = 0; i < weights.size(); ++i) {
      if (static_cast<int64_t>(i) % parents == parent && (mask == nullptr || (*mask)[i])) {
        out[i] = weights[i];
      }
    }
    return out;
  };
  std::vector<bool> project_guaranteed(projects);
  for (int64_t p = 0; p < projects; ++p) project_guaranteed[p] = rng.Percent(50);

  std::vector<std::vector<int64_t>> org_g, team_g, project_g;  // [model][index]
  for (const auto& [model, milli] : pool_milli) {
    std::vector<int64_t> og = SplitGuarantee(milli / 10 * 8, org_weight);
    std::vector<int64_t> tg(teams, 0), pg(projects, 0);
    for (int64_t o = 0; o < orgs; ++o) {
      std::vector<int64_t> split =
          SplitGuarantee(og[o] / 10 * 9, children_weights(team_weight, orgs, o, nullptr));
      for (int64_t t = 0; t < teams; ++t) tg[t] += split[t];
    }
    for (int64_t t = 0; t < teams && projects > 0; ++t) {
      std::vector<int64_t> split = SplitGuarantee(
          tg[t] / 10 * 9, children_weights(project_weight, teams, t, &project_guaranteed));
      for (int64_t p = 0; p < projects; ++p) pg[p] += split[p];
    }
    org_g.push_back(std::move(og));
    team_g.push_back(std::move(tg));
    project_g.push_back(std::move(pg));
  }

  auto make_queue = [&](std::string id, std::string parent, const std::vector<int64_t>* g_by_model,
                        size_t index, int64_t weight) {
    Queue queue;
    queue.id = std::move(id);
    queue.parent = std::move(parent);
    int64_t total = 0;
    for (size_t m = 0; m < pool_milli.size(); ++m) {
      const int64_t guaranteed = g_by_model[m][index];
      if (guaranteed == 0) continue;
      total += guaranteed;
      Quota quota;
      quota.gpu_model = pool_milli[m].first;
      quota.guaranteed_milli = guaranteed;
      quota.over_quota_weight = 1 + weight / 25;
      queue.quotas.push_back(std::move(quota));
    }
    if (rng.Percent(40)) {
      Quota any;
      any.guaranteed_milli = 0;
      any.limit_milli = RoundDown(total / 4 * 5, 1000) + 8000 * rng.UniformInt(1, 16);
      queue.quotas.push_back(std::move(any));
    }
    queue.can_borrow = !rng.Percent(5);
    queue.can_lend = !rng.Percent(5);
    return queue;
  };

  for (int64_t o = 0; o < orgs; ++o) {
    std::string id = orgs == 1 && options.queue_levels < 3 ? "root" : fmt::format("o{:02d}", o);
    snapshot.queues.push_back(make_queue(id, "", org_g.data(), o, org_weight[o]));
    tree.orgs.push_back(std::move(id));
  }
  tree.org_shareable.resize(orgs);
  auto add_leaf = [&](size_t index, int64_t weight, int64_t org) {
    Queue& queue = snapshot.queues[index];
    if (options.faults) {
      const int64_t draw = rng.UniformInt(0, 99);
      if (draw < 2) queue.isolation = Isolation::kExclusiveGpu;
      if (draw == 2) queue.isolation = Isolation::kExclusiveNode;
    }
    const size_t leaf = tree.leaves.size();
    tree.leaves.push_back(index);
    tree.leaf_weights.push_back(weight);
    if (queue.isolation == Isolation::kNone) {
      tree.shareable_gpu.push_back(leaf);
      tree.org_shareable[org].push_back(leaf);
    }
    if (queue.isolation != Isolation::kExclusiveNode) tree.shareable_node.push_back(leaf);
  };
  const size_t first_team = snapshot.queues.size();
  for (int64_t t = 0; t < teams; ++t) {
    const int64_t org = t % orgs;
    snapshot.queues.push_back(make_queue(options.queue_levels < 3
                                             ? fmt::format("team-{:02d}", t)
                                             : fmt::format("{}-t{:03d}", tree.orgs[org], t),
                                         tree.orgs[org], team_g.data(), t, team_weight[t]));
    if (projects == 0) add_leaf(snapshot.queues.size() - 1, team_weight[t], org);
  }
  for (int64_t p = 0; p < projects; ++p) {
    const int64_t team = p % teams;
    const std::string& parent = snapshot.queues[first_team + team].id;
    snapshot.queues.push_back(make_queue(fmt::format("{}-p{:04d}", parent, p), parent,
                                         project_g.data(), p, project_weight[p]));
    add_leaf(snapshot.queues.size() - 1, project_weight[p], team % orgs);
  }
  return tree;
}

// Realistic CPU and memory of one replica. Per GPU at most 16 cores and 108 GiB, so that eight
// GPUs' worth fits every node type of the scenarios (the smallest has 128 cores and 880 GiB).
void SetHostResources(Rng& rng, ResourceRequest& request) {
  if (request.gpu_milli >= kMilliPerGpu) {
    const int64_t gpus = request.GpuCount();
    request.cpu_milli = gpus * 1000 * rng.UniformInt(2, 16);
    request.memory_mib = gpus * 1024 * rng.UniformInt(16, 108);
  } else if (request.gpu_milli > 0) {
    // A share of a GPU: at most its share of a GPU's CPU and memory.
    const int64_t quarters = request.gpu_milli / 250;
    request.cpu_milli = quarters * 1000 * rng.UniformInt(1, 4);
    request.memory_mib = quarters * 1024 * rng.UniformInt(4, 27);
  } else {
    request.cpu_milli = 1000 * rng.UniformInt(1, 8);
    request.memory_mib = 1024 * rng.UniformInt(4, 32);
  }
}

void SetJobFacts(Rng& rng, Job& job) {
  static constexpr std::pair<int32_t, int64_t> kPriorities[] = {{0, 70}, {50, 20}, {100, 10}};
  job.priority = PickFrom<int32_t>(rng, kPriorities);
  job.preemptible = rng.Percent(80);
  if (rng.Percent(50)) {
    job.checkpointing.interval_s = 1800;
    job.checkpointing.checkpoint_cost_s = rng.UniformInt(10, 120);
    job.checkpointing.restore_time_s = rng.UniformInt(30, 300);
  }
  job.min_runtime_s = rng.Percent(30) ? 600 : 0;
  if (rng.Percent(60)) job.runtime_estimate_s = 60 * rng.UniformInt(5, 24 * 60);
}

// Per-node layout of a scenario pool, kept while filling it with running jobs.
struct PoolNode {
  size_t index;                  // into snapshot.nodes
  std::string domain;            // nvlink_domain value, or empty
  std::vector<int32_t> healthy;  // indices of healthy GPUs, in order
};

}  // namespace

ScenarioOptions ScenarioS1Options(uint64_t seed, double scale) {
  ScenarioOptions options;
  options.seed = seed;
  options.nodes = Scaled(5000, scale, 1);
  options.nodes_per_rack = 32;
  options.racks_per_block = 8;
  options.nvlink_rack_percent = 0;
  options.mixed_models = false;
  options.queues = 5;
  options.queue_levels = 2;
  options.busy_percent = 0;
  options.pending_jobs = Scaled(50'000, scale, 1);
  options.gang_percent = 0;
  options.faults = false;
  return options;
}

ScenarioOptions ScenarioS2Options(uint64_t seed, double scale) {
  ScenarioOptions options;
  options.seed = seed;
  options.nodes = Scaled(10'000, scale, 1);
  options.nodes_per_rack = 32;
  options.racks_per_block = 8;
  options.nvlink_rack_percent = 20;
  options.mixed_models = true;
  options.queues = Scaled(1000, scale, 13);
  options.queue_levels = 3;
  options.busy_percent = 60;
  options.pending_jobs = Scaled(100'000, scale, 1);
  options.gang_percent = 5;
  options.faults = true;
  return options;
}

Snapshot GenerateScenarioS1(uint64_t seed, double scale) {
  return GenerateScenario(ScenarioS1Options(seed, scale));
}

Snapshot GenerateScenarioS2(uint64_t seed, double scale) {
  return GenerateScenario(ScenarioS2Options(seed, scale));
}

Snapshot GenerateScenario(const ScenarioOptions& options) {
  Rng rng(options.seed);
  Snapshot snapshot;
  snapshot.now = 1'750'000'000;
  const bool nvlink = options.nvlink_rack_percent > 0;

  snapshot.gpu_models.push_back({kH100, 81920, {}});
  if (options.mixed_models) snapshot.gpu_models.push_back({kA100, 81920, {}});
  if (nvlink) snapshot.gpu_models.push_back({kGb200, 189'440, {}});
  snapshot.topology.levels = {"block", "rack"};
  if (nvlink) snapshot.topology.levels.push_back("nvlink_domain");

  // Nodes, rack by rack. An NVL72-style rack holds GB200 nodes; its first 27 nodes form three
  // nvlink_domain domains of 9 nodes (72 GPUs), the rest of the rack has no domain.
  constexpr int32_t kGpusPerNode = 8;
  constexpr int32_t kDomainNodes = 9;
  const int64_t rack_count = (options.nodes + options.nodes_per_rack - 1) / options.nodes_per_rack;
  std::vector<PoolNode> pool;
  std::vector<std::vector<size_t>> racks(rack_count);  // positions in `pool`
  snapshot.nodes.reserve(options.nodes);
  std::vector<std::pair<std::string, int64_t>> pool_milli;
  for (const GpuModel& model : snapshot.gpu_models) pool_milli.push_back({model.name, 0});
  for (int64_t r = 0; r < rack_count; ++r) {
    const bool nvl_rack = nvlink && rng.Percent(options.nvlink_rack_percent);
    const std::string_view model =
        nvl_rack ? kGb200 : (options.mixed_models && rng.Percent(40) ? kA100 : kH100);
    const int64_t first = r * options.nodes_per_rack;
    const int64_t last = std::min(options.nodes, first + options.nodes_per_rack);
    for (int64_t i = first; i < last; ++i) {
      Node node;
      node.id = fmt::format("node-{:05d}", i);
      node.gpu_model = std::string(model);
      int32_t island_size = kGpusPerNode;
      if (model == kH100 && rng.Percent(25)) island_size = 4;
      if (model == kA100 && rng.Percent(50)) island_size = 4;
      node.gpus.resize(kGpusPerNode);
      for (int32_t g = 0; g < kGpusPerNode; ++g) {
        node.gpus[g].index = g;
        node.gpus[g].island = g / island_size;
        node.gpus[g].healthy = !(options.faults && rng.UniformInt(0, 999) < 2);
      }
      if (model == kH100) {
        node.cpu_milli = 224'000;
        node.memory_mib = 2'000'000;
      } else if (model == kA100) {
        node.cpu_milli = 128'000;
        node.memory_mib = 1'000'000;
      } else {
        node.cpu_milli = 144'000;
        node.memory_mib = 900'000;
      }
      node.path.push_back({"block", fmt::format("b{:03d}", r / options.racks_per_block)});
      node.path.push_back({"rack", fmt::format("r{:04d}", r)});
      PoolNode layout{snapshot.nodes.size(), "", {}};
      const int64_t in_rack = i - first;
      if (nvl_rack && in_rack < 3 * kDomainNodes) {
        layout.domain = fmt::format("nvl{:04d}-{}", r, in_rack / kDomainNodes);
        node.path.push_back({"nvlink_domain", layout.domain});
      }
      if (options.faults) {
        const int64_t draw = rng.UniformInt(0, 999);
        if (draw < 5) {
          node.state = NodeState::kCordoned;
        } else if (draw < 7) {
          node.state = NodeState::kDraining;
        } else if (draw < 10) {
          node.state = NodeState::kDown;
        }
      }
      for (const Gpu& gpu : node.gpus) {
        if (gpu.healthy) layout.healthy.push_back(gpu.index);
      }
      for (auto& [name, milli] : pool_milli) {
        if (name == node.gpu_model) milli += 1000 * static_cast<int64_t>(layout.healthy.size());
      }
      racks[r].push_back(pool.size());
      pool.push_back(std::move(layout));
      snapshot.nodes.push_back(std::move(node));
    }
  }

  QueueTree tree = MakeQueues(rng, options, pool_milli, snapshot);
  const WeightedPicker leaf_picker(tree.leaf_weights);
  auto weights_of = [&tree](const std::vector<size_t>& leaves) {
    std::vector<int64_t> weights;
    for (size_t leaf : leaves) weights.push_back(tree.leaf_weights[leaf]);
    return weights;
  };
  const std::vector<int64_t> gpu_share_weights = weights_of(tree.shareable_gpu);
  const std::vector<int64_t> node_share_weights = weights_of(tree.shareable_node);
  std::optional<WeightedPicker> gpu_share_picker, node_share_picker;
  if (!gpu_share_weights.empty()) gpu_share_picker.emplace(gpu_share_weights);
  if (!node_share_weights.empty()) node_share_picker.emplace(node_share_weights);

  // Reserve 5% of the racks to one org (only its non-isolated leaves run there).
  std::vector<int64_t> rack_owner(rack_count, -1);
  if (options.faults && tree.orgs.size() > 1) {
    for (int64_t r = 0; r < rack_count; ++r) {
      if (!rng.Percent(5)) continue;
      const int64_t org = rng.UniformInt(0, static_cast<int64_t>(tree.orgs.size()) - 1);
      if (tree.org_shareable[org].empty()) continue;
      rack_owner[r] = org;
      for (size_t position : racks[r]) {
        snapshot.nodes[pool[position].index].owner_queues.push_back(tree.orgs[org]);
      }
    }
  }

  // Running jobs. Each node draws a target: full (all healthy GPUs), partial (1-7 of 8 on
  // average half) or idle, in proportions that make busy_percent of the GPUs busy on average.
  // Consecutive full nodes of a rack (or of an nvlink domain) sometimes run one multi-node gang.
  int64_t running_count = 0;
  auto new_running = [&](const std::string& queue, int64_t milli, int32_t replicas,
                         const std::string& model) {
    Job job;
    job.id = fmt::format("run-{:07d}", running_count++);
    job.queue = queue;
    job.state = JobState::kRunning;
    SetJobFacts(rng, job);
    job.start_time = snapshot.now - rng.UniformInt(60, 7 * 24 * 3600);
    job.submit_time = *job.start_time - rng.UniformInt(0, 3600);
    job.attained_service_s = snapshot.now - *job.start_time;
    if (job.checkpointing.interval_s > 0) {
      job.checkpointing.last_checkpoint_time =
          snapshot.now - rng.UniformInt(0, std::min<int64_t>(job.checkpointing.interval_s,
                                                             snapshot.now - *job.start_time));
    }
    TaskGroup group;
    group.replicas = replicas;
    group.request.gpu_milli = milli;
    if (milli < kMilliPerGpu) group.request.gpu_memory_mib = milli * 81920 / 1000;
    SetHostResources(rng, group.request);
    if (rng.Percent(50)) group.gpu_models = {model};
    job.groups.push_back(std::move(group));
    return job;
  };
  auto pick_leaf = [&](const std::optional<WeightedPicker>& picker,
                       const std::vector<size_t>& subset) -> std::string {
    return snapshot.queues[tree.leaves[subset[picker->Pick(rng)]]].id;
  };
  auto placement = [](const Node& node, std::vector<int32_t> gpus, int64_t milli) {
    ReplicaPlacement p;
    p.group = "main";
    p.node = node.id;
    p.gpus = std::move(gpus);
    p.gpu_milli = milli;
    return p;
  };
  if (options.busy_percent > 0) {
    const int64_t full_below = std::max<int64_t>(0, options.busy_percent - 10);
    const int64_t partial_below = std::min<int64_t>(100, options.busy_percent + 10);
    for (int64_t r = 0; r < rack_count; ++r) {
      // Targets for the rack's nodes.
      std::vector<int32_t> target(racks[r].size(), 0);
      for (size_t k = 0; k < racks[r].size(); ++k) {
        const PoolNode& layout = pool[racks[r][k]];
        const int32_t healthy = static_cast<int32_t>(layout.healthy.size());
        const int64_t draw = rng.UniformInt(0, 99);
        if (snapshot.nodes[layout.index].state == NodeState::kDown) continue;
        if (draw < full_below) {
          target[k] = healthy;
        } else if (draw < partial_below) {
          target[k] = static_cast<int32_t>(rng.UniformInt(1, 7)) * healthy / kGpusPerNode;
        }
      }
      const bool owned = rack_owner[r] >= 0;
      auto leaf_for = [&](bool whole_node, bool whole_gpus) {
        if (owned) {
          const std::vector<size_t>& leaves = tree.org_shareable[rack_owner[r]];
          return snapshot.queues[tree.leaves[leaves[rng.UniformInt(0, leaves.size() - 1)]]].id;
        }
        if (whole_node) return snapshot.queues[tree.leaves[leaf_picker.Pick(rng)]].id;
        if (whole_gpus && node_share_picker)
          return pick_leaf(node_share_picker, tree.shareable_node);
        return pick_leaf(gpu_share_picker, tree.shareable_gpu);
      };
      // Multi-node gangs over runs of full, fully healthy nodes in one domain.
      std::vector<bool> done(racks[r].size(), false);
      for (size_t k = 0; k < racks[r].size(); ++k) {
        auto full = [&](size_t at) {
          return at < racks[r].size() && target[at] == kGpusPerNode &&
                 pool[racks[r][at]].domain == pool[racks[r][k]].domain;
        };
        if (!full(k) || !rng.Percent(40)) continue;
        size_t end = k;
        const size_t want = static_cast<size_t>(rng.UniformInt(2, 8));
        while (end - k < want && full(end)) ++end;
        if (end - k < 2) continue;
        const Node& first_node = snapshot.nodes[pool[racks[r][k]].index];
        Job job = new_running(leaf_for(true, true), 8000, static_cast<int32_t>(end - k),
                              first_node.gpu_model);
        TaskGroup& group = job.groups.front();
        group.topology.replica_scope = ReplicaScope::kIsland;
        group.topology.gang_level = pool[racks[r][k]].domain.empty() ? "rack" : "nvlink_domain";
        for (size_t at = k; at < end; ++at) {
          const Node& node = snapshot.nodes[pool[racks[r][at]].index];
          job.placements.push_back(placement(node, pool[racks[r][at]].healthy, 1000));
          job.placements.back().replica = static_cast<int32_t>(at - k);
          done[at] = true;
        }
        snapshot.jobs.push_back(std::move(job));
        k = end - 1;
      }
      // Single-node jobs fill the rest of each target, largest first so that 2- and 4-GPU jobs
      // stay aligned inside islands of 4 and 8.
      for (size_t k = 0; k < racks[r].size(); ++k) {
        if (done[k] || target[k] == 0) continue;
        const PoolNode& layout = pool[racks[r][k]];
        const Node& node = snapshot.nodes[layout.index];
        std::vector<int32_t> sizes;  // whole GPUs per job; 0 = a GPU shared by fractions
        int32_t remaining = target[k];
        while (remaining > 0) {
          static constexpr std::pair<int32_t, int64_t> kSizes[] = {
              {8, 30}, {4, 20}, {2, 15}, {1, 20}, {0, 15}};
          const int32_t size = PickFrom<int32_t>(rng, kSizes);
          if (size > remaining) continue;
          sizes.push_back(size);
          remaining -= std::max(size, 1);
        }
        std::sort(sizes.rbegin(), sizes.rend());
        size_t cursor = 0;
        for (int32_t size : sizes) {
          if (size == 0) {
            // One GPU shared by 1-4 fractional jobs of 250 or 500 milli.
            const int32_t gpu = layout.healthy[cursor++];
            int64_t used = 0;
            const int64_t jobs = rng.UniformInt(1, 4);
            for (int64_t f = 0; f < jobs; ++f) {
              const int64_t milli = used + 500 <= 1000 && rng.Percent(50) ? 500 : 250;
              if (used + milli > 1000) break;
              used += milli;
              Job job = new_running(leaf_for(false, false), milli, 1, node.gpu_model);
              job.placements.push_back(placement(node, {gpu}, milli));
              snapshot.jobs.push_back(std::move(job));
            }
            continue;
          }
          std::vector<int32_t> gpus(layout.healthy.begin() + cursor,
                                    layout.healthy.begin() + cursor + size);
          cursor += size;
          Job job = new_running(leaf_for(size == kGpusPerNode && target[k] == kGpusPerNode, true),
                                1000 * size, 1, node.gpu_model);
          bool one_island = true;
          for (int32_t g : gpus) one_island &= node.gpus[g].island == node.gpus[gpus[0]].island;
          if (one_island && size > 1)
            job.groups.front().topology.replica_scope = ReplicaScope::kIsland;
          job.placements.push_back(placement(node, std::move(gpus), 1000));
          snapshot.jobs.push_back(std::move(job));
        }
      }
    }
  }

  // Pending jobs.
  std::vector<std::vector<std::string>> model_lists;
  std::vector<int64_t> model_list_weights;
  if (options.mixed_models) {
    model_lists = {{}, {kH100}, {kH100, kA100}, {kA100}};
    model_list_weights = {40, 30, 15, 10};
    if (nvlink) {
      model_lists.push_back({kGb200});
      model_list_weights.push_back(5);
    }
  } else {
    model_lists = {{}, {kH100}};
    model_list_weights = {70, 30};
  }
  static constexpr std::pair<int64_t, int64_t> kMilli[] = {{250, 10},  {500, 10},  {1000, 35},
                                                           {2000, 20}, {4000, 13}, {8000, 12}};
  static constexpr std::pair<int32_t, int64_t> kGangNodes[] = {{2, 40}, {4, 30}, {8, 20}, {16, 10}};
  for (int64_t j = 0; j < options.pending_jobs; ++j) {
    Job job;
    job.id = fmt::format("job-{:07d}", j);
    job.queue = snapshot.queues[tree.leaves[leaf_picker.Pick(rng)]].id;
    job.submit_time = snapshot.now - 2 * (options.pending_jobs - j) - rng.UniformInt(0, 1);
    SetJobFacts(rng, job);
    TaskGroup group;
    group.gpu_models = model_lists[rng.PickWeighted(model_list_weights)];
    if (rng.Percent(options.gang_percent)) {
      // A multi-node gang of whole 8-GPU islands, in one rack, one NVLink domain or (preferably)
      // one block.
      group.name = "worker";
      group.replicas = PickFrom<int32_t>(rng, kGangNodes);
      group.request.gpu_milli = 8000;
      group.topology.replica_scope = ReplicaScope::kIsland;
      const int64_t draw = rng.UniformInt(0, 99);
      if (nvlink && draw < 30) {
        group.topology.gang_level = "nvlink_domain";
        group.replicas = std::min(group.replicas, kDomainNodes);
        group.gpu_models = {kGb200};
      } else if (draw < 80) {
        group.topology.gang_level = "rack";
      } else {
        group.topology.gang_level = "block";
        group.topology.gang_strictness = Strictness::kPreferred;
      }
      if (rng.Percent(20)) group.min_replicas = group.replicas / 2;
      SetHostResources(rng, group.request);
      if (rng.Percent(20)) {
        TaskGroup launcher;
        launcher.name = "launcher";
        launcher.topology = group.topology;
        launcher.topology.replica_scope = ReplicaScope::kNode;
        launcher.gpu_models = group.gpu_models;
        SetHostResources(rng, launcher.request);
        job.groups.push_back(std::move(launcher));
      }
    } else {
      group.request.gpu_milli = PickFrom<int64_t>(rng, kMilli);
      if (group.request.gpu_milli < kMilliPerGpu) {
        group.request.gpu_memory_mib = group.request.gpu_milli * 81920 / 1000;
      } else if (group.request.gpu_milli > kMilliPerGpu) {
        group.topology.replica_scope = ReplicaScope::kIsland;
        group.topology.replica_strictness =
            rng.Percent(60) ? Strictness::kRequired : Strictness::kPreferred;
      }
      SetHostResources(rng, group.request);
    }
    job.groups.insert(job.groups.begin(), std::move(group));
    snapshot.jobs.push_back(std::move(job));
  }
  return snapshot;
}

}  // namespace gpupool::testing

namespace gpupool::testing {

void AddRandomOperations(uint64_t seed, Snapshot& snapshot, Policy& policy) {
  uint64_t state = seed ^ 0x5107a11c0ffee000ULL;
  Rng rng(SplitMix64(state));
  for (Node& node : snapshot.nodes) {
    if (node.gpus.empty() || !rng.Percent(20)) continue;
    node.spot = true;
    if (rng.Percent(33)) {
      node.reclaiming = true;
      if (rng.Percent(50)) node.reclaim_deadline = snapshot.now + rng.UniformInt(0, 300);
    }
  }
  for (Job& job : snapshot.jobs) job.spot_tolerant = rng.Percent(15);
  const int64_t intervals[] = {0, 1800, 3600};
  policy.spot.max_checkpoint_interval_s = intervals[rng.UniformInt(0, 2)];
  if (!rng.Percent(60)) return;
  std::vector<std::string> models;
  for (const Node& node : snapshot.nodes) {
    if (!node.gpus.empty()) models.push_back(node.gpu_model);
  }
  std::sort(models.begin(), models.end());
  models.erase(std::unique(models.begin(), models.end()), models.end());
  if (models.empty()) return;
  const int64_t rules = rng.UniformInt(1, 2);
  for (int64_t i = 0; i < rules; ++i) {
    HeadroomRule rule;
    rule.gpu_model = models[rng.UniformInt(0, static_cast<int64_t>(models.size()) - 1)];
    rule.shape = static_cast<HeadroomShape>(rng.UniformInt(0, 2));
    rule.count = rng.UniformInt(1, 4);
    rule.min_priority = static_cast<int32_t>(rng.UniformInt(1, 10));
    rule.restore = rng.Percent(50);
    const bool duplicate =
        std::any_of(policy.headroom.begin(), policy.headroom.end(), [&](const HeadroomRule& r) {
          return r.gpu_model == rule.gpu_model && r.shape == rule.shape;
        });
    if (!duplicate) policy.headroom.push_back(rule);
  }
}

}  // namespace gpupool::testing
