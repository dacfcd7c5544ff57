// Human-readable explanations of a job's outcome.
#ifndef GPUPOOL_EXPLAIN_H_
#define GPUPOOL_EXPLAIN_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gpupool/decisions.h"
#include "gpupool/snapshot.h"

namespace gpupool {

// Explains where job `job_id` is and why: where it runs (if running) and what `decisions` do to
// it (a preemption with its reason and lost work, and where it starts again if re-placed; a
// consolidation move; a resize); where it starts and on which GPUs (if the decisions start it),
// and whether it is backfilled; or why it waits (its pending reason and detail, the
// counterfactual, and its reservation if it has one). Expects each list of `decisions` sorted
// by job id, as Schedule() leaves them. Returns NotFound if the snapshot has no such job.
// Several lines, ending in a newline.
absl::StatusOr<std::string> ExplainJob(const Snapshot& snapshot, const Decisions& decisions,
                                       std::string_view job_id);

}  // namespace gpupool

#endif  // GPUPOOL_EXPLAIN_H_
