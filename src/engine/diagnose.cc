// Stage 9 (first half): why a job stays pending (Placer::Diagnose).
//
// Called once per distinct job shape that failed to place (identical jobs reuse the answer).
// The reasons are tested from the most permanent to the most transient, so that the reason a
// user reads is the one that matters: a model the pool lacks, then nodes the job may not use,
// then a request no node could ever hold, then its queue's limit, then a plain lack of free
// capacity, then a topology constraint, and last fragmentation (enough free in total, but not
// in the shape the job needs).
//
// "Free" means free for this job: a GPU model with less memory per GPU than the job asks for
// is not eligible at all, unhealthy GPUs are never free, and GPUs or nodes that isolation keeps
// from the job's tenant are not free for it (they are held by another tenant's running work, so
// the job waits for capacity, not for a different shape).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "place.h"

namespace gpupool::internal {
namespace {

std::string ModelList(const JobInfo& info) {
  std::string out;
  for (int32_t g : info.groups_by_name) {
    const TaskGroup& group = info.job->groups[g];
    if (group.request.gpu_milli == 0) continue;
    for (const std::string& name : group.gpu_models) {
      if (!out.empty()) out += ", ";
      out += name;
    }
    break;
  }
  return out.empty() ? std::string("any model") : out;
}

std::string Gpus(int64_t milli) {
  if (milli == kMilliPerGpu) return "1 GPU";
  if (milli % kMilliPerGpu == 0) return fmt::format("{} GPUs", milli / kMilliPerGpu);
  return fmt::format("{} milli-GPUs", milli);
}

std::string LevelName(const SnapshotIndex& index, int32_t level) {
  return level == index.node_level() ? std::string("node")
                                     : index.snapshot().topology.levels[level];
}

// The GPU memory every GPU of the gang's model must have: the largest per-GPU request of a group
// that uses GPUs (a gang runs on one model).
int64_t GpuMemoryNeeded(const Job& job) {
  int64_t needed = 0;
  for (const TaskGroup& group : job.groups) {
    if (group.request.gpu_milli > 0) needed = std::max(needed, group.request.gpu_memory_mib);
  }
  return needed;
}

bool AnyIsolation(const SnapshotIndex& index) {
  for (int32_t q = 0; q < index.queue_count(); ++q) {
    if (index.queue(q).isolation != Isolation::kNone) return true;
  }
  return false;
}

// The milli-GPUs of node `n` free for the job's tenant (as the Placer's isolation rules allow).
int64_t FreeGpuForTenant(const SnapshotIndex& index, const WorkingState& state, const JobInfo& info,
                         int32_t n) {
  const int64_t tenant = info.tenant;
  const int64_t exclusive = state.node_exclusive_tenant(n);
  if (exclusive != kNoTenant && exclusive != tenant) return 0;
  if (info.isolation == Isolation::kExclusiveNode && state.node_tenant(n) != tenant &&
      !state.NodeEmpty(n)) {
    return 0;
  }
  int64_t usable = 0;
  for (int32_t g = index.gpu_begin(n); g < index.gpu_end(n); ++g) {
    const int64_t free = state.gpu_free_milli(g);
    // A GPU another tenant already shares takes none of this job's replicas.
    if (free < kMilliPerGpu && state.gpu_tenant(g) != tenant) continue;
    usable += free;
  }
  return usable;
}

bool GangLevelRequired(const JobInfo& info) {
  for (int32_t g : info.groups_by_name) {
    const TaskGroup& group = info.job->groups[g];
    if (group.topology.gang_level.has_value()) {
      return group.topology.gang_strictness == Strictness::kRequired;
    }
  }
  return false;
}

// Does the group's max_replicas_per_node spread its required replicas over two nodes or more?
bool Spreads(const TaskGroup& group) {
  const std::optional<int32_t>& most = group.topology.max_replicas_per_node;
  return most.has_value() && group.MinReplicas() > *most;
}

// The first group (in name order) that Spreads(), or null.
const TaskGroup* SpreadGroup(const Job& job) {
  const TaskGroup* found = nullptr;
  for (const TaskGroup& group : job.groups) {
    if (Spreads(group) && (found == nullptr || group.name < found->name)) found = &group;
  }
  return found;
}

}  // namespace

std::string Placer::SpreadNeverFits(int32_t j, const Eligibility& e) const {
  const JobInfo& info = index_.job(j);
  const bool per_domain = GangLevelRequired(info) && info.gang_level != index_.node_level();
  for (int32_t g : info.groups_by_name) {
    const TaskGroup& group = info.job->groups[g];
    if (!Spreads(group)) continue;
    const int32_t most = *group.topology.max_replicas_per_node;
    const int64_t needed = (int64_t{group.MinReplicas()} + most - 1) / most;
    // Eligible nodes that could hold one replica when empty: in all, and per gang domain.
    int64_t total = 0;
    std::vector<int64_t> per(per_domain ? index_.domain_count(info.gang_level) : 0, 0);
    for (int32_t n : e.nodes) {
      if (!FitsOnEmptyNode(group, n)) continue;
      ++total;
      if (per_domain) {
        const int32_t d = index_.node_domain(n, info.gang_level);
        if (d != kNone) ++per[d];
      }
    }
    const int64_t best =
        per_domain ? (per.empty() ? 0 : *std::max_element(per.begin(), per.end())) : total;
    if (best >= needed) continue;
    const std::string nodes =
        fmt::format("{} eligible node{} of {}", best, best == 1 ? "" : "s", ModelList(info));
    const std::string what = per_domain ? fmt::format("no {} has more than {} that can hold one",
                                                      LevelName(index_, info.gang_level), nodes)
                                        : fmt::format("only {} can hold one", nodes);
    return fmt::format(
        "group {} needs its {} replicas on at least {} nodes (at most {} per node, "
        "topology.max_replicas_per_node), and {}, even when empty",
        group.name, group.MinReplicas(), needed, most, what);
  }
  return "";
}

bool Placer::FitsOnEmptyNode(const TaskGroup& group, int32_t n) const {
  const Node& node = index_.node(n);
  const ResourceRequest& request = group.request;
  if (request.cpu_milli > node.cpu_milli || request.memory_mib > node.memory_mib) return false;
  const int64_t count = request.GpuCount();
  if (count == 0) return true;
  if (index_.node_model(n) == kNone || request.gpu_memory_mib > index_.gpu_memory_mib(n)) {
    return false;
  }
  if (index_.healthy_gpus(n) < count) return false;
  if (group.topology.replica_scope == ReplicaScope::kIsland &&
      group.topology.replica_strictness == Strictness::kRequired) {
    std::vector<int64_t> per_island(index_.island_count(n), 0);
    for (int32_t g = index_.gpu_begin(n); g < index_.gpu_end(n); ++g) {
      if (index_.gpu_healthy(g)) ++per_island[index_.gpu_island(g)];
    }
    for (int64_t c : per_island) {
      if (c >= count) return true;
    }
    return false;
  }
  return true;
}

const Placer::Eligibility& Placer::EligibilityFor(int32_t queue, int32_t model, bool needs_gpu,
                                                  bool spot_ok) {
  const int64_t key = (static_cast<int64_t>(queue) + 1) * (index_.model_count() + 2) + (model + 1) +
                      (needs_gpu ? int64_t{1} << 40 : 0) + (spot_ok ? int64_t{1} << 41 : 0);
  auto [it, inserted] = eligibility_.try_emplace(key);
  Eligibility& e = it->second;
  if (!inserted) return e;
  std::vector<int32_t> candidates;
  if (model != kNone) {
    candidates = index_.nodes_of_model(model);
  } else {
    for (int32_t n = 0; n < index_.node_count(); ++n) candidates.push_back(n);
  }
  std::map<std::vector<int64_t>, int32_t> shapes;
  for (int32_t n : candidates) {
    if (!state_.node_open(n)) {
      ++e.not_ready;
    } else if (!index_.QueueMayUseNode(queue, n)) {
      ++e.reserved;
      e.restricted = true;
    } else if (index_.node_spot(n) && !spot_ok) {
      ++e.spot;
      e.restricted = true;
    } else if (needs_gpu && index_.healthy_gpus(n) == 0) {
      ++e.no_healthy;
    } else {
      e.nodes.push_back(n);
      e.capacity_milli += index_.healthy_gpus(n) * kMilliPerGpu;
      const Node& node = index_.node(n);
      std::vector<int64_t> shape = {node.cpu_milli, node.memory_mib, index_.gpu_memory_mib(n)};
      std::vector<int64_t> per_island(index_.island_count(n), 0);
      for (int32_t g = index_.gpu_begin(n); g < index_.gpu_end(n); ++g) {
        if (index_.gpu_healthy(g)) ++per_island[index_.gpu_island(g)];
      }
      std::sort(per_island.begin(), per_island.end());
      shape.insert(shape.end(), per_island.begin(), per_island.end());
      if (shapes.emplace(std::move(shape), n).second) e.representatives.push_back(n);
    }
  }
  // Nodes without a healthy GPU still count in the per-model aggregates' CPU; that only blurs
  // the CPU figure of a message, so they do not force a scan.
  e.max_domain_capacity.assign(index_.level_count(), -1);
  return e;
}

PendingDecision Placer::Diagnose(int32_t j) {
  const JobInfo& info = index_.job(j);
  const Job& job = *info.job;
  PendingDecision out;
  out.job = job.id;

  // Candidate model slots: the accepted models the pool has nodes of; CPU-only gangs: all nodes.
  // Models whose GPUs have less memory than the job needs per GPU are not eligible.
  std::vector<int32_t> models;
  if (info.needs_gpu) {
    const int64_t memory_needed = GpuMemoryNeeded(job);
    int64_t largest_memory = 0;
    bool any_in_pool = false;
    for (int32_t m : info.models) {
      if (index_.nodes_of_model(m).empty()) continue;
      any_in_pool = true;
      largest_memory = std::max(largest_memory, index_.model(m).memory_mib);
      if (index_.model(m).memory_mib >= memory_needed) models.push_back(m);
    }
    if (!any_in_pool) {
      out.reason = PendingReason::kNoAllowedGpuModel;
      out.detail =
          fmt::format("no node in the pool has a GPU of an accepted model ({})", ModelList(info));
      return out;
    }
    if (models.empty()) {
      out.reason = PendingReason::kNeverFits;
      out.detail = fmt::format(
          "each GPU of the job needs {} MiB of GPU memory, and no accepted model in the pool has "
          "that much ({}; the largest has {} MiB)",
          memory_needed, ModelList(info), largest_memory);
      return out;
    }
  } else {
    models = {kNone};
  }

  // Nodes the job may use at all.
  std::vector<const Eligibility*> eligible;
  int64_t not_ready = 0, reserved = 0, no_healthy = 0, spot = 0, eligible_count = 0;
  for (int32_t m : models) {
    eligible.push_back(&EligibilityFor(info.queue, m, info.needs_gpu, SpotOk(j)));
    spot += eligible.back()->spot;
    not_ready += eligible.back()->not_ready;
    reserved += eligible.back()->reserved;
    no_healthy += eligible.back()->no_healthy;
    eligible_count += static_cast<int64_t>(eligible.back()->nodes.size());
  }
  if (eligible_count == 0) {
    out.reason = PendingReason::kNodeRestrictions;
    out.detail = fmt::format(
        "no node of an accepted model ({}) may take the job: {} not ready, {} reserved for "
        "other queues, {} without a healthy GPU",
        ModelList(info), not_ready, reserved, no_healthy);
    if (spot > 0) {
      out.detail += fmt::format(
          ", {} spot (spot nodes take only spot_tolerant jobs and preemptible jobs that "
          "checkpoint{})",
          spot,
          policy_.spot.max_checkpoint_interval_s > 0
              ? fmt::format(" at least every {} s", policy_.spot.max_checkpoint_interval_s)
              : std::string());
    }
    return out;
  }

  // Could the gang ever fit, on an empty pool?
  bool ever_fits = false;
  bool domain_too_small = false;
  std::string too_few_nodes;  // why a group's replicas cannot spread out enough, if they cannot
  for (size_t i = 0; i < models.size() && !ever_fits; ++i) {
    const Eligibility& e = *eligible[i];
    bool all_groups = true;
    for (const TaskGroup& group : job.groups) {
      const bool somewhere = std::any_of(e.representatives.begin(), e.representatives.end(),
                                         [&](int32_t n) { return FitsOnEmptyNode(group, n); });
      all_groups = all_groups && somewhere;
    }
    ever_fits = all_groups && (!info.needs_gpu || e.capacity_milli >= info.gang_milli);
    if (ever_fits && GangLevelRequired(info) && info.gang_level != index_.node_level()) {
      // Some domain of the gang's level must be able to hold the whole gang.
      int64_t& largest = const_cast<Eligibility&>(e).max_domain_capacity[info.gang_level];
      if (largest < 0) {
        std::vector<int64_t> per_domain(index_.domain_count(info.gang_level), 0);
        for (int32_t n : e.nodes) {
          const int32_t d = index_.node_domain(n, info.gang_level);
          if (d != kNone) per_domain[d] += index_.healthy_gpus(n) * kMilliPerGpu;
        }
        largest = per_domain.empty() ? 0 : *std::max_element(per_domain.begin(), per_domain.end());
      }
      ever_fits = largest >= info.gang_milli;
      domain_too_small = !ever_fits;
    }
    if (ever_fits) {
      too_few_nodes = SpreadNeverFits(j, e);
      ever_fits = too_few_nodes.empty();
    }
  }
  if (!ever_fits && !too_few_nodes.empty()) {
    out.reason = PendingReason::kNeverFits;
    out.detail = std::move(too_few_nodes);
    return out;
  }
  if (!ever_fits && domain_too_small) {
    out.reason = PendingReason::kNeverFits;
    out.detail = fmt::format(
        "the gang needs {} within one {}, and no {} has that many even "
        "when empty",
        Gpus(info.gang_milli), LevelName(index_, info.gang_level),
        LevelName(index_, info.gang_level));
    return out;
  }
  if (!ever_fits) {
    const TaskGroup& largest = job.groups[GroupOrder(j).front()];
    out.reason = PendingReason::kNeverFits;
    out.detail = fmt::format(
        "the gang ({} in total; largest replica {} milli-GPUs, {} milli-CPU, {} MiB) does not "
        "fit on the eligible nodes of {} even when they are empty",
        Gpus(info.gang_milli), largest.request.gpu_milli, largest.request.cpu_milli,
        largest.request.memory_mib, ModelList(info));
    return out;
  }

  if (last_all_limited_ && last_limit_block_) {
    const LimitBlock& block = *last_limit_block_;
    out.reason = PendingReason::kQueueLimit;
    out.queue = index_.queue(block.queue).id;
    out.gpu_model = block.model_slot == index_.any_model_slot()
                        ? std::string(kAnyGpuModel)
                        : index_.model(block.model_slot).name;
    out.shortfall_milli = block.shortfall_milli;
    out.detail = fmt::format(
        "starting the job ({} milli-GPUs) would take queue {} over its limit for {} by {} "
        "milli-GPUs (limit {}, in use {})",
        info.gang_milli, out.queue, out.gpu_model, block.shortfall_milli,
        index_.queue_limit(block.queue, block.model_slot),
        state_.queue_limit_usage(block.queue, block.model_slot));
    return out;
  }

  if (last_all_limited_ && last_lending_block_) {
    const LendingBlock& block = *last_lending_block_;
    out.reason = PendingReason::kQueueLimit;
    out.queue = index_.queue(block.queue).id;
    out.gpu_model = block.slot == index_.any_model_slot() ? std::string(kAnyGpuModel)
                                                          : index_.model(block.slot).name;
    out.shortfall_milli = block.shortfall_milli;
    const bool all_models = out.gpu_model == kAnyGpuModel;
    const std::string model = all_models ? std::string("all models") : out.gpu_model;
    if (block.by_node) {
      // The line refused: its queues, and the free GPUs of the nodes they may use.
      std::vector<std::string> names;
      for (int32_t q : block.queues) names.push_back(index_.queue(q).id);
      std::string who = names.size() == 1 ? "queue " + names[0] : "queues " + names[0];
      const size_t listed = names.size() > 4 ? 3 : names.size();
      for (size_t i = 1; i < listed; ++i)
        who += (i + 1 == names.size() ? " and " : ", ") + names[i];
      if (listed < names.size()) who += fmt::format(" and {} others", names.size() - listed);
      out.detail = fmt::format(
          "starting the job ({} milli-GPUs) would use capacity held for queues that do not lend "
          "their unused guarantee (can_lend: false): of the {} milli-GPUs free on {} {} may use, "
          "{} are held for {}",
          info.gang_milli, block.free_milli,
          all_models ? std::string("nodes of all models") : out.gpu_model + " nodes", who,
          block.held_milli, names.size() == 1 ? who : std::string("them"));
      return out;
    }
    const int32_t others = block.holders - 1;
    out.detail = fmt::format(
        "starting the job ({} milli-GPUs) would use capacity held for queues that do not lend "
        "their unused guarantee (can_lend: false): of the {} milli-GPUs free on {}, {} are held "
        "for queue {}{}",
        info.gang_milli, block.free_milli, model, block.held_milli, out.queue,
        others > 0 ? fmt::format(" and {} other queue{}", others, others > 1 ? "s" : "")
                   : std::string());
    return out;
  }

  // Free capacity on eligible nodes, on the best model: from the working state's per-model
  // aggregates unless owner restrictions make the eligible set differ from the open nodes.
  int64_t best_free_gpu = 0, best_free_cpu = 0;
  for (size_t i = 0; i < models.size(); ++i) {
    int64_t free_gpu = 0, free_cpu = 0;
    if (eligible[i]->restricted) {
      for (int32_t n : eligible[i]->nodes) {
        free_gpu += state_.node_free_gpu(n);
        free_cpu += state_.node_free_cpu(n);
      }
    } else if (models[i] != kNone) {
      free_gpu = state_.model_free_gpu(models[i]);
      free_cpu = state_.model_free_cpu(models[i]);
    } else {
      for (int32_t slot = 0; slot <= index_.model_count(); ++slot) {
        free_gpu += state_.model_free_gpu(slot);
        free_cpu += state_.model_free_cpu(slot);
      }
    }
    best_free_gpu = std::max(best_free_gpu, free_gpu);
    best_free_cpu = std::max(best_free_cpu, free_cpu);
  }
  if (best_free_gpu < info.gang_milli) {
    out.reason = PendingReason::kInsufficientCapacity;
    out.shortfall_milli = info.gang_milli - best_free_gpu;
    out.detail =
        fmt::format("the gang needs {} milli-GPUs but only {} are free on eligible nodes of {}",
                    info.gang_milli, best_free_gpu, ModelList(info));
    return out;
  }
  if (best_free_cpu < info.gang_cpu_milli) {
    out.reason = PendingReason::kInsufficientCapacity;
    out.detail = fmt::format("the gang needs {} milli-CPU but only {} are free on eligible nodes",
                             info.gang_cpu_milli, best_free_cpu);
    return out;
  }

  // Isolation: GPUs and nodes held by another tenant's running work are not free for this job.
  if (info.needs_gpu && AnyIsolation(index_)) {
    int64_t best_usable = 0;
    for (const Eligibility* e : eligible) {
      int64_t usable = 0;
      for (int32_t n : e->nodes) usable += FreeGpuForTenant(index_, state_, info, n);
      best_usable = std::max(best_usable, usable);
    }
    if (best_usable < info.gang_milli) {
      out.reason = PendingReason::kInsufficientCapacity;
      out.shortfall_milli = info.gang_milli - best_usable;
      out.detail = fmt::format(
          "the gang needs {} milli-GPUs but only {} of the {} free on eligible nodes of {} may "
          "be used by it: isolation keeps the rest for other tenants' running work",
          info.gang_milli, best_usable, best_free_gpu, ModelList(info));
      return out;
    }
  }

  // Would it fit without its required gang constraint?
  if (info.gang_level != kNone) {
    bool fits_unconstrained = false;
    for (int32_t m : models) {
      const WorkingState::Mark mark = state_.Checkpoint();
      building_.clear();
      fits_unconstrained = PlaceInScope(j, m, Scope{});
      state_.Rollback(mark);
      building_.clear();
      if (fits_unconstrained) break;
    }
    if (fits_unconstrained) {
      const std::string level = LevelName(index_, info.gang_level);
      out.reason = PendingReason::kTopology;
      out.detail =
          fmt::format("{} are free in total, but no single {} has room for the whole gang ({})",
                      Gpus(best_free_gpu), level, Gpus(info.gang_milli));
      if (const TaskGroup* spread = SpreadGroup(job); spread != nullptr) {
        out.detail += fmt::format(
            " with at most {} replica{} of group {} per node (topology.max_replicas_per_node)",
            *spread->topology.max_replicas_per_node,
            *spread->topology.max_replicas_per_node == 1 ? "" : "s", spread->name);
      }
      return out;
    }
  }

  // Would it fit without topology.max_replicas_per_node?
  if (const TaskGroup* spread = SpreadGroup(job); spread != nullptr) {
    bool fits_unspread = false;
    ignore_replica_spread_ = true;
    for (int32_t m : models) {
      const WorkingState::Mark mark = state_.Checkpoint();
      building_.clear();
      fits_unspread = PlaceGang(j, m);
      state_.Rollback(mark);
      building_.clear();
      if (fits_unspread) break;
    }
    ignore_replica_spread_ = false;
    if (fits_unspread) {
      out.reason = PendingReason::kTopology;
      out.detail = fmt::format(
          "{} are free in total, but group {} may have at most {} of its replicas on one node "
          "(topology.max_replicas_per_node), and not enough nodes have room for them",
          Gpus(best_free_gpu), spread->name, *spread->topology.max_replicas_per_node);
      return out;
    }
  }

  out.reason = PendingReason::kFragmentation;
  const TaskGroup& largest = job.groups[GroupOrder(j).front()];
  const bool island = largest.topology.replica_scope == ReplicaScope::kIsland &&
                      largest.topology.replica_strictness == Strictness::kRequired;
  // Where the replica's GPU request must fit whole: one GPU for a share, else one island or node.
  const char* unit = largest.request.gpu_milli > 0 && largest.request.gpu_milli < kMilliPerGpu
                         ? "GPU"
                     : island ? "NVLink island"
                              : "node";
  out.detail = fmt::format(
      "{} are free on eligible nodes, but not in the shape the job needs: each replica needs "
      "{} on one {}{}",
      Gpus(best_free_gpu), Gpus(largest.request.gpu_milli), unit,
      largest.request.cpu_milli > 0 ? fmt::format(" with {} milli-CPU", largest.request.cpu_milli)
                                    : std::string());
  return out;
}

}  // namespace gpupool::internal
