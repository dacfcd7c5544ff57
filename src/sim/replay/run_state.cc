// The replay's run state (run_state.h).
#include "sim/replay/run_state.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "gpupool/resources.h"

namespace gpupool::sim::internal {

int64_t WorkAt(const JobRun& job, int64_t now) {
  if (job.phase != Phase::kRunning) return job.work_base;
  return job.work_base + std::max<int64_t>(0, now - job.run_start - job.restore_due);
}

namespace {

// When running job `job` reaches `work` seconds of work (at least its work_base): after its
// restore, one second of work per second.
int64_t TimeAtWork(const JobRun& job, int64_t work) {
  return job.run_start + job.restore_due + (work - job.work_base);
}

}  // namespace

int64_t ServiceAt(const JobRun& job, int64_t now) {
  return job.service_before + (job.phase == Phase::kRunning ? now - job.run_start : 0);
}

CheckpointModel::CheckpointModel(const ReplayOptions& options)
    : interval_s_(options.checkpoint_interval_s),
      restore_s_(options.restore_time_s),
      free_(options.free_preemption) {}

int64_t CheckpointModel::KeptWork(int64_t work) const {
  if (free_) return work;
  return interval_s_ > 0 ? work / interval_s_ * interval_s_ : 0;
}

int64_t CheckpointModel::PreemptionKeptWork(const JobRun& job, int64_t now) const {
  const int64_t work = WorkAt(job, now);
  if (free_) return work;
  return std::max(job.work_base, KeptWork(work));
}

std::optional<int64_t> CheckpointModel::LastCheckpointTime(const JobRun& job, int64_t now) const {
  if (free_) return now;
  if (interval_s_ <= 0) return std::nullopt;
  return FailureCheckpointTime(job, now);
}

std::optional<int64_t> CheckpointModel::NextCheckpointTime(const JobRun& job, int64_t now) const {
  if (free_ || interval_s_ <= 0) return std::nullopt;
  return TimeAtWork(job, (WorkAt(job, now) / interval_s_ + 1) * interval_s_);
}

int64_t CheckpointModel::FailureKeptWork(const JobRun& job, int64_t now) const {
  const int64_t work = WorkAt(job, now);
  const int64_t multiple = interval_s_ > 0 ? work / interval_s_ * interval_s_ : 0;
  return std::max(job.work_base, multiple);
}

std::optional<int64_t> CheckpointModel::FailureCheckpointTime(const JobRun& job,
                                                              int64_t now) const {
  const int64_t work = WorkAt(job, now);
  const int64_t multiple = interval_s_ > 0 ? work / interval_s_ * interval_s_ : 0;
  if (multiple > job.work_base) return TimeAtWork(job, multiple);
  if (job.work_base > 0) return job.run_start;
  return std::nullopt;
}

RunState::RunState(const std::vector<TraceJob>& jobs, const Tenants& tenants,
                   const ReplayPool& pool)
    : jobs_(jobs.size()),
      total_gpus_(pool.TotalGpus()),
      free_gpus_(pool.TotalGpus()),
      usage_milli_(tenants.size(), 0),
      demand_milli_(tenants.size(), 0) {
  const int64_t max_gang_gpus = int64_t{pool.nodes_per_rack} * pool.gpus_per_node;
  for (size_t i = 0; i < jobs.size(); ++i) {
    JobRun& j = jobs_[i];
    j.gpus = jobs[i].num_gpus;
    j.tenant = tenants.of_job[i];
    j.submit_time = jobs[i].submit_time;
    j.duration_s = jobs[i].duration_s;
    if (j.gpus > max_gang_gpus) j.phase = Phase::kUnschedulable;
  }
}

void RunState::Arrive(int32_t i, int64_t now) {
  JobRun& j = jobs_[i];
  j.phase = Phase::kPending;
  j.pending_since = now;
  pending_.insert(i);
  pending_fifo_.insert({j.submit_time, i});
  demand_milli_[j.tenant] += int64_t{j.gpus} * kMilliPerGpu;
}

void RunState::Complete(int32_t i) {
  JobRun& j = jobs_[i];
  j.phase = Phase::kDone;
  j.placements.clear();
  running_.erase(i);
  free_gpus_ += j.gpus;
  usage_milli_[j.tenant] -= int64_t{j.gpus} * kMilliPerGpu;
  demand_milli_[j.tenant] -= int64_t{j.gpus} * kMilliPerGpu;
}

void RunState::Preempt(int32_t i, int64_t now, int64_t kept_work, int64_t restore_s) {
  JobRun& j = jobs_[i];
  j.service_before += now - j.run_start;
  j.work_base = kept_work;
  j.restore_due = restore_s;
  j.phase = Phase::kPending;
  j.placements.clear();
  j.pending_since = now;
  running_.erase(i);
  pending_.insert(i);
  pending_fifo_.insert({j.submit_time, i});
  free_gpus_ += j.gpus;
  usage_milli_[j.tenant] -= int64_t{j.gpus} * kMilliPerGpu;
}

void RunState::Start(int32_t i, int64_t now, std::vector<ReplicaPlacement> placements) {
  JobRun& j = jobs_[i];
  j.phase = Phase::kRunning;
  j.run_start = now;
  j.placements = std::move(placements);
  j.completion = now + j.restore_due + (j.duration_s - j.work_base);
  pending_.erase(i);
  pending_fifo_.erase({j.submit_time, i});
  running_.insert(i);
  free_gpus_ -= j.gpus;
  usage_milli_[j.tenant] += int64_t{j.gpus} * kMilliPerGpu;
}

void RunState::SetOutOfService(int64_t gpus, int64_t nodes) {
  free_gpus_ -= gpus - out_of_service_gpus_;
  out_of_service_gpus_ = gpus;
  nodes_down_ = nodes;
}

}  // namespace gpupool::sim::internal
