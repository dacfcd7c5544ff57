// Applying decisions to a snapshot, as a host would.
#ifndef GPUPOOL_APPLY_H_
#define GPUPOOL_APPLY_H_

#include "absl/status/status.h"
#include "gpupool/decisions.h"
#include "gpupool/snapshot.h"

namespace gpupool {

// Applies the Start decisions to `snapshot` in place: each started job becomes running, with
// its placements and start_time = snapshot.now. Other decision kinds are left for the host.
// Returns FailedPrecondition (and changes nothing) when a decision names a job that is not
// pending in the snapshot.
absl::Status ApplyStarts(const Decisions& decisions, Snapshot& snapshot);

}  // namespace gpupool

#endif  // GPUPOOL_APPLY_H_
