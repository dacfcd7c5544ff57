// The large E3 scenarios of EVALUATION.md for benchmarks: GenerateScenario and its presets S1
// (burst) and S2 (headline).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "testing/generator.h"
#include "testing/generator_internal.h"

namespace gpupool::testing {

namespace {

using generator_internal::PickFrom;
using generator_internal::RoundDown;

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
    // Drawn and not used: every generated queue lends (as in GenerateRandomSnapshot(), so that
    // the scenarios stay the ones measured before can_lend was acted on).
    static_cast<void>(rng.Percent(5));
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
