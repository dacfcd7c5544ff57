// Stage 10: scale advice (Policy::scale, docs/operations.md "Scale advice").
#ifndef GPUPOOL_SRC_ENGINE_SCALE_ADVICE_H_
#define GPUPOOL_SRC_ENGINE_SCALE_ADVICE_H_

#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "gpupool/snapshot.h"

namespace gpupool::internal {

// The advice for the cycle whose decisions are `decisions` (RunCycle(snapshot, policy)).
// Expects policy.scale to be set and stage 1 (including ValidateScaleTemplates) to have passed.
// Deterministic; costs at most policy.scale->max_simulations cycles (unbounded when 0).
ScaleAdvice AdviseScale(const Snapshot& snapshot, const Policy& policy, const Decisions& decisions);

}  // namespace gpupool::internal

#endif  // GPUPOOL_SRC_ENGINE_SCALE_ADVICE_H_
