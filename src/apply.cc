#include "gpupool/apply.h"

#include <map>
#include <string>

#include "fmt/format.h"

namespace gpupool {

absl::Status ApplyStarts(const Decisions& decisions, Snapshot& snapshot) {
  std::map<std::string, Job*, std::less<>> by_id;
  for (Job& job : snapshot.jobs) by_id.emplace(job.id, &job);
  for (const StartDecision& start : decisions.starts) {
    auto it = by_id.find(start.job);
    if (it == by_id.end()) {
      return absl::FailedPreconditionError(
          fmt::format("starts[{}]: no such job in the snapshot", start.job));
    }
    if (it->second->state != JobState::kPending) {
      return absl::FailedPreconditionError(
          fmt::format("starts[{}]: the job is not pending", start.job));
    }
  }
  for (const StartDecision& start : decisions.starts) {
    Job& job = *by_id.find(start.job)->second;
    job.state = JobState::kRunning;
    job.start_time = snapshot.now;
    job.placements = start.placements;
    job.pending_since.reset();
  }
  return absl::OkStatus();
}

absl::Status ApplyDecisions(const Decisions& decisions, Snapshot& snapshot) {
  Snapshot next = snapshot;
  std::map<std::string, Job*, std::less<>> by_id;
  for (Job& job : next.jobs) by_id.emplace(job.id, &job);
  for (const PreemptDecision& preempt : decisions.preemptions) {
    auto it = by_id.find(preempt.job);
    if (it == by_id.end() || it->second->state != JobState::kRunning) {
      return absl::FailedPreconditionError(
          fmt::format("preemptions[{}]: no such running job in the snapshot", preempt.job));
    }
    Job& victim = *it->second;
    victim.state = JobState::kPending;
    victim.placements.clear();
    victim.start_time.reset();
    victim.pending_since = next.now;
  }
  if (absl::Status status = ApplyStarts(decisions, next); !status.ok()) return status;
  snapshot = std::move(next);
  return absl::OkStatus();
}

}  // namespace gpupool
