// GenerateRandomSnapshot, the small varied snapshots of the property tests, and the facts added
// on top of them from their own seeded streams: AddOperationsFacts and AddRandomOperations.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "testing/generator.h"
#include "testing/generator_internal.h"

namespace gpupool::testing {

namespace {

using generator_internal::FirstFit;
using generator_internal::PickFrom;

struct ModelSpec {
  const char* name;
  int64_t memory_mib;
};
constexpr ModelSpec kCatalog[] = {
    {"A100-40GB", 40960}, {"A100-80GB", 81920}, {"H100-80GB", 81920},
    {"L4", 24576},        {"V100-16GB", 16384}, {"B200", 184320},
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
    // Drawn and not used: every generated queue lends. The draw keeps the stream of draws as it
    // was before can_lend was acted on, so that the seeds pinned in tests and the figures
    // measured on them still mean the same snapshots; lending_test.cc covers queues that do not.
    static_cast<void>(rng.Percent(80));
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
