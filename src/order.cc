#include "order.h"

#include <algorithm>

namespace gpupool::internal {

void SortInJobOrder(const SnapshotIndex& index, const Policy& policy, std::vector<int32_t>& jobs) {
  // Sort flat keys rather than job pointers: the comparator then never leaves the array.
  struct Key {
    int32_t priority;
    int64_t submit_time;
    int32_t job;
  };
  std::vector<Key> keys;
  keys.reserve(jobs.size());
  for (int32_t j : jobs) {
    const Job& job = *index.job(j).job;
    keys.push_back({job.priority, job.submit_time, j});
  }
  switch (policy.job_order) {
    case JobOrder::kPriorityFifo:
      std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
        if (a.priority != b.priority) return a.priority > b.priority;
        if (a.submit_time != b.submit_time) return a.submit_time < b.submit_time;
        return a.job < b.job;
      });
      break;
  }
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

}  // namespace gpupool::internal
