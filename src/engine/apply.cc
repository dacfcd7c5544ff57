#include "gpupool/apply.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
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
  std::set<std::string_view> acted;  // a node has at most one action per cycle
  for (const NodeActionDecision& action : decisions.node_actions) {
    auto it = nodes.find(action.node);
    if (it == nodes.end()) {
      return absl::FailedPreconditionError(
          fmt::format("node_actions[{}]: no such node in the snapshot", action.node));
    }
    if (!acted.insert(action.node).second) {
      return absl::FailedPreconditionError(
          fmt::format("node_actions[{}]: the node already has an action", action.node));
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
  // The running job a Preempt, Resize or Migrate stops, checked: each job is stopped by one
  // decision at most, for a job of the snapshot, at a price that is not negative.
  std::map<std::string, std::string, std::less<>> stopped;  // job -> the list that stops it
  auto stop = [&](std::string_view list, const std::string& job, const std::string& for_job,
                  int64_t lost) -> absl::StatusOr<Job*> {
    if (auto seen = stopped.find(job); seen != stopped.end()) {
      return absl::FailedPreconditionError(
          fmt::format("{}[{}]: the job already has a decision in {}", list, job, seen->second));
    }
    auto it = by_id.find(job);
    if (it == by_id.end() || it->second->state != JobState::kRunning) {
      return absl::FailedPreconditionError(
          fmt::format("{}[{}]: no such running job in the snapshot", list, job));
    }
    if (!for_job.empty() && !by_id.contains(for_job)) {
      return absl::FailedPreconditionError(
          fmt::format("{}[{}]: for_job {}: no such job in the snapshot", list, job, for_job));
    }
    if (lost < 0) {
      return absl::FailedPreconditionError(
          fmt::format("{}[{}]: lost_milli_gpu_seconds: must be >= 0, got {}", list, job, lost));
    }
    stopped.emplace(job, std::string(list));
    return it->second;
  };
  for (const PreemptDecision& preempt : decisions.preemptions) {
    absl::StatusOr<Job*> it =
        stop("preemptions", preempt.job, preempt.for_job, preempt.lost_milli_gpu_seconds);
    if (!it.ok()) return it.status();
    Job& victim = **it;
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
    absl::StatusOr<Job*> it =
        stop("resizes", resize.job, resize.for_job, resize.lost_milli_gpu_seconds);
    if (!it.ok()) return it.status();
    const std::vector<TaskGroup>& groups = (*it)->groups;
    if (std::none_of(groups.begin(), groups.end(),
                     [&](const TaskGroup& g) { return g.name == resize.group; })) {
      return absl::FailedPreconditionError(
          fmt::format("resizes[{}]: the job has no group {}", resize.job, resize.group));
    }
    std::vector<ReplicaPlacement>& placements = (*it)->placements;
    std::vector<int32_t> replicas;
    for (const ReplicaPlacement& p : placements) {
      if (p.group == resize.group) replicas.push_back(p.replica);
    }
    std::sort(replicas.begin(), replicas.end());
    if (static_cast<size_t>(resize.from_replicas) != replicas.size()) {
      return absl::FailedPreconditionError(
          fmt::format("resizes[{}]: from_replicas is {}, but group {} runs {} replicas", resize.job,
                      resize.from_replicas, resize.group, replicas.size()));
    }
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
  // Placements compared by group, replica, node and GPUs (a snapshot may leave gpu_milli 0).
  auto key = [](const std::vector<ReplicaPlacement>& placements) {
    std::vector<std::tuple<std::string, int32_t, std::string, std::vector<int32_t>>> out;
    for (const ReplicaPlacement& p : placements)
      out.emplace_back(p.group, p.replica, p.node, p.gpus);
    std::sort(out.begin(), out.end());
    return out;
  };
  for (const MigrateDecision& migrate : decisions.migrations) {
    absl::StatusOr<Job*> it =
        stop("migrations", migrate.job, migrate.for_job, migrate.lost_milli_gpu_seconds);
    if (!it.ok()) return it.status();
    if (!migrate.from.empty() && key(migrate.from) != key((*it)->placements)) {
      return absl::FailedPreconditionError(fmt::format(
          "migrations[{}]: from is not where the job runs in the snapshot", migrate.job));
    }
    (*it)->placements = migrate.to;
    (*it)->start_time = next.now;
  }
  if (absl::Status status = ApplyStarts(decisions, next); !status.ok()) return status;
  snapshot = std::move(next);
  return absl::OkStatus();
}

}  // namespace gpupool
