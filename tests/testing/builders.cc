#include "testing/builders.h"

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "testing/generator.h"

namespace gpupool::testing {

GpuModel MakeModel(std::string name, int64_t memory_mib) {
  GpuModel model;
  model.name = std::move(name);
  model.memory_mib = memory_mib;
  return model;
}

Node MakeNode(std::string id, std::string gpu_model, int32_t gpus, std::vector<int32_t> islands,
              int64_t cpu_milli, int64_t memory_mib) {
  Node node = MakeCpuNode(std::move(id), cpu_milli, memory_mib);
  node.gpu_model = std::move(gpu_model);
  if (islands.empty()) islands.push_back(gpus);
  int32_t index = 0;
  for (int32_t island = 0; island < static_cast<int32_t>(islands.size()); ++island) {
    for (int32_t i = 0; i < islands[static_cast<size_t>(island)] && index < gpus; ++i) {
      node.gpus.push_back(Gpu{.index = index++, .island = island, .healthy = true});
    }
  }
  // Sizes that add up to less than `gpus` leave the rest in one more island.
  const int32_t last_island = static_cast<int32_t>(islands.size());
  while (index < gpus) node.gpus.push_back(Gpu{.index = index++, .island = last_island});
  return node;
}

Node MakeCpuNode(std::string id, int64_t cpu_milli, int64_t memory_mib) {
  Node node;
  node.id = std::move(id);
  node.cpu_milli = cpu_milli;
  node.memory_mib = memory_mib;
  return node;
}

Queue MakeQueue(std::string id, std::string parent) {
  Queue queue;
  queue.id = std::move(id);
  queue.parent = std::move(parent);
  return queue;
}

Quota MakeLimit(std::string gpu_model, int64_t limit_milli) {
  Quota quota;
  quota.gpu_model = std::move(gpu_model);
  quota.limit_milli = limit_milli;
  return quota;
}

ResourceRequest GpuRequest(int64_t gpu_milli, int64_t cpu_milli, int64_t memory_mib,
                           int64_t gpu_memory_mib) {
  return ResourceRequest{.gpu_milli = gpu_milli,
                         .gpu_memory_mib = gpu_memory_mib,
                         .cpu_milli = cpu_milli,
                         .memory_mib = memory_mib};
}

TaskGroup MakeGroup(std::string name, ResourceRequest request, int32_t replicas) {
  TaskGroup group;
  group.name = std::move(name);
  group.request = request;
  group.replicas = replicas;
  return group;
}

Job MakePendingJob(std::string id, std::string queue, ResourceRequest request, int32_t replicas) {
  Job job;
  job.id = std::move(id);
  job.queue = std::move(queue);
  job.groups.push_back(MakeGroup("main", request, replicas));
  return job;
}

ReplicaPlacement Placement(std::string node, std::vector<int32_t> gpus, int32_t replica,
                           std::string group, int64_t gpu_milli) {
  ReplicaPlacement placement;
  placement.group = std::move(group);
  placement.replica = replica;
  placement.node = std::move(node);
  placement.gpus = std::move(gpus);
  placement.gpu_milli = gpu_milli;
  return placement;
}

Job MakeRunningJob(std::string id, std::string queue, ResourceRequest request,
                   std::vector<ReplicaPlacement> placements, int64_t start_time) {
  Job job = MakePendingJob(std::move(id), std::move(queue), request,
                           static_cast<int32_t>(placements.size()));
  job.state = JobState::kRunning;
  job.start_time = start_time;
  job.placements = std::move(placements);
  return job;
}

SnapshotBuilder& SnapshotBuilder::Now(int64_t now) {
  snapshot_.now = now;
  return *this;
}

SnapshotBuilder& SnapshotBuilder::Levels(std::vector<std::string> levels) {
  snapshot_.topology.levels = std::move(levels);
  return *this;
}

SnapshotBuilder& SnapshotBuilder::Model(GpuModel model) {
  snapshot_.gpu_models.push_back(std::move(model));
  return *this;
}

SnapshotBuilder& SnapshotBuilder::Model(std::string name, int64_t memory_mib) {
  return Model(MakeModel(std::move(name), memory_mib));
}

SnapshotBuilder& SnapshotBuilder::Node(gpupool::Node node) {
  snapshot_.nodes.push_back(std::move(node));
  return *this;
}

SnapshotBuilder& SnapshotBuilder::Queue(gpupool::Queue queue) {
  snapshot_.queues.push_back(std::move(queue));
  return *this;
}

SnapshotBuilder& SnapshotBuilder::Queue(std::string id, std::string parent) {
  return Queue(MakeQueue(std::move(id), std::move(parent)));
}

SnapshotBuilder& SnapshotBuilder::Job(gpupool::Job job) {
  snapshot_.jobs.push_back(std::move(job));
  return *this;
}

const StartDecision* FindStart(const Decisions& decisions, std::string_view job) {
  for (const StartDecision& start : decisions.starts) {
    if (start.job == job) return &start;
  }
  return nullptr;
}

const PendingDecision* FindPending(const Decisions& decisions, std::string_view job) {
  for (const PendingDecision& pending : decisions.pending) {
    if (pending.job == job) return &pending;
  }
  return nullptr;
}

std::vector<std::string> StartedJobs(const Decisions& decisions) {
  std::vector<std::string> ids;
  for (const StartDecision& start : decisions.starts) ids.push_back(start.job);
  return ids;
}

std::vector<std::string> PendingJobs(const Decisions& decisions) {
  std::vector<std::string> ids;
  for (const PendingDecision& pending : decisions.pending) ids.push_back(pending.job);
  return ids;
}

namespace {

std::string PlacementText(const ReplicaPlacement& p) {
  return fmt::format("{}/{}@{}[{}]x{}", p.group, p.replica, p.node, fmt::join(p.gpus, ","),
                     p.gpu_milli);
}

std::string PlacementsText(const std::vector<ReplicaPlacement>& placements) {
  std::vector<std::string> parts;
  for (const ReplicaPlacement& p : placements) parts.push_back(PlacementText(p));
  return fmt::format("{}", fmt::join(parts, " "));
}

std::string PendingText(const PendingDecision& p) {
  return fmt::format("pending {} reason={} queue={} gpu_model={} shortfall={} detail={}", p.job,
                     static_cast<int>(p.reason), p.queue, p.gpu_model, p.shortfall_milli, p.detail);
}

}  // namespace

std::string DecisionsToText(const Decisions& d) {
  std::string out = fmt::format("policy {} v{} scorer {} fingerprint {}\n", d.policy_name,
                                d.policy_version, d.scorer, d.input_fingerprint);
  for (const StartDecision& s : d.starts) {
    out += fmt::format("start {} {}\n", s.job, PlacementsText(s.placements));
  }
  for (const PreemptDecision& p : d.preemptions) {
    out += fmt::format("preempt {} for {} reason={} lost={}\n", p.job, p.for_job, p.reason,
                       p.lost_milli_gpu_seconds);
  }
  for (const MigrateDecision& m : d.migrations) {
    out += fmt::format("migrate {} from {} to {}\n", m.job, PlacementsText(m.from),
                       PlacementsText(m.to));
  }
  for (const ResizeDecision& r : d.resizes) {
    out += fmt::format("resize {} {} {} -> {}\n", r.job, r.group, r.from_replicas, r.to_replicas);
  }
  for (const ReserveDecision& r : d.reservations) {
    out +=
        fmt::format("reserve {} on {} at {}\n", r.job, fmt::join(r.nodes, ","), r.expected_start);
  }
  for (const PendingDecision& p : d.pending) out += PendingText(p) + "\n";
  for (const NodeActionDecision& a : d.node_actions) {
    out += fmt::format("node {} {} empty_at={} reason={}\n", a.node, NodeActionName(a.action),
                       a.expected_empty_time, a.reason);
  }
  const Counters& c = d.counters;
  out += fmt::format(
      "counters considered={} started={} candidates={} rolled_back={} equivalence={} "
      "budget_exhausted={}\n",
      c.jobs_considered, c.jobs_started, c.candidates_evaluated, c.transactions_rolled_back,
      c.equivalence_hits, c.budget_exhausted);
  return out;
}

void ShuffleSnapshot(Snapshot& snapshot, uint64_t seed) {
  Rng rng(seed);
  auto shuffle = [&rng](auto& items) { rng.Shuffle(items); };
  shuffle(snapshot.gpu_models);
  for (GpuModel& model : snapshot.gpu_models) shuffle(model.speeds);
  shuffle(snapshot.nodes);
  for (gpupool::Node& node : snapshot.nodes) {
    shuffle(node.gpus);
    shuffle(node.path);
    shuffle(node.labels);
    shuffle(node.owner_queues);
  }
  shuffle(snapshot.queues);
  for (gpupool::Queue& queue : snapshot.queues) {
    shuffle(queue.quotas);
    shuffle(queue.labels);
  }
  shuffle(snapshot.jobs);
  for (gpupool::Job& job : snapshot.jobs) {
    shuffle(job.groups);
    shuffle(job.placements);
  }
}

namespace {

int64_t ExtremeQuantity(Rng& rng) {
  static constexpr int64_t kValues[] = {-1,
                                        0,
                                        1,
                                        250,
                                        999,
                                        1000,
                                        1500,
                                        2000,
                                        8000,
                                        9000,
                                        81920,
                                        kMaxQuantity,
                                        kMaxQuantity + 1,
                                        std::numeric_limits<int64_t>::max(),
                                        std::numeric_limits<int64_t>::min()};
  return kValues[rng.UniformInt(0, std::size(kValues) - 1)];
}

// An existing id of `items` (by `id` member) or a made-up one ("", "nope").
template <typename T>
std::string SomeId(const std::vector<T>& items, Rng& rng) {
  const int64_t pick = rng.UniformInt(-2, static_cast<int64_t>(items.size()) - 1);
  if (pick == -2) return "";
  if (pick == -1) return "nope";
  return items[static_cast<size_t>(pick)].id;
}

std::string SomeModel(const Snapshot& s, Rng& rng) {
  const int64_t pick = rng.UniformInt(-3, static_cast<int64_t>(s.gpu_models.size()) - 1);
  if (pick == -3) return "";
  if (pick == -2) return "*";
  if (pick == -1) return "B300";
  return s.gpu_models[static_cast<size_t>(pick)].name;
}

template <typename T>
T* SomeItem(std::vector<T>& items, Rng& rng) {
  if (items.empty()) return nullptr;
  return &items[static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(items.size()) - 1))];
}

}  // namespace

void MutateSnapshot(Snapshot& s, uint64_t seed, int mutations) {
  Rng rng(seed);
  for (int m = 0; m < mutations; ++m) {
    gpupool::Node* node = SomeItem(s.nodes, rng);
    gpupool::Job* job = SomeItem(s.jobs, rng);
    gpupool::Queue* queue = SomeItem(s.queues, rng);
    TaskGroup* group = job == nullptr ? nullptr : SomeItem(job->groups, rng);
    ReplicaPlacement* placement = job == nullptr ? nullptr : SomeItem(job->placements, rng);
    Gpu* gpu = node == nullptr ? nullptr : SomeItem(node->gpus, rng);
    switch (rng.UniformInt(0, 23)) {
      case 0:
        if (gpu) gpu->index = static_cast<int32_t>(rng.UniformInt(-2, 1026));
        break;
      case 1:
        if (gpu) gpu->island = static_cast<int32_t>(rng.UniformInt(-1, 3));
        break;
      case 2:
        if (group) group->replicas = static_cast<int32_t>(rng.UniformInt(-1, 5));
        break;
      case 3:
        if (group) group->min_replicas = static_cast<int32_t>(rng.UniformInt(-1, 6));
        break;
      case 4:
        if (group) group->request.gpu_milli = ExtremeQuantity(rng);
        break;
      case 5:
        if (group) {
          group->request.cpu_milli = ExtremeQuantity(rng);
          group->request.gpu_memory_mib = ExtremeQuantity(rng);
        }
        break;
      case 6:
        if (job) job->queue = SomeId(s.queues, rng);
        break;
      case 7:
        if (placement) placement->node = SomeId(s.nodes, rng);
        break;
      case 8:
        if (placement) {
          placement->gpus.push_back(static_cast<int32_t>(rng.UniformInt(-1, 9)));
          placement->replica = static_cast<int32_t>(rng.UniformInt(-1, 3));
        }
        break;
      case 9:
        if (job) {
          job->state = job->state == JobState::kPending ? JobState::kRunning : JobState::kPending;
          if (rng.Percent(50)) job->start_time.reset();
        }
        break;
      case 10:
        if (node) node->id = SomeId(s.nodes, rng);
        break;
      case 11:
        if (queue) queue->parent = SomeId(s.queues, rng);
        break;
      case 12:
        if (queue) {
          Quota quota;
          quota.gpu_model = SomeModel(s, rng);
          quota.guaranteed_milli = ExtremeQuantity(rng);
          if (rng.Percent(50)) quota.limit_milli = ExtremeQuantity(rng);
          quota.over_quota_weight = rng.UniformInt(-1, 3);
          queue->quotas.push_back(quota);
        }
        break;
      case 13:
        if (node) {
          static constexpr const char* kLevels[] = {"block", "rack", "zone", "", "node"};
          node->path.push_back(
              {kLevels[rng.UniformInt(0, 4)], rng.Percent(80) ? "x" + std::to_string(m) : ""});
        }
        break;
      case 14:
        if (group) group->gpu_models.push_back(SomeModel(s, rng));
        break;
      case 15:
        if (group) {
          static constexpr const char* kLevels[] = {"block", "rack", "node", "zone", "", "island"};
          if (rng.Percent(20)) {
            group->topology.gang_level.reset();
          } else {
            group->topology.gang_level = kLevels[rng.UniformInt(0, 5)];
          }
          group->topology.gang_strictness = static_cast<Strictness>(rng.UniformInt(0, 1));
          group->topology.replica_scope = static_cast<ReplicaScope>(rng.UniformInt(0, 1));
        }
        break;
      case 16:
        if (node) node->state = static_cast<NodeState>(rng.UniformInt(0, rng.Percent(90) ? 3 : 7));
        break;
      case 17:
        if (gpu) gpu->healthy = !gpu->healthy;
        break;
      case 18:
        if (GpuModel* model = SomeItem(s.gpu_models, rng)) model->memory_mib = ExtremeQuantity(rng);
        break;
      case 19:
        s.now = rng.Percent(50) ? -1 : ExtremeQuantity(rng);
        break;
      case 20:
        if (node) node->owner_queues.push_back(SomeId(s.queues, rng));
        break;
      case 21:
        if (queue) queue->isolation = static_cast<Isolation>(rng.UniformInt(0, 2));
        break;
      case 22:
        if (job) job->id = SomeId(s.jobs, rng);
        break;
      default:
        if (node) {
          node->cpu_milli = ExtremeQuantity(rng);
          node->gpu_model = SomeModel(s, rng);
        }
        break;
    }
  }
}

}  // namespace gpupool::testing

namespace gpupool {

void PrintTo(const ReplicaPlacement& placement, std::ostream* os) {
  *os << testing::PlacementText(placement);
}

void PrintTo(const PendingDecision& pending, std::ostream* os) {
  *os << testing::PendingText(pending);
}

}  // namespace gpupool
