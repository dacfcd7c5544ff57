// Wake-ups at victims' checkpoints (checkpoint_wake_ups.h).
#include "sim/replay/checkpoint_wake_ups.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/replay/cycle_snapshot.h"

namespace gpupool::sim::internal {
namespace {

// Nodes of the reservations `decisions` make for jobs of `snapshot` waiting past the starvation
// bound, sorted: with preemption.starving_drain (and starving_outrank) such a reservation evicts
// every running job on them as each becomes a cheap victim.
std::vector<std::string> NodesDrainedForStarvingJobs(const Snapshot& snapshot,
                                                     const Decisions& decisions,
                                                     const Policy& policy) {
  std::vector<std::string> nodes;
  const PreemptionOptions& preemption = policy.preemption;
  if (policy.starvation_bound_s <= 0 || !preemption.starving_drain ||
      !preemption.starving_outrank || decisions.reservations.empty()) {
    return nodes;
  }
  std::vector<const std::string*> starving;
  for (const Job& job : snapshot.jobs) {
    if (job.state == JobState::kPending &&
        snapshot.now - job.pending_since.value_or(job.submit_time) > policy.starvation_bound_s) {
      starving.push_back(&job.id);
    }
  }
  std::sort(starving.begin(), starving.end(),
            [](const std::string* a, const std::string* b) { return *a < *b; });
  for (const ReserveDecision& reservation : decisions.reservations) {
    const bool for_starving =
        std::binary_search(starving.begin(), starving.end(), &reservation.job,
                           [](const std::string* a, const std::string* b) { return *a < *b; });
    if (for_starving) nodes.insert(nodes.end(), reservation.nodes.begin(), reservation.nodes.end());
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

}  // namespace

std::optional<int64_t> NextCheckpointWakeUp(const Snapshot& snapshot, const Decisions& decisions,
                                            const RunState& state,
                                            const CheckpointModel& checkpoints,
                                            const Policy& policy, int64_t gap_s) {
  // Decisions::starts is sorted by job id.
  auto started = [&](const std::string& id) {
    auto it = std::lower_bound(
        decisions.starts.begin(), decisions.starts.end(), id,
        [](const StartDecision& start, const std::string& job) { return start.job < job; });
    return it != decisions.starts.end() && it->job == id;
  };
  // The highest priority of a job left waiting.
  std::optional<int32_t> top;
  for (const Job& job : snapshot.jobs) {
    if (job.state != JobState::kPending || started(job.id)) continue;
    if (!top || job.priority > *top) top = job.priority;
  }
  if (!top) return std::nullopt;
  const std::vector<std::string> drained = NodesDrainedForStarvingJobs(snapshot, decisions, policy);
  auto on_drained_node = [&](const JobRun& run) {
    return std::any_of(run.placements.begin(), run.placements.end(),
                       [&](const ReplicaPlacement& p) {
                         return std::binary_search(drained.begin(), drained.end(), p.node);
                       });
  };
  std::optional<int64_t> earliest;
  for (const Job& job : snapshot.jobs) {
    // Jobs running now: those that ran on, and those the cycle started.
    const absl::StatusOr<int32_t> i = JobIndex(job.id, state);
    if (!i.ok() || state.job(*i).phase != Phase::kRunning) continue;
    const JobRun& run = state.job(*i);
    const bool drained_node = on_drained_node(run);
    if (job.priority >= *top && !drained_node) continue;
    const std::optional<int64_t> at = checkpoints.NextCheckpointTime(run, snapshot.now);
    // The engine's own minimum: the policy's, or the job's when the host set one, except for a
    // starving job's drain with preemption.starving_drain_past_min_runtime.
    const bool own_minimum = !(drained_node && policy.preemption.starving_drain_past_min_runtime);
    const int64_t min_run =
        std::max(policy.preemption.min_victim_run_s, own_minimum ? job.min_runtime_s : 0);
    if (!at || *at >= run.completion || *at - run.run_start < min_run) continue;
    if (!earliest || *at < *earliest) earliest = *at;
  }
  if (!earliest) return std::nullopt;
  return std::max(*earliest, snapshot.now + gap_s);
}

}  // namespace gpupool::sim::internal
