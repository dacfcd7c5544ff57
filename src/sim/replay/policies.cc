// The named replay policies (docs/replay.md explains each choice).
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "gpupool/sim/replay.h"

namespace gpupool::sim {

std::vector<std::string> ReplayPolicyNames() { return {"fifo", "las", "las-free", "default"}; }

absl::StatusOr<ReplayOptions> MakeReplayOptions(std::string_view policy_name) {
  ReplayOptions options;
  Policy& policy = options.policy;
  policy.name = std::string(policy_name);
  if (policy_name == "fifo") {
    // The engine's defaults: priority-FIFO over all jobs (priorities are all 0), best-fit, no
    // preemption. Queues exist (one per virtual cluster) but take no turns.
    options.queue_mode = QueueMode::kPerCluster;
    return options;
  }
  if (policy_name == "las" || policy_name == "las-free") {
    // Tiresias' 2D-LAS: one queue for everybody, priority = -(LAS level), so that the engine's
    // same-queue priority preemption lets a job of a lower level evict one of a higher level,
    // whatever its virtual cluster. The job order is the engine's `las`, which sorts by the same
    // levels and FIFO inside a level.
    options.queue_mode = QueueMode::kSingleQueueLas;
    policy.job_order = JobOrder::kLeastAttainedService;
    policy.las_thresholds_gpu_seconds = options.las_thresholds_gpu_seconds;
    policy.preemption.enabled = true;
    options.free_preemption = policy_name == "las-free";
    return options;
  }
  if (policy_name == "default") {
    // gpupool's own (docs/replay.md gives the measurements behind each choice):
    //   - one queue per virtual cluster with its guarantee; 2D-LAS levels as priorities and as
    //     the job order, over all queues (no queue turns: short jobs first is what cuts JCT);
    //   - preemption by LAS level inside a queue, and across queues only where the reclaim
    //     rules allow it (the victim's queue above its entitlement, guarantees kept, no loops)
    //     and the victim has a lower level: 2D-LAS, kept fair;
    //   - victims are jobs that have just checkpointed (at most 5 minutes of work lost) and
    //     have run 10 minutes since they last started: a newcomer waits a little for a cheap
    //     victim rather than throwing work away, and a resumed job is not evicted at once;
    //   - a starvation bound of 2 days: a job waiting longer is served first and gets capacity
    //     held where it can start soonest (a reservation).
    options.queue_mode = QueueMode::kPerClusterLas;
    policy.job_order = JobOrder::kLeastAttainedService;
    policy.las_thresholds_gpu_seconds = options.las_thresholds_gpu_seconds;
    policy.queue_order = QueueOrder::kNone;
    policy.preemption.enabled = true;
    policy.preemption.reclaim_across_queues = true;
    policy.preemption.reclaim_lower_priority_only = true;
    policy.preemption.max_victim_lost_s = 300;
    policy.preemption.min_victim_run_s = 600;
    policy.starvation_bound_s = 2 * 86400;
    options.wake_up_every_s = 300;  // victims become cheap as they checkpoint, not at events
    return options;
  }
  return absl::InvalidArgumentError(fmt::format(
      "unknown replay policy \"{}\" (expected fifo, las, las-free or default)", policy_name));
}

}  // namespace gpupool::sim
