#include "hosts/slurm/snapshot_builder.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "hosts/slurm/slurm_text.h"

namespace gpupool::slurm {
namespace {

// Slurm marks a job held by giving it priority 0; the reason says who held it.
bool IsHeld(const SlurmJob& job) {
  return job.job_state == "PENDING" &&
         (job.priority == 0 || job.state_reason == "JobHeldUser" ||
          job.state_reason == "JobHeldAdmin" || job.state_reason == "job_requeued_in_held_state");
}

// Node states: DOWN-like states and flags take the node out; DRAIN and other "no new work" flags
// cordon it (its jobs keep running, as in Slurm); idle, mixed and allocated nodes are ready.
NodeState MapNodeState(const SlurmNode& node) {
  static const std::set<std::string> kDownStates = {"down", "error", "future", "unknown"};
  static const std::set<std::string> kDownFlags = {"NOT_RESPONDING", "FAIL",       "POWERED_DOWN",
                                                   "POWERING_DOWN",  "POWER_DOWN", "INVALID_REG"};
  static const std::set<std::string> kCordonFlags = {
      "DRAIN", "MAINT", "RESERVED", "REBOOT_REQUESTED", "REBOOT_ISSUED", "POWERING_UP", "PLANNED"};
  std::string state = node.state;
  for (char& c : state) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (kDownStates.count(state) > 0) return NodeState::kDown;
  bool cordon = false;
  for (const std::string& flag : node.state_flags) {
    if (kDownFlags.count(flag) > 0) return NodeState::kDown;
    if (kCordonFlags.count(flag) > 0) cordon = true;
  }
  if (cordon) return NodeState::kCordoned;
  if (state == "idle" || state == "mixed" || state == "allocated" || state == "completing") {
    return NodeState::kReady;
  }
  return NodeState::kCordoned;
}

int32_t PriorityFromNice(int64_t nice) {
  const int64_t priority = -nice;
  return static_cast<int32_t>(std::clamp<int64_t>(priority, std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max()));
}

// The GPUs a job asks for on each of its nodes, and the GPU type if it names one.
struct GpuRequest {
  int64_t per_node = 0;
  std::string type;
};

// Why a job's GPU request cannot be expressed per node, or the request.
absl::StatusOr<GpuRequest> MapGpuRequest(const SlurmJob& job, const std::string& gres_name) {
  auto gpu_entries = [&](const std::string& text,
                         const std::string& option) -> absl::StatusOr<std::vector<Gres>> {
    absl::StatusOr<std::vector<Gres>> list = ParseGresList(text);
    if (!list.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(option, ": ", list.status().message()));
    }
    std::vector<Gres> gpus;
    for (Gres& gres : *list) {
      if (gres.name == gres_name) gpus.push_back(std::move(gres));
    }
    if (gpus.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(option, " asks for GPUs of several types (\"",
                                                     text,
                                                     "\"): gpupool places a job on one GPU model"));
    }
    return gpus;
  };
  GpuRequest request;
  absl::StatusOr<std::vector<Gres>> per_node = gpu_entries(job.tres_per_node, "--gres");
  if (!per_node.ok()) return per_node.status();
  if (!per_node->empty()) {
    request.per_node = per_node->front().count;
    request.type = per_node->front().type;
    return request;
  }
  absl::StatusOr<std::vector<Gres>> per_job = gpu_entries(job.tres_per_job, "--gpus");
  if (!per_job.ok()) return per_job.status();
  if (!per_job->empty()) {
    if (job.node_count != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--gpus=", per_job->front().count, " over ", job.node_count,
          " nodes: Slurm may split it unevenly; ask --gpus-per-node (or --gres) instead"));
    }
    request.per_node = per_job->front().count;
    request.type = per_job->front().type;
    return request;
  }
  absl::StatusOr<std::vector<Gres>> per_task = gpu_entries(job.tres_per_task, "--gpus-per-task");
  if (!per_task.ok()) return per_task.status();
  if (!per_task->empty()) {
    if (job.node_count != 1) {
      return absl::InvalidArgumentError(
          "--gpus-per-task over several nodes: ask --gpus-per-node (or --gres) instead");
    }
    request.per_node = per_task->front().count * std::max<int64_t>(job.tasks, 1);
    request.type = per_task->front().type;
  }
  return request;
}

// Why a held job cannot be scheduled by gpupool (empty: it can).
std::string UnmappableWhy(const SlurmJob& job) {
  if (job.array) return "job arrays are not supported: submit the tasks as separate jobs";
  if (job.heterogeneous) return "heterogeneous jobs are not supported";
  if (!job.excluded_nodes.empty()) {
    return "--exclude is not supported: gpupool chooses the nodes (see docs/slurm.md)";
  }
  if (!job.features.empty()) {
    return "--constraint is not supported: gpupool chooses the nodes (see docs/slurm.md)";
  }
  if (job.node_count < 1) return "the job asks for no node";
  return "";
}

std::string LeafQueue(const SlurmJob& job, const AdapterOptions& options) {
  const std::string& key = options.queue_by == QueueBy::kAccount ? job.account : job.qos;
  return absl::StrCat(job.partition, "/", key.empty() ? "default" : key);
}

}  // namespace

absl::StatusOr<BuiltSnapshot> BuildSnapshot(const SlurmState& state, const AdapterOptions& options,
                                            int64_t now) {
  BuiltSnapshot built;
  Snapshot& snapshot = built.snapshot;
  snapshot.now = now;

  // Managed partitions.
  std::map<std::string, const SlurmPartition*> managed;
  for (const std::string& name : options.partitions) {
    const auto it = std::find_if(state.partitions.begin(), state.partitions.end(),
                                 [&](const SlurmPartition& p) { return p.name == name; });
    if (it == state.partitions.end()) {
      return absl::FailedPreconditionError(
          absl::StrCat("partition ", name,
                       ": not found in 'scontrol show partition' (create it in slurm.conf as "
                       "docs/slurm.md shows, or pass --partition)"));
    }
    managed[name] = &*it;
  }

  // Racks: the leaf (level 0) switch of each node.
  std::map<std::string, std::string> rack_of;
  for (const SlurmSwitch& entry : state.switches) {
    if (entry.level != 0) continue;
    for (const std::string& node : entry.nodes) rack_of.emplace(node, entry.name);
  }

  // Nodes.
  std::map<std::string, Node> nodes;
  std::map<std::string, std::vector<int32_t>> used_gpus;  // per node, as Slurm reports
  std::map<std::string, int64_t> alloc_cpus;
  std::set<std::string> models;
  bool any_rack = false;
  for (const SlurmNode& slurm_node : state.nodes) {
    std::vector<std::string> in_managed;
    for (const std::string& p : slurm_node.partitions) {
      if (managed.count(p) > 0) in_managed.push_back(p);
    }
    if (in_managed.empty() || nodes.count(slurm_node.name) > 0) continue;
    const std::string where = absl::StrCat("node ", slurm_node.name, ": ");
    absl::StatusOr<std::vector<Gres>> gres = ParseGresList(slurm_node.gres);
    if (!gres.ok()) return absl::InvalidArgumentError(where + std::string(gres.status().message()));
    int64_t gpu_count = 0;
    std::set<std::string> types;
    for (const Gres& g : *gres) {
      if (g.name != options.gres_name) continue;
      gpu_count += g.count;
      types.insert(g.type.empty() ? options.gres_name : g.type);
    }
    if (gpu_count > 1024) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "GRES \"", slurm_node.gres, "\": more than 1024 GPUs"));
    }
    Node node;
    node.id = slurm_node.name;
    if (gpu_count > 0) {
      node.gpu_model = absl::StrJoin(types, "+");
      if (types.size() > 1) {
        built.notes.push_back(absl::StrCat(where, "several GPU types (", slurm_node.gres,
                                           "): taken as one model \"", node.gpu_model, "\""));
      }
      models.insert(node.gpu_model);
    }
    for (int32_t i = 0; i < gpu_count; ++i) node.gpus.push_back({.index = i, .island = 0});
    node.cpu_milli = std::max<int64_t>(slurm_node.cpus, 0) * 1000;
    node.memory_mib = std::max<int64_t>(slurm_node.real_memory_mb, 0);
    node.state = MapNodeState(slurm_node);
    // A partition that is not UP starts nothing: its nodes take no new work from gpupool.
    for (const std::string& p : in_managed) {
      if (managed.at(p)->state != "UP" && node.state == NodeState::kReady) {
        node.state = NodeState::kCordoned;
      }
    }
    if (const auto rack = rack_of.find(slurm_node.name); rack != rack_of.end()) {
      node.path.push_back({"rack", rack->second});
      any_rack = true;
    }
    std::string slurm_state = slurm_node.state;
    for (const std::string& flag : slurm_node.state_flags) absl::StrAppend(&slurm_state, "+", flag);
    node.labels.push_back({"slurm_partitions", absl::StrJoin(in_managed, ",")});
    // With several managed partitions, a job runs only on the nodes of its own, as Slurm would
    // have it: the node belongs to the root queues of the managed partitions it is in.
    if (managed.size() > 1) node.owner_queues = in_managed;
    node.labels.push_back({"slurm_state", slurm_state});
    absl::StatusOr<std::vector<Gres>> used = ParseGresList(slurm_node.gres_used);
    if (!used.ok()) return absl::InvalidArgumentError(where + std::string(used.status().message()));
    std::vector<int32_t>& used_here = used_gpus[node.id];
    for (const Gres& g : *used) {
      if (g.name != options.gres_name) continue;
      for (int32_t index : g.indices) {
        if (index < gpu_count) used_here.push_back(index);
      }
    }
    alloc_cpus[node.id] = std::max<int64_t>(slurm_node.alloc_cpus, 0);
    nodes.emplace(node.id, std::move(node));
  }
  if (any_rack) snapshot.topology.levels = {"rack"};
  for (const std::string& model : models) {
    // Slurm does not report GPU memory, and Slurm jobs cannot ask for it: 1 MiB is a stand-in
    // that no job constrains.
    snapshot.gpu_models.push_back({.name = model, .memory_mib = 1});
  }

  // Jobs.
  std::vector<const SlurmJob*> sorted;
  for (const SlurmJob& job : state.jobs) sorted.push_back(&job);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const SlurmJob* a, const SlurmJob* b) { return a->job_id < b->job_id; });
  std::set<std::string> leaf_queues;
  std::map<std::string, std::vector<int32_t>> explained_gpus;  // per node, by snapshot jobs
  std::map<std::string, int64_t> explained_cpus;
  for (const SlurmJob* slurm_job : sorted) {
    const std::string id = absl::StrCat(slurm_job->job_id);
    const CommentParts comment = SplitComment(slurm_job->comment);
    if (managed.count(slurm_job->partition) == 0) {
      // A held job submitted to several partitions, one of them managed: Slurm may run it on
      // either, so gpupool does not take it, and says so.
      const std::vector<std::string> parts = absl::StrSplit(slurm_job->partition, ',');
      const bool one_managed = std::any_of(
          parts.begin(), parts.end(), [&](const std::string& p) { return managed.count(p) > 0; });
      if (parts.size() > 1 && one_managed && IsHeld(*slurm_job)) {
        built.unmapped.push_back(
            {.id = id,
             .why = absl::StrCat("submitted to several partitions (", slurm_job->partition,
                                 "): gpupool schedules jobs of one managed partition; submit "
                                 "with -p naming it alone"),
             .user_comment = comment.user,
             .comment = slurm_job->comment});
      }
      continue;
    }
    const bool running = slurm_job->job_state == "RUNNING";
    const bool held = IsHeld(*slurm_job);
    if (!running && !held) {
      if (slurm_job->job_state != "PENDING") continue;
      // Released, not started yet.
      InFlightJob in_flight{.id = id, .user_comment = comment.user, .comment = slurm_job->comment};
      absl::StatusOr<std::vector<std::string>> names = ExpandHostlist(slurm_job->required_nodes);
      if (names.ok()) in_flight.nodes = *std::move(names);
      if (in_flight.nodes.empty()) {
        built.notes.push_back(absl::StrCat("job ", id,
                                           ": released without a node list: Slurm's own "
                                           "scheduler places it, gpupool does not see its GPUs"));
      }
      for (const std::string& name : in_flight.nodes) {
        const auto node = nodes.find(name);
        if (node == nodes.end() || node->second.state != NodeState::kReady) {
          if (in_flight.unschedulable_node.empty()) in_flight.unschedulable_node = name;
          continue;
        }
        node->second.state = NodeState::kCordoned;
      }
      built.in_flight.push_back(std::move(in_flight));
      continue;
    }

    std::string why = running ? "" : UnmappableWhy(*slurm_job);
    absl::StatusOr<Directives> directives = ParseDirectives(comment.user);
    if (why.empty() && !directives.ok()) why = std::string(directives.status().message());
    absl::StatusOr<GpuRequest> gpus = MapGpuRequest(*slurm_job, options.gres_name);
    if (why.empty() && !gpus.ok()) why = std::string(gpus.status().message());
    if (why.empty() && gpus->per_node * 1000 > kMaxQuantity) why = "too many GPUs per node";

    Job job;
    job.id = id;
    job.queue = LeafQueue(*slurm_job, options);
    job.priority = PriorityFromNice(slurm_job->nice);
    job.submit_time = std::max<int64_t>(slurm_job->submit_time, 0);
    TaskGroup group;
    group.replicas = static_cast<int32_t>(std::clamp<int64_t>(slurm_job->node_count, 1, 100000));
    // Slurm runs a job's share of each of its K nodes there: one replica per node.
    if (group.replicas > 1) group.topology.max_replicas_per_node = 1;
    if (gpus.ok()) {
      group.request.gpu_milli = gpus->per_node * 1000;
      if (!gpus->type.empty()) group.gpu_models = {gpus->type};
    }
    const int64_t cpus = std::max<int64_t>(slurm_job->cpus, 0);
    group.request.cpu_milli = (cpus + group.replicas - 1) / group.replicas * 1000;
    job.groups.push_back(std::move(group));
    job.preemptible = slurm_job->requeue;
    if (directives.ok()) {
      job.checkpointing.interval_s = directives->checkpoint_interval_s;
      if (!directives->checkpoint_signal.empty()) {
        job.checkpointing.checkpoint_cost_s = directives->checkpoint_wait_s;
      }
    }
    if (slurm_job->time_limit_min.has_value() && *slurm_job->time_limit_min > 0 &&
        *slurm_job->time_limit_min < (int64_t{1} << 30)) {
      job.runtime_estimate_s = *slurm_job->time_limit_min * 60;
    }

    if (running) {
      // Where it runs: one replica per node, in allocation order, with its GPU indices.
      const TaskGroup& g = job.groups.front();
      std::string problem = why;
      if (problem.empty() && static_cast<int64_t>(slurm_job->nodes.size()) != g.replicas) {
        problem =
            absl::StrCat("runs on ", slurm_job->nodes.size(), " nodes, asked for ", g.replicas);
      }
      if (problem.empty() && g.request.gpu_milli > 0 &&
          slurm_job->gres_detail.size() != slurm_job->nodes.size()) {
        problem = "Slurm does not report its GPU indices (gres_detail)";
      }
      std::vector<ReplicaPlacement> placements;
      for (size_t i = 0; problem.empty() && i < slurm_job->nodes.size(); ++i) {
        ReplicaPlacement placement{
            .group = g.name, .replica = static_cast<int32_t>(i), .node = slurm_job->nodes[i]};
        if (nodes.count(placement.node) == 0) {
          problem = absl::StrCat("runs on node ", placement.node, " outside the partition");
          break;
        }
        if (g.request.gpu_milli > 0) {
          absl::StatusOr<std::vector<Gres>> detail = ParseGresList(slurm_job->gres_detail[i]);
          if (!detail.ok()) {
            problem = std::string(detail.status().message());
            break;
          }
          for (const Gres& entry : *detail) {
            if (entry.name == options.gres_name) {
              placement.gpus.insert(placement.gpus.end(), entry.indices.begin(),
                                    entry.indices.end());
            }
          }
          std::sort(placement.gpus.begin(), placement.gpus.end());
          if (static_cast<int64_t>(placement.gpus.size()) != g.request.GpuCount()) {
            problem = absl::StrCat("holds ", placement.gpus.size(), " GPUs on ", placement.node,
                                   ", asked for ", g.request.GpuCount());
            break;
          }
        }
        placements.push_back(std::move(placement));
      }
      if (!problem.empty()) {
        // Its GPUs stay out of reach (unhealthy) through the reconciliation below.
        built.notes.push_back(absl::StrCat("job ", id, ": running but not mapped (", problem,
                                           "): its GPUs and CPUs are kept out of reach"));
        continue;
      }
      for (const ReplicaPlacement& p : placements) {
        std::vector<int32_t>& explained = explained_gpus[p.node];
        explained.insert(explained.end(), p.gpus.begin(), p.gpus.end());
        explained_cpus[p.node] += g.request.cpu_milli / 1000;
      }
      job.state = JobState::kRunning;
      job.start_time = std::max<int64_t>(slurm_job->start_time, 0);
      job.attained_service_s = std::max<int64_t>(now - *job.start_time, 0);
      job.placements = std::move(placements);
    } else if (!why.empty()) {
      built.unmapped.push_back(
          {.id = id, .why = why, .user_comment = comment.user, .comment = slurm_job->comment});
      continue;
    }

    JobFacts facts{.node_count = slurm_job->node_count,
                   .directives = directives.ok() ? *directives : Directives{},
                   .user_comment = comment.user,
                   .comment = slurm_job->comment,
                   .running = running};
    built.jobs.emplace(id, std::move(facts));
    leaf_queues.insert(job.queue);
    snapshot.jobs.push_back(std::move(job));
  }

  // GPUs Slurm reports in use that no snapshot job holds belong to work gpupool does not manage
  // (or cannot read): they receive nothing new. The same for CPUs.
  for (auto& [name, node] : nodes) {
    std::vector<int32_t> explained = explained_gpus[name];
    std::sort(explained.begin(), explained.end());
    std::vector<int32_t> used = used_gpus[name];
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    std::vector<int32_t> foreign;
    std::set_difference(used.begin(), used.end(), explained.begin(), explained.end(),
                        std::back_inserter(foreign));
    for (int32_t index : foreign) node.gpus[static_cast<size_t>(index)].healthy = false;
    if (!foreign.empty()) {
      built.notes.push_back(absl::StrCat("node ", name, ": GPUs ", absl::StrJoin(foreign, ","),
                                         " are in use by work outside gpupool's jobs: kept out"));
    }
    const int64_t foreign_cpus = std::max<int64_t>(alloc_cpus[name] - explained_cpus[name], 0);
    node.cpu_milli =
        std::max<int64_t>(node.cpu_milli - foreign_cpus * 1000, explained_cpus[name] * 1000);
    snapshot.nodes.push_back(std::move(node));
  }

  // Queues: one root per managed partition (its PriorityTier as priority), one leaf per account
  // (or QOS) seen in its jobs.
  for (const auto& [name, partition] : managed) {
    Queue root;
    root.id = name;
    root.priority = static_cast<int32_t>(
        std::clamp<int64_t>(partition->priority_tier, 0, std::numeric_limits<int32_t>::max()));
    snapshot.queues.push_back(std::move(root));
  }
  for (const std::string& leaf : leaf_queues) {
    Queue queue;
    queue.id = leaf;
    queue.parent = leaf.substr(0, leaf.find('/'));
    snapshot.queues.push_back(std::move(queue));
  }
  for (const auto& [name, partition] : managed) {
    if (partition->state != "UP") {
      built.notes.push_back(
          absl::StrCat("partition ", name, " is ", partition->state,
                       ": Slurm starts none of its jobs; its nodes are cordoned"));
    }
  }
  return built;
}

}  // namespace gpupool::slurm
