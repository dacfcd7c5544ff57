#include "gpupool/apply.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

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
    job.backfilled = start.backfilled;
  }
  return absl::OkStatus();
}

absl::Status ApplyDecisions(const Decisions& decisions, Snapshot& snapshot) {
  Snapshot next = snapshot;
  std::map<std::string, Node*, std::less<>> nodes;
  for (Node& node : next.nodes) nodes.emplace(node.id, &node);
  for (const NodeActionDecision& action : decisions.node_actions) {
    auto it = nodes.find(action.node);
    if (it == nodes.end()) {
      return absl::FailedPreconditionError(
          fmt::format("node_actions[{}]: no such node in the snapshot", action.node));
    }
    Node& node = *it->second;
    switch (action.action) {
      case NodeAction::kCordon:
        node.state = NodeState::kCordoned;
        node.state_cause = NodeStateCause::kHealth;
        break;
      case NodeAction::kDrain:
        node.state = NodeState::kDraining;
        node.state_cause = NodeStateCause::kMaintenance;
        break;
      case NodeAction::kUncordon:
        node.state = NodeState::kReady;
        node.state_cause = NodeStateCause::kHost;
        break;
      case NodeAction::kDiagnose:
        node.state = NodeState::kCordoned;
        node.state_cause = NodeStateCause::kDiagnostic;
        break;
    }
  }
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
    victim.backfilled = false;
    // Never before its submit time, which validation requires of pending_since (a host's clock
    // may put a running job's submit time after `now`).
    victim.pending_since = std::max(next.now, victim.submit_time);
  }
  // Resizes: an elastic group keeps its `to_replicas` replicas with the lowest indices.
  for (const ResizeDecision& resize : decisions.resizes) {
    auto it = by_id.find(resize.job);
    if (it == by_id.end() || it->second->state != JobState::kRunning) {
      return absl::FailedPreconditionError(
          fmt::format("resizes[{}]: no such running job in the snapshot", resize.job));
    }
    std::vector<ReplicaPlacement>& placements = it->second->placements;
    std::vector<int32_t> replicas;
    for (const ReplicaPlacement& p : placements) {
      if (p.group == resize.group) replicas.push_back(p.replica);
    }
    std::sort(replicas.begin(), replicas.end());
    if (resize.to_replicas < 0 || static_cast<size_t>(resize.to_replicas) > replicas.size()) {
      return absl::FailedPreconditionError(
          fmt::format("resizes[{}]: group {} runs {} replicas, cannot keep {}", resize.job,
                      resize.group, replicas.size(), resize.to_replicas));
    }
    const int32_t last_kept = resize.to_replicas == 0 ? -1 : replicas[resize.to_replicas - 1];
    std::erase_if(placements, [&](const ReplicaPlacement& p) {
      return p.group == resize.group && p.replica > last_kept;
    });
  }
  // Migrations: the job restarts at its new placements from its last checkpoint, now.
  for (const MigrateDecision& migrate : decisions.migrations) {
    auto it = by_id.find(migrate.job);
    if (it == by_id.end() || it->second->state != JobState::kRunning) {
      return absl::FailedPreconditionError(
          fmt::format("migrations[{}]: no such running job in the snapshot", migrate.job));
    }
    it->second->placements = migrate.to;
    it->second->start_time = next.now;
  }
  if (absl::Status status = ApplyStarts(decisions, next); !status.ok()) return status;
  snapshot = std::move(next);
  return absl::OkStatus();
}

}  // namespace gpupool
