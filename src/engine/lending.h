// Queues that do not lend (Queue::can_lend false; docs/fair-share.md, "Queues that do not
// lend"): their unused guarantee is held for their own subtree, and jobs of other queues may
// not start on it.
//
// What is held. For a queue Q that does not lend and a model slot s, Q's own hold is its
// guarantee minus the usage of its subtree, if positive: on a GPU model, the guarantee for that
// model; on "*" (all models together), every guarantee of Q added up (the per-model ones and
// its "*" one, which comes on top of them). A queue below Q that does not lend either holds for
// itself inside Q's hold: Q holds the larger of its own hold and what those queues hold
// together. A queue over its GPU-hour budget under budget enforcement has no guarantee, and
// holds nothing.
//
// Whom it binds. A job of queue J may start on model m only if, after the start, the free
// milli-GPUs of m are at least what the queues that do not lend and do not contain J hold on m,
// and the free milli-GPUs of all models together at least what they hold on "*". Each counts
// once: a queue whose nearest ancestor that does not lend also excludes J is inside that
// ancestor's hold. Jobs of Q's subtree use Q's hold freely. The rule binds starts (and elastic
// growth) only: work of other queues already running on the held capacity stays until reclaim
// across queues takes it back for a job of Q, as for any queue below its entitlement.
//
// Rationale. Holding particular GPUs back would make every other placement depend on which
// ones; counting, as the headroom rules do (headroom.h), keeps the placement strategy as it is
// and refuses only the starts that would eat into what is held. A check costs one pass over the
// queues that do not lend (usually none: then nothing at all).
#ifndef GPUPOOL_LENDING_H_
#define GPUPOOL_LENDING_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "gpupool/policy.h"
#include "snapshot_index.h"
#include "working_state.h"

namespace gpupool::internal {

// A start refused because it would use capacity held for queues that do not lend.
struct LendingBlock {
  int32_t queue = kNone;        // the queue holding the most of it (lowest index on ties)
  int32_t slot = kNone;         // a model index, or any_model_slot() for "*"
  int64_t held_milli = 0;       // held, in all, for the queues that exclude the job
  int64_t free_milli = 0;       // free before the start
  int64_t shortfall_milli = 0;  // held + the job's milli-GPUs - free
  int32_t holders = 0;          // queues holding something, in all
};

class Lending {
 public:
  // All references must outlive this.
  Lending(const SnapshotIndex& index, const WorkingState& state, const Policy& policy);

  // No queue that does not lend (then Check() never blocks).
  bool empty() const { return lenders_.empty(); }
  // Would a start of `milli` milli-GPUs of job j on model `model` use capacity held for others?
  // The model slot first, then "*". nullopt for CPU-only work (model kNone or milli 0).
  std::optional<LendingBlock> Check(int32_t j, int32_t model, int64_t milli) const;

 private:
  struct Lender {
    int32_t queue;
    int32_t parent;  // index in lenders_ of the nearest ancestor that does not lend, or kNone
    std::vector<int64_t> guaranteed;  // per slot; the "*" slot holds every guarantee summed
  };
  std::optional<LendingBlock> CheckSlot(const std::vector<int32_t>& chain, int32_t slot,
                                        int64_t milli) const;

  const SnapshotIndex& index_;
  const WorkingState& state_;
  // Deepest first (an ancestor after all its descendants), ties by queue index.
  std::vector<Lender> lenders_;
  mutable std::vector<int64_t> below_;  // scratch: per lender, what the lenders below it hold
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_LENDING_H_
