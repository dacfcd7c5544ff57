// Stage 4: the order in which pending jobs are considered.
#ifndef GPUPOOL_ORDER_H_
#define GPUPOOL_ORDER_H_

#include <cstdint>
#include <vector>

#include "gpupool/policy.h"
#include "snapshot_index.h"

namespace gpupool::internal {

// Pending jobs, in the order the policy serves them. kPriorityFifo: priority descending, then
// submit time ascending, then job id (the dense index is id order): a strict total order.
std::vector<int32_t> OrderPendingJobs(const SnapshotIndex& index, const Policy& policy);

// Sorts `jobs` (dense indices, any state) into the same order.
void SortInJobOrder(const SnapshotIndex& index, const Policy& policy, std::vector<int32_t>& jobs);

}  // namespace gpupool::internal

#endif  // GPUPOOL_ORDER_H_
