#include "order.h"

#include <algorithm>
#include <limits>

#include "internal/saturating.h"

namespace gpupool::internal {

std::optional<int64_t> RemainingWork(const Job& job) {
  if (!job.runtime_estimate_s.has_value()) return std::nullopt;
  return std::max<int64_t>(0, *job.runtime_estimate_s - job.attained_service_s);
}

bool Starving(const Job& job, const Policy& policy, int64_t now) {
  return policy.starvation_bound_s > 0 &&
         now - job.pending_since.value_or(job.submit_time) > policy.starvation_bound_s;
}

void SortInJobOrder(const SnapshotIndex& index, const Policy& policy, std::vector<int32_t>& jobs) {
  // Sort flat keys rather than job pointers: the comparator then never leaves the array. The
  // key is (starving first, the order's primary key, submit time, job index).
  struct Key {
    int64_t starving;  // 0: waited past the bound (served first, oldest first); 1: not
    int64_t primary;
    int64_t submit_time;
    int32_t job;
  };
  const int64_t now = index.snapshot().now;
  constexpr int64_t kUnknown = std::numeric_limits<int64_t>::max();
  std::vector<Key> keys;
  keys.reserve(jobs.size());
  for (int32_t j : jobs) {
    const JobInfo& info = index.job(j);
    const Job& job = *info.job;
    Key key{1, 0, job.submit_time, j};
    if (Starving(job, policy, now)) key.starving = 0;
    switch (policy.job_order) {
      case JobOrder::kPriorityFifo:
        key.primary = -static_cast<int64_t>(job.priority);
        break;
      case JobOrder::kLeastAttainedService: {
        // Attained service: milli-GPUs of the gang (at its minimum size) x seconds run,
        // compared with the thresholds in milli-GPU-seconds (saturating: no overflow).
        const int64_t attained = SaturatingMultiply(info.gang_milli, job.attained_service_s);
        int64_t level = 0;
        for (int64_t threshold : policy.las_thresholds_gpu_seconds) {
          if (attained >= SaturatingMultiply(threshold, kMilliPerGpu)) ++level;
        }
        key.primary = level;
        break;
      }
      case JobOrder::kShortestRemaining:
        key.primary = RemainingWork(job).value_or(kUnknown);
        break;
    }
    // The starving are served longest-waiting first.
    if (key.starving == 0) key.primary = job.pending_since.value_or(job.submit_time);
    keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    if (a.starving != b.starving) return a.starving < b.starving;
    if (a.primary != b.primary) return a.primary < b.primary;
    if (a.submit_time != b.submit_time) return a.submit_time < b.submit_time;
    return a.job < b.job;
  });
  for (size_t i = 0; i < keys.size(); ++i) jobs[i] = keys[i].job;
}

std::vector<int32_t> OrderPendingJobs(const SnapshotIndex& index, const Policy& policy) {
  std::vector<int32_t> pending;
  for (int32_t j = 0; j < index.job_count(); ++j) {
    if (index.job(j).job->state == JobState::kPending) pending.push_back(j);
  }
  SortInJobOrder(index, policy, pending);
  return pending;
}

JobSequence::JobSequence(const SnapshotIndex& index, const Policy& policy,
                         const WorkingState& state, const Entitlements& entitlements)
    : index_(index),
      state_(state),
      entitlements_(entitlements),
      fair_(policy.queue_order == QueueOrder::kFairShare) {
  flat_ = OrderPendingJobs(index, policy);
  if (!fair_) return;
  const int64_t now = index.snapshot().now;
  while (starving_ < flat_.size() && Starving(*index.job(flat_[starving_]).job, policy, now)) {
    ++starving_;
  }
  per_queue_.resize(index.queue_count());
  queue_cursor_.assign(index.queue_count(), 0);
  for (size_t i = starving_; i < flat_.size(); ++i) {
    per_queue_[index.job(flat_[i]).queue].push_back(flat_[i]);
  }
  for (int32_t q = 0; q < index.queue_count(); ++q) {
    if (!per_queue_[q].empty()) turns_.insert(TurnOf(q));
  }
}

JobSequence::Turn JobSequence::TurnOf(int32_t q) const {
  __extension__ typedef __int128 Wide;
  const int32_t any = index_.any_model_slot();
  const int64_t usage = state_.queue_usage(q, any);
  const int64_t entitlement = entitlements_.entitlement(q, any);
  constexpr int64_t kNoShare = int64_t{1} << 62;
  int64_t share = 0;
  if (entitlement > 0) {
    const Wide fixed = (static_cast<Wide>(usage) << 20) / entitlement;
    share = fixed >= kNoShare ? kNoShare - 1 : static_cast<int64_t>(fixed);
  } else {
    share = kNoShare + std::min<int64_t>(usage, kNoShare - 1);
  }
  return Turn{share, -static_cast<int64_t>(index_.queue(q).priority), q};
}

int32_t JobSequence::Next() {
  if (!fair_) return cursor_ < flat_.size() ? flat_[cursor_++] : kNone;
  if (cursor_ < starving_) return flat_[cursor_++];
  if (last_queue_ != kNone && queue_cursor_[last_queue_] < per_queue_[last_queue_].size()) {
    turns_.insert(TurnOf(last_queue_));  // re-keyed with what it holds now
  }
  last_queue_ = kNone;
  if (turns_.empty()) return kNone;
  const int32_t q = turns_.begin()->queue;
  turns_.erase(turns_.begin());
  last_queue_ = q;
  return per_queue_[q][queue_cursor_[q]++];
}

}  // namespace gpupool::internal
