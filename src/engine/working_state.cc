#include "working_state.h"

#include <algorithm>

#include "internal/check.h"

namespace gpupool::internal {

WorkingState::WorkingState(const SnapshotIndex& index, const Policy& policy)
    : index_(index), key_sign_(policy.placement == PlacementStrategy::kSpread ? -1 : 1) {
  const int32_t g_count = index.gpu_count();
  const int32_t n_count = index.node_count();
  gpu_free_milli_.assign(g_count, 0);
  gpu_free_memory_.assign(g_count, 0);
  gpu_tenant_.assign(g_count, kNoTenant);
  node_free_cpu_.assign(n_count, 0);
  node_free_memory_.assign(n_count, 0);
  node_free_gpu_.assign(n_count, 0);
  node_tenant_.assign(n_count, kNoTenant);
  node_exclusive_tenant_.assign(n_count, kNoTenant);
  node_replicas_.assign(n_count, 0);
  domain_free_gpu_.assign(index.flat_domain_count(), 0);
  queue_usage_.assign(static_cast<size_t>(index.queue_count()) * (index.model_count() + 1), 0);
  limit_room_held_.assign(queue_usage_.size(), 0);
  open_.assign(n_count, 0);
  held_node_.assign(n_count, 0);
  model_free_gpu_.assign(index.model_count() + 1, 0);
  model_free_cpu_.assign(index.model_count() + 1, 0);
  ordered_.resize(index.model_count() + 1);
  indexed_key_.resize(n_count);
  stale_.assign(n_count, 0);

  for (int32_t n = 0; n < n_count; ++n) {
    const Node& node = index.node(n);
    node_free_cpu_[n] = node.cpu_milli;
    node_free_memory_[n] = node.memory_mib;
    for (int32_t g = index.gpu_begin(n); g < index.gpu_end(n); ++g) {
      if (!index.gpu_healthy(g)) continue;
      gpu_free_milli_[g] = kMilliPerGpu;
      gpu_free_memory_[g] = index.gpu_memory_mib(n);
      node_free_gpu_[n] += kMilliPerGpu;
    }
    for (int32_t l = 0; l < index.level_count(); ++l) {
      const int32_t d = index.node_domain(n, l);
      if (d != kNone) domain_free_gpu_[index.flat_domain(l, d)] += node_free_gpu_[n];
    }
    // A spot node being reclaimed takes no new work, whatever its state.
    open_[n] = node.state == NodeState::kReady && !node.reclaiming ? 1 : 0;
    if (open_[n]) {
      indexed_key_[n] = KeyOf(n);
      ordered_[OrderedSlot(n)].insert(indexed_key_[n]);
      model_free_gpu_[OrderedSlot(n)] += node_free_gpu_[n];
      model_free_cpu_[OrderedSlot(n)] += node_free_cpu_[n];
    }
  }
}

void WorkingState::AddRunningJob(int32_t j) {
  const JobInfo& info = index_.job(j);
  for (const RunningPlacement& placement : info.placements) {
    const Held held = HeldOf(j, placement);
    Allocate(j, held.node, held.gpus, held.milli, held.gpu_memory_mib, held.cpu_milli,
             held.memory_mib);
    if (running_.empty()) running_.assign(index_.job_count(), 0);
    running_[j] = 1;
  }
  Commit();
}

WorkingState::Held WorkingState::HeldOf(int32_t j, const RunningPlacement& placement) const {
  const ResourceRequest& request = index_.job(j).job->groups[placement.group].request;
  return Held{placement.node,    placement.gpus,     request.MilliPerGpu(), request.gpu_memory_mib,
              request.cpu_milli, request.memory_mib, placement.group,       placement.replica};
}

int64_t WorkingState::running_milli(int32_t j) const {
  if (running_.empty() || running_[j] == 0) return 0;
  int64_t total = 0;
  for (const RunningPlacement& placement : index_.job(j).placements) {
    const Held held = HeldOf(j, placement);
    total += held.milli * static_cast<int64_t>(held.gpus.size());
  }
  return total;
}

int32_t WorkingState::running_replicas(int32_t j, int32_t group) const {
  if (running_.empty() || running_[j] == 0) return 0;
  int32_t count = 0;
  for (const RunningPlacement& placement : index_.job(j).placements) {
    count += placement.group == group ? 1 : 0;
  }
  return count;
}

void WorkingState::ShrinkRunningGroup(int32_t j, int32_t group, int32_t keep) {
  if (running_.empty() || running_[j] == 0) return;
  if (released_.empty()) released_.assign(index_.job_count(), 0);
  if (released_[j] != 0) return;
  Set(released_, j, 1);
  std::vector<const RunningPlacement*> replicas;
  for (const RunningPlacement& placement : index_.job(j).placements) {
    if (placement.group == group) replicas.push_back(&placement);
  }
  std::sort(
      replicas.begin(), replicas.end(),
      [](const RunningPlacement* a, const RunningPlacement* b) { return a->replica < b->replica; });
  for (size_t i = static_cast<size_t>(std::max(keep, 0)); i < replicas.size(); ++i) {
    Free(j, HeldOf(j, *replicas[i]));
  }
}

bool WorkingState::OnHeldNode(int32_t j) const {
  if (running_.empty() || running_[j] == 0) return false;
  for (const RunningPlacement& placement : index_.job(j).placements) {
    if (held_node_[placement.node] != 0) return true;
  }
  return false;
}

void WorkingState::ReleaseRunningJob(int32_t j) {
  if (running_.empty() || running_[j] == 0) return;
  if (released_.empty()) released_.assign(index_.job_count(), 0);
  if (released_[j] != 0) return;
  Set(released_, j, 1);
  for (const RunningPlacement& placement : index_.job(j).placements) Free(j, HeldOf(j, placement));
}

// The inverse of Allocate(). Tenant marks are cleared when a GPU or node becomes empty; a node
// that still holds other work keeps its marks (conservative: isolation can only be stricter).
void WorkingState::Free(int32_t j, const Held& held) {
  const int32_t n = held.node;
  Touch(n);
  int64_t given = 0;
  const bool whole = held.milli >= kMilliPerGpu;
  for (int32_t g : held.gpus) {
    if (!index_.gpu_healthy(g)) continue;
    Set(gpu_free_milli_, g, gpu_free_milli_[g] + held.milli);
    Set(gpu_free_memory_, g,
        whole ? index_.gpu_memory_mib(n)
              : std::min(index_.gpu_memory_mib(n), gpu_free_memory_[g] + held.gpu_memory_mib));
    if (gpu_free_milli_[g] == kMilliPerGpu) Set(gpu_tenant_, g, kNoTenant);
    given += held.milli;
  }
  AdjustFree(j, n, given, held.cpu_milli, held.memory_mib,
             held.charged ? -held.milli * static_cast<int64_t>(held.gpus.size()) : 0);
  Set(node_replicas_, n, node_replicas_[n] - 1);
  if (NodeEmpty(n)) {
    Set(node_tenant_, n, kNoTenant);
    Set(node_exclusive_tenant_, n, kNoTenant);
  }
}

void WorkingState::DeallocatePlacements(int32_t j, absl::Span<const ReplicaPlacement> placements) {
  const Job& job = *index_.job(j).job;
  for (const ReplicaPlacement& p : placements) {
    const int32_t n = index_.FindNode(p.node);
    const int32_t g = index_.FindGroup(j, p.group);
    if (n == kNone || g == kNone) continue;
    const ResourceRequest& request = job.groups[g].request;
    std::vector<int32_t> gpus;
    for (int32_t i : p.gpus) gpus.push_back(index_.FindGpu(n, i));
    Deallocate(j, n, gpus, request.MilliPerGpu(), request.gpu_memory_mib, request.cpu_milli,
               request.memory_mib);
  }
}

void WorkingState::Touch(int32_t n) {
  // The node's key is about to change: its ordered index is brought up to date when next read.
  MarkStale(n);
  touched_.push_back(n);
}

void WorkingState::Refresh() const {
  for (int32_t n : stale_nodes_) {
    stale_[n] = 0;
    if (!open_[n]) continue;
    const NodeKey key = KeyOf(n);
    const NodeKey& indexed = indexed_key_[n];
    if (key.gpu == indexed.gpu && key.cpu == indexed.cpu) continue;
    absl::btree_set<NodeKey>& ordered = ordered_[OrderedSlot(n)];
    ordered.erase(indexed);
    ordered.insert(key);
    indexed_key_[n] = key;
  }
  stale_nodes_.clear();
}

void WorkingState::Allocate(int32_t j, int32_t n, absl::Span<const int32_t> gpus, int64_t milli,
                            int64_t gpu_memory_mib, int64_t cpu_milli, int64_t memory_mib,
                            bool charge_queue) {
  const JobInfo& info = index_.job(j);
  const int64_t tenant = info.tenant;
  Touch(n);
  int64_t taken = 0;
  const bool whole = milli >= kMilliPerGpu;
  for (int32_t g : gpus) {
    // A GPU with nothing on it has all of its milli free (within a cycle nothing departs, and
    // rollback restores exactly). An unhealthy GPU has no free capacity: running work on it is
    // recorded for isolation only.
    const bool gpu_was_empty = gpu_free_milli_[g] == kMilliPerGpu;
    if (index_.gpu_healthy(g)) {
      Set(gpu_free_milli_, g, gpu_free_milli_[g] - milli);
      Set(gpu_free_memory_, g,
          whole ? 0 : std::max<int64_t>(0, gpu_free_memory_[g] - gpu_memory_mib));
      taken += milli;
    }
    if (gpu_was_empty) {
      Set(gpu_tenant_, g, tenant);
    } else if (gpu_tenant_[g] != tenant) {
      Set(gpu_tenant_, g, kMixedTenants);
    }
  }
  const bool node_was_empty = NodeEmpty(n);
  if (node_was_empty) {
    Set(node_tenant_, n, tenant);
  } else if (node_tenant_[n] != tenant) {
    Set(node_tenant_, n, kMixedTenants);
  }
  if (info.isolation == Isolation::kExclusiveNode) Set(node_exclusive_tenant_, n, tenant);
  Set(node_replicas_, n, node_replicas_[n] + 1);
  AdjustFree(j, n, -taken, -cpu_milli, -memory_mib,
             charge_queue ? milli * static_cast<int64_t>(gpus.size()) : 0);
}

void WorkingState::AdjustFree(int32_t j, int32_t n, int64_t gpu_milli, int64_t cpu_milli,
                              int64_t memory_mib, int64_t queue_milli) {
  Set(node_free_cpu_, n, node_free_cpu_[n] + cpu_milli);
  Set(node_free_memory_, n, node_free_memory_[n] + memory_mib);
  Set(node_free_gpu_, n, node_free_gpu_[n] + gpu_milli);
  if (open_[n]) {
    const int32_t slot = OrderedSlot(n);
    Set(model_free_gpu_, slot, model_free_gpu_[slot] + gpu_milli);
    Set(model_free_cpu_, slot, model_free_cpu_[slot] + cpu_milli);
  }
  for (int32_t l = 0; l < index_.level_count(); ++l) {
    const int32_t d = index_.node_domain(n, l);
    if (d == kNone) continue;
    const size_t flat = index_.flat_domain(l, d);
    Set(domain_free_gpu_, flat, domain_free_gpu_[flat] + gpu_milli);
  }
  AddUpTheQueues(queue_usage_, j, index_.node_model(n), queue_milli);
}

void WorkingState::AddUpTheQueues(std::vector<int64_t>& per_queue, int32_t j, int32_t model,
                                  int64_t milli) {
  const int32_t queue = index_.job(j).queue;
  if (milli == 0 || queue == kNone) return;
  const size_t slots = index_.model_count() + 1;
  for (int32_t q = queue; q != kNone; q = index_.queue_parent(q)) {
    if (model != kNone) Set(per_queue, q * slots + model, per_queue[q * slots + model] + milli);
    const size_t any = q * slots + index_.any_model_slot();
    Set(per_queue, any, per_queue[any] + milli);
  }
}

void WorkingState::HoldLimitRoom(int32_t j, int32_t model, int64_t milli) {
  AddUpTheQueues(limit_room_held_, j, model, milli);
}

void WorkingState::Rollback(Mark mark) {
  GPUPOOL_CHECK(mark.undo <= undo_.size() && mark.touched <= touched_.size());
  while (undo_.size() > mark.undo) {
    *undo_.back().slot = undo_.back().old_value;
    undo_.pop_back();
  }
  // The keys of the nodes written since the mark are back as they were, which the ordered index
  // may not be (it was refreshed if read in between).
  for (size_t i = mark.touched; i < touched_.size(); ++i) MarkStale(touched_[i]);
  touched_.resize(mark.touched);
}

}  // namespace gpupool::internal
