// From what Slurm reports to a gpupool Snapshot (docs/slurm.md, "What is mapped how").
//
// Only the partitions the adapter manages count: their nodes become the snapshot's nodes, their
// held jobs its pending jobs, their running jobs its running jobs. Work Slurm placed by itself
// (other partitions sharing the nodes, jobs whose GPU indices cannot be read) keeps its GPUs:
// they appear as unhealthy GPUs, which receive no new work, and its CPUs are taken off the
// node's capacity.
#ifndef GPUPOOL_SRC_HOSTS_SLURM_SNAPSHOT_BUILDER_H_
#define GPUPOOL_SRC_HOSTS_SLURM_SNAPSHOT_BUILDER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpupool/snapshot.h"
#include "hosts/slurm/slurm_state.h"
#include "hosts/slurm/slurm_text.h"

namespace gpupool::slurm {

// Which job field names the leaf queue under each partition.
enum class QueueBy {
  kAccount,  // sbatch -A/--account (the default)
  kQos,      // sbatch -q/--qos
};

struct AdapterOptions {
  // The partitions whose held jobs gpupool schedules (sbatch --hold -p NAME).
  std::vector<std::string> partitions = {"gpupool"};
  QueueBy queue_by = QueueBy::kAccount;
  // The GRES name that means GPUs.
  std::string gres_name = "gpu";
};

// What the adapter keeps about each job of the snapshot, to apply decisions to it.
struct JobFacts {
  int64_t node_count = 1;
  Directives directives;
  std::string user_comment;
  // The whole comment as Slurm has it now.
  std::string comment;
  bool running = false;
};

// A held job of a managed partition that gpupool cannot schedule; it stays held and its comment
// says why.
struct UnmappedJob {
  std::string id;
  std::string why;
  std::string user_comment;
  std::string comment;
};

// A job of a managed partition that was released (by the adapter, or by hand) and waits for
// Slurm to start it: its nodes are cordoned for this cycle so that nothing else is placed on
// GPUs it is about to take. When one of them is no longer schedulable, the adapter takes the job
// back (scontrol hold) so that the next cycle places it again.
struct InFlightJob {
  std::string id;
  std::vector<std::string> nodes;
  std::string unschedulable_node;  // empty: all its nodes are fine
  std::string user_comment;
  std::string comment;
};

struct BuiltSnapshot {
  Snapshot snapshot;
  // By job id, for every job in snapshot.jobs.
  std::map<std::string, JobFacts> jobs;
  std::vector<UnmappedJob> unmapped;
  std::vector<InFlightJob> in_flight;
  // One line each: what the adapter could not map and how it worked around it.
  std::vector<std::string> notes;
};

// Builds the snapshot at host time `now` (seconds since the epoch, as Slurm's times are).
// FailedPrecondition when a managed partition does not exist; InvalidArgument when a GRES string
// or hostlist of a managed node or job cannot be read. Deterministic: lists sorted by id (jobs by
// number), whatever the order of Slurm's output.
absl::StatusOr<BuiltSnapshot> BuildSnapshot(const SlurmState& state, const AdapterOptions& options,
                                            int64_t now);

}  // namespace gpupool::slurm

#endif  // GPUPOOL_SRC_HOSTS_SLURM_SNAPSHOT_BUILDER_H_
