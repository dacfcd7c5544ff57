// The replay's run state: where every job of the trace is (future, pending, running, done or
// unschedulable), the work it has done and its attained service, and the pool's free GPUs and
// per-tenant usage and demand. The four transitions (Arrive, Complete, Preempt, Start) are the
// only writers, so the sets and counters always agree with the jobs' phases.
//
// A running job's progress is a pure function of its start time, the work it resumed from and
// the restore time it pays (WorkAt, ServiceAt), so nothing ticks between events.
//
// Not API: one of the parts RunReplay() (replay.cc) is built from.
#ifndef GPUPOOL_SRC_SIM_REPLAY_RUN_STATE_H_
#define GPUPOOL_SRC_SIM_REPLAY_RUN_STATE_H_

#include <cstdint>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "gpupool/job.h"
#include "gpupool/sim/replay.h"
#include "sim/replay/tenants.h"

namespace gpupool::sim::internal {

enum class Phase { kFuture, kPending, kRunning, kDone, kUnschedulable };

// One job's state.
struct JobRun {
  Phase phase = Phase::kFuture;
  int32_t gpus = 0;
  int32_t tenant = 0;
  int64_t submit_time = 0;
  int64_t duration_s = 0;
  // Work (seconds) done when the current run started, and the restore seconds the current run
  // (or the next one, while pending) pays before it progresses.
  int64_t work_base = 0;
  int64_t restore_due = 0;
  int64_t run_start = 0;
  // Seconds run before the current run (restores and lost work included): attained service.
  int64_t service_before = 0;
  int64_t pending_since = 0;
  // When the current run ends, if it is not preempted.
  int64_t completion = 0;
  std::vector<ReplicaPlacement> placements;
};

// Work done by `now`: the work resumed from plus the time run since the restore ended.
int64_t WorkAt(const JobRun& job, int64_t now);
// Attained service by `now`: every second run, restores and lost work included.
int64_t ServiceAt(const JobRun& job, int64_t now);

// What a preemption costs under the replay's options: the work a victim keeps, the restore it
// pays when it starts again, and the last checkpoint a running job reports to the engine.
class CheckpointModel {
 public:
  explicit CheckpointModel(const ReplayOptions& options);

  int64_t interval_s() const { return interval_s_; }
  // Restore seconds a preempted job pays (0 under free preemption).
  int64_t RestoreCost() const { return free_ ? 0 : restore_s_; }
  // Of `work` seconds done, what survives a preemption: all of it under free preemption, else
  // the last multiple of the interval (nothing without checkpoints).
  int64_t KeptWork(int64_t work) const;
  // What a running job keeps when preempted at `now`: all its work under free preemption, else
  // the last multiple of the interval, or the work its run resumed from if more (a spot node's
  // job checkpoints on demand, off the multiples).
  int64_t PreemptionKeptWork(const JobRun& job, int64_t now) const;
  // The time of a running job's last checkpoint at `now`, as Job::checkpointing reports it:
  // `now` under free preemption; else the moment its work crossed the last multiple of the
  // interval during this run, or its start when it resumed from a checkpoint and has not
  // written one since; none when it has never checkpointed.
  std::optional<int64_t> LastCheckpointTime(const JobRun& job, int64_t now) const;
  // The first time after `now` at which a running job's work reaches the next multiple of the
  // interval (its restore, if it is paying one, comes first); none under free preemption or
  // without checkpoints.
  std::optional<int64_t> NextCheckpointTime(const JobRun& job, int64_t now) const;

  // A failure is never free: of a running job's work at `now` it keeps what it really
  // checkpointed, the work its run resumed from (a checkpoint, or under free preemption the
  // state saved when it was preempted) or the last multiple of the interval reached since,
  // whichever is more.
  int64_t FailureKeptWork(const JobRun& job, int64_t now) const;
  // The time of that checkpoint in the current run: when the multiple was reached, the run's
  // start when it is the work resumed from, none when the job has never checkpointed.
  std::optional<int64_t> FailureCheckpointTime(const JobRun& job, int64_t now) const;
  // Restore seconds a job stopped by a failure pays when it starts again (never free).
  int64_t FailureRestoreCost() const { return restore_s_; }

 private:
  int64_t interval_s_;
  int64_t restore_s_;
  bool free_;
};

class RunState {
 public:
  // Every job in phase kFuture, except those wider than a rack of `pool` (kUnschedulable).
  RunState(const std::vector<TraceJob>& jobs, const Tenants& tenants, const ReplayPool& pool);

  // The job at `now` becomes pending.
  void Arrive(int32_t i, int64_t now);
  // The running job completes and frees its GPUs.
  void Complete(int32_t i);
  // The running job stops at `now` with `kept_work` seconds of work and `restore_s` to pay on
  // its next start, and waits again.
  void Preempt(int32_t i, int64_t now, int64_t kept_work, int64_t restore_s);
  // The pending job starts at `now` on `placements`; its completion time is set.
  void Start(int32_t i, int64_t now, std::vector<ReplicaPlacement> placements);

  const JobRun& job(int32_t i) const { return jobs_[i]; }
  int32_t size() const { return static_cast<int32_t>(jobs_.size()); }
  // Pending jobs by index (id order), the same by (submit time, index), running jobs by index.
  const std::set<int32_t>& pending() const { return pending_; }
  const std::set<std::pair<int64_t, int32_t>>& pending_fifo() const { return pending_fifo_; }
  const std::set<int32_t>& running() const { return running_; }
  int64_t total_gpus() const { return total_gpus_; }
  // GPUs in service that no job holds.
  int64_t free_gpus() const { return free_gpus_; }
  // GPUs out of service (failed, or on a node that is down): neither free nor busy.
  int64_t out_of_service_gpus() const { return out_of_service_gpus_; }
  int64_t busy_gpus() const { return total_gpus_ - free_gpus_ - out_of_service_gpus_; }
  // The pool now has `gpus` GPUs and `nodes` nodes out of service (PoolHealth); none of them is
  // held by a job.
  void SetOutOfService(int64_t gpus, int64_t nodes);
  int64_t nodes_down() const { return nodes_down_; }
  // Per tenant, milli-GPUs held by its running jobs and asked for by its jobs present (pending
  // or running).
  const std::vector<int64_t>& usage_milli() const { return usage_milli_; }
  const std::vector<int64_t>& demand_milli() const { return demand_milli_; }

 private:
  std::vector<JobRun> jobs_;
  std::set<int32_t> pending_;
  std::set<std::pair<int64_t, int32_t>> pending_fifo_;
  std::set<int32_t> running_;
  int64_t total_gpus_;
  int64_t free_gpus_;
  int64_t out_of_service_gpus_ = 0;
  int64_t nodes_down_ = 0;
  std::vector<int64_t> usage_milli_;
  std::vector<int64_t> demand_milli_;
};

}  // namespace gpupool::sim::internal

#endif  // GPUPOOL_SRC_SIM_REPLAY_RUN_STATE_H_
