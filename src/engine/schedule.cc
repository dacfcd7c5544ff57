// Schedule(): one cycle, stage by stage (DESIGN.md "The engine: one cycle").
//
// This version runs stages 1 to 7 and 9: validate and index, build the working state from
// running jobs, compute fair share (reported per queue; it also bounds reclaim), order pending
// jobs, place gangs, optionally evict work for a job that does not place (policy.preemption:
// lower priority in its queue, or other queues above their entitlement), hold capacity for jobs
// past the starvation bound that still cannot start (reserve.h), and give every job left pending
// its reason. Backfill into held capacity and consolidation come with later issues.
//
// Equivalence classes of jobs: between preemptions capacity only shrinks, so a job identical in
// everything placement looks at (queue, groups, requests, constraints) to one that already failed
// fails too, for the same reason. Such jobs are answered from a table in O(1), which keeps a cycle
// with many identical pending jobs about linear in their number.
#include "gpupool/schedule.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "entitlements.h"
#include "fingerprint.h"
#include "internal/check.h"
#include "order.h"
#include "place.h"
#include "preempt.h"
#include "reserve.h"
#include "snapshot_index.h"
#include "working_state.h"

namespace gpupool {
namespace {

// Everything about a job that placement depends on: its queue and its groups in canonical
// order. Two jobs with equal shapes are placed (or refused) identically.
bool SameGroupShape(const TaskGroup& a, const TaskGroup& b) {
  return a.name == b.name && a.replicas == b.replicas && a.MinReplicas() == b.MinReplicas() &&
         a.request == b.request && a.gpu_models == b.gpu_models &&
         a.topology.replica_scope == b.topology.replica_scope &&
         a.topology.replica_strictness == b.topology.replica_strictness &&
         a.topology.gang_level == b.topology.gang_level &&
         a.topology.gang_strictness == b.topology.gang_strictness;
}

// With preemption on, a job's priority decides which victims it may take, so it is part of the
// shape.
bool SameShape(const internal::JobInfo& a, const internal::JobInfo& b, bool with_priority) {
  if (a.queue != b.queue || a.groups_by_name.size() != b.groups_by_name.size()) return false;
  if (with_priority && a.job->priority != b.job->priority) return false;
  for (size_t i = 0; i < a.groups_by_name.size(); ++i) {
    if (!SameGroupShape(a.job->groups[a.groups_by_name[i]], b.job->groups[b.groups_by_name[i]])) {
      return false;
    }
  }
  return true;
}

uint64_t ShapeHash(const internal::JobInfo& info, bool with_priority) {
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  auto add = [&h](uint64_t v) {
    uint64_t z = (h ^ v) + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    h = z ^ (z >> 31);
  };
  add(static_cast<uint64_t>(info.queue));
  if (with_priority) add(static_cast<uint64_t>(info.job->priority));
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
  }
  return h;
}

// Puts `items` in job-id order. `jobs[i]` is the dense index of items[i]'s job, and dense
// indices are in id order, so integers are compared instead of strings.
template <typename T>
void SortByJob(std::vector<T>& items, const std::vector<int32_t>& jobs) {
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&jobs](size_t a, size_t b) { return jobs[a] < jobs[b]; });
  std::vector<T> sorted;
  sorted.reserve(items.size());
  for (size_t i : order) sorted.push_back(std::move(items[i]));
  items = std::move(sorted);
}

}  // namespace

absl::StatusOr<Decisions> Schedule(const Snapshot& snapshot, const Policy& policy) {
  GPUPOOL_RETURN_IF_ERROR(ValidateSnapshot(snapshot));
  GPUPOOL_RETURN_IF_ERROR(ValidatePolicy(policy));

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

  // Stage 3: fair share, from the state at the start of the cycle.
  const internal::Entitlements entitlements(index, state, policy);
  decisions.queue_shares = entitlements.Report();

  // Stage 4: order. Stage 5: place.
  Counters& counters = decisions.counters;
  internal::Placer placer(index, state, policy, counters);
  // Stage 6 runs inside the loop: a job that does not place may evict lower-priority work.
  const bool preemption = policy.preemption.enabled;
  internal::PreemptionPlanner planner(index, state, placer, entitlements, policy, counters);
  // Failed shapes: hash -> (representative job, its pending decision). The hash only narrows
  // the search; equality is checked field by field, and nothing is iterated in hash order.
  absl::flat_hash_map<uint64_t, std::vector<std::pair<int32_t, size_t>>> failed_shapes;
  internal::Reserver reserver(index, state, placer);
  std::vector<int32_t> start_jobs, pending_jobs, preempt_jobs, reserve_jobs, resize_jobs;
  const int64_t now = snapshot.now;
  const int64_t budget = policy.budgets.max_candidates;
  internal::JobSequence sequence(index, policy, state, entitlements);
  for (int32_t j = sequence.Next(); j != internal::kNone; j = sequence.Next()) {
    const internal::JobInfo& info = index.job(j);
    ++counters.jobs_considered;
    if (budget > 0 && counters.candidates_evaluated >= budget) {
      counters.budget_exhausted = true;
      PendingDecision pending;
      pending.job = info.job->id;
      pending.reason = PendingReason::kBudgetExhausted;
      pending.detail = "the cycle's candidate budget ran out before this job was tried";
      decisions.pending.push_back(std::move(pending));
      pending_jobs.push_back(j);
      continue;
    }
    const uint64_t shape = ShapeHash(info, preemption);
    if (auto it = failed_shapes.find(shape); it != failed_shapes.end()) {
      auto same = std::find_if(it->second.begin(), it->second.end(), [&](const auto& entry) {
        return SameShape(index.job(entry.first), info, preemption);
      });
      if (same != it->second.end()) {
        ++counters.equivalence_hits;
        PendingDecision pending = decisions.pending[same->second];
        pending.job = info.job->id;
        decisions.pending.push_back(std::move(pending));
        pending_jobs.push_back(j);
        continue;
      }
    }
    auto placements = placer.TryStart(j);
    state.Commit();
    if (placements) {
      ++counters.jobs_started;
      reserver.NoteStart(j, *placements);
      decisions.starts.push_back(StartDecision{info.job->id, std::move(*placements)});
      start_jobs.push_back(j);
      continue;
    }
    if (preemption) {
      auto plan = planner.TryPreempt(j);
      state.Commit();
      if (plan) {
        ++counters.jobs_started;
        for (PreemptDecision& p : plan->preemptions) {
          preempt_jobs.push_back(index.FindJob(p.job));
          decisions.preemptions.push_back(std::move(p));
        }
        for (ResizeDecision& r : plan->resizes) {
          resize_jobs.push_back(index.FindJob(r.job));
          decisions.resizes.push_back(std::move(r));
        }
        reserver.NoteStart(j, plan->placements);
        decisions.starts.push_back(StartDecision{info.job->id, std::move(plan->placements)});
        start_jobs.push_back(j);
        // Capacity grew where the victims were: earlier failures no longer prove anything.
        failed_shapes.clear();
        continue;
      }
    }
    // Stage 9: the reason, computed once per shape.
    failed_shapes[shape].emplace_back(j, decisions.pending.size());
    PendingDecision pending = placer.Diagnose(j);
    if (pending.reason == PendingReason::kInsufficientCapacity ||
        pending.reason == PendingReason::kFragmentation ||
        pending.reason == PendingReason::kTopology) {
      planner.ExplainCounterfactual(j, pending);
      state.Commit();
      // Stage 7: a job past the starvation bound gets capacity held where it can start soonest.
      if (internal::Starving(*info.job, policy, now)) {
        if (auto reserve = reserver.Reserve(j)) {
          decisions.reservations.push_back(std::move(*reserve));
          reserve_jobs.push_back(j);
        }
        state.Commit();
      }
    }
    decisions.pending.push_back(std::move(pending));
    pending_jobs.push_back(j);
  }

  // Stage 6b: after evictions, capacity the beneficiaries did not use may fit jobs that failed
  // before, and the victims themselves may fit elsewhere. One more pass, in job order and without
  // preemption, places what now fits, so that applying the decisions leaves nothing startable.
  // A victim placed here gets a Start too: the host evicts it, then restarts it there.
  if (!preempt_jobs.empty()) {
    std::vector<int32_t> retry = preempt_jobs;
    std::vector<size_t> pending_at(index.job_count(), SIZE_MAX);
    for (size_t i = 0; i < pending_jobs.size(); ++i) {
      if (decisions.pending[i].reason == PendingReason::kBudgetExhausted) continue;
      pending_at[pending_jobs[i]] = i;
      retry.push_back(pending_jobs[i]);
    }
    internal::SortInJobOrder(index, policy, retry);
    std::vector<uint8_t> started_late(decisions.pending.size(), 0);
    for (int32_t j : retry) {
      if (budget > 0 && counters.candidates_evaluated >= budget) {
        counters.budget_exhausted = true;
        break;
      }
      auto placements = placer.TryStart(j);
      state.Commit();
      if (!placements) continue;
      ++counters.jobs_started;
      reserver.NoteStart(j, *placements);
      decisions.starts.push_back(StartDecision{index.job(j).job->id, std::move(*placements)});
      start_jobs.push_back(j);
      if (pending_at[j] != SIZE_MAX) started_late[pending_at[j]] = 1;
    }
    std::vector<PendingDecision> still_pending;
    std::vector<int32_t> still_pending_jobs;
    for (size_t i = 0; i < decisions.pending.size(); ++i) {
      if (started_late[i]) continue;
      still_pending.push_back(std::move(decisions.pending[i]));
      still_pending_jobs.push_back(pending_jobs[i]);
    }
    decisions.pending = std::move(still_pending);
    pending_jobs = std::move(still_pending_jobs);
  }

  SortByJob(decisions.starts, start_jobs);
  SortByJob(decisions.pending, pending_jobs);
  SortByJob(decisions.preemptions, preempt_jobs);
  SortByJob(decisions.reservations, reserve_jobs);
  SortByJob(decisions.resizes, resize_jobs);
  return decisions;
}

}  // namespace gpupool
