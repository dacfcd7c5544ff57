// One cycle on inputs already validated: stages 2 to 9 of Schedule(), without stage 1.
#ifndef GPUPOOL_SRC_ENGINE_CYCLE_H_
#define GPUPOOL_SRC_ENGINE_CYCLE_H_

#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "gpupool/snapshot.h"

namespace gpupool::internal {

// The decisions of one cycle, without scale advice (Decisions::scale_advice stays unset).
// Expects ValidateSnapshot(snapshot) and ValidatePolicy(policy) to pass: scale advice calls it on
// copies of a validated snapshot with template nodes added or idle nodes removed.
Decisions RunCycle(const Snapshot& snapshot, const Policy& policy);

}  // namespace gpupool::internal

#endif  // GPUPOOL_SRC_ENGINE_CYCLE_H_
