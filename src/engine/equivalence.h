// Equivalence classes of pending jobs: KAI-Scheduler's "smallest failed job", named.
//
// Between preemptions, capacity in a cycle only shrinks, so a job identical in everything
// placement looks at (queue, groups, requests, GPU models, topology constraints; with preemption
// on, priority too, as it decides which victims the job may take) to one that already failed
// fails too, for the same reason. Schedule() asks this cache before trying a job and answers a
// match with the earlier job's pending decision in O(1), which keeps a cycle with many identical
// pending jobs about linear in their number. An eviction makes capacity grow where the victims
// were, so the conductor clears the cache after one.
//
// Determinism: the hash only narrows the search; equality is checked field by field, and
// nothing is iterated in hash order.
#ifndef GPUPOOL_EQUIVALENCE_H_
#define GPUPOOL_EQUIVALENCE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "snapshot_index.h"

namespace gpupool::internal {

class EquivalenceCache {
 public:
  // `index` must outlive the cache. `with_priority`: the job's priority is part of its shape
  // (policy.preemption.enabled).
  // `with_estimate`: the job's remaining runtime estimate is part of its shape (a node's
  // maintenance window lies ahead: maintenance.h).
  // `with_spot`: whether the job may use spot nodes is part of it too (the pool has spot nodes,
  // spot.h), through preemptible, spot_tolerant and the checkpoint interval.
  // `with_remaining_work`: the work the job is expected to need (RemainingWork(), order.h) is
  // part of it (preemption.victim_remaining_percent: which victims stay depends on it).
  EquivalenceCache(const SnapshotIndex& index, bool with_priority, bool with_estimate = false,
                   bool with_spot = false, bool with_remaining_work = false)
      : index_(index),
        with_priority_(with_priority),
        with_estimate_(with_estimate),
        with_spot_(with_spot),
        with_remaining_work_(with_remaining_work) {}

  // The position (in the caller's list of pending decisions) of the decision of an earlier job
  // of the same shape as job j that failed, or nullopt.
  std::optional<size_t> FindFailure(int32_t j);
  // Records that job j failed, its pending decision at `position`. Right after FindFailure(j), it
  // reuses the shape hash computed there (hashing shapes is several percent of a cycle on
  // bench/ S1, where most jobs fail).
  void RecordFailure(int32_t j, size_t position);
  // Forgets every failure (capacity grew: an eviction).
  void Clear() { failed_.clear(); }

 private:
  uint64_t ShapeHash(int32_t j) const;
  bool SameShape(int32_t a, int32_t b) const;

  const SnapshotIndex& index_;
  const bool with_priority_;
  const bool with_estimate_;
  const bool with_spot_;
  const bool with_remaining_work_;
  // The job FindFailure() last hashed, and its hash.
  int32_t hashed_job_ = kNone;
  uint64_t hashed_shape_ = 0;
  // Shape hash -> (representative job, position of its pending decision).
  absl::flat_hash_map<uint64_t, std::vector<std::pair<int32_t, size_t>>> failed_;
};

}  // namespace gpupool::internal

#endif  // GPUPOOL_EQUIVALENCE_H_
