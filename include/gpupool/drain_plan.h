// Drain plans: when a set of nodes will be empty, and what stopping them at a deadline costs.
//
// For maintenance that cannot wait for every job ("stop almost all the GPU servers for two
// weeks"), a host asks: if these nodes take no new work from now on and must be empty at
// `deadline`, when does each empty by itself, and which jobs must be checkpointed and stopped at
// the deadline? PlanDrain() answers from the snapshot's runtime estimates alone; it decides
// nothing and changes nothing. Schedule() applies the same arithmetic to the nodes it drains for
// a maintenance window (docs/operations.md, "Maintenance windows and drains").
#ifndef GPUPOOL_DRAIN_PLAN_H_
#define GPUPOOL_DRAIN_PLAN_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpupool/policy.h"
#include "gpupool/snapshot.h"

namespace gpupool {

// A running job on a drained node.
struct DrainJob {
  std::string job;
  // Host clock time the job is expected to end: now + runtime_estimate_s - attained_service_s
  // (never before now). Unset when the job has no runtime estimate.
  std::optional<int64_t> expected_end;
  // The job must be checkpointed and stopped at the deadline: it has no estimate, or it ends
  // after the deadline.
  bool stopped = false;
  // For a stopped job: the milli-GPU-seconds of work it loses when stopped at the deadline, priced
  // as a Preempt is (docs/engine.md, stage 6), assuming it keeps checkpointing every
  // checkpointing.interval_s after its last checkpoint. 0 for a job that ends by itself.
  int64_t lost_milli_gpu_seconds = 0;
};

struct NodeDrain {
  std::string node;
  // Host clock time the node holds no work: the latest end of its jobs, the deadline for those
  // stopped then; now when it is already empty.
  int64_t expected_empty_time = 0;
  // The running jobs with a replica on the node, in job-id order. A job on several drained nodes
  // appears under each.
  std::vector<DrainJob> jobs;
};

struct DrainPlan {
  int64_t now = 0;
  int64_t deadline = 0;
  // The nodes asked for, in node-id order.
  std::vector<NodeDrain> nodes;
  // Ids of the jobs stopped at the deadline (each once), in id order, and the work they lose in
  // total.
  std::vector<std::string> stopped_jobs;
  int64_t lost_milli_gpu_seconds = 0;
};

// Plans draining `nodes` (ids, in any order; duplicates are ignored) by `deadline` (host clock
// seconds, at or after snapshot.now). `policy` supplies the pricing rules
// (preemption.checkpoint_grace_s). Deterministic; O(jobs x placements + nodes log nodes).
// Returns InvalidArgument for an invalid snapshot or policy (as Schedule() does), an empty node
// list, or a deadline before now; FailedPrecondition for a node id the snapshot does not have.
absl::StatusOr<DrainPlan> PlanDrain(const Snapshot& snapshot, std::span<const std::string> nodes,
                                    int64_t deadline, const Policy& policy);

}  // namespace gpupool

#endif  // GPUPOOL_DRAIN_PLAN_H_
