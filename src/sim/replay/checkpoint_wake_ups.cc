// Wake-ups at victims' checkpoints (checkpoint_wake_ups.h).
#include "sim/replay/checkpoint_wake_ups.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "sim/replay/cycle_snapshot.h"

namespace gpupool::sim::internal {

std::optional<int64_t> NextCheckpointWakeUp(const Snapshot& snapshot, const Decisions& decisions,
                                            const RunState& state,
                                            const CheckpointModel& checkpoints,
                                            int64_t min_victim_run_s, int64_t gap_s) {
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
  std::optional<int64_t> earliest;
  for (const Job& job : snapshot.jobs) {
    if (job.priority >= *top) continue;
    // Jobs running now: those that ran on, and those the cycle started.
    const absl::StatusOr<int32_t> i = JobIndex(job.id, state);
    if (!i.ok() || state.job(*i).phase != Phase::kRunning) continue;
    const JobRun& run = state.job(*i);
    const std::optional<int64_t> at = checkpoints.NextCheckpointTime(run, snapshot.now);
    // The engine's own minimum: the policy's, or the job's when the host set one.
    const int64_t min_run = std::max(min_victim_run_s, job.min_runtime_s);
    if (!at || *at >= run.completion || *at - run.run_start < min_run) continue;
    if (!earliest || *at < *earliest) earliest = *at;
  }
  if (!earliest) return std::nullopt;
  return std::max(*earliest, snapshot.now + gap_s);
}

}  // namespace gpupool::sim::internal
