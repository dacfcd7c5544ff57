#include "node_operations.h"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>

#include "fmt/format.h"
#include "internal/saturating.h"
#include "lost_work.h"
#include "maintenance.h"

namespace gpupool::internal {
namespace {

// What the rules want a node to be.
enum class Target { kOpen, kHealth, kMaintenance, kDiagnostic };

Target Current(const Node& node) {
  if (node.state == NodeState::kReady) return Target::kOpen;
  switch (node.state_cause) {
    case NodeStateCause::kHealth:
      return Target::kHealth;
    case NodeStateCause::kDiagnostic:
      return Target::kDiagnostic;
    case NodeStateCause::kMaintenance:
      return Target::kMaintenance;
    case NodeStateCause::kHost:
      break;
  }
  return Target::kOpen;  // not reached: callers skip host-set states
}

std::string Since(const Gpu& gpu) {
  return gpu.errors_since ? fmt::format(" since {}", *gpu.errors_since) : std::string();
}

// Why the health rules fail the node, in one sentence; empty when they pass.
std::string HealthProblem(const Node& node, const HealthOptions& health) {
  std::vector<std::string> problems;
  std::vector<const Gpu*> gpus;
  for (const Gpu& gpu : node.gpus) gpus.push_back(&gpu);
  std::sort(gpus.begin(), gpus.end(),
            [](const Gpu* a, const Gpu* b) { return a->index < b->index; });
  for (const Gpu* gpu : gpus) {
    if (health.xid_errors_to_cordon > 0 && gpu->xid_errors >= health.xid_errors_to_cordon) {
      problems.push_back(fmt::format("GPU {} has {} XID errors{} (threshold {})", gpu->index,
                                     gpu->xid_errors, Since(*gpu), health.xid_errors_to_cordon));
    }
    if (health.ecc_errors_to_cordon > 0 && gpu->ecc_errors >= health.ecc_errors_to_cordon) {
      problems.push_back(fmt::format("GPU {} has {} uncorrectable ECC errors{} (threshold {})",
                                     gpu->index, gpu->ecc_errors, Since(*gpu),
                                     health.ecc_errors_to_cordon));
    }
  }
  if (node.last_diagnostic && !node.last_diagnostic->passed) {
    problems.push_back(
        fmt::format("its last diagnostic, at {}, failed", node.last_diagnostic->time));
  }
  std::string out;
  for (const std::string& problem : problems) {
    if (!out.empty()) out += "; ";
    out += problem;
  }
  return out;
}

// Has the node's diagnostic reported within the interval (so a requested one is done)?
bool DiagnosticFresh(const Node& node, const HealthOptions& health, int64_t now) {
  return node.last_diagnostic && now - node.last_diagnostic->time < health.diagnostic_interval_s;
}

bool DiagnosticsPlanned(const HealthOptions& health) {
  return health.enabled && health.diagnostic_interval_s > 0;
}

// Running jobs with a replica on each node (each job once per node), in job order.
std::vector<std::vector<int32_t>> JobsOnNodes(const SnapshotIndex& index) {
  std::vector<std::vector<int32_t>> on(index.node_count());
  for (int32_t j = 0; j < index.job_count(); ++j) {
    for (const RunningPlacement& p : index.job(j).placements) {
      if (on[p.node].empty() || on[p.node].back() != j) on[p.node].push_back(j);
    }
  }
  return on;
}

std::string UncordonReason(const Node& node, const Policy& policy, int64_t now) {
  switch (node.state_cause) {
    case NodeStateCause::kHealth:
      if (!policy.health.enabled) return "health rules are off";
      return node.last_diagnostic
                 ? fmt::format(
                       "passes the health rules again: no GPU at an error threshold, and its "
                       "last diagnostic, at {}, passed",
                       node.last_diagnostic->time)
                 : std::string("passes the health rules again: no GPU at an error threshold");
    case NodeStateCause::kDiagnostic:
      if (!DiagnosticsPlanned(policy.health)) return "diagnostics are off";
      return fmt::format("its diagnostic, at {}, passed", node.last_diagnostic->time);
    case NodeStateCause::kMaintenance:
      return fmt::format(
          "no maintenance window in progress at {} or within the drain notice of {} s", now,
          policy.maintenance.drain_notice_s);
    case NodeStateCause::kHost:
      break;
  }
  return std::string();
}

}  // namespace

NodeOperations PlanNodeOperations(const SnapshotIndex& index, const Policy& policy) {
  NodeOperations out;
  const Snapshot& snapshot = index.snapshot();
  const int64_t now = snapshot.now;
  const HealthOptions& health = policy.health;
  bool any = health.enabled;
  for (int32_t n = 0; n < index.node_count() && !any; ++n) {
    const Node& node = index.node(n);
    any = !node.maintenance.empty() || node.state_cause != NodeStateCause::kHost;
  }
  if (!any) return out;

  // Stops first: a drain's expected empty time leaves the stopped jobs out.
  std::vector<uint8_t> stopped(index.job_count(), 0);
  for (int32_t j = 0; j < index.job_count(); ++j) {
    const JobInfo& info = index.job(j);
    if (info.placements.empty()) continue;
    // The reason names the failed GPU, or the node in its window, that comes first in node
    // order then GPU index (whatever the order of the job's placements).
    int32_t failed_node = kNone, failed_gpu = kNone, window_node = kNone;
    for (const RunningPlacement& p : info.placements) {
      if (health.enabled) {
        for (int32_t g : p.gpus) {
          if (index.gpu_healthy(g)) continue;
          if (failed_node == kNone || p.node < failed_node ||
              (p.node == failed_node && g < failed_gpu)) {
            failed_node = p.node;
            failed_gpu = g;
          }
        }
      }
      if (ActiveWindow(index.node(p.node), now) != nullptr &&
          (window_node == kNone || p.node < window_node)) {
        window_node = p.node;
      }
    }
    std::string reason;
    if (failed_node != kNone) {
      reason = fmt::format(
          "GPU {} of node {} has failed: the job is checkpointed and stopped, and goes back to "
          "its queue",
          index.gpu_index(failed_gpu), index.node(failed_node).id);
    } else if (window_node != kNone) {
      const Node& node = index.node(window_node);
      const MaintenanceWindow* window = ActiveWindow(node, now);
      reason = fmt::format(
          "node {} is in its maintenance window from {} to {}: the job is checkpointed and "
          "stopped, and goes back to its queue",
          node.id, window->start, window->end);
    }
    if (reason.empty()) continue;
    stopped[j] = 1;
    PreemptDecision stop;
    stop.job = info.job->id;
    stop.reason = std::move(reason);
    stop.lost_milli_gpu_seconds = LostWorkPrice(*info.job, now, now, policy);
    out.stops.push_back(std::move(stop));
  }

  std::vector<std::vector<int32_t>> jobs_on;
  for (int32_t n = 0; n < index.node_count(); ++n) {
    const Node& node = index.node(n);
    if (node.state == NodeState::kDown) continue;
    if (node.state != NodeState::kReady && node.state_cause == NodeStateCause::kHost) continue;
    const std::string problem = health.enabled ? HealthProblem(node, health) : std::string();
    const MaintenanceWindow* active = ActiveWindow(node, now);
    const MaintenanceWindow* next = NextWindow(node, now);
    const MaintenanceWindow* drain_for =
        active != nullptr                                                           ? active
        : next != nullptr && next->start - policy.maintenance.drain_notice_s <= now ? next
                                                                                    : nullptr;
    Target target = Target::kOpen;
    if (!problem.empty()) {
      target = Target::kHealth;
    } else if (drain_for != nullptr) {
      target = Target::kMaintenance;
    } else if (node.state != NodeState::kReady && node.state_cause == NodeStateCause::kDiagnostic &&
               DiagnosticsPlanned(health) && !DiagnosticFresh(node, health, now)) {
      target = Target::kDiagnostic;  // its diagnostic has not reported yet
    }
    if (target == Current(node)) continue;
    NodeActionDecision action;
    action.node = node.id;
    switch (target) {
      case Target::kHealth:
        action.action = NodeAction::kCordon;
        action.reason = problem;
        break;
      case Target::kMaintenance: {
        action.action = NodeAction::kDrain;
        if (jobs_on.empty()) jobs_on = JobsOnNodes(index);
        int64_t empty_at = now;
        if (active == nullptr) {
          for (int32_t j : jobs_on[n]) {
            if (stopped[j]) continue;
            const std::optional<int64_t> end = ExpectedEnd(*index.job(j).job, now);
            empty_at =
                std::max(empty_at, end ? std::min(*end, drain_for->start) : drain_for->start);
          }
          action.reason = fmt::format(
              "maintenance window from {} to {} starts in {} s (drain notice {} s): the node "
              "takes no new work, and the jobs still on it at {} are stopped then",
              drain_for->start, drain_for->end, drain_for->start - now,
              policy.maintenance.drain_notice_s, drain_for->start);
        } else {
          action.reason = fmt::format(
              "maintenance window from {} to {} is in progress: the node takes no work until {}, "
              "and the jobs still on it are stopped",
              active->start, active->end, active->end);
        }
        action.expected_empty_time = empty_at;
        break;
      }
      case Target::kOpen:
        action.action = NodeAction::kUncordon;
        action.reason = UncordonReason(node, policy, now);
        break;
      case Target::kDiagnostic:
        continue;  // never differs from the current state (see above)
    }
    out.node_actions.push_back(std::move(action));
  }
  return out;
}

std::vector<NodeActionDecision> PlanDiagnostics(const SnapshotIndex& index,
                                                const WorkingState& state, const Policy& policy,
                                                const std::vector<StartDecision>& starts) {
  std::vector<NodeActionDecision> out;
  const HealthOptions& health = policy.health;
  if (!DiagnosticsPlanned(health)) return out;
  const int64_t now = index.snapshot().now;
  std::vector<uint8_t> started_on(index.node_count(), 0);
  for (const StartDecision& start : starts) {
    for (const ReplicaPlacement& p : start.placements) {
      const int32_t n = index.FindNode(p.node);
      if (n != kNone) started_on[n] = 1;
    }
  }
  const std::vector<std::vector<int32_t>> jobs_on = JobsOnNodes(index);
  int64_t diagnosing = 0;
  struct Candidate {
    bool has_last;
    int64_t last;
    int32_t node;
    int64_t empty_at;
  };
  std::vector<Candidate> candidates;
  for (int32_t n = 0; n < index.node_count(); ++n) {
    const Node& node = index.node(n);
    if (node.state != NodeState::kReady) {
      if (node.state_cause == NodeStateCause::kDiagnostic) ++diagnosing;
      continue;
    }
    if (node.gpus.empty() || started_on[n] || state.node_held(n)) continue;
    if (node.last_diagnostic && now - node.last_diagnostic->time < health.diagnostic_interval_s) {
      continue;
    }
    int64_t empty_at = now;
    bool soon = true;
    for (int32_t j : jobs_on[n]) {
      // A job that has run its estimate and still runs ends at a time nobody knows: its node is
      // not idle soon, however small the window (0: idle nodes only).
      const std::optional<int64_t> remaining = RemainingEstimate(*index.job(j).job);
      if (!remaining || *remaining == 0 || *remaining > health.diagnostic_idle_window_s) {
        soon = false;
        break;
      }
      empty_at = std::max(empty_at, SaturatingAdd(now, *remaining));
    }
    if (!soon) continue;
    candidates.push_back({node.last_diagnostic.has_value(),
                          node.last_diagnostic ? node.last_diagnostic->time : 0, n, empty_at});
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.has_last, a.last, a.node) < std::tie(b.has_last, b.last, b.node);
  });
  for (const Candidate& c : candidates) {
    if (health.max_diagnosing_nodes > 0 && diagnosing >= health.max_diagnosing_nodes) break;
    ++diagnosing;
    const Node& node = index.node(c.node);
    NodeActionDecision action;
    action.node = node.id;
    action.action = NodeAction::kDiagnose;
    action.expected_empty_time = c.empty_at;
    const std::string last =
        c.has_last ? fmt::format("its last diagnostic, at {}, is {} s old (interval {} s)", c.last,
                                 now - c.last, health.diagnostic_interval_s)
                   : std::string("it has no diagnostic on record");
    action.reason = c.empty_at == now ? fmt::format("{}, and it is idle", last)
                                      : fmt::format(
                                            "{}, and its running jobs are expected to end by {} "
                                            "(within the idle window of {} s)",
                                            last, c.empty_at, health.diagnostic_idle_window_s);
    out.push_back(std::move(action));
  }
  std::sort(out.begin(), out.end(),
            [&index](const NodeActionDecision& a, const NodeActionDecision& b) {
              return index.FindNode(a.node) < index.FindNode(b.node);
            });
  return out;
}

}  // namespace gpupool::internal
