// The replay's per-cycle snapshot (cycle_snapshot.h).
#include "sim/replay/cycle_snapshot.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "gpupool/resources.h"
#include "sim/replay/metrics.h"

namespace gpupool::sim::internal {
namespace {

int32_t LasLevel(const std::vector<int64_t>& thresholds, int64_t gpu_seconds) {
  int32_t level = 0;
  for (int64_t t : thresholds) {
    if (gpu_seconds >= t) ++level;
  }
  return level;
}

// Everything of job `i` but the dynamic fields. A job of up to a node's GPUs is one replica on
// one NVLink island; a wider one is a gang in one rack of whole nodes when its size allows it,
// otherwise of the largest power-of-two part of a node that divides it (12 GPUs: 3 x 4).
Job JobTemplate(const TraceJob& trace_job, int32_t i, const ReplayPool& pool, bool single_queue) {
  Job job;
  job.id = fmt::format("j{:06}", i);
  job.queue = single_queue ? "all" : trace_job.cluster;
  job.submit_time = trace_job.submit_time;
  job.runtime_estimate_s = trace_job.duration_s;
  TaskGroup group;
  group.topology.replica_scope = ReplicaScope::kIsland;
  if (trace_job.num_gpus <= pool.gpus_per_node) {
    group.request.gpu_milli = int64_t{trace_job.num_gpus} * kMilliPerGpu;
  } else {
    int32_t per = pool.gpus_per_node;
    while (per > 1 && trace_job.num_gpus % per != 0) per /= 2;
    if (trace_job.num_gpus % per != 0) per = 1;
    group.replicas = trace_job.num_gpus / per;
    group.request.gpu_milli = int64_t{per} * kMilliPerGpu;
    group.topology.gang_level = "rack";
  }
  job.groups.push_back(std::move(group));
  return job;
}

}  // namespace

CycleSnapshot::CycleSnapshot(const ReplayOptions& options, const std::vector<TraceJob>& jobs,
                             const Tenants& tenants, const PoolLayout& layout, int64_t start,
                             const ShareHistory& history)
    : options_(options),
      checkpoints_(options),
      prune_(!options.policy.preemption.enabled &&
             options.policy.queue_order == QueueOrder::kNone &&
             options.queue_mode == QueueMode::kPerCluster && !options.maintenance.enabled() &&
             !options.spot.enabled() && !options.scaling.enabled()),
      las_priority_(options.queue_mode != QueueMode::kPerCluster),
      tenants_(tenants),
      start_(start),
      history_(history),
      snapshot_(MakePoolSnapshot(options.pool)) {
  all_nodes_ = snapshot_.nodes;
  // A node like the pool's own, in a rack of its own.
  added_template_ = snapshot_.nodes.front();
  added_template_.id.clear();
  added_template_.path = {TopologyLabel{"rack", "rs"}};
  for (int32_t n = 0; n < layout.own_nodes; ++n) {
    all_nodes_[static_cast<size_t>(n)].spot = layout.IsSpot(n);
  }
  for (int32_t n = layout.own_nodes; n < layout.all_nodes(); ++n) {
    Node node = added_template_;
    node.id = NodeId(n);
    all_nodes_.push_back(std::move(node));
  }
  in_pool_.assign(all_nodes_.size(), true);
  for (int32_t n = layout.own_nodes; n < layout.all_nodes(); ++n) {
    in_pool_[static_cast<size_t>(n)] = false;
  }
  host_state_.assign(all_nodes_.size(), NodeState::kReady);
  host_cause_.assign(all_nodes_.size(), NodeStateCause::kHost);
  const bool single_queue = options.queue_mode == QueueMode::kSingleQueueLas;
  if (single_queue) {
    snapshot_.queues.push_back(
        Queue{.id = "all",
              .quotas = {Quota{.guaranteed_milli = options.pool.TotalGpus() * kMilliPerGpu}}});
  } else {
    for (size_t q = 0; q < tenants.size(); ++q) {
      snapshot_.queues.push_back(
          Queue{.id = tenants.names[q],
                .quotas = {Quota{.guaranteed_milli = tenants.guarantee_milli[q]}},
                .labels = tenants.labels[q],
                .budget_milli_gpu_seconds = tenants.budget_milli_gpu_s[q]});
    }
  }
  templates_.reserve(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    templates_.push_back(JobTemplate(jobs[i], static_cast<int32_t>(i), options.pool, single_queue));
  }
}

void CycleSnapshot::SetBudgetUsed(const std::vector<int64_t>& used) {
  if (options_.queue_mode == QueueMode::kSingleQueueLas) return;
  for (size_t q = 0; q < used.size(); ++q) {
    // The snapshot's range: a queue that used more than 2^40 is over any budget it may have.
    snapshot_.queues[q].budget_used_milli_gpu_seconds = std::min(used[q], kMaxQuantity);
  }
}

void CycleSnapshot::UpdateNode(int32_t node, const PoolHealth& health) {
  const auto k = static_cast<size_t>(node);
  Node& n = all_nodes_[k];
  if (health.Absent(node)) {
    // Released (or never added): it comes back ready.
    host_state_[k] = NodeState::kReady;
    host_cause_[k] = NodeStateCause::kHost;
  }
  in_pool_[k] = !health.Absent(node);
  const bool down = health.NodeDown(node) || health.Taken(node);
  n.state = down ? NodeState::kDown : host_state_[k];
  n.state_cause = down ? NodeStateCause::kHost : host_cause_[k];
  n.reclaiming = health.ReclaimDeadline(node).has_value() && !health.Taken(node);
  n.reclaim_deadline = n.reclaiming ? health.ReclaimDeadline(node) : std::nullopt;
  for (Gpu& gpu : n.gpus) gpu.healthy = !health.GpuFailed(node, gpu.index);
  nodes_changed_ = true;
}

absl::Status CycleSnapshot::ApplyNodeAction(const NodeActionDecision& action) {
  const std::optional<int32_t> node =
      NodeIndex(action.node, static_cast<int32_t>(all_nodes_.size()));
  if (!node) {
    return absl::InternalError(fmt::format("node action for unknown node {}", action.node));
  }
  const auto k = static_cast<size_t>(*node);
  Node& n = all_nodes_[k];
  switch (action.action) {
    case NodeAction::kDrain:
    case NodeAction::kCordon:
      host_state_[k] =
          action.action == NodeAction::kDrain ? NodeState::kDraining : NodeState::kCordoned;
      // The engine drains for maintenance and cordons for health (docs/operations.md).
      host_cause_[k] = action.action == NodeAction::kDrain ? NodeStateCause::kMaintenance
                                                           : NodeStateCause::kHealth;
      break;
    case NodeAction::kUncordon:
      host_state_[k] = NodeState::kReady;
      host_cause_[k] = NodeStateCause::kHost;
      break;
    case NodeAction::kDiagnose:
      return absl::OkStatus();
  }
  if (n.state != NodeState::kDown) {
    n.state = host_state_[k];
    n.state_cause = host_cause_[k];
  }
  nodes_changed_ = true;
  return absl::OkStatus();
}

void CycleSnapshot::BuildNodes(int64_t now) {
  const bool windows = options_.maintenance.enabled();
  if (!nodes_changed_ && !windows) return;
  snapshot_.nodes.clear();
  for (size_t k = 0; k < all_nodes_.size(); ++k) {
    if (!in_pool_[k]) continue;
    snapshot_.nodes.push_back(all_nodes_[k]);
    if (windows) {
      snapshot_.nodes.back().maintenance =
          AnnouncedWindows(options_, static_cast<int32_t>(k), start_, now);
    }
  }
  nodes_changed_ = false;
}

absl::StatusOr<int32_t> JobIndex(const std::string& id, const RunState& state) {
  int32_t i = -1;
  const char* end = id.data() + id.size();
  if (id.size() < 2 || id[0] != 'j' || std::from_chars(id.data() + 1, end, i).ptr != end || i < 0 ||
      i >= state.size()) {
    return absl::InternalError(fmt::format("decision for unknown job {}", id));
  }
  return i;
}

bool CycleSnapshot::WorthScheduling(const RunState& state) const {
  if (state.pending().empty()) return false;
  if (state.free_gpus() <= 0 && !options_.policy.preemption.enabled) return false;
  if (!prune_) return true;
  return std::any_of(state.pending().begin(), state.pending().end(),
                     [&](int32_t i) { return state.job(i).gpus <= state.free_gpus(); });
}

const Snapshot& CycleSnapshot::Build(int64_t now, const RunState& state) {
  snapshot_.now = now;
  BuildNodes(now);
  jobs_built_ = 0;
  UpdateEntitlements(state);
  if (prune_) {
    AddStandIns(now, state);
    AddPrunedPending(state);
  } else {
    AddAllJobs(now, state);
  }
  snapshot_.jobs.erase(snapshot_.jobs.begin() + static_cast<std::ptrdiff_t>(jobs_built_),
                       snapshot_.jobs.end());
  return snapshot_;
}

Job& CycleSnapshot::NextJob(const Job& from) {
  if (jobs_built_ < snapshot_.jobs.size()) {
    snapshot_.jobs[jobs_built_] = from;
  } else {
    snapshot_.jobs.push_back(from);
  }
  return snapshot_.jobs[jobs_built_++];
}

void CycleSnapshot::UpdateEntitlements(const RunState& state) {
  if (!las_priority_ || options_.fair_share_boost_half_levels <= 0) return;
  // The yardstick of the metrics (metrics.h), so that the boost aims at what Jain's index
  // measures: on the pool's own GPUs (nodes the pool may add are not counted).
  WaterFill(tenants_.guarantee_milli, state.demand_milli(),
            options_.pool.TotalGpus() * kMilliPerGpu, entitled_milli_);
}

int32_t CycleSnapshot::Priority(const JobRun& job, int64_t service_s, int64_t tenant_milli,
                                bool running) const {
  if (!las_priority_) return 0;
  const int32_t level = LasLevel(options_.las_thresholds_gpu_seconds, service_s * job.gpus);
  if (entitled_milli_.empty()) return -level;
  // In half levels, so that the boost can sit between two levels.
  int32_t priority = -2 * level;
  const bool kept =
      running && options_.boost_kept_from_gpus > 0 && job.gpus >= options_.boost_kept_from_gpus;
  const auto tenant = static_cast<size_t>(job.tenant);
  const bool within = tenant_milli <= entitled_milli_[tenant] && history_.WithinShare(tenant);
  if (kept || within) priority += static_cast<int32_t>(options_.fair_share_boost_half_levels);
  // A running job of a cluster far beyond its share over the history: half a level down.
  const int64_t demote_above = options_.demote_running_above_history_percent;
  if (running && !kept && demote_above > 0 && history_.AbovePercent(tenant, demote_above)) {
    --priority;
  }
  return priority;
}

void CycleSnapshot::AddStandIns(int64_t now, const RunState& state) {
  // Busy GPUs per node, nodes in id order.
  std::map<std::string, std::vector<int32_t>> busy;
  for (int32_t i : state.running()) {
    for (const ReplicaPlacement& p : state.job(i).placements) {
      std::vector<int32_t>& gpus = busy[p.node];
      gpus.insert(gpus.end(), p.gpus.begin(), p.gpus.end());
    }
  }
  for (auto& [node, gpus] : busy) {
    std::sort(gpus.begin(), gpus.end());
    Job job;
    job.id = "~" + node;
    job.queue = snapshot_.queues.front().id;
    job.submit_time = now;
    TaskGroup group;
    group.request.gpu_milli = static_cast<int64_t>(gpus.size()) * kMilliPerGpu;
    job.groups.push_back(std::move(group));
    job.state = JobState::kRunning;
    job.start_time = now;
    job.placements.push_back(ReplicaPlacement{
        .group = "main", .replica = 0, .node = node, .gpus = gpus, .gpu_milli = 0});
    NextJob(job);
  }
}

void CycleSnapshot::AddAllJobs(int64_t now, const RunState& state) {
  auto running = state.running().begin();
  auto pending = state.pending().begin();
  while (running != state.running().end() || pending != state.pending().end()) {
    if (pending == state.pending().end() ||
        (running != state.running().end() && *running < *pending)) {
      AddRunning(now, state, *running++);
    } else {
      AddPending(state, *pending++);
    }
  }
}

void CycleSnapshot::AddRunning(int64_t now, const RunState& state, int32_t i) {
  const JobRun& run = state.job(i);
  Job& job = NextJob(templates_[i]);
  const int64_t service = ServiceAt(run, now);
  const auto tenant = static_cast<size_t>(run.tenant);
  // A running job is already counted in its tenant's usage.
  job.priority = Priority(run, service, state.usage_milli()[tenant], true);
  job.state = JobState::kRunning;
  job.start_time = run.run_start;
  job.placements = run.placements;
  job.attained_service_s = service;
  // Its cluster holds no more GPUs than its entitlement (entitlements exist with a boost).
  const bool within_share =
      !entitled_milli_.empty() && state.usage_milli()[tenant] <= entitled_milli_[tenant];
  // A job the starvation guard served (ReplayOptions::starved_min_run_s) stays a while, with
  // starved_min_run_within_share only while its cluster holds no more than its entitlement.
  if (options_.starved_min_run_s > 0 && (!options_.starved_min_run_within_share || within_share) &&
      run.run_start - run.pending_since > options_.policy.starvation_bound_s) {
    job.min_runtime_s = options_.starved_min_run_s;
  }
  job.checkpointing.interval_s = checkpoints_.interval_s();
  job.checkpointing.restore_time_s = checkpoints_.RestoreCost();
  job.checkpointing.last_checkpoint_time = checkpoints_.LastCheckpointTime(run, now);
  // A job of a cluster within its share is a victim only while it would lose little
  // (ReplayOptions::max_victim_lost_within_share_s), counted as the engine counts lost work.
  if (const std::optional<int64_t>& most = options_.max_victim_lost_within_share_s;
      most.has_value() && within_share) {
    const int64_t kept =
        std::max(run.run_start, job.checkpointing.last_checkpoint_time.value_or(run.run_start));
    if (now - kept > *most) job.preemptible = false;
  }
}

void CycleSnapshot::AddPrunedPending(const RunState& state) {
  // Of the waiting jobs of g GPUs at most free / g can start, and if one of them fails all later
  // ones fail too: only the first free / g of each size, in FIFO order.
  const int64_t free = state.free_gpus();
  std::map<int32_t, int64_t> sent_by_size;
  for (const auto& [submit, i] : state.pending_fifo()) {
    const int32_t g = state.job(i).gpus;
    if (g > free) continue;
    int64_t& sent = sent_by_size[g];
    if (sent >= free / g) continue;
    ++sent;
    AddPending(state, i);
  }
}

void CycleSnapshot::AddPending(const RunState& state, int32_t i) {
  const JobRun& run = state.job(i);
  Job& job = NextJob(templates_[i]);
  job.attained_service_s = run.service_before;
  job.pending_since = run.pending_since;
  job.priority = Priority(
      run, run.service_before,
      state.usage_milli()[static_cast<size_t>(run.tenant)] + run.gpus * kMilliPerGpu, false);
  job.checkpointing.interval_s = checkpoints_.interval_s();
  job.checkpointing.restore_time_s = checkpoints_.RestoreCost();
}

}  // namespace gpupool::sim::internal

namespace gpupool::sim {

Snapshot MakePoolSnapshot(const ReplayPool& pool) {
  Snapshot s;
  s.topology.levels = {"rack"};
  s.gpu_models.push_back(GpuModel{.name = "gpu", .memory_mib = 32768, .speeds = {}});
  for (int32_t n = 0; n < pool.nodes; ++n) {
    Node node;
    node.id = internal::NodeId(n);
    node.gpu_model = "gpu";
    for (int32_t g = 0; g < pool.gpus_per_node; ++g) {
      node.gpus.push_back(Gpu{.index = g, .island = 0, .healthy = true});
    }
    node.cpu_milli = 1'000'000;
    node.memory_mib = 1'000'000;
    node.path.push_back(TopologyLabel{"rack", fmt::format("r{:02}", n / pool.nodes_per_rack)});
    s.nodes.push_back(std::move(node));
  }
  return s;
}

}  // namespace gpupool::sim
