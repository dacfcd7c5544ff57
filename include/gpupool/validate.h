// Stage 1 of a cycle: checking both inputs before anything is scheduled.
//
// Schedule() runs both checks first and returns their error unchanged; hosts may call them on
// their own, to refuse a bad snapshot or policy before it reaches a cycle (`gpupool validate`
// does). Both are pure, deterministic (the same bad input gives the same error, whatever the
// order of its lists) and thread-safe; neither keeps a reference to its argument.
#ifndef GPUPOOL_VALIDATE_H_
#define GPUPOOL_VALIDATE_H_

#include "absl/status/status.h"
#include "gpupool/policy.h"
#include "gpupool/snapshot.h"

namespace gpupool {

// Checks that a snapshot makes sense. Returns:
//   - InvalidArgument for malformed values: empty or duplicate ids, negative or too large
//     quantities, a gpu_milli above 1000 that is not whole GPUs, min_replicas above replicas,
//     unknown enum-like names, queue labels with an empty, duplicate, too long or
//     control-character key or value;
//   - FailedPrecondition for inconsistencies between parts: unknown references (queue, node,
//     GPU model, topology level, group), cycles in the queue tree, a running allocation on a GPU
//     that does not exist or that is over-committed, a pending job with placements.
// The message names the field and the id ("jobs[j7].groups[main].replicas: ...").
// docs/snapshot-format.md lists every rule. Cost: O(n log n) in the size of the snapshot.
absl::Status ValidateSnapshot(const Snapshot& snapshot);

// Checks that a policy makes sense (LevelDB's SanitizeOptions, but refusing instead of
// clipping). Returns OK or InvalidArgument; the message names the field, with a `policy.` prefix
// ("policy.las_thresholds_gpu_seconds[1]: 3000 is not above the threshold before it, 3250").
// The rules, field by field (docs/policy-format.md, "Validation"):
//   - placement, job_order, queue_order, preemption.victim_order: one of the enumerators
//     (a value cast from an out-of-range integer is refused);
//   - las_thresholds_gpu_seconds: every threshold >= 0, strictly ascending (it may be empty:
//     one level);
//   - starvation_bound_s, fair_share.usage_half_life_s, preemption.checkpoint_grace_s,
//     preemption.max_victim_lost_s, preemption.min_victim_run_s, preemption.drain_blocked_jobs:
//     >= 0 (0 means off);
//   - budgets.max_candidates, budgets.max_preemption_plans, budgets.max_counterfactual_plans:
//     >= 0 (0 means unbounded, or for counterfactuals none);
//   - scale (when set): max_simulations >= 0; each template with a non-empty, unique name, an
//     empty node.id, max_count >= 0 and cost_per_hour_micro >= 0 (the template's node itself is
//     checked against the snapshot by ValidateScaleTemplates()).
//   - headroom: each rule's gpu_model not empty, shape one of the enumerators, count >= 1, and at
//     most one rule per (gpu_model, shape); spot.max_checkpoint_interval_s >= 0.
// Schedule() also refuses, with FailedPrecondition, a headroom rule whose gpu_model the snapshot
// does not declare (the policy alone cannot tell).
// Not checked, as every value is meaningful: name and version (labels copied into the
// decisions), scorer (null means `placement` decides), the booleans, and large values (up to
// the int64 maximum, which reads as "never" or "unbounded"). Fields are checked in the order of
// `struct Policy`, so the error returned is the first bad field in that order. Cost: linear in
// the number of thresholds, quadratic in the number of headroom rules.
absl::Status ValidatePolicy(const Policy& policy);

// Checks each scale template's node against the snapshot it would join, with the rules of a
// snapshot's node (docs/snapshot-format.md, nodes): a known GPU model, GPU indices and islands,
// quantities in range, known topology levels and owner queues; and it must be ready. OK when the
// policy has no scale object. Schedule() runs it after ValidateSnapshot() and ValidatePolicy();
// expects both to have passed. The error has the code the snapshot rule has (InvalidArgument or
// FailedPrecondition) and names the field under the template's index:
// "policy.scale.templates[2].node.gpu_model: unknown GPU model \"H200\"". Cost: that of
// validating the snapshot's queues and one node, per template.
absl::Status ValidateScaleTemplates(const Snapshot& snapshot, const Policy& policy);

}  // namespace gpupool

#endif  // GPUPOOL_VALIDATE_H_
