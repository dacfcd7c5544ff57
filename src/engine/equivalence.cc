#include "equivalence.h"

#include <algorithm>
#include <functional>
#include <string>

#include "internal/hash.h"
#include "maintenance.h"
#include "order.h"

namespace gpupool::internal {
namespace {

// Everything about a group that placement depends on. Two jobs whose groups are equal in
// canonical (name) order are placed, or refused, identically.
bool SameGroupShape(const TaskGroup& a, const TaskGroup& b) {
  return a.name == b.name && a.replicas == b.replicas && a.MinReplicas() == b.MinReplicas() &&
         a.request == b.request && a.gpu_models == b.gpu_models &&
         a.topology.replica_scope == b.topology.replica_scope &&
         a.topology.replica_strictness == b.topology.replica_strictness &&
         a.topology.gang_level == b.topology.gang_level &&
         a.topology.gang_strictness == b.topology.gang_strictness &&
         a.topology.max_replicas_per_node == b.topology.max_replicas_per_node;
}

}  // namespace

std::optional<size_t> EquivalenceCache::FindFailure(int32_t j) {
  hashed_job_ = j;
  hashed_shape_ = ShapeHash(j);
  auto it = failed_.find(hashed_shape_);
  if (it == failed_.end()) return std::nullopt;
  auto same = std::find_if(it->second.begin(), it->second.end(),
                           [&](const auto& entry) { return SameShape(entry.first, j); });
  if (same == it->second.end()) return std::nullopt;
  return same->second;
}

void EquivalenceCache::RecordFailure(int32_t j, size_t position) {
  const uint64_t shape = j == hashed_job_ ? hashed_shape_ : ShapeHash(j);
  failed_[shape].emplace_back(j, position);
}

bool EquivalenceCache::SameShape(int32_t a_job, int32_t b_job) const {
  const JobInfo& a = index_.job(a_job);
  const JobInfo& b = index_.job(b_job);
  if (a.queue != b.queue || a.groups_by_name.size() != b.groups_by_name.size()) return false;
  if (with_priority_ && a.job->priority != b.job->priority) return false;
  if (with_estimate_ && RemainingEstimate(*a.job) != RemainingEstimate(*b.job)) return false;
  if (with_remaining_work_ && RemainingWork(*a.job) != RemainingWork(*b.job)) return false;
  if (with_spot_ &&
      (a.job->preemptible != b.job->preemptible || a.job->spot_tolerant != b.job->spot_tolerant ||
       a.job->checkpointing.interval_s != b.job->checkpointing.interval_s)) {
    return false;
  }
  for (size_t i = 0; i < a.groups_by_name.size(); ++i) {
    if (!SameGroupShape(a.job->groups[a.groups_by_name[i]], b.job->groups[b.groups_by_name[i]])) {
      return false;
    }
  }
  return true;
}

uint64_t EquivalenceCache::ShapeHash(int32_t j) const {
  const JobInfo& info = index_.job(j);
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  auto add = [&h](uint64_t v) { h = HashCombine(h, v); };
  add(static_cast<uint64_t>(info.queue));
  if (with_priority_) add(static_cast<uint64_t>(info.job->priority));
  if (with_estimate_) add(static_cast<uint64_t>(RemainingEstimate(*info.job).value_or(-1)));
  if (with_remaining_work_) add(static_cast<uint64_t>(RemainingWork(*info.job).value_or(-1)));
  for (int32_t g : info.groups_by_name) {
    const TaskGroup& group = info.job->groups[g];
    add(std::hash<std::string>()(group.name));
    add(static_cast<uint64_t>(group.replicas));
    add(static_cast<uint64_t>(group.MinReplicas()));
    add(static_cast<uint64_t>(group.request.gpu_milli));
    add(static_cast<uint64_t>(group.request.gpu_memory_mib));
    add(static_cast<uint64_t>(group.request.cpu_milli));
    add(static_cast<uint64_t>(group.request.memory_mib));
    add(group.gpu_models.size());
    add(static_cast<uint64_t>(group.topology.replica_scope) * 4 +
        static_cast<uint64_t>(group.topology.replica_strictness) * 2 +
        static_cast<uint64_t>(group.topology.gang_strictness));
    add(static_cast<uint64_t>(group.topology.max_replicas_per_node.value_or(0)));
  }
  return h;
}

}  // namespace gpupool::internal
