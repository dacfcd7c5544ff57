// Tests of the seeded snapshot generator shared by property tests and benchmarks: every snapshot
// it makes is valid, the same seed gives the same snapshot, and the snapshots exercise what the
// generator promises.
#include "testing/generator.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "gpupool/apply.h"
#include "gpupool/schedule.h"
#include "gtest/gtest.h"

namespace gpupool::testing {
namespace {

constexpr uint64_t kRandomSeeds = 2000;

// Every field of a snapshot, in list order, as text: two snapshots are identical exactly when
// their descriptions are.
std::string Describe(const Snapshot& s) {
  std::string out = fmt::format("now={}\nlevels:", s.now);
  for (const std::string& level : s.topology.levels) out += " " + level;
  out += "\n";
  for (const GpuModel& m : s.gpu_models) {
    out += fmt::format("model {} {}", m.name, m.memory_mib);
    for (const WorkloadSpeed& speed : m.speeds) {
      out += fmt::format(" {}={}", speed.workload_class, speed.speed_milli);
    }
    out += "\n";
  }
  for (const Node& n : s.nodes) {
    out += fmt::format("node {} {} cpu={} mem={} state={}", n.id, n.gpu_model, n.cpu_milli,
                       n.memory_mib, static_cast<int>(n.state));
    for (const Gpu& g : n.gpus) out += fmt::format(" g{}/{}/{}", g.index, g.island, g.healthy);
    for (const TopologyLabel& l : n.path) out += fmt::format(" {}={}", l.level, l.value);
    for (const TopologyLabel& l : n.labels) out += fmt::format(" label:{}={}", l.level, l.value);
    for (const std::string& o : n.owner_queues) out += " owner:" + o;
    out += "\n";
  }
  for (const Queue& q : s.queues) {
    out +=
        fmt::format("queue {} parent={} prio={} borrow={} lend={} iso={} budget={} usage={}", q.id,
                    q.parent, q.priority, q.can_borrow, q.can_lend, static_cast<int>(q.isolation),
                    q.budget_milli_gpu_seconds.value_or(-1), q.decayed_usage_milli_gpu_seconds);
    for (const Quota& quota : q.quotas) {
      out += fmt::format(" [{} g={} l={} w={}]", quota.gpu_model, quota.guaranteed_milli,
                         quota.limit_milli.value_or(-1), quota.over_quota_weight);
    }
    out += "\n";
  }
  for (const Job& j : s.jobs) {
    out += fmt::format(
        "job {} q={} prio={} submit={} preempt={} ckpt={}/{}/{}/{} minrt={} est={} state={} "
        "start={} attained={}\n",
        j.id, j.queue, j.priority, j.submit_time, j.preemptible, j.checkpointing.interval_s,
        j.checkpointing.last_checkpoint_time.value_or(-1), j.checkpointing.checkpoint_cost_s,
        j.checkpointing.restore_time_s, j.min_runtime_s, j.runtime_estimate_s.value_or(-1),
        static_cast<int>(j.state), j.start_time.value_or(-1), j.attained_service_s);
    for (const TaskGroup& g : j.groups) {
      out += fmt::format(
          "  group {} r={} min={} req={}/{}/{}/{} scope={}/{} gang={}/{} models:", g.name,
          g.replicas, g.min_replicas.value_or(-1), g.request.gpu_milli, g.request.gpu_memory_mib,
          g.request.cpu_milli, g.request.memory_mib, static_cast<int>(g.topology.replica_scope),
          static_cast<int>(g.topology.replica_strictness), g.topology.gang_level.value_or("-"),
          static_cast<int>(g.topology.gang_strictness));
      for (const std::string& m : g.gpu_models) out += " " + m;
      out += "\n";
    }
    for (const ReplicaPlacement& p : j.placements) {
      out += fmt::format("  at {}/{} {} milli={} gpus:", p.group, p.replica, p.node, p.gpu_milli);
      for (int32_t g : p.gpus) out += fmt::format(" {}", g);
      out += "\n";
    }
  }
  return out;
}

TEST(RngTest, SequenceIsPinned) {
  // xoshiro256** seeded through splitmix64 is fully specified: these values must never change,
  // or every seeded test and benchmark silently changes its input.
  Rng rng(0);
  const uint64_t first = rng.Next();
  const uint64_t second = rng.Next();
  Rng again(0);
  EXPECT_EQ(again.Next(), first);
  EXPECT_EQ(again.Next(), second);
  EXPECT_EQ(first, 0x99ec5f36cb75f2b4ULL);
  EXPECT_EQ(second, 0xbf6e1f784956452aULL);
  uint64_t state = 0;
  EXPECT_EQ(SplitMix64(state), 0xe220a8397b1dcdafULL);
}

TEST(RngTest, UniformIntStaysInRangeAndHitsBothEnds) {
  Rng rng(7);
  std::set<int64_t> seen;
  for (int i = 0; i < 10'000; ++i) {
    const int64_t v = rng.UniformInt(-3, 3);
    ASSERT_GE(v, -3);
    ASSERT_LE(v, 3);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 7u);
  EXPECT_EQ(rng.UniformInt(5, 5), 5);
}

TEST(RngTest, WeightedPicksNeverTakeZeroWeights) {
  Rng rng(11);
  const std::vector<int64_t> weights = {0, 3, 0, 1, 0};
  const WeightedPicker picker(weights);
  std::map<size_t, int> counts, picker_counts;
  for (int i = 0; i < 4000; ++i) {
    ++counts[rng.PickWeighted(weights)];
    ++picker_counts[picker.Pick(rng)];
  }
  for (const auto& c : {counts, picker_counts}) {
    EXPECT_EQ(c.size(), 2u);
    EXPECT_GT(c.at(1), c.at(3));  // weight 3 against weight 1
  }
}

TEST(GeneratorTest, RandomSnapshotsValidate) {
  for (uint64_t seed = 0; seed < kRandomSeeds; ++seed) {
    const Snapshot snapshot = GenerateRandomSnapshot(seed);
    const absl::Status status = ValidateSnapshot(snapshot);
    ASSERT_TRUE(status.ok()) << "seed " << seed << ": " << status << "\n" << Describe(snapshot);
  }
}

TEST(GeneratorTest, SameSeedGivesSameSnapshot) {
  std::set<std::string> distinct;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const std::string first = Describe(GenerateRandomSnapshot(seed));
    EXPECT_EQ(first, Describe(GenerateRandomSnapshot(seed))) << "seed " << seed;
    distinct.insert(first);
  }
  EXPECT_EQ(distinct.size(), 200u) << "different seeds should give different snapshots";
}

// What the generator promises to exercise, counted over all seeds: each must occur.
TEST(GeneratorTest, RandomSnapshotsCoverTheModel) {
  std::map<std::string, int> seen;
  for (uint64_t seed = 0; seed < kRandomSeeds; ++seed) {
    const Snapshot s = GenerateRandomSnapshot(seed);
    std::set<std::string> node_models;
    if (s.topology.levels.empty()) ++seen["no topology"];
    if (s.gpu_models.size() >= 3) ++seen["3+ models"];
    for (const Node& n : s.nodes) {
      node_models.insert(n.gpu_model);
      if (n.gpus.empty()) ++seen["cpu-only node"];
      if (n.state == NodeState::kCordoned) ++seen["cordoned"];
      if (n.state == NodeState::kDraining) ++seen["draining"];
      if (n.state == NodeState::kDown) ++seen["down"];
      if (!n.owner_queues.empty()) ++seen["owner queues"];
      if (!s.topology.levels.empty() && n.path.size() < s.topology.levels.size()) {
        ++seen["node lacking a level"];
      }
      std::set<int32_t> islands;
      for (const Gpu& g : n.gpus) {
        islands.insert(g.island);
        if (!g.healthy) ++seen["unhealthy gpu"];
      }
      if (islands.size() > 1) ++seen["several islands"];
    }
    for (const GpuModel& m : s.gpu_models) {
      if (!node_models.contains(m.name)) ++seen["declared model without nodes"];
    }
    for (const Queue& q : s.queues) {
      if (!q.parent.empty()) ++seen["child queue"];
      if (q.isolation == Isolation::kExclusiveGpu) ++seen["exclusive gpu"];
      if (q.isolation == Isolation::kExclusiveNode) ++seen["exclusive node"];
      for (const Quota& quota : q.quotas) {
        if (quota.gpu_model == kAnyGpuModel) ++seen["* quota"];
        if (quota.gpu_model != kAnyGpuModel) ++seen["model quota"];
        if (quota.limit_milli) ++seen["limit"];
      }
    }
    for (const Job& j : s.jobs) {
      ++seen[j.state == JobState::kRunning ? "running" : "pending"];
      if (j.groups.size() >= 3) ++seen["3 groups"];
      for (const TaskGroup& g : j.groups) {
        if (g.request.gpu_milli == 250) ++seen["250 milli"];
        if (g.request.gpu_milli == 8000) ++seen["8000 milli"];
        if (g.request.gpu_milli == 0) ++seen["cpu-only group"];
        if (g.request.gpu_memory_mib > 0) ++seen["gpu memory"];
        if (g.min_replicas && *g.min_replicas < g.replicas) {
          ++seen[j.state == JobState::kRunning ? "running elastic" : "pending elastic"];
        }
        if (std::find(g.gpu_models.begin(), g.gpu_models.end(), "MI300X") != g.gpu_models.end()) {
          ++seen["undeclared model wanted"];
        }
        if (g.gpu_models.size() >= 2) ++seen["preference list"];
        if (g.topology.replica_scope == ReplicaScope::kIsland) {
          ++seen[g.topology.replica_strictness == Strictness::kRequired ? "island required"
                                                                        : "island preferred"];
        }
        if (g.topology.gang_level) {
          ++seen["gang " + *g.topology.gang_level];
          if (g.topology.gang_strictness == Strictness::kRequired) ++seen["gang required"];
          if (g.topology.gang_strictness == Strictness::kPreferred) ++seen["gang preferred"];
        }
      }
      for (const ReplicaPlacement& p : j.placements) {
        ++seen[p.gpu_milli == 0 ? "placement milli 0" : "placement milli set"];
      }
      std::set<std::string> nodes;
      for (const ReplicaPlacement& p : j.placements) nodes.insert(p.node);
      if (nodes.size() > 1) ++seen["running on several nodes"];
    }
  }
  for (const char* feature : {"no topology",
                              "3+ models",
                              "cpu-only node",
                              "cordoned",
                              "draining",
                              "down",
                              "owner queues",
                              "node lacking a level",
                              "unhealthy gpu",
                              "several islands",
                              "declared model without nodes",
                              "child queue",
                              "exclusive gpu",
                              "exclusive node",
                              "* quota",
                              "model quota",
                              "limit",
                              "running",
                              "pending",
                              "3 groups",
                              "250 milli",
                              "8000 milli",
                              "cpu-only group",
                              "gpu memory",
                              "running elastic",
                              "pending elastic",
                              "undeclared model wanted",
                              "preference list",
                              "island required",
                              "island preferred",
                              "gang node",
                              "gang rack",
                              "gang block",
                              "gang required",
                              "gang preferred",
                              "placement milli 0",
                              "placement milli set",
                              "running on several nodes"}) {
    EXPECT_GT(seen[feature], 0) << feature;
  }
  // Plenty of both states, so property tests see real contention.
  EXPECT_GT(seen["running"], 2000);
  EXPECT_GT(seen["pending"], 5000);
}

// Checks that ValidateSnapshot does not make (GPU memory, node state, health, owners, models,
// island scope), so that running jobs look like what a correct scheduler would have produced.
TEST(GeneratorTest, RunningJobsLookWellPlaced) {
  for (uint64_t seed = 0; seed < kRandomSeeds; ++seed) {
    const Snapshot s = GenerateRandomSnapshot(seed);
    std::map<std::string, const Node*> nodes;
    for (const Node& n : s.nodes) nodes[n.id] = &n;
    std::map<std::string, int64_t> model_memory;
    for (const GpuModel& m : s.gpu_models) model_memory[m.name] = m.memory_mib;
    std::map<std::string, std::string> parent;
    for (const Queue& q : s.queues) parent[q.id] = q.parent;
    std::map<std::pair<std::string, int32_t>, int64_t> gpu_memory;
    for (const Job& j : s.jobs) {
      if (j.state != JobState::kRunning) continue;
      std::set<std::string> models;
      for (const ReplicaPlacement& p : j.placements) {
        const TaskGroup& group =
            *std::find_if(j.groups.begin(), j.groups.end(),
                          [&](const TaskGroup& g) { return g.name == p.group; });
        const Node& node = *nodes.at(p.node);
        SCOPED_TRACE(fmt::format("seed {} job {} node {}", seed, j.id, node.id));
        EXPECT_NE(node.state, NodeState::kDown);
        if (!node.owner_queues.empty()) {
          bool allowed = false;
          for (std::string q = j.queue; !q.empty(); q = parent.at(q)) {
            allowed |= std::find(node.owner_queues.begin(), node.owner_queues.end(), q) !=
                       node.owner_queues.end();
          }
          EXPECT_TRUE(allowed);
        }
        if (!p.gpus.empty()) models.insert(node.gpu_model);
        std::set<int32_t> islands;
        for (int32_t index : p.gpus) {
          const Gpu& gpu = *std::find_if(node.gpus.begin(), node.gpus.end(),
                                         [&](const Gpu& g) { return g.index == index; });
          EXPECT_TRUE(gpu.healthy);
          islands.insert(gpu.island);
          int64_t& used = gpu_memory[std::make_pair(node.id, index)];
          used += group.request.gpu_milli >= kMilliPerGpu ? model_memory.at(node.gpu_model)
                                                          : group.request.gpu_memory_mib;
          EXPECT_LE(used, model_memory.at(node.gpu_model));
        }
        if (group.topology.replica_scope == ReplicaScope::kIsland) {
          EXPECT_LE(islands.size(), 1u);
        }
        // Running gangs are never bound to a domain they might not respect.
        if (group.topology.gang_level) {
          EXPECT_EQ(group.topology.gang_strictness, Strictness::kPreferred);
        }
      }
      EXPECT_LE(models.size(), 1u) << "seed " << seed << " job " << j.id;
      EXPECT_TRUE(j.start_time && *j.start_time >= j.submit_time && *j.start_time <= s.now);
    }
  }
}

TEST(ScenarioTest, S1HasTheShapeOfE3) {
  const Snapshot s = GenerateScenarioS1(/*seed=*/1, /*scale=*/0.1);
  ASSERT_TRUE(ValidateSnapshot(s).ok()) << ValidateSnapshot(s);
  EXPECT_EQ(s.nodes.size(), 500u);
  EXPECT_EQ(s.jobs.size(), 5000u);
  ASSERT_EQ(s.gpu_models.size(), 1u);
  EXPECT_EQ(s.gpu_models[0].name, "H100-80GB");
  std::map<std::string, int> rack_sizes;
  for (const Node& n : s.nodes) {
    EXPECT_EQ(n.gpus.size(), 8u);
    EXPECT_EQ(n.state, NodeState::kReady);
    for (const TopologyLabel& l : n.path) {
      if (l.level == "rack") ++rack_sizes[l.value];
    }
  }
  EXPECT_EQ(rack_sizes.size(), 16u);  // 15 racks of 32 and one of 20
  for (const auto& [rack, size] : rack_sizes) EXPECT_LE(size, 32) << rack;
  std::map<int64_t, int> sizes;
  for (const Job& j : s.jobs) {
    EXPECT_EQ(j.state, JobState::kPending);
    ASSERT_EQ(j.groups.size(), 1u);
    ++sizes[j.groups[0].request.gpu_milli];
  }
  for (int64_t milli : {250, 500, 1000, 2000, 4000, 8000}) EXPECT_GT(sizes[milli], 200) << milli;
  EXPECT_EQ(sizes.size(), 6u);
}

TEST(ScenarioTest, S2HasTheShapeOfE3) {
  const Snapshot s = GenerateScenarioS2(/*seed=*/1, /*scale=*/0.1);
  ASSERT_TRUE(ValidateSnapshot(s).ok()) << ValidateSnapshot(s);
  EXPECT_EQ(s.nodes.size(), 1000u);
  EXPECT_EQ(s.queues.size(), 100u);
  std::map<std::string, const Queue*> queues;
  for (const Queue& q : s.queues) queues[q.id] = &q;
  int max_depth = 0;
  for (const Queue& q : s.queues) {
    int depth = 1;
    for (const Queue* at = &q; !at->parent.empty(); at = queues.at(at->parent)) ++depth;
    max_depth = std::max(max_depth, depth);
  }
  EXPECT_EQ(max_depth, 3);

  int64_t capacity = 0, busy = 0, pending = 0, gangs = 0, nvl_nodes = 0;
  for (const Node& n : s.nodes) {
    for (const Gpu& g : n.gpus) capacity += g.healthy ? kMilliPerGpu : 0;
    for (const TopologyLabel& l : n.path) nvl_nodes += l.level == "nvlink_domain";
  }
  for (const Job& j : s.jobs) {
    if (j.state == JobState::kPending) {
      ++pending;
      for (const TaskGroup& g : j.groups) {
        if (g.replicas > 1 && g.topology.gang_level) ++gangs;
      }
      continue;
    }
    for (const ReplicaPlacement& p : j.placements) {
      busy += static_cast<int64_t>(p.gpus.size()) * p.gpu_milli;
    }
  }
  EXPECT_EQ(pending, 10'000);
  EXPECT_GT(gangs, 300);
  // 60% busy, up to the noise of 1,000 nodes.
  EXPECT_GT(busy * 100, capacity * 54);
  EXPECT_LT(busy * 100, capacity * 66);
  // NVL72 racks are 20% of racks; 27 of their 32 nodes are in a domain.
  EXPECT_GT(nvl_nodes, 60);
  EXPECT_LT(nvl_nodes, 300);
}

TEST(ScenarioTest, ScenariosAreDeterministicAndValidAtFullScale) {
  const Snapshot s1 = GenerateScenarioS1(3);
  EXPECT_TRUE(ValidateSnapshot(s1).ok()) << ValidateSnapshot(s1);
  EXPECT_EQ(s1.nodes.size(), 5000u);
  EXPECT_EQ(s1.jobs.size(), 50'000u);
  const Snapshot s2 = GenerateScenarioS2(3);
  EXPECT_TRUE(ValidateSnapshot(s2).ok()) << ValidateSnapshot(s2);
  EXPECT_EQ(s2.nodes.size(), 10'000u);
  EXPECT_EQ(s2.queues.size(), 1000u);
  EXPECT_EQ(Describe(GenerateScenarioS2(3, 0.05)), Describe(GenerateScenarioS2(3, 0.05)));
  EXPECT_NE(Describe(GenerateScenarioS2(3, 0.05)), Describe(GenerateScenarioS2(4, 0.05)));
}

// The benchmark scenarios, shrunk, go through Schedule(): no error, every pending job gets
// exactly one outcome, and the snapshot with the starts applied is still valid (nothing
// over-committed). S2 seed 39 at scale 0.004 (40 nodes, 488 jobs) is the smallest input that
// crashed Diagnose when its per-(queue, model) cache handed out pointers into a flat_hash_map
// that later insertions moved.
TEST(ScenarioScheduleTest, ShrunkScenariosScheduleCleanly) {
  struct Case {
    int scenario;
    double scale;
    uint64_t seed;
  };
  std::vector<Case> cases = {{2, 0.004, 39}, {1, 0.01, 1}, {1, 0.01, 2}};
  for (uint64_t seed = 1; seed <= 20; ++seed) cases.push_back({2, 0.007, seed});
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("S{} scale {} seed {}", c.scenario, c.scale, c.seed));
    Snapshot snapshot =
        c.scenario == 1 ? GenerateScenarioS1(c.seed, c.scale) : GenerateScenarioS2(c.seed, c.scale);
    const absl::StatusOr<Decisions> decisions = Schedule(snapshot, Policy{});
    ASSERT_TRUE(decisions.ok()) << decisions.status();
    std::map<std::string, int> outcomes;
    for (const StartDecision& start : decisions->starts) ++outcomes[start.job];
    for (const PendingDecision& pending : decisions->pending) ++outcomes[pending.job];
    int64_t pending_jobs = 0;
    for (const Job& job : snapshot.jobs) {
      if (job.state != JobState::kPending) continue;
      ++pending_jobs;
      EXPECT_EQ(outcomes[job.id], 1) << job.id;
    }
    EXPECT_EQ(static_cast<int64_t>(outcomes.size()), pending_jobs);
    ASSERT_TRUE(ApplyStarts(*decisions, snapshot).ok());
    const absl::Status after = ValidateSnapshot(snapshot);
    EXPECT_TRUE(after.ok()) << after;
  }
}

}  // namespace
}  // namespace gpupool::testing
