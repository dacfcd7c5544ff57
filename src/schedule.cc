// Schedule(): one cycle, stage by stage (DESIGN.md "The engine: one cycle").
//
// v1 runs stages 1, 2, 4, 5 and 9: validate and index, build the working state from running
// jobs, order pending jobs, place gangs, and give every job left pending its reason. Fair share,
// preemption, backfill and consolidation come with later issues and slot in between.
//
// Equivalence classes of jobs: within one cycle capacity only shrinks (nothing departs), so a
// job identical in everything placement looks at (queue, groups, requests, constraints) to one
// that already failed fails too, for the same reason. Such jobs are answered from a table in
// O(1), which keeps a cycle with many identical pending jobs about linear in their number.
#include "gpupool/schedule.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "fingerprint.h"
#include "internal/check.h"
#include "order.h"
#include "place.h"
#include "snapshot_index.h"
#include "working_state.h"

namespace gpupool {
namespace {

// Everything about a job that placement depends on, as a byte string.
std::string ShapeKey(const internal::JobInfo& info) {
  std::string key;
  key.reserve(96 * info.job->groups.size() + 8);
  auto add = [&key](int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  auto add_str = [&](const std::string& s) {
    add(static_cast<int64_t>(s.size()));
    key += s;
  };
  add(info.queue);
  for (int32_t g : info.groups_by_name) {
    const TaskGroup& group = info.job->groups[g];
    add_str(group.name);
    add(group.replicas);
    add(group.MinReplicas());
    add(group.request.gpu_milli);
    add(group.request.gpu_memory_mib);
    add(group.request.cpu_milli);
    add(group.request.memory_mib);
    add(static_cast<int64_t>(group.gpu_models.size()));
    for (const std::string& model : group.gpu_models) add_str(model);
    add(static_cast<int64_t>(group.topology.replica_scope));
    add(static_cast<int64_t>(group.topology.replica_strictness));
    add_str(group.topology.gang_level.value_or(std::string("\x01none")));
    add(static_cast<int64_t>(group.topology.gang_strictness));
  }
  return key;
}

template <typename T>
void SortByJob(std::vector<T>& items) {
  std::sort(items.begin(), items.end(), [](const T& a, const T& b) { return a.job < b.job; });
}

}  // namespace

absl::StatusOr<Decisions> Schedule(const Snapshot& snapshot, const Policy& policy) {
  GPUPOOL_RETURN_IF_ERROR(ValidateSnapshot(snapshot));
  if (policy.budgets.max_candidates < 0) {
    return absl::InvalidArgumentError("policy.budgets.max_candidates: must be >= 0");
  }

  // Stage 1: index.
  const internal::SnapshotIndex index(snapshot);

  Decisions decisions;
  decisions.policy_name = policy.name;
  decisions.policy_version = policy.version;
  decisions.scorer = policy.scorer ? std::string(policy.scorer->Name())
                                   : std::string(PlacementStrategyName(policy.placement));
  decisions.input_fingerprint = internal::Fingerprint(index, policy);

  // Stage 2: working state, with running work in place.
  const int key_sign = policy.placement == PlacementStrategy::kSpread ? -1 : 1;
  internal::WorkingState state(index, key_sign);
  for (int32_t j = 0; j < index.job_count(); ++j) {
    if (index.job(j).job->state == JobState::kRunning) state.AddRunningJob(j);
  }

  // Stage 4: order. Stage 5: place.
  Counters& counters = decisions.counters;
  internal::Placer placer(index, state, policy, counters);
  absl::flat_hash_map<std::string, PendingDecision> failed_shapes;
  const int64_t budget = policy.budgets.max_candidates;
  for (int32_t j : internal::OrderPendingJobs(index, policy)) {
    const internal::JobInfo& info = index.job(j);
    ++counters.jobs_considered;
    if (budget > 0 && counters.candidates_evaluated >= budget) {
      counters.budget_exhausted = true;
      PendingDecision pending;
      pending.job = info.job->id;
      pending.reason = PendingReason::kBudgetExhausted;
      pending.detail = "the cycle's candidate budget ran out before this job was tried";
      decisions.pending.push_back(std::move(pending));
      continue;
    }
    std::string key = ShapeKey(info);
    if (auto it = failed_shapes.find(key); it != failed_shapes.end()) {
      ++counters.equivalence_hits;
      PendingDecision pending = it->second;
      pending.job = info.job->id;
      decisions.pending.push_back(std::move(pending));
      continue;
    }
    if (auto placements = placer.TryStart(j)) {
      ++counters.jobs_started;
      decisions.starts.push_back(StartDecision{info.job->id, std::move(*placements)});
      continue;
    }
    // Stage 9: the reason, computed once per shape.
    PendingDecision pending = placer.Diagnose(j);
    failed_shapes.emplace(std::move(key), pending);
    decisions.pending.push_back(std::move(pending));
  }

  SortByJob(decisions.starts);
  SortByJob(decisions.pending);
  return decisions;
}

}  // namespace gpupool
