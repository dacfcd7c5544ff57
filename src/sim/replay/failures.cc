// Carrying out a pool event in the replay (failures.h).
#include "sim/replay/failures.h"

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

// Stops every job running on GPU `gpu` of `node` (the whole node when -1), in index order.
absl::Status StopJobsOn(int32_t node, int32_t gpu, int64_t now, const PoolEventTargets& t) {
  // The replay's node ids (MakePoolSnapshot).
  const std::string node_id = fmt::format("n{:03}", node);
  std::vector<int32_t> hit;
  for (int32_t i : t.state.running()) {
    if (RunsOn(t.state.job(i), node_id, gpu)) hit.push_back(i);
  }
  for (int32_t i : hit) {
    const JobRun& run = t.state.job(i);
    const int64_t work = WorkAt(run, now);
    const int64_t kept = t.checkpoints.FailureKeptWork(run, now);
    const int64_t restore = t.checkpoints.FailureRestoreCost();
    t.metrics.FailureStopped(i, run.gpus, work - kept + restore);
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

absl::Status HandlePoolEvent(const PoolEvent& event, const PoolEventTargets& t) {
  const int64_t now = event.time;
  switch (event.kind) {
    case PoolEventKind::kGpuFails:
      if (t.health.NodeDown(event.node) || t.health.GpuFailed(event.node, event.gpu)) {
        return absl::OkStatus();  // already out of service: dropped
      }
      if (absl::Status s = StopJobsOn(event.node, event.gpu, now, t); !s.ok()) return s;
      t.health.FailGpu(event.node, event.gpu);
      t.metrics.GpuFailed();
      t.pool_events.Add(PoolEvent{.time = now + t.repair_s,
                                  .kind = PoolEventKind::kGpuRepaired,
                                  .node = event.node,
                                  .gpu = event.gpu});
      break;
    case PoolEventKind::kNodeFails:
      if (t.health.NodeDown(event.node)) return absl::OkStatus();  // dropped
      if (absl::Status s = StopJobsOn(event.node, -1, now, t); !s.ok()) return s;
      t.health.FailNode(event.node);
      t.metrics.NodeFailed();
      t.pool_events.Add(PoolEvent{
          .time = now + t.repair_s, .kind = PoolEventKind::kNodeRepaired, .node = event.node});
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
  }
  t.state.SetOutOfService(t.health.unusable_gpus(), t.health.nodes_down());
  t.cycle.UpdateNode(event.node, t.health);
  return absl::OkStatus();
}

}  // namespace gpupool::sim::internal
