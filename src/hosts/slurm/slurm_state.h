// What the Slurm adapter reads from Slurm, as plain data, and how it reads it.
//
// The adapter reads four command outputs each cycle:
//   sinfo --json                  nodes: state, flags, GRES (GPUs) and GRES in use, partitions
//   squeue --json                 jobs: state, reason, GPU request, nice, times, nodes, GPU indices
//   scontrol -o show partition    partitions: state, nodes, PriorityTier
//   scontrol show topology        leaf switches (racks), when the topology/tree plugin is on
// The JSON fields are those of Slurm 22.05's openapi/v0.0.38 plugin (squeue/sinfo --json); later
// Slurm versions keep them. Reading is lenient about keys it does not use and strict about the
// ones it does: a missing or mistyped field is an InvalidArgument naming the command, the list
// index and the field ("squeue --json: jobs[2].job_id: expected an integer").
#ifndef GPUPOOL_SRC_HOSTS_SLURM_SLURM_STATE_H_
#define GPUPOOL_SRC_HOSTS_SLURM_SLURM_STATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hosts/slurm/command_runner.h"

namespace gpupool::slurm {

struct SlurmNode {
  std::string name;
  // Base state, lowercase as sinfo --json writes it: idle, mixed, allocated, down, ...
  std::string state;
  // Flags on top of it: DRAIN, NOT_RESPONDING, MAINT, ...
  std::vector<std::string> state_flags;
  std::string reason;
  std::vector<std::string> partitions;
  int64_t cpus = 0;
  int64_t alloc_cpus = 0;
  int64_t real_memory_mb = 0;
  // "gpu:h100:8", and what is in use: "gpu:h100:3(IDX:0-2)".
  std::string gres;
  std::string gres_used;
};

struct SlurmJob {
  int64_t job_id = 0;
  std::string name;
  std::string account;
  std::string qos;
  std::string partition;
  // PENDING, RUNNING, COMPLETING, COMPLETED, ...
  std::string job_state;
  // JobHeldUser, JobHeldAdmin, job_requeued_in_held_state, Resources, None, ...
  std::string state_reason;
  // Slurm's priority: 0 while the job is held.
  int64_t priority = 0;
  // sbatch --nice (unset: 0; Slurm 22.05's unsigned spelling of negative values undone).
  int64_t nice = 0;
  int64_t submit_time = 0;
  int64_t start_time = 0;
  // Minutes; unset when unlimited.
  std::optional<int64_t> time_limit_min;
  // GPU requests: "gres:gpu:h100:2" (--gres, --gpus-per-node), "gres:gpu:4" (--gpus).
  std::string tres_per_node;
  std::string tres_per_job;
  std::string tres_per_task;
  int64_t node_count = 1;
  int64_t cpus = 0;
  int64_t tasks = 1;
  // Running jobs: the nodes in allocation order, and one GRES entry per node in that order
  // ("gpu:h100:2(IDX:0-1)").
  std::vector<std::string> nodes;
  std::vector<std::string> gres_detail;
  // Hostlists ("n[1-2]"), as given with -w/--nodelist and --exclude (or set by the adapter).
  std::string required_nodes;
  std::string excluded_nodes;
  // --constraint.
  std::string features;
  std::string comment;
  // May the job be requeued (--requeue, the default, vs --no-requeue)?
  bool requeue = true;
  // Part of a job array or of a heterogeneous job.
  bool array = false;
  bool heterogeneous = false;
};

struct SlurmPartition {
  std::string name;
  // UP, DOWN, DRAIN, INACTIVE.
  std::string state;
  // Hostlist.
  std::string nodes;
  int64_t priority_tier = 1;
};

// A switch of the topology/tree plugin. Level 0 switches are the leaves (racks).
struct SlurmSwitch {
  std::string name;
  int64_t level = 0;
  std::vector<std::string> nodes;
};

struct SlurmState {
  std::vector<SlurmNode> nodes;
  std::vector<SlurmJob> jobs;
  std::vector<SlurmPartition> partitions;
  std::vector<SlurmSwitch> switches;
};

// Parsers of the four outputs. InvalidArgument on malformed input, naming the command and field.
absl::StatusOr<std::vector<SlurmNode>> ParseSinfoJson(std::string_view json);
absl::StatusOr<std::vector<SlurmJob>> ParseSqueueJson(std::string_view json);
absl::StatusOr<std::vector<SlurmPartition>> ParsePartitions(std::string_view text);
absl::StatusOr<std::vector<SlurmSwitch>> ParseTopology(std::string_view text);

// The command lines ReadSlurmState() runs, in the order it runs them.
std::vector<std::string> SinfoCommand();
std::vector<std::string> SqueueCommand();
std::vector<std::string> PartitionCommand();
std::vector<std::string> TopologyCommand();

// Runs the four commands and parses them. A failing sinfo, squeue or partition command is an
// error (its status, with the command line and stderr); a failing topology command means "no
// topology" (the topology/tree plugin is off).
absl::StatusOr<SlurmState> ReadSlurmState(CommandRunner& runner);

}  // namespace gpupool::slurm

#endif  // GPUPOOL_SRC_HOSTS_SLURM_SLURM_STATE_H_
