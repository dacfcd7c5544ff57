// Stage 4: the order in which pending jobs are considered.
#ifndef GPUPOOL_ORDER_H_
#define GPUPOOL_ORDER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/btree_set.h"
#include "entitlements.h"
#include "gpupool/policy.h"
#include "snapshot_index.h"
#include "working_state.h"

namespace gpupool::internal {

// Pending jobs, in the order the policy serves them (see JobOrder in policy.h), jobs past the
// starvation bound first, oldest first. Ties end on the job id (the dense index is id order):
// a strict total order.
std::vector<int32_t> OrderPendingJobs(const SnapshotIndex& index, const Policy& policy);

// Has pending job `job` waited longer than the policy's starvation bound (now - pending_since,
// which defaults to submit_time)?
bool Starving(const Job& job, const Policy& policy, int64_t now);

// The work `job` is expected to need from now: runtime_estimate_s less attained_service_s, at
// least 0 (pending or running); nullopt without an estimate. What the shortest-remaining order
// and preemption.victim_remaining_percent compare.
std::optional<int64_t> RemainingWork(const Job& job);

// Sorts `jobs` (dense indices, any state) into the same order.
void SortInJobOrder(const SnapshotIndex& index, const Policy& policy, std::vector<int32_t>& jobs);

// The sequence in which the cycle considers pending jobs. With QueueOrder::kNone it is
// OrderPendingJobs(). With kFairShare, jobs past the starvation bound come first, oldest first,
// whatever their queue (the guard is a promise about waiting, not about shares); then queues take
// turns: each turn goes to the queue with the
// lowest usage / entitlement over all models at that moment (usage read from the working state,
// so what a queue starts counts against it at once; a queue with no entitlement comes after all
// that have one, by usage), then higher queue priority, then queue id; it considers its next job
// in job order. Queues are compared as they are, not level by level of the tree.
class JobSequence {
 public:
  JobSequence(const SnapshotIndex& index, const Policy& policy, const WorkingState& state,
              const Entitlements& entitlements);
  // The next job to consider, or kNone when every pending job has had its turn.
  int32_t Next();

 private:
  struct Turn {
    int64_t share;     // usage / entitlement, fixed point
    int64_t priority;  // negated queue priority
    int32_t queue;
    friend bool operator<(const Turn& a, const Turn& b) {
      if (a.share != b.share) return a.share < b.share;
      if (a.priority != b.priority) return a.priority < b.priority;
      return a.queue < b.queue;
    }
  };
  Turn TurnOf(int32_t q) const;

  const SnapshotIndex& index_;
  const WorkingState& state_;
  const Entitlements& entitlements_;
  bool fair_;
  std::vector<int32_t> flat_;
  size_t cursor_ = 0;
  // With fair turns: flat_[0, starving_) are the starving jobs, served before any turn.
  size_t starving_ = 0;
  std::vector<std::vector<int32_t>> per_queue_;
  std::vector<size_t> queue_cursor_;
  absl::btree_set<Turn> turns_;
  int32_t last_queue_ = kNone;
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_ORDER_H_
