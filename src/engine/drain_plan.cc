// PlanDrain(): per node, when it empties by itself and which jobs the deadline stops. The
// arithmetic is the one Schedule() uses for a node draining for a maintenance window
// (maintenance.h for the expected ends, lost_work.h for the price), with the deadline in place
// of the window's start.
#include "gpupool/drain_plan.h"

#include <algorithm>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gpupool/validate.h"
#include "internal/check.h"
#include "internal/saturating.h"
#include "lost_work.h"
#include "maintenance.h"
#include "snapshot_index.h"

namespace gpupool {

absl::StatusOr<DrainPlan> PlanDrain(const Snapshot& snapshot, std::span<const std::string> nodes,
                                    int64_t deadline, const Policy& policy) {
  GPUPOOL_RETURN_IF_ERROR(ValidateSnapshot(snapshot));
  GPUPOOL_RETURN_IF_ERROR(ValidatePolicy(policy));
  if (nodes.empty()) return absl::InvalidArgumentError("nodes: name at least one node to drain");
  if (deadline < snapshot.now) {
    return absl::InvalidArgumentError(
        fmt::format("deadline: {} is before the snapshot's now ({})", deadline, snapshot.now));
  }
  const internal::SnapshotIndex index(snapshot);
  std::vector<std::string> ids(nodes.begin(), nodes.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<int32_t> wanted(index.node_count(), -1);  // position in ids, or -1
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t n = index.FindNode(ids[i]);
    if (n == internal::kNone) {
      return absl::FailedPreconditionError(
          fmt::format("nodes[{}]: no such node in the snapshot", ids[i]));
    }
    wanted[n] = static_cast<int32_t>(i);
  }

  const int64_t now = snapshot.now;
  DrainPlan plan;
  plan.now = now;
  plan.deadline = deadline;
  plan.nodes.resize(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    plan.nodes[i].node = ids[i];
    plan.nodes[i].expected_empty_time = now;
  }
  // Jobs in id order (dense job indices are), so each node's list is in id order too.
  for (int32_t j = 0; j < index.job_count(); ++j) {
    const internal::JobInfo& info = index.job(j);
    if (info.placements.empty()) continue;
    DrainJob drained;
    drained.job = info.job->id;
    drained.expected_end = internal::ExpectedEnd(*info.job, now);
    drained.stopped = !drained.expected_end || *drained.expected_end > deadline;
    const int64_t empty_at = drained.stopped ? deadline : *drained.expected_end;
    bool on_drained_node = false;
    int32_t last_node = internal::kNone;
    for (const internal::RunningPlacement& p : info.placements) {
      if (wanted[p.node] < 0 || p.node == last_node) continue;
      last_node = p.node;
      NodeDrain& node = plan.nodes[wanted[p.node]];
      if (!node.jobs.empty() && node.jobs.back().job == drained.job) continue;
      if (!on_drained_node && drained.stopped) {
        drained.lost_milli_gpu_seconds = internal::LostWorkPrice(*info.job, deadline, now, policy);
      }
      on_drained_node = true;
      node.expected_empty_time = std::max(node.expected_empty_time, empty_at);
      node.jobs.push_back(drained);
    }
    if (on_drained_node && drained.stopped) {
      plan.stopped_jobs.push_back(drained.job);
      plan.lost_milli_gpu_seconds = internal::SaturatingAdd(
          plan.lost_milli_gpu_seconds, internal::LostWorkPrice(*info.job, deadline, now, policy));
    }
  }
  return plan;
}

}  // namespace gpupool
