// Jobs: gangs of task groups, pending or running.
#ifndef GPUPOOL_JOB_H_
#define GPUPOOL_JOB_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpupool/resources.h"

namespace gpupool {

// How strictly a placement rule applies.
enum class Strictness {
  kRequired,   // the job waits rather than break the rule
  kPreferred,  // the rule is followed when possible, broken otherwise
};

// Where each replica's GPUs must lie. A replica is always on one node; kIsland further asks
// that all its GPUs sit in one NVLink island of that node.
enum class ReplicaScope {
  kNode,
  kIsland,
};

// The constraint on a task group's replicas, and on the whole gang.
struct TopologyConstraint {
  ReplicaScope replica_scope = ReplicaScope::kNode;
  Strictness replica_strictness = Strictness::kRequired;
  // If set, every replica of the job (all groups) must lie within one domain of this topology
  // level ("rack", "nvlink_domain", ... as declared in the snapshot's Topology), or on one node
  // when it is "node".
  std::optional<std::string> gang_level;
  Strictness gang_strictness = Strictness::kRequired;
  // If set (>= 1), at most this many replicas of the group on one node: 1 spreads them over
  // distinct nodes, as a host that runs one process per node needs (Slurm's `-N`). Always
  // required. It binds the placements the engine makes; a running job's placement is taken as
  // the host gives it. Replicas of the job's other groups do not count.
  std::optional<int32_t> max_replicas_per_node;
};

// A set of identical replicas inside a job. A job's groups together form one gang: they start
// together or not at all.
struct TaskGroup {
  // Unique within the job.
  std::string name = "main";
  // Replicas wanted. With min_replicas below it the group is elastic: it may start with any
  // count in [min_replicas, replicas], and the gang needs only min_replicas of it.
  int32_t replicas = 1;
  // Unset: equal to replicas (not elastic).
  std::optional<int32_t> min_replicas;
  // What each replica needs.
  ResourceRequest request;
  // GPU models the group accepts, most preferred first. Empty: any model. All groups of one
  // job are placed on one model.
  std::vector<std::string> gpu_models;
  TopologyConstraint topology;

  int32_t MinReplicas() const { return min_replicas.value_or(replicas); }
};

// Checkpoint facts of a job, used to price preemption by the work it would lose.
struct Checkpointing {
  // Seconds of work between checkpoints; 0 means the job does not checkpoint.
  int64_t interval_s = 0;
  // Host clock time of the last completed checkpoint (unset: none yet; work since start is lost).
  std::optional<int64_t> last_checkpoint_time;
  // Seconds it takes to write a checkpoint on demand, and to restore from one.
  int64_t checkpoint_cost_s = 0;
  int64_t restore_time_s = 0;
};

// Where one replica of a running job sits.
struct ReplicaPlacement {
  // Name of the task group and index of the replica in it (0-based, below its replica count).
  std::string group;
  int32_t replica = 0;
  std::string node;
  // Indices of the GPUs used on that node: GpuCount() of them. Each GPU carries the group's
  // MilliPerGpu() of this replica.
  std::vector<int32_t> gpus;
  // Milli-GPUs taken on each of those GPUs. In a Start decision always set; in a snapshot's
  // running placements it may be 0, meaning "the group's MilliPerGpu()", and must equal that
  // otherwise.
  int64_t gpu_milli = 0;

  friend bool operator==(const ReplicaPlacement&, const ReplicaPlacement&) = default;
};

// Do two lists of placements use a common GPU (the same index on the same node)? Quadratic: for
// the few replicas of two decisions, say a Start and the Migrate whose GPUs it takes.
inline bool SharesAGpu(const std::vector<ReplicaPlacement>& a,
                       const std::vector<ReplicaPlacement>& b) {
  for (const ReplicaPlacement& x : a) {
    for (const ReplicaPlacement& y : b) {
      if (x.node != y.node) continue;
      for (int32_t gpu : x.gpus) {
        if (std::find(y.gpus.begin(), y.gpus.end(), gpu) != y.gpus.end()) return true;
      }
    }
  }
  return false;
}

enum class JobState {
  kPending,
  kRunning,
};

struct Job {
  // Unique id.
  std::string id;
  // Leaf queue the job belongs to (any queue of the tree is accepted).
  std::string queue;
  // Higher runs first within a queue.
  int32_t priority = 0;
  // Host clock time the job was submitted.
  int64_t submit_time = 0;
  // One or more groups forming the gang.
  std::vector<TaskGroup> groups;
  // May the job be evicted to make room for other work?
  bool preemptible = true;
  Checkpointing checkpointing;
  // Seconds a started job runs before it may be preempted.
  int64_t min_runtime_s = 0;
  // Expected seconds of work from start to completion (unset: unknown).
  std::optional<int64_t> runtime_estimate_s;
  JobState state = JobState::kPending;
  // For running jobs: host clock time it (last) started, and where each replica sits. A running
  // elastic group may run fewer replicas than `replicas` but never fewer than its minimum.
  std::optional<int64_t> start_time;
  std::vector<ReplicaPlacement> placements;
  // Seconds of work done so far (attained service), for age- and service-based job orders.
  int64_t attained_service_s = 0;
  // For pending jobs: host clock time the job last became pending (its submit time, or when it
  // was last evicted). The starvation guard measures waiting from it. Unset: submit_time.
  std::optional<int64_t> pending_since;
  // For running jobs: it was started as a backfill (StartDecision::backfilled) and has run
  // since. With policy.backfill, a backfilled job past runtime_estimate_s + margin_s since its
  // start_time is overrun (docs/engine.md, stage 7). Only a running job with a
  // runtime_estimate_s may have it.
  bool backfilled = false;
  // The job accepts spot nodes whatever its checkpointing (docs/operations.md, "Spot nodes"):
  // without it a job goes on a spot node only if it is preemptible and checkpoints at least every
  // Policy::spot.max_checkpoint_interval_s.
  bool spot_tolerant = false;
};

}  // namespace gpupool

#endif  // GPUPOOL_JOB_H_
