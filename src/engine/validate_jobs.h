// Snapshot validation, second half: the jobs (validate_jobs.cc), then over-commitment node by
// node. validate.cc's driver calls them last, in this order, once the catalogue is complete.
#ifndef GPUPOOL_VALIDATE_JOBS_H_
#define GPUPOOL_VALIDATE_JOBS_H_

#include <vector>

#include "absl/status/status.h"
#include "gpupool/job.h"
#include "validate_catalog.h"

namespace gpupool::internal::validation {

// Checks every job: its keys (empty or repeated ids) before its items, and of the items the
// error of the smallest job id. A running job's allocation is checked against the catalogue's
// nodes and added to their usage (catalog.nodes[].used_*).
absl::Status CheckJobs(const std::vector<Job>& jobs, Catalog& catalog);

// Checks, node by node, that the usage CheckJobs() recorded fits each GPU and node; the error of
// the smallest node id, which for a GPU names the running jobs of `jobs` on it. Call only once
// CheckJobs() returned OK.
absl::Status CheckOverCommitment(const Catalog& catalog, const std::vector<Job>& jobs);

}  // namespace gpupool::internal::validation

#endif  // GPUPOOL_VALIDATE_JOBS_H_
