// Structure-aware fuzzing of ValidateSnapshot() and Schedule().
//
// Byte-level mutations of a snapshot JSON are mostly refused by the parser. This target's
// LLVMFuzzerCustomMutator parses the input (SNAPSHOT-JSON '\0' POLICY-BYTES, fuzz_common.h),
// changes the Snapshot value itself — ids, references between objects, quantities, GPUs and
// their health, running placements and job states, whole objects cloned or dropped — and writes
// it back with SnapshotToJson(), so almost every input reaches the validator, and many of them
// the scheduler. The policy bytes get libFuzzer's byte mutations.
//
// Properties checked on every input the validator accepts:
//   - Schedule() is deterministic: twice on the same input gives byte-identical decisions;
//   - the decisions apply cleanly to a valid snapshot with no GPU over-committed, and round-trip
//     through JSON (CheckDecisions in fuzz_common.h).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "gpupool/io/json.h"
#include "gpupool/resources.h"
#include "gpupool/schedule.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace gpupool::fuzz {
namespace {

using Rng = std::mt19937_64;

size_t Pick(Rng& rng, size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); }
bool Coin(Rng& rng) { return (rng() & 1) != 0; }

// Boundary values of the quantities, and a few ordinary ones.
int64_t InterestingInt(Rng& rng, int64_t current) {
  static constexpr int64_t kValues[] = {0,
                                        1,
                                        -1,
                                        2,
                                        3,
                                        8,
                                        100,
                                        250,
                                        500,
                                        999,
                                        1000,
                                        1001,
                                        1500,
                                        2000,
                                        4000,
                                        8000,
                                        16000,
                                        65536,
                                        81920,
                                        86400,
                                        kMaxQuantity,
                                        kMaxQuantity + 1,
                                        std::numeric_limits<int32_t>::max(),
                                        std::numeric_limits<int32_t>::min(),
                                        std::numeric_limits<int64_t>::max(),
                                        std::numeric_limits<int64_t>::min()};
  switch (Pick(rng, 4)) {
    case 0:
      return kValues[Pick(rng, std::size(kValues))];
    case 1:  // wraps around (modular since C++20) rather than overflow
      return static_cast<int64_t>(static_cast<uint64_t>(current) + Pick(rng, 5) - 2);
    case 2:
      return static_cast<int64_t>(static_cast<uint64_t>(current) * 2);
    default:
      return static_cast<int64_t>(Pick(rng, 5000));
  }
}

int32_t InterestingInt32(Rng& rng, int32_t current) {
  const int64_t v = InterestingInt(rng, current);
  if (v > std::numeric_limits<int32_t>::max() || v < std::numeric_limits<int32_t>::min()) {
    return Coin(rng) ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int32_t>::min();
  }
  return static_cast<int32_t>(v);
}

// Every id of the snapshot, so that references can be pointed at any of them (right or wrong
// kind), plus a few that name nothing.
std::vector<std::string> AllNames(const Snapshot& s) {
  std::vector<std::string> names = {"", "x", "*", "main"};
  for (const GpuModel& m : s.gpu_models) names.push_back(m.name);
  for (const Node& n : s.nodes) names.push_back(n.id);
  for (const Queue& q : s.queues) names.push_back(q.id);
  for (const Job& j : s.jobs) {
    names.push_back(j.id);
    for (const TaskGroup& g : j.groups) names.push_back(g.name);
  }
  for (const std::string& level : s.topology.levels) names.push_back(level);
  return names;
}

std::string AnyName(Rng& rng, const Snapshot& s) {
  const std::vector<std::string> names = AllNames(s);
  std::string name = names[Pick(rng, names.size())];
  if (Pick(rng, 4) == 0) name += std::to_string(Pick(rng, 10));
  return name;
}

template <typename T>
T* AnyOf(Rng& rng, std::vector<T>& v) {
  return v.empty() ? nullptr : &v[Pick(rng, v.size())];
}

// A running placement for `job`'s group `g` on a random node's GPUs, as a host would write one.
ReplicaPlacement MakePlacement(Rng& rng, Snapshot& s, const Job& job, const TaskGroup& g) {
  ReplicaPlacement p;
  p.group = g.name;
  p.replica = static_cast<int32_t>(Pick(rng, static_cast<size_t>(std::max(1, g.replicas))));
  if (Node* node = AnyOf(rng, s.nodes)) {
    p.node = node->id;
    const int64_t count = std::min<int64_t>(g.request.GpuCount(), 16);
    for (int64_t i = 0; i < count && !node->gpus.empty(); ++i) {
      p.gpus.push_back(node->gpus[Pick(rng, node->gpus.size())].index);
    }
  }
  (void)job;
  if (Coin(rng)) p.gpu_milli = g.request.MilliPerGpu();
  return p;
}

void MutateJob(Rng& rng, Snapshot& s, Job& job) {
  switch (Pick(rng, 16)) {
    case 0:
      job.id = AnyName(rng, s);
      break;
    case 1:
      job.queue = AnyName(rng, s);
      break;
    case 2:
      job.priority = InterestingInt32(rng, job.priority);
      break;
    case 3:
      job.submit_time = InterestingInt(rng, job.submit_time);
      break;
    case 4:  // running <-> pending, with or without placements
      if (job.state == JobState::kRunning) {
        job.state = JobState::kPending;
        if (Coin(rng)) job.placements.clear();
        if (Coin(rng)) job.start_time.reset();
      } else {
        job.state = JobState::kRunning;
        job.start_time = static_cast<int64_t>(static_cast<uint64_t>(s.now) - Pick(rng, 10000));
        job.placements.clear();
        for (const TaskGroup& g : job.groups) {
          for (int32_t r = 0; r < std::min(g.replicas, 8); ++r) {
            ReplicaPlacement p = MakePlacement(rng, s, job, g);
            p.replica = r;
            job.placements.push_back(p);
          }
        }
      }
      break;
    case 5:
      if (ReplicaPlacement* p = AnyOf(rng, job.placements)) {
        switch (Pick(rng, 6)) {
          case 0:
            p->node = AnyName(rng, s);
            break;
          case 1:
            p->group = AnyName(rng, s);
            break;
          case 2:
            p->replica = InterestingInt32(rng, p->replica);
            break;
          case 3:
            p->gpu_milli = InterestingInt(rng, p->gpu_milli);
            break;
          case 4:
            if (!p->gpus.empty() && Coin(rng)) {
              p->gpus.erase(p->gpus.begin() + static_cast<ptrdiff_t>(Pick(rng, p->gpus.size())));
            } else {
              p->gpus.push_back(InterestingInt32(rng, p->gpus.empty() ? 0 : p->gpus.back()));
            }
            break;
          default:
            if (!p->gpus.empty())
              p->gpus[Pick(rng, p->gpus.size())] = static_cast<int32_t>(Pick(rng, 8));
        }
      } else if (TaskGroup* g = AnyOf(rng, job.groups)) {
        job.placements.push_back(MakePlacement(rng, s, job, *g));
      }
      break;
    case 6:
      if (!job.placements.empty()) {
        job.placements.erase(job.placements.begin() +
                             static_cast<ptrdiff_t>(Pick(rng, job.placements.size())));
      }
      break;
    case 7:
      if (TaskGroup* g = AnyOf(rng, job.groups)) {
        switch (Pick(rng, 4)) {
          case 0:
            g->request.gpu_milli = InterestingInt(rng, g->request.gpu_milli);
            break;
          case 1:
            g->request.gpu_memory_mib = InterestingInt(rng, g->request.gpu_memory_mib);
            break;
          case 2:
            g->request.cpu_milli = InterestingInt(rng, g->request.cpu_milli);
            break;
          default:
            g->request.memory_mib = InterestingInt(rng, g->request.memory_mib);
        }
      }
      break;
    case 8:
      if (TaskGroup* g = AnyOf(rng, job.groups)) {
        if (Coin(rng)) {
          g->replicas = InterestingInt32(rng, g->replicas);
        } else if (Coin(rng)) {
          g->min_replicas = InterestingInt32(rng, g->min_replicas.value_or(g->replicas));
        } else {
          g->min_replicas.reset();
        }
      }
      break;
    case 9:
      if (TaskGroup* g = AnyOf(rng, job.groups)) {
        if (Coin(rng) || g->gpu_models.empty()) {
          g->gpu_models.push_back(AnyName(rng, s));
        } else {
          g->gpu_models.pop_back();
        }
      }
      break;
    case 10:
      if (TaskGroup* g = AnyOf(rng, job.groups)) {
        switch (Pick(rng, 6)) {
          case 0:
            g->name = AnyName(rng, s);
            break;
          case 5:
            g->topology.max_replicas_per_node =
                Coin(rng) ? std::optional<int32_t>(static_cast<int32_t>(Pick(rng, 4)))
                          : std::optional<int32_t>(InterestingInt32(rng, 1));
            if (Coin(rng)) g->topology.max_replicas_per_node.reset();
            break;
          case 1:
            g->topology.replica_scope = Coin(rng) ? ReplicaScope::kNode : ReplicaScope::kIsland;
            break;
          case 2:
            g->topology.replica_strictness =
                Coin(rng) ? Strictness::kRequired : Strictness::kPreferred;
            break;
          case 3:
            g->topology.gang_strictness =
                Coin(rng) ? Strictness::kRequired : Strictness::kPreferred;
            break;
          default:
            if (Coin(rng)) {
              g->topology.gang_level = AnyName(rng, s);
            } else {
              g->topology.gang_level.reset();
            }
        }
      }
      break;
    case 11:  // a second group (gang of groups), cloned from the first
      if (!job.groups.empty() && job.groups.size() < 4) {
        TaskGroup g = job.groups[Pick(rng, job.groups.size())];
        g.name = AnyName(rng, s);
        job.groups.push_back(g);
      } else if (!job.groups.empty()) {
        job.groups.pop_back();
      }
      break;
    case 12:
      job.preemptible = !job.preemptible;
      break;
    case 13:
      switch (Pick(rng, 4)) {
        case 0:
          job.checkpointing.interval_s = InterestingInt(rng, job.checkpointing.interval_s);
          break;
        case 1:
          job.checkpointing.last_checkpoint_time =
              Coin(rng) ? std::optional<int64_t>(InterestingInt(rng, s.now)) : std::nullopt;
          break;
        case 2:
          job.checkpointing.checkpoint_cost_s =
              InterestingInt(rng, job.checkpointing.checkpoint_cost_s);
          break;
        default:
          job.checkpointing.restore_time_s = InterestingInt(rng, job.checkpointing.restore_time_s);
      }
      break;
    case 14:
      switch (Pick(rng, 4)) {
        case 0:
          job.min_runtime_s = InterestingInt(rng, job.min_runtime_s);
          break;
        case 1:
          job.runtime_estimate_s =
              Coin(rng) ? std::optional<int64_t>(InterestingInt(rng, 3600)) : std::nullopt;
          break;
        case 2:
          job.attained_service_s = InterestingInt(rng, job.attained_service_s);
          break;
        default:
          job.pending_since =
              Coin(rng) ? std::optional<int64_t>(InterestingInt(rng, s.now)) : std::nullopt;
      }
      break;
    default:
      job.start_time =
          Coin(rng) ? std::optional<int64_t>(InterestingInt(rng, s.now)) : std::nullopt;
  }
}

void MutateNode(Rng& rng, Snapshot& s, Node& node) {
  switch (Pick(rng, 13)) {
    case 0:
      node.id = AnyName(rng, s);
      break;
    case 1:
      node.gpu_model = AnyName(rng, s);
      break;
    case 2:
      if (Coin(rng) || node.gpus.empty()) {
        Gpu gpu;
        gpu.index = node.gpus.empty() ? 0 : static_cast<int32_t>(Pick(rng, 16));
        gpu.island = node.gpus.empty() ? 0 : node.gpus.back().island;
        node.gpus.push_back(gpu);
      } else {
        node.gpus.erase(node.gpus.begin() + static_cast<ptrdiff_t>(Pick(rng, node.gpus.size())));
      }
      break;
    case 3:
      if (Gpu* gpu = AnyOf(rng, node.gpus)) {
        switch (Pick(rng, 6)) {
          case 0:
            gpu->index = InterestingInt32(rng, gpu->index);
            break;
          case 1:
            gpu->island = InterestingInt32(rng, gpu->island);
            break;
          case 2:
            gpu->xid_errors = InterestingInt(rng, gpu->xid_errors);
            break;
          case 3:
            gpu->ecc_errors = InterestingInt(rng, gpu->ecc_errors);
            break;
          case 4:
            gpu->errors_since = InterestingInt(rng, gpu->errors_since.value_or(s.now));
            break;
          default:
            gpu->healthy = !gpu->healthy;
        }
      }
      break;
    case 4:
      node.cpu_milli = InterestingInt(rng, node.cpu_milli);
      break;
    case 5:
      node.memory_mib = InterestingInt(rng, node.memory_mib);
      break;
    case 6:
      node.state = static_cast<NodeState>(Pick(rng, 4));
      break;
    case 7:
      if (Coin(rng) || node.owner_queues.empty()) {
        node.owner_queues.push_back(AnyName(rng, s));
      } else {
        node.owner_queues.pop_back();
      }
      break;
    case 9:
      // Maintenance windows: around now, sometimes out of order, overlapping or empty.
      if (Coin(rng) || node.maintenance.empty()) {
        const int64_t start = InterestingInt(rng, s.now);
        // Wraps around rather than overflow (start may be INT64_MAX), as InterestingInt does.
        const int64_t end =
            Coin(rng) ? static_cast<int64_t>(static_cast<uint64_t>(start) + 1 + Pick(rng, 5000))
                      : InterestingInt(rng, start);
        node.maintenance.push_back({start, end});
      } else {
        node.maintenance.erase(node.maintenance.begin() +
                               static_cast<ptrdiff_t>(Pick(rng, node.maintenance.size())));
      }
      break;
    case 10:
      if (Coin(rng)) {
        node.last_diagnostic = DiagnosticRun{InterestingInt(rng, s.now), Coin(rng)};
      } else {
        node.last_diagnostic.reset();
      }
      break;
    case 11:
      node.state_cause = static_cast<NodeStateCause>(Pick(rng, 5));
      break;
    case 8:
      if (Coin(rng) || node.path.empty()) {
        node.path.push_back({AnyName(rng, s), AnyName(rng, s)});
      } else {
        node.path[Pick(rng, node.path.size())].value = AnyName(rng, s);
      }
      break;
    default:
      if (Coin(rng) || node.labels.empty()) {
        node.labels.push_back({AnyName(rng, s), AnyName(rng, s)});
      } else {
        node.labels.pop_back();
      }
  }
}

void MutateQueue(Rng& rng, Snapshot& s, Queue& queue) {
  switch (Pick(rng, 9)) {
    case 0:
      queue.id = AnyName(rng, s);
      break;
    case 1:
      queue.parent = Coin(rng) ? std::string() : AnyName(rng, s);
      break;
    case 2:
      queue.priority = InterestingInt32(rng, queue.priority);
      break;
    case 3:
      if (Coin(rng) || queue.quotas.empty()) {
        Quota quota;
        quota.gpu_model = Coin(rng) ? std::string(kAnyGpuModel) : AnyName(rng, s);
        quota.guaranteed_milli = InterestingInt(rng, 1000);
        queue.quotas.push_back(quota);
      } else {
        queue.quotas.pop_back();
      }
      break;
    case 4:
      if (Quota* quota = AnyOf(rng, queue.quotas)) {
        switch (Pick(rng, 4)) {
          case 0:
            quota->guaranteed_milli = InterestingInt(rng, quota->guaranteed_milli);
            break;
          case 1:
            quota->limit_milli =
                Coin(rng) ? std::optional<int64_t>(InterestingInt(rng, 4000)) : std::nullopt;
            break;
          case 2:
            quota->over_quota_weight = InterestingInt(rng, quota->over_quota_weight);
            break;
          default:
            quota->gpu_model = AnyName(rng, s);
        }
      }
      break;
    case 5:
      if (Coin(rng)) {
        queue.can_borrow = !queue.can_borrow;
      } else {
        queue.can_lend = !queue.can_lend;
      }
      break;
    case 6:
      queue.isolation = static_cast<Isolation>(Pick(rng, 3));
      break;
    case 7:
      queue.budget_milli_gpu_seconds =
          Coin(rng) ? std::optional<int64_t>(InterestingInt(rng, 3600000)) : std::nullopt;
      break;
    default:
      queue.decayed_usage_milli_gpu_seconds =
          InterestingInt(rng, queue.decayed_usage_milli_gpu_seconds);
  }
}

// Clones (with a fresh id), drops or reorders one object of `v`.
template <typename T>
void Restructure(Rng& rng, std::vector<T>& v, std::string T::*id, size_t max_size) {
  const size_t choice = Pick(rng, 3);
  if (choice == 0 && !v.empty() && v.size() < max_size) {
    T copy = v[Pick(rng, v.size())];
    copy.*id += "-" + std::to_string(v.size());
    v.insert(v.begin() + static_cast<ptrdiff_t>(Pick(rng, v.size() + 1)), std::move(copy));
  } else if (choice == 1 && !v.empty()) {
    v.erase(v.begin() + static_cast<ptrdiff_t>(Pick(rng, v.size())));
  } else if (v.size() >= 2) {
    std::swap(v[Pick(rng, v.size())], v[Pick(rng, v.size())]);
  }
}

void MutateSnapshot(Rng& rng, Snapshot& s) {
  switch (Pick(rng, 12)) {
    case 0:
    case 1:
    case 2:
      if (Job* job = AnyOf(rng, s.jobs)) MutateJob(rng, s, *job);
      break;
    case 3:
    case 4:
      if (Node* node = AnyOf(rng, s.nodes)) MutateNode(rng, s, *node);
      break;
    case 5:
      if (Queue* queue = AnyOf(rng, s.queues)) MutateQueue(rng, s, *queue);
      break;
    case 6:
      Restructure(rng, s.jobs, &Job::id, 64);
      break;
    case 7:
      Restructure(rng, s.nodes, &Node::id, 32);
      break;
    case 8:
      Restructure(rng, s.queues, &Queue::id, 16);
      break;
    case 9:
      if (GpuModel* model = AnyOf(rng, s.gpu_models)) {
        if (Coin(rng)) {
          model->memory_mib = InterestingInt(rng, model->memory_mib);
        } else {
          model->name = AnyName(rng, s);
        }
      } else {
        s.gpu_models.push_back({AnyName(rng, s), 81920, {}});
      }
      break;
    case 10:
      if (Coin(rng)) {
        Restructure(rng, s.gpu_models, &GpuModel::name, 8);
      } else if (Coin(rng) || s.topology.levels.empty()) {
        s.topology.levels.push_back(AnyName(rng, s));
      } else {
        s.topology.levels.pop_back();
      }
      break;
    default:
      s.now = InterestingInt(rng, s.now);
  }
}

}  // namespace
}  // namespace gpupool::fuzz

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  using namespace gpupool;
  fuzz::Rng rng(seed);
  const fuzz::ScheduleInput input = fuzz::SplitScheduleInput(data, size);
  absl::StatusOr<Snapshot> snapshot = io::ParseSnapshot(input.snapshot_json);
  // One time in eight (and whenever the snapshot does not parse), libFuzzer's own byte mutations.
  if (!snapshot.ok() || fuzz::Pick(rng, 8) == 0) return LLVMFuzzerMutate(data, size, max_size);

  std::string policy(input.policy_bytes);
  if (fuzz::Pick(rng, 4) == 0) {
    policy.resize(std::max<size_t>(policy.size(), 48) + 8);
    policy.resize(LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(policy.data()), policy.size() - 8,
                                   policy.size()));
  } else {
    const size_t count = 1 + fuzz::Pick(rng, 3);
    for (size_t i = 0; i < count; ++i) fuzz::MutateSnapshot(rng, *snapshot);
  }
  std::string out = io::SnapshotToJson(*snapshot);
  out.push_back('\0');
  out += policy;
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpupool;
  const fuzz::ScheduleInput input = fuzz::SplitScheduleInput(data, size);
  absl::StatusOr<Snapshot> snapshot = io::ParseSnapshot(input.snapshot_json);
  if (!snapshot.ok() || !ValidateSnapshot(*snapshot).ok()) return 0;
  const Policy policy = fuzz::PolicyFromBytes(input.policy_bytes, *snapshot);
  absl::StatusOr<Decisions> first = Schedule(*snapshot, policy);
  absl::StatusOr<Decisions> second = Schedule(*snapshot, policy);
  FUZZ_CHECK(first.ok() == second.ok(), "Schedule() succeeded only once");
  if (!first.ok()) {
    FUZZ_CHECK(first.status() == second.status(), "Schedule() errors differ");
    FUZZ_CHECK(first.status().code() == absl::StatusCode::kInvalidArgument,
               first.status().ToString());
    return 0;
  }
  const std::string json = io::DecisionsToJson(*first);
  FUZZ_CHECK(io::DecisionsToJson(*second) == json, "Schedule() is not deterministic");
  fuzz::CheckDecisions(*snapshot, *first);
  return 0;
}
