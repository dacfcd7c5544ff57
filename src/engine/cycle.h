// One cycle on inputs already validated: stages 2 to 9 of Schedule(), without stage 1.
#ifndef GPUPOOL_SRC_ENGINE_CYCLE_H_
#define GPUPOOL_SRC_ENGINE_CYCLE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gpupool/decisions.h"
#include "gpupool/policy.h"
#include "gpupool/snapshot.h"

namespace gpupool::internal {

// The decisions of one cycle, without scale advice (Decisions::scale_advice stays unset): one
// pass of stages 1b to 9 and, when it preempts, migrates or resizes, more passes until the state
// is settled (settle.cc): applying the decisions and running the cycle again changes nothing.
// Expects ValidateSnapshot(snapshot) and ValidatePolicy(policy) to pass: scale advice calls it on
// copies of a validated snapshot with template nodes added or idle nodes removed.
Decisions RunCycle(const Snapshot& snapshot, const Policy& policy);

// The same, calling `observe` with each pass's input and decisions, in order (for tests that
// check each pass against the state it saw; a later pass's input_fingerprint is empty).
using PassObserver = std::function<void(const Snapshot& input, const Decisions& pass)>;
Decisions RunCycle(const Snapshot& snapshot, const Policy& policy, const PassObserver& observe);

// One pass of stages 1b to 9 (schedule.cc). `tentative`: running jobs of the snapshot whose
// start an earlier pass of the same cycle made, with the rank they started with
// (SnapshotIndex::tentative()). With `fingerprint` false, input_fingerprint is left empty: a
// later pass of a settling cycle hashes nothing, since the cycle reports the first pass's.
// `restored`: running jobs an earlier pass evicted and a later one started again in the same
// place (SnapshotIndex::restored()); `pinned`: those of them no job may evict
// (SnapshotIndex::pinned()).
Decisions RunCyclePass(const Snapshot& snapshot, const Policy& policy,
                       const std::vector<std::pair<std::string, int64_t>>& tentative = {},
                       bool fingerprint = true, const std::vector<std::string>& restored = {},
                       const std::vector<std::string>& pinned = {});

}  // namespace gpupool::internal

#endif  // GPUPOOL_SRC_ENGINE_CYCLE_H_
