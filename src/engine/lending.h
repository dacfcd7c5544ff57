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
// Which nodes count. Q holds capacity its own jobs could use: free GPUs count for Q only on the
// open nodes that some queue of its subtree may use (Node::owner_queues). When some node does
// not count for some holder (by_node()), a start is checked once placed: it may not lower how
// much of the holds the free GPUs can still serve. That amount is at most all holds summed; at
// most, for all holders together, the free GPUs of the nodes that count for any of them; and for
// each holder (and each queue inside a holder's hold), the other holds plus the free GPUs of its
// own nodes. It is the least of these (a cut bound of the flow from free GPUs to holds; pairs of
// holders among three or more are not among the cuts). A start that takes nothing from the
// holders' nodes lowers none of them, so a job may start on nodes that count for none of the
// holders whatever they hold; nor may one holder already short on its own nodes stop a start on
// another's that leaves that other its hold. Without owner restrictions this is Check()'s rule.
//
// Rationale. Holding particular GPUs back would make every other placement depend on which
// ones; counting, as the headroom rules do (headroom.h), keeps the placement strategy as it is
// and refuses only the starts that would eat into what is held. A check costs one pass over the
// queues that do not lend (usually none: then nothing at all); by node, two passes over the
// nodes of the model per holder.
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
  int64_t free_milli = 0;       // free before the start (by node: on the nodes that count)
  int64_t shortfall_milli = 0;  // held + what the start takes of free_milli - free_milli
  int32_t holders = 0;          // queues holding something, in all
  bool by_node = false;         // free_milli counts only the nodes the holders may use
};

class Lending {
 public:
  // All references must outlive this.
  Lending(const SnapshotIndex& index, const WorkingState& state, const Policy& policy);

  // No queue that does not lend (then Check() never blocks).
  bool empty() const { return lenders_.empty(); }
  // Would a start of `milli` milli-GPUs of job j on model `model` use capacity held for others?
  // The model slot first, then "*". nullopt for CPU-only work (model kNone or milli 0), and
  // always when by_node(): the start is then checked once placed (Bounds(), CheckPlaced()).
  std::optional<LendingBlock> Check(int32_t j, int32_t model, int64_t milli) const;

  // Does some node not count for some queue that does not lend (owner_queues)?
  bool by_node() const { return by_node_; }
  // One bound a start of a job on a model must keep: `members` (lender indices) together hold
  // `held_milli` on `slot`, and `free_before` milli-GPUs are free on the nodes that count for
  // any of them.
  struct Bound {
    int32_t slot = kNone;
    std::vector<int32_t> members;
    int64_t held_milli = 0;
    int64_t free_before = 0;
    int32_t queue = kNone;  // the member holding the most (lowest queue index on ties)
  };
  // By node: the bounds a start of job j on `model` must keep, measured now (before placing).
  // Model slot first, then "*"; on each, all holders together, then each one alone if several,
  // then each queue inside a holder's hold alone.
  std::vector<Bound> Bounds(int32_t j, int32_t model) const;
  // By node: does what was placed since Bounds() lower how much of the holds the free GPUs can
  // still serve (on the model, or on "*")? That is at most all holds summed, and for each bound
  // at most the holds outside it plus what is free on its nodes. If so, the bound that now limits
  // it most (the first such) as a block, and `broken` (if given) set to its index in `bounds`.
  std::optional<LendingBlock> CheckPlaced(const std::vector<Bound>& bounds,
                                          size_t* broken = nullptr) const;
  // From Avoid() on, until StopAvoiding(), Avoids(n) is true for the nodes of `bound`.
  void Avoid(const Bound& bound);
  void StopAvoiding();
  bool Avoids(int32_t n) const { return avoiding_ && avoid_[n] != 0; }

 private:
  struct Lender {
    int32_t queue;
    int32_t parent;  // index in lenders_ of the nearest ancestor that does not lend, or kNone
    std::vector<int64_t> guaranteed;  // per slot; the "*" slot holds every guarantee summed
    std::vector<uint8_t> counts;      // per node, 1 if it counts for the queue; empty: every node
  };
  struct Holder {
    int32_t lender;
    int64_t holds;
  };
  // The lenders that hold something on `slot` against a job of the queues of `chain` (its queue
  // and their ancestors), each counted once, in lenders_ order. `inner` (if given) receives the
  // others that exclude the job and hold something: those inside a holder's hold.
  std::vector<Holder> Holders(const std::vector<int32_t>& chain, int32_t slot,
                              std::vector<Holder>* inner = nullptr) const;
  std::vector<int32_t> Chain(int32_t j) const;
  // The bound of all `holders` together on `slot` (free_before not measured).
  Bound Together(const std::vector<Holder>& holders, int32_t slot) const;
  bool Counts(int32_t lender, int32_t n) const {
    return lenders_[lender].counts.empty() || lenders_[lender].counts[n] != 0;
  }
  // Free milli-GPUs of slot's open nodes that count for some lender of `members`.
  int64_t FreeFor(const std::vector<int32_t>& members, int32_t slot) const;
  template <typename Fn>
  void ForSlotNodes(int32_t slot, Fn&& fn) const;

  const SnapshotIndex& index_;
  const WorkingState& state_;
  // Deepest first (an ancestor after all its descendants), ties by queue index.
  std::vector<Lender> lenders_;
  bool by_node_ = false;
  mutable std::vector<int64_t> below_;  // scratch: per lender, what the lenders below it hold
  std::vector<uint8_t> avoid_;          // per node, while avoiding
  bool avoiding_ = false;
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_LENDING_H_
