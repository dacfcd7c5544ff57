#include "snapshot_index.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "internal/check.h"

namespace gpupool::internal {
namespace {

template <typename T>
std::vector<const T*> SortedById(const std::vector<T>& items, std::string T::*key) {
  std::vector<const T*> out;
  out.reserve(items.size());
  for (const T& item : items) out.push_back(&item);
  // A host that lists things in id order (as a replay can cheaply) costs one pass, not a sort.
  const auto by_key = [key](const T* a, const T* b) { return a->*key < b->*key; };
  if (!std::is_sorted(out.begin(), out.end(), by_key)) std::sort(out.begin(), out.end(), by_key);
  return out;
}

template <typename T>
void FillLookup(const std::vector<const T*>& items, std::string T::*key,
                absl::flat_hash_map<std::string_view, int32_t>& lookup) {
  lookup.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    lookup.emplace(std::string_view(items[i]->*key), static_cast<int32_t>(i));
  }
}

int32_t Lookup(const absl::flat_hash_map<std::string_view, int32_t>& lookup, std::string_view key) {
  auto it = lookup.find(key);
  return it == lookup.end() ? kNone : it->second;
}

// The value a node names at a level, or nullptr.
const std::string* PathValue(const Node& node, const std::string& level) {
  for (const TopologyLabel& label : node.path) {
    if (label.level == level) return &label.value;
  }
  return nullptr;
}

}  // namespace

SnapshotIndex::SnapshotIndex(const Snapshot& snapshot) : snapshot_(&snapshot) {
  models_ = SortedById(snapshot.gpu_models, &GpuModel::name);
  FillLookup(models_, &GpuModel::name, model_by_name_);
  IndexNodes();
  IndexTopology();
  IndexQueues();
  IndexJobs();
}

int32_t SnapshotIndex::FindModel(std::string_view name) const {
  return Lookup(model_by_name_, name);
}
int32_t SnapshotIndex::FindNode(std::string_view id) const { return Lookup(node_by_id_, id); }
int32_t SnapshotIndex::FindQueue(std::string_view id) const { return Lookup(queue_by_id_, id); }
// Jobs are sorted by id (unique after validation): a binary search, so that no per-cycle map
// of thousands of ids is built for the few lookups a cycle makes.
int32_t SnapshotIndex::FindJob(std::string_view id) const {
  auto it = std::lower_bound(jobs_.begin(), jobs_.end(), id,
                             [](const Job* job, std::string_view key) { return job->id < key; });
  if (it == jobs_.end() || (*it)->id != id) return kNone;
  return static_cast<int32_t>(it - jobs_.begin());
}

int32_t SnapshotIndex::FindLevel(std::string_view name) const {
  if (name == "node") return node_level();
  const auto& levels = snapshot_->topology.levels;
  for (size_t l = 0; l < levels.size(); ++l) {
    if (levels[l] == name) return static_cast<int32_t>(l);
  }
  return kNone;
}

int32_t SnapshotIndex::FindGroup(int32_t j, std::string_view name) const {
  const auto& groups = job_info_[j].job->groups;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].name == name) return static_cast<int32_t>(g);
  }
  return kNone;
}

int32_t SnapshotIndex::FindGpu(int32_t n, int32_t index) const {
  auto begin = gpu_index_.begin() + gpu_begin(n);
  auto end = gpu_index_.begin() + gpu_end(n);
  auto it = std::lower_bound(begin, end, index);
  if (it == end || *it != index) return kNone;
  return static_cast<int32_t>(it - gpu_index_.begin());
}

int64_t SnapshotIndex::gpu_memory_mib(int32_t n) const {
  return node_model_[n] == kNone ? 0 : models_[node_model_[n]]->memory_mib;
}

int32_t SnapshotIndex::node_domain(int32_t n, int32_t l) const {
  if (l == node_level()) return n;
  return node_domain_[static_cast<size_t>(n) * level_count() + l];
}

int32_t SnapshotIndex::domain_count(int32_t l) const {
  if (l == node_level()) return node_count();
  return static_cast<int32_t>(domain_nodes_[l].size());
}

const std::vector<int32_t>& SnapshotIndex::domain_nodes(int32_t l, int32_t d) const {
  if (l == node_level()) return single_node_[d];
  return domain_nodes_[l][d];
}

std::string SnapshotIndex::DomainName(int32_t l, int32_t d) const {
  if (l == node_level()) return nodes_[d]->id;
  return domain_names_[l][d];
}

// Nodes are numbered in topology order: by their value at each declared level, outermost first
// (a missing value sorts first), then by id. Neighbours in this order are neighbours in the
// tree, so "first in topology order" packs work into few racks and blocks.
void SnapshotIndex::IndexNodes() {
  const auto& levels = snapshot_->topology.levels;
  // Each node's values at the levels, resolved once (nullptr: none, sorting as ""), then the
  // nodes sorted through them.
  const size_t width = levels.size();
  std::vector<const std::string*> values(snapshot_->nodes.size() * width);
  std::vector<int32_t> order(snapshot_->nodes.size());
  for (size_t i = 0; i < snapshot_->nodes.size(); ++i) {
    order[i] = static_cast<int32_t>(i);
    for (size_t l = 0; l < width; ++l) {
      values[i * width + l] = PathValue(snapshot_->nodes[i], levels[l]);
    }
  }
  auto value = [&values, width](int32_t i, size_t l) {
    const std::string* v = values[i * width + l];
    return v == nullptr ? std::string_view() : std::string_view(*v);
  };
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    for (size_t l = 0; l < width; ++l) {
      const int c = value(a, l).compare(value(b, l));
      if (c != 0) return c < 0;
    }
    return snapshot_->nodes[a].id < snapshot_->nodes[b].id;
  });
  nodes_.reserve(order.size());
  for (int32_t i : order) nodes_.push_back(&snapshot_->nodes[i]);
  FillLookup(nodes_, &Node::id, node_by_id_);

  const int32_t n_count = node_count();
  node_model_.assign(n_count, kNone);
  nodes_of_model_.assign(model_count(), {});
  gpu_begin_.assign(n_count + 1, 0);
  island_count_.assign(n_count, 0);
  healthy_gpus_.assign(n_count, 0);
  node_spot_.assign(n_count, 0);
  single_node_.resize(n_count);
  for (int32_t n = 0; n < n_count; ++n) {
    const Node& node = *nodes_[n];
    single_node_[n] = {n};
    if (node.spot) {
      node_spot_[n] = 1;
      any_spot_ = true;
    }
    any_reclaiming_ = any_reclaiming_ || node.reclaiming;
    gpu_begin_[n + 1] = gpu_begin_[n] + static_cast<int32_t>(node.gpus.size());
    if (!node.gpus.empty()) {
      node_model_[n] = FindModel(node.gpu_model);
      GPUPOOL_CHECK(node_model_[n] != kNone);
      nodes_of_model_[node_model_[n]].push_back(n);
    } else {
      cpu_only_nodes_.push_back(n);
    }
  }
  const int32_t g_count = gpu_begin_[n_count];
  gpu_index_.resize(g_count);
  gpu_island_.resize(g_count);
  gpu_healthy_.resize(g_count);
  std::vector<const Gpu*> gpus;
  std::vector<int32_t> islands;
  for (int32_t n = 0; n < n_count; ++n) {
    gpus.clear();
    for (const Gpu& gpu : nodes_[n]->gpus) gpus.push_back(&gpu);
    // Validation made GPU indices unique within a node, so the order is total.
    std::sort(gpus.begin(), gpus.end(),
              [](const Gpu* a, const Gpu* b) { return a->index < b->index; });
    islands.clear();
    for (const Gpu* gpu : gpus) islands.push_back(gpu->island);
    std::sort(islands.begin(), islands.end());
    islands.erase(std::unique(islands.begin(), islands.end()), islands.end());
    island_count_[n] = static_cast<int32_t>(islands.size());
    for (size_t i = 0; i < gpus.size(); ++i) {
      const int32_t g = gpu_begin_[n] + static_cast<int32_t>(i);
      gpu_index_[g] = gpus[i]->index;
      gpu_island_[g] = static_cast<int32_t>(
          std::lower_bound(islands.begin(), islands.end(), gpus[i]->island) - islands.begin());
      gpu_healthy_[g] = gpus[i]->healthy ? 1 : 0;
      if (gpus[i]->healthy) ++healthy_gpus_[n];
    }
  }
}

// A node's domain at level l is named by its values at levels 0..l; it has none at l when it
// names no value at l. Nodes are already in topology order, so numbering domains as they are
// first met numbers them in topology order too.
void SnapshotIndex::IndexTopology() {
  const auto& levels = snapshot_->topology.levels;
  const int32_t l_count = level_count();
  node_domain_.assign(static_cast<size_t>(node_count()) * l_count, kNone);
  domain_nodes_.assign(l_count, {});
  domain_names_.assign(l_count, {});
  domain_offset_.assign(l_count + 1, 0);
  for (int32_t l = 0; l < l_count; ++l) {
    std::map<std::string, int32_t> ids;
    for (int32_t n = 0; n < node_count(); ++n) {
      const Node& node = *nodes_[n];
      if (PathValue(node, levels[l]) == nullptr) continue;
      std::string name;
      for (int32_t k = 0; k <= l; ++k) {
        const std::string* value = PathValue(node, levels[k]);
        if (value == nullptr) continue;
        if (!name.empty()) name += '/';
        name += *value;
      }
      std::string key;
      for (int32_t k = 0; k <= l; ++k) {
        const std::string* value = PathValue(node, levels[k]);
        const std::string& v = value == nullptr ? std::string() : *value;
        key += std::to_string(v.size());
        key += ':';
        key += v;
      }
      auto [it, inserted] = ids.emplace(key, static_cast<int32_t>(domain_nodes_[l].size()));
      if (inserted) {
        domain_nodes_[l].emplace_back();
        domain_names_[l].push_back(name);
      }
      node_domain_[static_cast<size_t>(n) * l_count + l] = it->second;
      domain_nodes_[l][it->second].push_back(n);
    }
    domain_offset_[l + 1] = domain_offset_[l] + static_cast<int32_t>(domain_nodes_[l].size());
  }
}

void SnapshotIndex::IndexQueues() {
  queues_ = SortedById(snapshot_->queues, &Queue::id);
  FillLookup(queues_, &Queue::id, queue_by_id_);
  const int32_t slots = model_count() + 1;
  queue_parent_.assign(queue_count(), kNone);
  queue_limit_.assign(static_cast<size_t>(queue_count()) * slots, kNoLimit);
  for (int32_t q = 0; q < queue_count(); ++q) {
    const Queue& queue = *queues_[q];
    if (!queue.parent.empty()) queue_parent_[q] = FindQueue(queue.parent);
    for (const Quota& quota : queue.quotas) {
      if (!quota.limit_milli.has_value()) continue;
      const int32_t m =
          quota.gpu_model == kAnyGpuModel ? any_model_slot() : FindModel(quota.gpu_model);
      if (m == kNone) continue;
      queue_limit_[static_cast<size_t>(q) * slots + m] = *quota.limit_milli;
    }
  }
  queue_depth_.assign(queue_count(), 0);
  for (int32_t q = 0; q < queue_count(); ++q) {
    for (int32_t a = queue_parent_[q]; a != kNone; a = queue_parent_[a]) ++queue_depth_[q];
  }
  node_owners_.assign(node_count(), {});
  for (int32_t n = 0; n < node_count(); ++n) {
    for (const std::string& owner : nodes_[n]->owner_queues) {
      const int32_t q = FindQueue(owner);
      if (q != kNone) node_owners_[n].push_back(q);
    }
    std::sort(node_owners_[n].begin(), node_owners_[n].end());
  }
}

bool SnapshotIndex::QueueMayUseNode(int32_t q, int32_t n) const {
  const std::vector<int32_t>& owners = node_owners_[n];
  if (owners.empty()) return true;
  // Depth is bounded by the queue count (the tree is acyclic after validation).
  for (int32_t a = q; a != kNone; a = queue_parent_[a]) {
    if (std::binary_search(owners.begin(), owners.end(), a)) return true;
  }
  return false;
}

void SnapshotIndex::IndexJobs() {
  jobs_ = SortedById(snapshot_->jobs, &Job::id);
  job_info_.resize(jobs_.size());
  // Each job's runs in the flat arrays, as [begin, end) offsets while the arrays grow; the
  // views are taken once they are complete.
  struct Runs {
    size_t models, groups, placements;
  };
  std::vector<Runs> begins(jobs_.size() + 1);
  size_t group_total = 0, placement_total = 0, gpu_total = 0;
  for (const Job* job : jobs_) {
    group_total += job->groups.size();
    placement_total += job->placements.size();
    for (const ReplicaPlacement& p : job->placements) gpu_total += p.gpus.size();
  }
  job_groups_.reserve(group_total);
  placements_.reserve(placement_total);
  placement_gpus_.reserve(gpu_total);
  std::vector<int32_t> accepted, mine;
  for (size_t j = 0; j < jobs_.size(); ++j) {
    const Job& job = *jobs_[j];
    JobInfo& info = job_info_[j];
    begins[j] = Runs{job_models_.size(), job_groups_.size(), placements_.size()};
    info.job = &job;
    info.queue = FindQueue(job.queue);
    for (int32_t a = info.queue; a != kNone; a = queue_parent_[a]) {
      if (queues_[a]->isolation != Isolation::kNone) {
        info.tenant = a;
        info.isolation = queues_[a]->isolation;
        break;
      }
    }
    const size_t groups_begin = job_groups_.size();
    for (size_t g = 0; g < job.groups.size(); ++g) job_groups_.push_back(static_cast<int32_t>(g));
    const absl::Span<int32_t> groups_by_name =
        absl::MakeSpan(job_groups_).subspan(groups_begin, job.groups.size());
    std::sort(groups_by_name.begin(), groups_by_name.end(),
              [&job](int32_t a, int32_t b) { return job.groups[a].name < job.groups[b].name; });
    // The accepted models of the gang: those every GPU group accepts, in the preference order
    // of the first GPU group (by name) that states one.
    accepted.clear();
    bool restricted = false;
    for (int32_t g : groups_by_name) {
      const TaskGroup& group = job.groups[g];
      info.gang_milli += group.request.gpu_milli * group.MinReplicas();
      info.gang_cpu_milli += group.request.cpu_milli * group.MinReplicas();
      if (group.request.gpu_milli > 0) info.needs_gpu = true;
      if (group.request.gpu_milli == 0 || group.gpu_models.empty()) continue;
      mine.clear();
      for (const std::string& name : group.gpu_models) {
        const int32_t m = FindModel(name);
        if (m == kNone) {
          info.names_unknown_model = true;
        } else if (std::find(mine.begin(), mine.end(), m) == mine.end()) {
          mine.push_back(m);
        }
      }
      if (!restricted) {
        accepted.swap(mine);
        restricted = true;
      } else {
        std::erase_if(accepted, [&mine](int32_t m) {
          return std::find(mine.begin(), mine.end(), m) == mine.end();
        });
      }
    }
    if (restricted) {
      job_models_.insert(job_models_.end(), accepted.begin(), accepted.end());
    } else {
      for (int32_t m = 0; m < model_count(); ++m) job_models_.push_back(m);
    }
    // A gang restricted to a model list that matches nothing has an empty `models` and
    // `names_unknown_model` or an empty intersection; the placement stage reports it.
    if (restricted && accepted.empty()) info.names_unknown_model = true;
    for (int32_t g : groups_by_name) {
      const TaskGroup& group = job.groups[g];
      if (group.topology.gang_level.has_value()) {
        info.gang_level = FindLevel(*group.topology.gang_level);
        break;
      }
    }
    // Validation checked every reference of a running placement (node, group, GPUs). The
    // arrays were reserved to their final sizes, so these views stay valid.
    for (const ReplicaPlacement& p : job.placements) {
      RunningPlacement& placement = placements_.emplace_back();
      placement.node = FindNode(p.node);
      placement.group = FindGroup(static_cast<int32_t>(j), p.group);
      placement.replica = p.replica;
      GPUPOOL_CHECK(placement.node != kNone && placement.group != kNone);
      const size_t gpus_begin = placement_gpus_.size();
      for (int32_t gpu_index : p.gpus) {
        const int32_t g = FindGpu(placement.node, gpu_index);
        GPUPOOL_CHECK(g != kNone);
        placement_gpus_.push_back(g);
      }
      placement.gpus = absl::MakeConstSpan(placement_gpus_).subspan(gpus_begin, p.gpus.size());
    }
  }
  begins[jobs_.size()] = Runs{job_models_.size(), job_groups_.size(), placements_.size()};
  for (size_t j = 0; j < jobs_.size(); ++j) {
    JobInfo& info = job_info_[j];
    const Runs& b = begins[j];
    const Runs& e = begins[j + 1];
    info.models = absl::MakeConstSpan(job_models_).subspan(b.models, e.models - b.models);
    info.groups_by_name = absl::MakeConstSpan(job_groups_).subspan(b.groups, e.groups - b.groups);
    info.placements =
        absl::MakeConstSpan(placements_).subspan(b.placements, e.placements - b.placements);
  }
}

void SnapshotIndex::MarkTentative(const std::vector<std::pair<std::string, int64_t>>& tentative) {
  if (tentative.empty()) return;
  tentative_.assign(jobs_.size(), 0);
  tentative_rank_.assign(jobs_.size(), 0);
  for (const auto& [id, rank] : tentative) {
    const int32_t j = FindJob(id);
    if (j == kNone) continue;
    tentative_[j] = 1;
    tentative_rank_[j] = rank;
  }
}

void SnapshotIndex::MarkRestored(const std::vector<std::string>& ids,
                                 const std::vector<std::string>& pinned) {
  if (ids.empty()) return;
  restored_.assign(jobs_.size(), 0);
  for (const std::string& id : ids) {
    const int32_t j = FindJob(id);
    if (j != kNone) restored_[j] = 1;
  }
  for (const std::string& id : pinned) {
    const int32_t j = FindJob(id);
    if (j != kNone && restored_[j] != 0) restored_[j] = 2;
  }
}

}  // namespace gpupool::internal
