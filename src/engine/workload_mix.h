// PlacementStrategy::kExpectedWaste: the expected-waste scorer fed with the snapshot's own mix.
//
// The scorer (scorers/expected_waste_scorer.cc) judges a placement against the workload the
// pool will see. A host that calls Schedule() hands no workload, so the cycle derives it from
// the snapshot: every job, pending and running, contributes its groups' per-replica requests
// (CPU, memory, GPU milli) with their accepted GPU models, each counted once per replica the
// group asks for. The counts are integers and the table's order is canonical
// (TaskClassTable::FromPods), so the same snapshot always gives the same scorer.
//
// Cost: one map insertion per group to build (O(groups log classes)); the scorer's samples are
// drawn once per cycle.
#ifndef GPUPOOL_WORKLOAD_MIX_H_
#define GPUPOOL_WORKLOAD_MIX_H_

#include <memory>

#include "gpupool/placement_scorer.h"
#include "gpupool/snapshot.h"

namespace gpupool::internal {

// The expected-waste scorer for `snapshot`'s workload mix.
std::shared_ptr<const PlacementScorer> MakeSnapshotMixScorer(const Snapshot& snapshot);

}  // namespace gpupool::internal

#endif  // GPUPOOL_WORKLOAD_MIX_H_
