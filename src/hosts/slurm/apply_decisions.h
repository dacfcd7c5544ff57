// Applying gpupool's decisions to Slurm (docs/slurm.md, "How decisions are applied").
//
//   Preempt  -> (job asked for a checkpoint signal: scancel --signal=SIG --full J, wait its
//               seconds, and go on only if it still runs) scontrol requeuehold J; its comment
//               says for which job it was preempted
//   Start    -> scontrol update JobId=J NodeList=<nodes> StartTime=now Comment=...; then
//               scontrol release J (Slurm picks the GPU indices itself: the lowest free ones)
//   Pending  -> the job stays held; its comment says why (squeue -o %k shows it)
//   Reserve  -> added to the pending job's comment (expected start and nodes)
//   Migrate, Resize -> not applied: Slurm cannot move or shrink a running job (reported)
// Jobs that cannot be mapped get their reason as comment; released jobs whose nodes went down
// or drained are taken back with scontrol hold. A comment is written only when it changes.
#ifndef GPUPOOL_SRC_HOSTS_SLURM_APPLY_DECISIONS_H_
#define GPUPOOL_SRC_HOSTS_SLURM_APPLY_DECISIONS_H_

#include <string>
#include <vector>

#include "gpupool/decisions.h"
#include "hosts/slurm/command_runner.h"
#include "hosts/slurm/snapshot_builder.h"

namespace gpupool::slurm {

struct ApplyReport {
  // Every command that changes Slurm, in the order run (or, in a dry run, that would run).
  std::vector<std::vector<std::string>> commands;
  // Commands that failed, one line each (the command line, its exit status and stderr).
  std::vector<std::string> errors;
  // Decisions that Slurm cannot express and were not applied, one line each, with why.
  std::vector<std::string> not_applied;
};

// Applies `decisions` (from Schedule() on built.snapshot) through `runner`. With `dry_run`, runs
// nothing and waits for nothing: the report lists what would run. A failing command does not
// stop the others: it is reported in `errors`.
ApplyReport ApplyDecisions(const Decisions& decisions, const BuiltSnapshot& built,
                           CommandRunner& runner, bool dry_run);

}  // namespace gpupool::slurm

#endif  // GPUPOOL_SRC_HOSTS_SLURM_APPLY_DECISIONS_H_
