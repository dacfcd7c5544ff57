#include "spot.h"

#include <algorithm>

#include "fmt/format.h"
#include "internal/saturating.h"

namespace gpupool::internal {

bool MayUseSpot(const Job& job, const Policy& policy) {
  if (job.spot_tolerant) return true;
  const int64_t interval = job.checkpointing.interval_s;
  const int64_t most = policy.spot.max_checkpoint_interval_s;
  return job.preemptible && interval > 0 && (most == 0 || interval <= most);
}

PreemptDecision SpotReclaim(const SnapshotIndex& index, int32_t j, int32_t n, int64_t milli) {
  const Job& job = *index.job(j).job;
  const Node& node = index.node(n);
  const int64_t now = index.snapshot().now;
  const Checkpointing& checkpointing = job.checkpointing;
  const int64_t start = job.start_time.value_or(now);
  const int64_t kept = std::max(start, checkpointing.last_checkpoint_time.value_or(start));
  int64_t lost_s = std::max<int64_t>(0, now - kept);
  bool on_demand = false;
  if (checkpointing.interval_s > 0 && node.reclaim_deadline.has_value() &&
      SaturatingAdd(now, checkpointing.checkpoint_cost_s) <= *node.reclaim_deadline &&
      checkpointing.checkpoint_cost_s < lost_s) {
    lost_s = checkpointing.checkpoint_cost_s;
    on_demand = true;
  }
  PreemptDecision out;
  out.job = job.id;
  out.lost_milli_gpu_seconds =
      SaturatingMultiply(milli, SaturatingAdd(lost_s, checkpointing.restore_time_s));
  const std::string deadline = node.reclaim_deadline.has_value()
                                   ? fmt::format(" by {} ({} s from now)", *node.reclaim_deadline,
                                                 *node.reclaim_deadline - now)
                                   : std::string();
  out.reason = fmt::format(
      "spot reclaim: the provider takes node {} back{}; the job {}", node.id, deadline,
      on_demand ? fmt::format("checkpoints first ({} s) and stops", checkpointing.checkpoint_cost_s)
                : fmt::format("stops, losing {} s of work", lost_s));
  return out;
}

}  // namespace gpupool::internal
