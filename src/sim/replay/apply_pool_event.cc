// Carrying out a pool event in the replay (apply_pool_event.h).
#include "sim/replay/apply_pool_event.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace gpupool::sim::internal {
namespace {

// Whether job `run` has a replica on GPU `gpu` of node `node_id` (any GPU when gpu is -1).
bool RunsOn(const JobRun& run, const std::string& node_id, int32_t gpu) {
  return std::any_of(run.placements.begin(), run.placements.end(), [&](const ReplicaPlacement& p) {
    return p.node == node_id &&
           (gpu < 0 || std::find(p.gpus.begin(), p.gpus.end(), gpu) != p.gpus.end());
  });
}

// Stops every job running on GPU `gpu` of `node` (the whole node when -1), in index order, as a
// failure stops them: each keeps the work of its last real checkpoint. `spot`: the provider took
// the node (counted as a spot stop, not a failure).
absl::Status StopJobsOn(int32_t node, int32_t gpu, int64_t now, bool spot, const ReplayTargets& t) {
  const std::string node_id = NodeId(node);
  std::vector<int32_t> hit;
  for (int32_t i : t.state.running()) {
    if (RunsOn(t.state.job(i), node_id, gpu)) hit.push_back(i);
  }
  for (int32_t i : hit) {
    const JobRun& run = t.state.job(i);
    const int64_t work = WorkAt(run, now);
    const int64_t kept = t.checkpoints.FailureKeptWork(run, now);
    const int64_t restore = t.checkpoints.FailureRestoreCost();
    if (spot) {
      t.metrics.SpotStopped(i, run.gpus, work - kept + restore);
    } else {
      t.metrics.FailureStopped(i, run.gpus, work - kept + restore);
    }
    if (absl::Status s = t.ledger.Failed(i, now, t.checkpoints.FailureCheckpointTime(run, now));
        !s.ok()) {
      return s;
    }
    t.events.CancelCompletion(run.completion, i);
    t.state.Preempt(i, now, kept, restore);
  }
  return absl::OkStatus();
}

}  // namespace

bool JobsOn(int32_t node, const RunState& state) {
  const std::string node_id = NodeId(node);
  return std::any_of(state.running().begin(), state.running().end(),
                     [&](int32_t i) { return RunsOn(state.job(i), node_id, -1); });
}

absl::StatusOr<bool> ApplyPoolEvent(const PoolEvent& event, const ReplayTargets& t) {
  const int64_t now = event.time;
  bool cycle_now = false;
  switch (event.kind) {
    case PoolEventKind::kGpuFails:
      if (!t.health.Up(event.node) || t.health.GpuFailed(event.node, event.gpu)) {
        return false;  // already out of service: dropped
      }
      if (absl::Status s = StopJobsOn(event.node, event.gpu, now, /*spot=*/false, t); !s.ok()) {
        return s;
      }
      t.health.FailGpu(event.node, event.gpu);
      t.metrics.GpuFailed();
      t.pool_events.Add(PoolEvent{.time = now + t.options.failures.repair_s,
                                  .kind = PoolEventKind::kGpuRepaired,
                                  .node = event.node,
                                  .gpu = event.gpu});
      break;
    case PoolEventKind::kNodeFails:
      if (!t.health.Up(event.node)) return false;  // dropped
      if (absl::Status s = StopJobsOn(event.node, -1, now, /*spot=*/false, t); !s.ok()) return s;
      t.health.FailNode(event.node);
      t.metrics.NodeFailed();
      t.pool_events.Add(PoolEvent{.time = now + t.options.failures.repair_s,
                                  .kind = PoolEventKind::kNodeRepaired,
                                  .node = event.node});
      break;
    case PoolEventKind::kGpuRepaired:
      if (!t.health.RepairGpu(event.node, event.gpu)) {
        return absl::InternalError(
            fmt::format("repair of GPU {} of node {}: not failed", event.gpu, event.node));
      }
      break;
    case PoolEventKind::kNodeRepaired:
      if (!t.health.RepairNode(event.node)) {
        return absl::InternalError(fmt::format("repair of node {}: not down", event.node));
      }
      break;
    case PoolEventKind::kMaintenanceStarts:
      t.health.StartMaintenance(event.node);
      t.metrics.MaintenanceStarted();
      t.pool_events.Add(PoolEvent{
          .time = event.end, .kind = PoolEventKind::kMaintenanceEnds, .node = event.node});
      cycle_now = JobsOn(event.node, t.state);
      break;
    case PoolEventKind::kMaintenanceEnds:
      if (!t.health.EndMaintenance(event.node)) {
        return absl::InternalError(
            fmt::format("end of maintenance of node {}: not in maintenance", event.node));
      }
      break;
    case PoolEventKind::kSpotReclaimed: {
      const int64_t deadline = now + t.options.spot.notice_s;
      if (!t.health.AnnounceReclaim(event.node, deadline)) return false;  // dropped
      t.metrics.SpotReclaimed();
      t.pool_events.Add(
          PoolEvent{.time = deadline, .kind = PoolEventKind::kSpotTaken, .node = event.node});
      cycle_now = JobsOn(event.node, t.state);
      break;
    }
    case PoolEventKind::kSpotTaken:
      if (absl::Status s = StopJobsOn(event.node, -1, now, /*spot=*/true, t); !s.ok()) return s;
      if (!t.health.TakeReclaimed(event.node)) {
        return absl::InternalError(fmt::format("spot node {} taken: not reclaimed", event.node));
      }
      t.pool_events.Add(PoolEvent{.time = now + t.options.spot.away_s,
                                  .kind = PoolEventKind::kSpotReturned,
                                  .node = event.node});
      break;
    case PoolEventKind::kSpotReturned:
      if (!t.health.ReturnReclaimed(event.node)) {
        return absl::InternalError(fmt::format("spot node {} back: not taken", event.node));
      }
      break;
    case PoolEventKind::kNodeProvisioned:
      if (!t.health.Add(event.node)) {
        return absl::InternalError(fmt::format("node {} added: not ordered", event.node));
      }
      break;
  }
  t.state.SetOutOfService(t.health.unusable_gpus(), t.health.nodes_down());
  t.cycle.UpdateNode(event.node, t.health);
  return cycle_now;
}

}  // namespace gpupool::sim::internal
