#include "order.h"

#include <algorithm>

namespace gpupool::internal {

std::vector<int32_t> OrderPendingJobs(const SnapshotIndex& index, const Policy& policy) {
  // Sort flat keys rather than job pointers: the comparator then never leaves the array.
  struct Key {
    int32_t priority;
    int64_t submit_time;
    int32_t job;
  };
  std::vector<Key> keys;
  for (int32_t j = 0; j < index.job_count(); ++j) {
    const Job& job = *index.job(j).job;
    if (job.state == JobState::kPending) keys.push_back({job.priority, job.submit_time, j});
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
  std::vector<int32_t> pending;
  pending.reserve(keys.size());
  for (const Key& key : keys) pending.push_back(key.job);
  return pending;
}

}  // namespace gpupool::internal
