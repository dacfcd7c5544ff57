#include "lost_work.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "internal/saturating.h"

namespace gpupool::internal {

int64_t LostWorkSeconds(const Job& job, int64_t at, int64_t now, const Policy& policy) {
  const int64_t start = job.start_time.value_or(now);
  int64_t kept = std::max(start, job.checkpointing.last_checkpoint_time.value_or(start));
  const int64_t interval = job.checkpointing.interval_s;
  if (at > now && interval > 0 && at > kept) {
    // The last checkpoint due by `at` on the job's cadence, if it falls after now (one due
    // earlier has not happened: the snapshot would say so).
    const int64_t due = kept + (at - kept) / interval * interval;
    if (due > now) kept = due;
  }
  int64_t lost_s = std::max<int64_t>(0, at - kept);
  const int64_t grace = policy.preemption.checkpoint_grace_s;
  if (grace > 0 && interval > 0 && job.checkpointing.checkpoint_cost_s <= grace) {
    lost_s = std::min(lost_s, job.checkpointing.checkpoint_cost_s);
  }
  return lost_s;
}

int64_t RunningMilli(const Job& job) {
  int64_t total = 0;
  for (const ReplicaPlacement& placement : job.placements) {
    for (const TaskGroup& group : job.groups) {
      if (group.name != placement.group) continue;
      total = SaturatingAdd(total, SaturatingMultiply(group.request.MilliPerGpu(),
                                                      static_cast<int64_t>(placement.gpus.size())));
      break;
    }
  }
  return total;
}

int64_t LostWorkPrice(const Job& job, int64_t at, int64_t now, const Policy& policy) {
  const int64_t seconds =
      SaturatingAdd(LostWorkSeconds(job, at, now, policy), job.checkpointing.restore_time_s);
  return SaturatingMultiply(RunningMilli(job), seconds);
}

bool RedoingLostWork(const Job& job, int64_t now) {
  if (job.state != JobState::kRunning || !job.start_time) return false;
  const int64_t start = *job.start_time;
  const std::optional<int64_t>& checkpoint = job.checkpointing.last_checkpoint_time;
  if (checkpoint && *checkpoint > start) return false;  // saved new progress since it resumed
  const bool resumed_from_checkpoint = checkpoint && *checkpoint < start;
  const bool ran_before = job.attained_service_s > now - start;
  return resumed_from_checkpoint || ran_before;
}

int64_t EligibleVictimFrom(const Job& job, int64_t now, const Policy& policy) {
  constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  if (!job.preemptible || job.state != JobState::kRunning) return kNever;
  const int64_t start = job.start_time.value_or(now);
  const int64_t kept = std::max(start, job.checkpointing.last_checkpoint_time.value_or(start));
  const int64_t interval = job.checkpointing.interval_s;
  // The last checkpoint due by `at` on the job's cadence after now, or nothing (LostWorkSeconds).
  auto checkpoint_due_by = [&](int64_t at) {
    if (interval <= 0 || at <= kept) return false;
    return kept + (at - kept) / interval * interval > now;
  };
  const bool redoing = RedoingLostWork(job, now);
  const int64_t most_lost = policy.preemption.max_victim_lost_s;
  auto eligible = [&](int64_t at) {
    if (redoing && !checkpoint_due_by(at)) return false;
    return most_lost <= 0 || LostWorkSeconds(job, at, now, policy) <= most_lost;
  };
  const int64_t min_run = std::max(job.min_runtime_s, policy.preemption.min_victim_run_s);
  // Not before it has run a second: one started at now is no victim yet.
  const int64_t first = std::max(now, SaturatingAdd(start, std::max<int64_t>(min_run, 1)));
  if (eligible(first)) return first;
  if (interval <= 0 || first == kNever) return kNever;
  // The first checkpoint due after `first`: the job has just saved its work.
  const int64_t periods = first >= kept ? (first - kept) / interval + 1 : 1;
  const int64_t next = SaturatingAdd(kept, SaturatingMultiply(periods, interval));
  return next < kNever && eligible(next) ? next : kNever;
}

}  // namespace gpupool::internal
