// Stage 3: fair share. Each queue's entitlement, per GPU model, from guarantees, limits, weights
// and demand, top-down over the queue tree.
//
// The stage is a pure function of plain arrays (no Snapshot, no SnapshotIndex) so that it can be
// tested exhaustively on small hand-written trees and against an oracle. docs/fair-share.md
// states every rule with worked examples; the comments here are the contract.
#ifndef GPUPOOL_FAIR_SHARE_H_
#define GPUPOOL_FAIR_SHARE_H_

#include <cstdint>
#include <vector>

#include "snapshot_index.h"

namespace gpupool::internal {

// Amounts above this (milli-GPUs, about 1.1e12 GPUs) are treated as this. Nothing real comes
// near it; the bound keeps every product of the stage inside 128-bit integers.
inline constexpr int64_t kFairShareMaxAmount = int64_t{1} << 50;
// Over-quota weights above this are treated as this (validation already bounds them by
// kMaxQuantity = 2^40).
inline constexpr int64_t kFairShareMaxWeight = int64_t{1} << 40;
// Fixed-point scale of effective weights: a weight w counts as w * kFairShareWeightScale before
// decay, so that decay can lower it by fractions of one.
inline constexpr int64_t kFairShareWeightScale = int64_t{1} << 20;
// Half-lives above this many seconds (about 35,000 years) are treated as this.
inline constexpr int64_t kFairShareMaxHalfLife = int64_t{1} << 40;

struct FairShareInput {
  int32_t queue_count = 0;
  // Slots 0..model_count-1 are GPU models; slot model_count is "*" (all models together).
  int32_t model_count = 0;
  // Per queue: the parent's index, or kNone for a root. Must be a forest (acyclic); the stage
  // CHECKs it.
  std::vector<int32_t> parent;
  // Per queue x slot, at queue * (model_count + 1) + slot:
  //   guaranteed_milli: 0 when unset.
  //   limit_milli: kNoLimit when unset.
  //   weight: over-quota weight >= 0. Only the model slots are read; the "*" slot is ignored
  //     (a caller fills a model's slot from the queue's quota for that model, else from its "*"
  //     quota, else 1).
  std::vector<int64_t> guaranteed_milli;
  std::vector<int64_t> limit_milli;
  std::vector<int64_t> weight;
  // Per queue: may it go above its guarantee? (false: never).
  std::vector<uint8_t> can_borrow;
  // Per queue x model, at queue * model_count + model: milli-GPUs the queue's OWN jobs want
  // (running + pending). The stage adds the descendants itself.
  std::vector<int64_t> demand_milli;
  // Per model: healthy GPUs of ready nodes x 1000.
  std::vector<int64_t> capacity_milli;
  // Optional decay. Per queue: decayed usage in milli-GPU-seconds (may be empty: no usage).
  // When half_life_s > 0 a queue's weights are multiplied by
  //   floor(kFairShareWeightScale * D / (D + usage)),  D = total capacity x half_life_s,
  // that is divided by 1 + usage / D; a positive weight never drops below 1 (fixed point).
  std::vector<int64_t> decayed_usage;
  int64_t half_life_s = 0;
};

struct FairShareResult {
  // Per queue x model (queue * model_count + model): the queue's entitlement now, milli-GPUs,
  // its own jobs and all its descendants together.
  std::vector<int64_t> entitlement_milli;
  // Per queue x model: demand of the queue's own jobs plus all its descendants' (saturating at
  // the int64 maximum; before limits).
  std::vector<int64_t> demand_milli;
};

// Computes every queue's entitlement. Deterministic: a function of the input values and of the
// queue and model indices (used only to break exact ties). Integer arithmetic throughout.
// Guarantees (see docs/fair-share.md):
//   - entitlement <= demand (with descendants), <= the model's limit, and summed over models
//     <= the "*" limit; with can_borrow false, <= the guarantee (model's plus its share of "*");
//   - siblings' entitlements sum to at most their parent's; what the children do not take the
//     parent's own jobs can use (never more than their demand);
//   - the roots' entitlements sum to min(capacity, what the roots can use): work-conserving.
// Complexity O(queues x models x log queues) time, O(queues x models) memory.
// The input sizes must match queue_count and model_count (CHECKed).
FairShareResult ComputeFairShare(const FairShareInput& input);

}  // namespace gpupool::internal

#endif  // GPUPOOL_FAIR_SHARE_H_
