#include "order.h"

#include <algorithm>

namespace gpupool::internal {

std::vector<int32_t> OrderPendingJobs(const SnapshotIndex& index, const Policy& policy) {
  std::vector<int32_t> pending;
  for (int32_t j = 0; j < index.job_count(); ++j) {
    if (index.job(j).job->state == JobState::kPending) pending.push_back(j);
  }
  switch (policy.job_order) {
    case JobOrder::kPriorityFifo:
      std::sort(pending.begin(), pending.end(), [&index](int32_t a, int32_t b) {
        const Job& ja = *index.job(a).job;
        const Job& jb = *index.job(b).job;
        if (ja.priority != jb.priority) return ja.priority > jb.priority;
        if (ja.submit_time != jb.submit_time) return ja.submit_time < jb.submit_time;
        return a < b;
      });
      break;
  }
  return pending;
}

}  // namespace gpupool::internal
