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
// not count for some holder (by_node()), a start may not lower how much of the holds the free
// GPUs can still serve. That amount ("served") is at most all holds summed (H), and for each line
// at most H minus the line's holds plus the free GPUs of the nodes that count for the line's
// queues; it is the least of these. Lines: all holders together; each group of holders that may
// use the same nodes, and each queue inside a holder's hold, when those nodes are not all the
// holders' nodes (else the line is never the least). These are cuts of the flow from free GPUs
// to holds; other groups are not among them. A start that takes nothing from the holders' nodes
// lowers no line, so a job may start on nodes that count for none of them; nor may a holder
// already short on its own nodes stop a start on another's that leaves that other its hold.
// Without owner restrictions every line has the same free GPUs, served is min(H, free), and this
// is Check()'s rule.
//
// Rationale. Holding particular GPUs back would make every other placement depend on which
// ones; counting, as the headroom rules do (headroom.h), keeps the placement strategy as it is
// and refuses only the starts that would eat into what is held. A check costs one pass over the
// queues that do not lend (usually none: then nothing at all). By node, the nodes fall into
// classes by the holders they count for (the nodes without owners are one class); a line's free
// GPUs are a sum over classes, and the per-class free GPUs take a pass over the owned nodes of
// the model only (the class without owners is the model's free GPUs minus the rest). A gang that
// every line has room for (its slack: its amount minus served) is not checked at all; one that is
// checked and refused is placed once more away from the classes of every line without that room.
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
  std::vector<int32_t> queues;  // by node: the queues of the line refused (queue indices, sorted)
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
  // One line of the by-node rule: `members` (lender indices) hold `held_milli` on `slot`, and
  // `free_before` milli-GPUs are free on the nodes of the classes in `classes`.
  struct Bound {
    int32_t slot = kNone;
    std::vector<int32_t> members;
    std::vector<uint8_t> classes;  // per node class, 1 if it counts for some member
    int64_t held_milli = 0;
    int64_t free_before = 0;
    // The line's amount (H - held_milli + free_before) minus served, before: how many
    // milli-GPUs a start may take from its nodes without lowering served.
    int64_t slack = 0;
    int32_t queue = kNone;  // the member holding the most (lowest queue index on ties)
  };
  // By node: the lines a start of job j on `model` must keep, measured now (before placing);
  // the model slot's, then those of "*". Empty when nothing is held against the job.
  std::vector<Bound> Bounds(int32_t j, int32_t model) const;
  // May a start take `milli` milli-GPUs wherever it likes without lowering served?
  static bool Slack(const std::vector<Bound>& bounds, int64_t milli);
  // By node: does what was placed since Bounds() lower served (on the model, or on "*")? If so,
  // the line that now limits it most (the first such) as a block.
  std::optional<LendingBlock> CheckPlaced(const std::vector<Bound>& bounds) const;
  // From AvoidTight() on, until StopAvoiding(), Avoids(n) is true for the nodes of every line
  // with less slack than `milli`: a placement elsewhere lowers no line by more than its slack.
  void AvoidTight(const std::vector<Bound>& bounds, int64_t milli);
  void StopAvoiding() { avoiding_ = false; }
  bool Avoids(int32_t n) const { return avoiding_ && avoid_class_[node_class_[n]] != 0; }

 private:
  struct Lender {
    int32_t queue;
    int32_t parent;  // index in lenders_ of the nearest ancestor that does not lend, or kNone
    std::vector<int64_t> guaranteed;  // per slot; the "*" slot holds every guarantee summed
    std::vector<uint8_t> classes;     // per node class, 1 if it counts for the queue
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
  void IndexNodeClasses();
  std::vector<int32_t> Chain(int32_t j) const;
  // The line of `holders` together on `slot` (free and slack not measured).
  Bound Line(const std::vector<Holder>& holders, int32_t slot) const;
  // Free milli-GPUs of slot's open nodes (a model, or all models for "*").
  int64_t SlotFree(int32_t slot) const;
  // Free milli-GPUs per node class on slot's open nodes.
  std::vector<int64_t> ClassFree(int32_t slot) const;
  static int64_t LineFree(const Bound& line, const std::vector<int64_t>& class_free);

  const SnapshotIndex& index_;
  const WorkingState& state_;
  // Deepest first (an ancestor after all its descendants), ties by queue index.
  std::vector<Lender> lenders_;
  bool by_node_ = false;
  mutable std::vector<int64_t> below_;  // scratch: per lender, what the lenders below it hold
  // Node classes: 0 for the nodes without owners (and without GPUs), then one per set of
  // lenders that owned nodes count for. Owned GPU nodes per model slot ("*": all of them).
  int32_t class_count_ = 1;
  std::vector<int32_t> node_class_;
  std::vector<std::vector<int32_t>> owned_nodes_;
  std::vector<uint8_t> avoid_class_;  // per class, while avoiding
  bool avoiding_ = false;
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_LENDING_H_
