// Snapshot validation, second half: jobs and over-commitment (validate.cc opens with the rules of
// the whole stage: determinism of the first error, status codes, cost).
//
// A job is checked in three steps: its own values (queue, times, groups and their requests,
// checkpointing), then, for a running job, its allocation against the catalogue's nodes, which
// records what it uses; only once every job passed is each node's recorded use compared with its
// capacity, so that the over-commitment reported does not depend on the order of the jobs.
#include "validate_jobs.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/core.h"
#include "fmt/format.h"
#include "gpupool/snapshot.h"
#include "internal/check.h"
#include "internal/saturating.h"

namespace gpupool::internal::validation {
namespace {

// Largest total replica count of one job. Replicas are placed one by one, so a job asking for
// billions of (possibly empty) replicas would make a cycle run out of memory instead of failing.
constexpr int64_t kMaxReplicasPerJob = int64_t{1} << 20;

// Sorts 64-bit keys: least significant digit first, 16 bits at a time (linear, and faster than a
// comparison sort on the 100,000s of job ids of a large snapshot). Below 2^16 keys a comparison
// sort is used: each radix pass clears and sums a table of 2^16 counts, which then costs more
// than sorting (a replay validates a snapshot of a few thousand jobs every cycle).
void RadixSort(std::vector<uint64_t>& keys) {
  if (keys.size() < (size_t{1} << 16)) {
    std::sort(keys.begin(), keys.end());
    return;
  }
  std::vector<uint64_t> buffer(keys.size());
  std::vector<size_t> counts(size_t{1} << 16);
  for (int shift = 0; shift < 64; shift += 16) {
    std::fill(counts.begin(), counts.end(), 0);
    for (uint64_t key : keys) ++counts[(key >> shift) & 0xffff];
    size_t total = 0;
    for (size_t& count : counts) {
      const size_t c = count;
      count = total;
      total += c;
    }
    for (uint64_t key : keys) buffer[counts[(key >> shift) & 0xffff]++] = key;
    keys.swap(buffer);
  }
}

bool KnownStrictness(Strictness s) {
  return s == Strictness::kRequired || s == Strictness::kPreferred;
}

class JobValidator {
 public:
  explicit JobValidator(Catalog& catalog) : catalog_(catalog) {}

  // Jobs are checked in input order (see validate.cc's opening comment). A job that fails may have
  // recorded part of its allocation; that is harmless, as over-commitment is checked only when
  // every job passed.
  //
  // Jobs are the largest list, so their ids are neither sorted as strings nor put in a hash table
  // (a cache miss per job): the pass that checks each job records a 64-bit hash of its id, and a
  // radix sort of those hashes shows whether any two meet; only then are ids compared. Errors of
  // ids still come before errors of items, as in id order.
  absl::Status CheckJobs(const std::vector<Job>& jobs) {
    // Ids in strictly ascending order (as a host may list them) are neither empty, but for the
    // first, nor repeated: no hashing needed.
    const bool ascending =
        std::adjacent_find(jobs.begin(), jobs.end(),
                           [](const Job& a, const Job& b) { return !(a.id < b.id); }) == jobs.end();
    if (ascending && (jobs.empty() || !jobs.front().id.empty())) {
      SmallestIdError first;
      for (const Job& job : jobs) first.Offer(job.id, CheckJob(job));
      return first.status();
    }
    std::vector<uint64_t>& hashes = hashes_scratch_;
    hashes.clear();
    hashes.reserve(jobs.size());
    SmallestIdError first;
    for (const Job& job : jobs) {
      if (job.id.empty()) return Invalid("jobs[].id: must not be empty");
      hashes.push_back(std::hash<std::string_view>()(job.id));
      first.Offer(job.id, CheckJob(job));
    }
    RadixSort(hashes);
    if (std::adjacent_find(hashes.begin(), hashes.end()) != hashes.end()) {
      // Rare: some hashes meet. Sort the ids whose hash is shared; repeats are neighbours.
      std::vector<std::string_view>& ids = names_scratch_;
      ids.clear();
      for (const Job& job : jobs) {
        const uint64_t hash = std::hash<std::string_view>()(job.id);
        auto [lo, hi] = std::equal_range(hashes.begin(), hashes.end(), hash);
        if (hi - lo > 1) ids.push_back(job.id);
      }
      std::sort(ids.begin(), ids.end());
      for (size_t k = 1; k < ids.size(); ++k) {
        if (ids[k] == ids[k - 1]) return Invalid("jobs[{}].id: duplicate id", ids[k]);
      }
    }
    return first.status();
  }

  absl::Status CheckJob(const Job& job) {
    const std::string& id = job.id;
    if (job.queue.empty()) return Invalid("jobs[{}].queue: must not be empty", id);
    if (!catalog_.KnownQueue(job.queue)) {
      return Inconsistent("jobs[{}].queue: unknown queue \"{}\"", id, job.queue);
    }
    GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(job.submit_time, "jobs[{}].submit_time", id));
    if (job.groups.empty()) return Invalid("jobs[{}].groups: must not be empty", id);

    std::vector<const TaskGroup*>& groups = groups_scratch_;
    SortInto(
        job.groups, [](const TaskGroup& g) -> const std::string& { return g.name; }, groups);
    for (size_t i = 0; i < groups.size(); ++i) {
      if (groups[i]->name.empty()) return Invalid("jobs[{}].groups[].name: must not be empty", id);
      if (i > 0 && groups[i]->name == groups[i - 1]->name) {
        return Invalid("jobs[{}].groups[{}].name: duplicate name", id, groups[i]->name);
      }
    }
    int64_t total_replicas = 0;
    int64_t total_gpu_milli = 0;
    int64_t total_cpu_milli = 0;
    int64_t total_memory_mib = 0;
    for (const TaskGroup* group : groups) {
      GPUPOOL_RETURN_IF_ERROR(CheckGroup(job, *group));
      // Totals of the whole job stay within kMaxQuantity, so that the engine's sums over a
      // snapshot cannot overflow; the replica count is bounded so that placing them is too.
      const std::string& name = group->name;
      const ResourceRequest& request = group->request;
      total_replicas = SaturatingAdd(total_replicas, group->replicas);
      if (total_replicas > kMaxReplicasPerJob) {
        return Invalid(
            "jobs[{}].groups[{}].replicas: the job's replicas total {}, above the "
            "maximum {}",
            id, name, total_replicas, kMaxReplicasPerJob);
      }
      total_gpu_milli =
          SaturatingAdd(total_gpu_milli, SaturatingMultiply(group->replicas, request.gpu_milli));
      total_cpu_milli =
          SaturatingAdd(total_cpu_milli, SaturatingMultiply(group->replicas, request.cpu_milli));
      total_memory_mib =
          SaturatingAdd(total_memory_mib, SaturatingMultiply(group->replicas, request.memory_mib));
      for (auto [field, total] : {std::pair<const char*, int64_t>{"gpu_milli", total_gpu_milli},
                                  {"cpu_milli", total_cpu_milli},
                                  {"memory_mib", total_memory_mib}}) {
        if (total > kMaxQuantity) {
          return Invalid("jobs[{}].groups[{}].request.{}: the job's total is above the maximum {}",
                         id, name, field, kMaxQuantity);
        }
      }
    }

    GPUPOOL_RETURN_IF_ERROR(CheckSpreadFitsGang(job, groups));

    const Checkpointing& ckpt = job.checkpointing;
    GPUPOOL_RETURN_IF_ERROR(
        CheckQuantityF(ckpt.interval_s, "jobs[{}].checkpointing.interval_s", id));
    if (ckpt.last_checkpoint_time.has_value()) {
      GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(*ckpt.last_checkpoint_time,
                                             "jobs[{}].checkpointing.last_checkpoint_time", id));
    }
    GPUPOOL_RETURN_IF_ERROR(
        CheckQuantityF(ckpt.checkpoint_cost_s, "jobs[{}].checkpointing.checkpoint_cost_s", id));
    GPUPOOL_RETURN_IF_ERROR(
        CheckQuantityF(ckpt.restore_time_s, "jobs[{}].checkpointing.restore_time_s", id));
    GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(job.min_runtime_s, "jobs[{}].min_runtime_s", id));
    if (job.runtime_estimate_s.has_value()) {
      GPUPOOL_RETURN_IF_ERROR(
          CheckQuantityF(*job.runtime_estimate_s, "jobs[{}].runtime_estimate_s", id));
    }
    GPUPOOL_RETURN_IF_ERROR(
        CheckQuantityF(job.attained_service_s, "jobs[{}].attained_service_s", id));
    if (job.pending_since.has_value()) {
      GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(*job.pending_since, "jobs[{}].pending_since", id));
      if (*job.pending_since < job.submit_time) {
        return Invalid("jobs[{}].pending_since: {} is before its submit_time {}", id,
                       *job.pending_since, job.submit_time);
      }
    }

    switch (job.state) {
      case JobState::kPending:
        if (!job.placements.empty()) {
          return Inconsistent("jobs[{}].placements: a pending job must have none", id);
        }
        if (job.start_time.has_value()) {
          return Inconsistent("jobs[{}].start_time: a pending job must have none", id);
        }
        if (job.backfilled) {
          return Inconsistent("jobs[{}].backfilled: only a running job can be backfilled", id);
        }
        return absl::OkStatus();
      case JobState::kRunning:
        if (job.backfilled && !job.runtime_estimate_s.has_value()) {
          return Inconsistent(
              "jobs[{}].backfilled: a backfilled job must have a runtime_estimate_s", id);
        }
        return CheckRunning(job, groups);
    }
    return Invalid("jobs[{}].state: unknown value {}", id, static_cast<int>(job.state));
  }

  // A required gang_level "node" puts every replica on one node: a group allowing fewer of its
  // required replicas per node could never start.
  absl::Status CheckSpreadFitsGang(const Job& job, const std::vector<const TaskGroup*>& groups) {
    const bool one_node = std::any_of(groups.begin(), groups.end(), [](const TaskGroup* g) {
      return g->topology.gang_level == "node" &&
             g->topology.gang_strictness == Strictness::kRequired;
    });
    if (!one_node) return absl::OkStatus();
    for (const TaskGroup* group : groups) {
      const std::optional<int32_t>& most = group->topology.max_replicas_per_node;
      if (most.has_value() && *most < group->MinReplicas()) {
        return Invalid(
            "jobs[{}].groups[{}].topology.max_replicas_per_node: {} is below the group's {} "
            "required replicas, which gang_level \"node\" (required) puts on one node",
            job.id, group->name, *most, group->MinReplicas());
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckGroup(const Job& job, const TaskGroup& group) {
    const std::string& id = job.id;
    const std::string& name = group.name;
    if (group.replicas < 1) {
      return Invalid("jobs[{}].groups[{}].replicas: must be >= 1", id, name);
    }
    if (group.min_replicas.has_value()) {
      if (*group.min_replicas < 1) {
        return Invalid("jobs[{}].groups[{}].min_replicas: must be >= 1", id, name);
      }
      if (*group.min_replicas > group.replicas) {
        return Invalid("jobs[{}].groups[{}].min_replicas: {} is above replicas {}", id, name,
                       *group.min_replicas, group.replicas);
      }
    }
    const ResourceRequest& request = group.request;
    GPUPOOL_RETURN_IF_ERROR(
        CheckQuantityF(request.gpu_milli, "jobs[{}].groups[{}].request.gpu_milli", id, name));
    if (request.gpu_milli > kMilliPerGpu && request.gpu_milli % kMilliPerGpu != 0) {
      return Invalid(
          "jobs[{}].groups[{}].request.gpu_milli: {} is above 1000 and not a multiple of 1000", id,
          name, request.gpu_milli);
    }
    if (request.GpuCount() > kMaxGpuIndex) {
      return Invalid("jobs[{}].groups[{}].request.gpu_milli: {} asks for more than {} GPUs", id,
                     name, request.gpu_milli, kMaxGpuIndex);
    }
    GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(request.gpu_memory_mib,
                                           "jobs[{}].groups[{}].request.gpu_memory_mib", id, name));
    GPUPOOL_RETURN_IF_ERROR(
        CheckQuantityF(request.cpu_milli, "jobs[{}].groups[{}].request.cpu_milli", id, name));
    GPUPOOL_RETURN_IF_ERROR(
        CheckQuantityF(request.memory_mib, "jobs[{}].groups[{}].request.memory_mib", id, name));

    // The list is a preference order, so it is checked as given. A model the pool does not have
    // is allowed: the job stays pending (no-allowed-gpu-model) until such nodes join.
    std::vector<std::string_view>& seen = names_scratch_;
    seen.clear();
    for (const std::string& model : group.gpu_models) {
      if (model.empty()) {
        return Invalid("jobs[{}].groups[{}].gpu_models: must not hold an empty name", id, name);
      }
      if (model == kAnyGpuModel) {
        return Invalid(
            "jobs[{}].groups[{}].gpu_models: \"*\" is not a model (leave the list "
            "empty to accept any)",
            id, name);
      }
      seen.push_back(model);
    }
    std::sort(seen.begin(), seen.end());
    for (size_t i = 1; i < seen.size(); ++i) {
      if (seen[i] == seen[i - 1]) {
        return Invalid("jobs[{}].groups[{}].gpu_models: duplicate model \"{}\"", id, name, seen[i]);
      }
    }

    const TopologyConstraint& topology = group.topology;
    if (topology.replica_scope != ReplicaScope::kNode &&
        topology.replica_scope != ReplicaScope::kIsland) {
      return Invalid("jobs[{}].groups[{}].topology.replica_scope: unknown value {}", id, name,
                     static_cast<int>(topology.replica_scope));
    }
    if (!KnownStrictness(topology.replica_strictness)) {
      return Invalid("jobs[{}].groups[{}].topology.replica_strictness: unknown value {}", id, name,
                     static_cast<int>(topology.replica_strictness));
    }
    if (!KnownStrictness(topology.gang_strictness)) {
      return Invalid("jobs[{}].groups[{}].topology.gang_strictness: unknown value {}", id, name,
                     static_cast<int>(topology.gang_strictness));
    }
    if (topology.gang_level.has_value()) {
      const std::string& level = *topology.gang_level;
      if (level.empty()) {
        return Invalid("jobs[{}].groups[{}].topology.gang_level: must not be empty", id, name);
      }
      if (level != "node" && !catalog_.KnownLevel(level)) {
        return Inconsistent(
            "jobs[{}].groups[{}].topology.gang_level: unknown topology level \"{}\"", id, name,
            level);
      }
    }
    if (topology.max_replicas_per_node.has_value() && *topology.max_replicas_per_node < 1) {
      return Invalid("jobs[{}].groups[{}].topology.max_replicas_per_node: must be >= 1, got {}", id,
                     name, *topology.max_replicas_per_node);
    }
    return absl::OkStatus();
  }

  absl::Status CheckRunning(const Job& job, const std::vector<const TaskGroup*>& groups) {
    const std::string& id = job.id;
    if (!job.start_time.has_value()) {
      return Inconsistent("jobs[{}].start_time: a running job must have one", id);
    }
    GPUPOOL_RETURN_IF_ERROR(CheckQuantityF(*job.start_time, "jobs[{}].start_time", id));

    std::vector<const ReplicaPlacement*>& placements = placements_scratch_;
    SortInto(
        job.placements,
        [](const ReplicaPlacement& p) {
          return std::pair<std::string_view, int32_t>(p.group, p.replica);
        },
        placements);
    // Position of group `name` in `groups`; -1 when the job has no such group.
    auto find_group = [&groups](std::string_view name) -> int64_t {
      auto it =
          std::lower_bound(groups.begin(), groups.end(), name,
                           [](const TaskGroup* g, std::string_view key) { return g->name < key; });
      if (it == groups.end() || (*it)->name != name) return -1;
      return it - groups.begin();
    };
    // Replicas counted per group, aligned with `groups`.
    std::vector<int64_t>& counts = counts_scratch_;
    counts.assign(groups.size(), 0);
    std::vector<int32_t>& gpus = gpus_scratch_;
    // First the keys (group, replica) of every placement, so that of two placements of one
    // replica, the one listed first cannot decide the error; then each placement.
    for (size_t i = 0; i < placements.size(); ++i) {
      const ReplicaPlacement& p = *placements[i];
      const int64_t group_index = find_group(p.group);
      if (group_index < 0) {
        return Inconsistent("jobs[{}].placements[{}/{}].group: unknown group \"{}\"", id, p.group,
                            p.replica, p.group);
      }
      const TaskGroup* group = groups[static_cast<size_t>(group_index)];
      if (p.replica < 0 || p.replica >= group->replicas) {
        return Invalid("jobs[{}].placements[{}/{}].replica: must be in [0, {})", id, p.group,
                       p.replica, group->replicas);
      }
      if (i > 0 && p.group == placements[i - 1]->group && p.replica == placements[i - 1]->replica) {
        return Invalid("jobs[{}].placements[{}/{}]: duplicate replica", id, p.group, p.replica);
      }
      ++counts[static_cast<size_t>(group_index)];
    }
    for (const ReplicaPlacement* placement : placements) {
      const ReplicaPlacement& p = *placement;
      const TaskGroup* group = groups[static_cast<size_t>(find_group(p.group))];

      NodeInfo* node = catalog_.FindNode(p.node);
      if (node == nullptr) {
        return Inconsistent("jobs[{}].placements[{}/{}].node: unknown node \"{}\"", id, p.group,
                            p.replica, p.node);
      }
      const ResourceRequest& request = group->request;
      const int64_t milli = request.MilliPerGpu();
      if (p.gpu_milli < 0) {
        return Invalid("jobs[{}].placements[{}/{}].gpu_milli: must be >= 0", id, p.group,
                       p.replica);
      }
      if (p.gpu_milli != 0 && p.gpu_milli != milli) {
        return Inconsistent(
            "jobs[{}].placements[{}/{}].gpu_milli: {} differs from the group's {} "
            "per GPU",
            id, p.group, p.replica, p.gpu_milli, milli);
      }
      if (static_cast<int64_t>(p.gpus.size()) != request.GpuCount()) {
        return Inconsistent("jobs[{}].placements[{}/{}].gpus: {} GPUs given, the group asks for {}",
                            id, p.group, p.replica, p.gpus.size(), request.GpuCount());
      }
      gpus.assign(p.gpus.begin(), p.gpus.end());
      std::sort(gpus.begin(), gpus.end());
      for (size_t g = 0; g < gpus.size(); ++g) {
        if (g > 0 && gpus[g] == gpus[g - 1]) {
          return Invalid("jobs[{}].placements[{}/{}].gpus: duplicate GPU {}", id, p.group,
                         p.replica, gpus[g]);
        }
        if (node->FindGpu(gpus[g]) < 0) {
          return Inconsistent("jobs[{}].placements[{}/{}].gpus: node {} has no GPU {}", id, p.group,
                              p.replica, p.node, gpus[g]);
        }
      }
      if (!gpus.empty() && !group->gpu_models.empty() &&
          std::find(group->gpu_models.begin(), group->gpu_models.end(), node->node->gpu_model) ==
              group->gpu_models.end()) {
        return Inconsistent(
            "jobs[{}].placements[{}/{}].node: node {} has GPU model \"{}\", which "
            "the group does not accept",
            id, p.group, p.replica, p.node, node->node->gpu_model);
      }
      if (!gpus.empty() && request.gpu_memory_mib > node->gpu_memory_mib) {
        return Inconsistent(
            "jobs[{}].placements[{}/{}].node: the group needs {} MiB per GPU, "
            "node {} has {} MiB GPUs",
            id, p.group, p.replica, request.gpu_memory_mib, p.node, node->gpu_memory_mib);
      }
      // Record the allocation; over-commitment is checked once every job is in. A share of a
      // GPU takes the GPU memory it asks for, a whole GPU all of it.
      const int64_t gpu_memory =
          milli < kMilliPerGpu ? request.gpu_memory_mib : node->gpu_memory_mib;
      for (int32_t index : gpus) {
        const size_t g = static_cast<size_t>(node->FindGpu(index));
        node->used_milli[g] = SaturatingAdd(node->used_milli[g], milli);
        node->used_gpu_memory_mib[g] = SaturatingAdd(node->used_gpu_memory_mib[g], gpu_memory);
      }
      node->used_cpu_milli = SaturatingAdd(node->used_cpu_milli, request.cpu_milli);
      node->used_memory_mib = SaturatingAdd(node->used_memory_mib, request.memory_mib);
    }
    for (size_t g = 0; g < groups.size(); ++g) {
      const TaskGroup& group = *groups[g];
      if (counts[g] < group.MinReplicas() || counts[g] > group.replicas) {
        return Inconsistent(
            "jobs[{}].groups[{}]: running with {} replicas, needs between {} and "
            "{}",
            id, group.name, counts[g], group.MinReplicas(), group.replicas);
      }
    }
    return absl::OkStatus();
  }

 private:
  Catalog& catalog_;
  // Scratch buffers, reused from job to job to spare allocations.
  std::vector<const TaskGroup*> groups_scratch_;
  std::vector<const ReplicaPlacement*> placements_scratch_;
  std::vector<std::string_view> names_scratch_;
  std::vector<int32_t> gpus_scratch_;
  std::vector<uint64_t> hashes_scratch_;
  std::vector<int64_t> counts_scratch_;
};

// The running jobs with a replica on GPU `index` of node `node`, in id order, each with what it
// takes of the GPU (`amount` of its group's request): "j3 500, j6 600" (error paths only: a scan
// of every job).
template <typename Amount>
std::string JobsOnGpu(const std::vector<Job>& jobs, const std::string& node, int32_t index,
                      Amount amount) {
  std::vector<const Job*> sorted;
  for (const Job& job : jobs) sorted.push_back(&job);
  std::sort(sorted.begin(), sorted.end(), [](const Job* a, const Job* b) { return a->id < b->id; });
  std::string out;
  for (const Job* job : sorted) {
    if (job->state != JobState::kRunning) continue;
    for (const ReplicaPlacement& p : job->placements) {
      if (p.node != node || std::find(p.gpus.begin(), p.gpus.end(), index) == p.gpus.end()) {
        continue;
      }
      for (const TaskGroup& group : job->groups) {
        if (group.name != p.group) continue;
        if (!out.empty()) out += ", ";
        out += fmt::format("{} {}", job->id, amount(group.request));
      }
    }
  }
  return out;
}

// Checks that what running jobs use of one node fits it; an over-committed GPU names the jobs on
// it.
absl::Status CheckNodeUsage(const NodeInfo& info, const std::vector<Job>& jobs) {
  const Node& node = *info.node;
  for (size_t g = 0; g < info.gpus.size(); ++g) {
    const int32_t index = info.gpus[g]->index;
    if (info.used_milli[g] > kMilliPerGpu) {
      return Inconsistent(
          "nodes[{}].gpus[{}]: over-committed: running jobs use {} milli-GPUs "
          "of {} (jobs: {})",
          node.id, index, info.used_milli[g], kMilliPerGpu,
          JobsOnGpu(jobs, node.id, index,
                    [](const ResourceRequest& r) { return r.MilliPerGpu(); }));
    }
    if (info.used_gpu_memory_mib[g] > info.gpu_memory_mib) {
      return Inconsistent(
          "nodes[{}].gpus[{}]: GPU memory over-committed: running jobs use {} "
          "MiB of {} (jobs: {})",
          node.id, index, info.used_gpu_memory_mib[g], info.gpu_memory_mib,
          JobsOnGpu(jobs, node.id, index, [&info](const ResourceRequest& r) {
            return r.MilliPerGpu() < kMilliPerGpu ? r.gpu_memory_mib : info.gpu_memory_mib;
          }));
    }
  }
  if (info.used_cpu_milli > node.cpu_milli) {
    return Inconsistent("nodes[{}].cpu_milli: over-committed: running jobs use {} of {}", node.id,
                        info.used_cpu_milli, node.cpu_milli);
  }
  if (info.used_memory_mib > node.memory_mib) {
    return Inconsistent("nodes[{}].memory_mib: over-committed: running jobs use {} of {}", node.id,
                        info.used_memory_mib, node.memory_mib);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckJobs(const std::vector<Job>& jobs, Catalog& catalog) {
  return JobValidator(catalog).CheckJobs(jobs);
}

absl::Status CheckOverCommitment(const Catalog& catalog, const std::vector<Job>& jobs) {
  SmallestIdError first;
  for (const NodeInfo& info : catalog.nodes) {
    first.Offer(info.node->id, CheckNodeUsage(info, jobs));
  }
  return first.status();
}

}  // namespace gpupool::internal::validation
