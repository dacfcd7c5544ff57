#include "testing/builders.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"

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
  const Counters& c = d.counters;
  out += fmt::format(
      "counters considered={} started={} candidates={} rolled_back={} equivalence={} "
      "budget_exhausted={}\n",
      c.jobs_considered, c.jobs_started, c.candidates_evaluated, c.transactions_rolled_back,
      c.equivalence_hits, c.budget_exhausted);
  return out;
}

namespace {

// SplitMix64: tiny, seeded, identical on every platform (unlike std::*_distribution).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform enough in [0, n) for shuffling test inputs; n > 0.
  uint64_t Below(uint64_t n) { return Next() % n; }

 private:
  uint64_t state_;
};

template <typename T>
void Shuffle(std::vector<T>& items, SplitMix64& rng) {
  for (size_t i = items.size(); i > 1; --i) {
    std::swap(items[i - 1], items[rng.Below(i)]);
  }
}

}  // namespace

void ShuffleSnapshot(Snapshot& snapshot, uint64_t seed) {
  SplitMix64 rng(seed);
  Shuffle(snapshot.gpu_models, rng);
  for (GpuModel& model : snapshot.gpu_models) Shuffle(model.speeds, rng);
  Shuffle(snapshot.nodes, rng);
  for (gpupool::Node& node : snapshot.nodes) {
    Shuffle(node.gpus, rng);
    Shuffle(node.path, rng);
    Shuffle(node.labels, rng);
    Shuffle(node.owner_queues, rng);
  }
  Shuffle(snapshot.queues, rng);
  for (gpupool::Queue& queue : snapshot.queues) Shuffle(queue.quotas, rng);
  Shuffle(snapshot.jobs, rng);
  for (gpupool::Job& job : snapshot.jobs) {
    Shuffle(job.groups, rng);
    Shuffle(job.placements, rng);
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
